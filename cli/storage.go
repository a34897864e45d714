package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/langgraph"
	"github.com/weftstudio/weft/engine"
)

func init() {
	builtins["storage"] = Command{
		Summary:     "where the store's bytes go, and giving them back: storage [-thread T] [-deep] | storage prune -keep N|-older-than 30d [THREAD…] | storage vacuum [-full]",
		Run:         cmdStorage,
		ReadOnlyFor: func(args []string) bool { return len(args) == 0 || (args[0] != "prune" && args[0] != "vacuum") },
	}
}

func cmdStorage(ctx context.Context, s checkpoint.Saver, _ []*engine.Graph, args []string, w io.Writer) error {
	if len(args) > 0 {
		if lg, ok := s.(*langgraph.Reader); ok && (args[0] == "prune" || args[0] == "vacuum") {
			return lgRefuse(lg, "storage "+args[0])
		}
		switch args[0] {
		case "prune":
			return storagePrune(ctx, s, args[1:], w, time.Now())
		case "vacuum":
			return storageVacuum(ctx, s, args[1:], w)
		}
	}
	fs := flag.NewFlagSet("storage", flag.ContinueOnError)
	thread := fs.String("thread", "", "describe this thread: its channels, checkpoints and growth by step")
	top := fs.Int("top", checkpoint.DefaultStorageTop, "how many of the largest threads and values to list")
	points := fs.Int("points", checkpoint.DefaultStoragePoints, "points of the growth series")
	cps := fs.Int("checkpoints", checkpoint.DefaultStorageCheckpoints, "with -thread, how many newest checkpoints to itemise (-1: all)")
	deep := fs.Bool("deep", false, "also break the whole store down by channel and table (reads every row: seconds on gigabytes)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unknown storage subcommand %q: storage [-thread T], storage prune, storage vacuum", pos[0])
	}
	opts := checkpoint.StorageOptions{Top: *top, Points: *points, Checkpoints: *cps, Deep: *deep}
	if lg, ok := s.(*langgraph.Reader); ok {
		return lgStorage(ctx, lg, *thread, opts, w)
	}
	r, ok := s.(checkpoint.StorageReporter)
	if !ok {
		return errors.New("this store cannot report its storage")
	}
	if *thread != "" {
		ts, err := r.ThreadStorage(ctx, *thread, opts)
		if errors.Is(err, checkpoint.ErrNotFound) {
			return fmt.Errorf("thread %q not found in this store", *thread)
		}
		if err != nil {
			return err
		}
		return printJSON(w, ts)
	}
	sum, err := r.StorageSummary(ctx, opts)
	if err != nil {
		return err
	}
	return printJSON(w, sum)
}

// parseAge reads -older-than: a date (2026-01-31, or RFC 3339), a
// duration in days ("30d") or a Go duration ("720h"), and returns the
// time before which checkpoints are old.
func parseAge(v string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation(time.DateOnly, v, time.Local); err == nil {
		return t, nil
	}
	if days, ok := strings.CutSuffix(v, "d"); ok {
		if n, err := strconv.ParseFloat(days, 64); err == nil && n >= 0 {
			return now.Add(-time.Duration(n * float64(24*time.Hour))), nil
		}
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, usagef("-older-than %q is neither a date (2026-01-31), a number of days (30d) nor a duration (720h)", v)
}

// PruneJSON is what storage prune prints.
type PruneJSON struct {
	checkpoint.PruneResult
	KeptPerNamespace int        `json:"kept_per_namespace"`
	OlderThan        *time.Time `json:"older_than,omitempty"`
	// Examined is the number of threads looked at.
	Examined int `json:"examined_threads"`
}

func storagePrune(ctx context.Context, s checkpoint.Saver, args []string, w io.Writer, now time.Time) error {
	fs := flag.NewFlagSet("storage prune", flag.ContinueOnError)
	keep := fs.Int("keep", -1, "checkpoints to keep per thread and namespace, whatever their age")
	older := fs.String("older-than", "", "delete only checkpoints older than this: a date (2026-01-31), days (30d) or a duration (720h)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if *keep < 0 && *older == "" {
		return usagef("usage: storage prune -keep N [-older-than AGE] [THREAD…] | storage prune -older-than AGE [THREAD…] (naming no thread prunes them all)")
	}
	p := checkpoint.PrunePolicy{Threads: pos, AllThreads: len(pos) == 0, KeepLatest: *keep}
	if *older != "" {
		if p.OlderThan, err = parseAge(*older, now); err != nil {
			return err
		}
		if *keep < 0 {
			p.KeepLatest = 1 // by age alone, every thread keeps its newest: it can still be resumed
		}
	}
	if _, ok := s.(checkpoint.PolicyPruner); !ok {
		return errors.New("this store cannot prune by policy; use weft prune -keep N")
	}
	if len(pos) > 0 {
		for _, id := range pos {
			if _, err := s.Get(ctx, checkpoint.Ref{ThreadID: id}); errors.Is(err, checkpoint.ErrNotFound) {
				return fmt.Errorf("thread %q not found in this store; nothing was pruned", id)
			} else if err != nil {
				return err
			}
		}
	}
	examined := 0
	p.Progress = func(done, total int) { examined = total }
	res, err := pruneHeld(ctx, s, p)
	if err != nil {
		return err
	}
	out := PruneJSON{PruneResult: res, KeptPerNamespace: p.KeepLatest, Examined: examined}
	if !p.OlderThan.IsZero() {
		out.OlderThan = &p.OlderThan
	}
	if err := printJSON(w, out); err != nil {
		return err
	}
	return skippedErr(res)
}

// pruneHeld prunes s by p, each thread under a hold on its lease when the
// store has leases (checkpoint.HoldForPrune): a thread a run holds is
// skipped, not pruned under the run, and a dead run's lease stays for a
// worker to continue it. Both prune commands prune through it.
func pruneHeld(ctx context.Context, s checkpoint.Saver, p checkpoint.PrunePolicy) (checkpoint.PruneResult, error) {
	pr, ok := s.(checkpoint.PolicyPruner)
	if !ok {
		return checkpoint.PruneResult{}, errors.New("this store cannot prune by policy")
	}
	if l, ok := s.(checkpoint.Leaser); ok {
		p.Hold = checkpoint.HoldForPrune(l, engine.DefaultLeaseOwner())
	}
	return pr.PruneBy(ctx, p)
}

// skippedErr is the error of a prune that skipped threads runs held: it
// names each with its holder, so that the command exits 1 after printing
// what it did prune. nil when none was skipped.
func skippedErr(res checkpoint.PruneResult) error {
	if len(res.Skipped) == 0 {
		return nil
	}
	why := make([]string, len(res.Skipped))
	for i, sk := range res.Skipped {
		why[i] = sk.Reason
	}
	return fmt.Errorf("skipped %d thread(s) a run holds, pruned the others: %s; prune again once they finish",
		len(res.Skipped), strings.Join(why, "; "))
}

// VacuumJSON is what storage vacuum prints.
type VacuumJSON struct {
	checkpoint.VacuumResult
	Full bool `json:"full"`
	// Seconds is Took in seconds, for people.
	Seconds float64 `json:"seconds"`
}

func storageVacuum(ctx context.Context, s checkpoint.Saver, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("storage vacuum", flag.ContinueOnError)
	full := fs.Bool("full", false, "PostgreSQL: VACUUM FULL, which gives space back to the system but locks each table while it is rewritten")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("usage: storage vacuum [-full]")
	}
	v, ok := s.(checkpoint.Vacuumer)
	if !ok {
		return errors.New("this store cannot be vacuumed")
	}
	res, err := v.Vacuum(ctx, checkpoint.VacuumOptions{Full: *full})
	if err != nil {
		return err
	}
	return printJSON(w, VacuumJSON{VacuumResult: res, Full: *full, Seconds: res.Took.Seconds()})
}
