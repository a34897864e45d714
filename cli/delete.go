// Removing checkpoints and threads: the prune and delete commands.

package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/langgraph"
	"github.com/weftstudio/weft/engine"
)

// ageTrimmer is a store that can delete checkpoints by age (PostgreSQL).
type ageTrimmer interface {
	PruneOlderThan(ctx context.Context, age time.Duration) (int, error)
}

func cmdPrune(ctx context.Context, s checkpoint.Saver, _ []*engine.Graph, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("prune", flag.ContinueOnError)
	keep := fs.Int("keep", -1, "checkpoints to keep per thread and namespace")
	older := fs.Duration("older-than", 0, "delete checkpoints older than this (the latest of each thread stays)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if *older <= 0 && *keep < 0 {
		return usagef("usage: prune -keep N [THREAD…] | prune -older-than DURATION")
	}
	if lg, ok := s.(*langgraph.Reader); ok {
		return lgRefuse(lg, "prune")
	}
	if _, ok := s.(checkpoint.PolicyPruner); ok {
		// The same path as storage prune: held threads are skipped and
		// named, dead runs' leases kept.
		p := checkpoint.PrunePolicy{Threads: pos, AllThreads: len(pos) == 0, KeepLatest: *keep}
		if *older > 0 {
			p = checkpoint.PrunePolicy{AllThreads: true, KeepLatest: 1, OlderThan: time.Now().Add(-*older)}
		}
		examined := 0
		p.Progress = func(done, total int) { examined = total }
		res, err := pruneHeld(ctx, s, p)
		if err != nil {
			return err
		}
		out := map[string]any{"pruned_threads": examined - len(res.Skipped), "kept_per_thread": *keep}
		if *older > 0 {
			out = map[string]any{"deleted_checkpoints": res.Checkpoints, "older_than": older.String()}
		}
		if len(res.Skipped) > 0 {
			out["skipped"] = res.Skipped
		}
		if err := printJSON(w, out); err != nil {
			return err
		}
		return skippedErr(res)
	}
	if _, ok := s.(checkpoint.Leaser); ok {
		return errors.New("this store has leases but cannot prune under them")
	}
	if *older > 0 {
		at, ok := s.(ageTrimmer)
		if !ok {
			return errors.New("this store cannot prune by age; use -keep N")
		}
		n, err := at.PruneOlderThan(ctx, *older)
		if err != nil {
			return err
		}
		return printJSON(w, map[string]any{"deleted_checkpoints": n, "older_than": older.String()})
	}
	p, ok := s.(checkpoint.Pruner)
	if !ok {
		return errors.New("this store cannot prune")
	}
	threads := pos
	if len(threads) == 0 {
		tl, ok := s.(checkpoint.ThreadLister)
		if !ok {
			return errors.New("this store cannot list threads; name them")
		}
		infos, err := tl.ListThreads(ctx, 0)
		if err != nil {
			return err
		}
		for _, ti := range infos {
			threads = append(threads, ti.ThreadID)
		}
	}
	if err := p.Prune(ctx, threads, *keep); err != nil {
		return err
	}
	return printJSON(w, map[string]any{"pruned_threads": len(threads), "kept_per_thread": *keep})
}

// cmdDelete deletes threads, each under its lease so that no run writes to
// it meanwhile. A thread another run holds is refused, unless -force, which
// asks that run to stop (at its next lease renewal) and waits for it.
func cmdDelete(ctx context.Context, s checkpoint.Saver, _ []*engine.Graph, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("delete", flag.ContinueOnError)
	force := fs.Bool("force", false, "stop the runs that hold the threads first, and wait for them")
	wait := fs.Duration("wait", 2*time.Minute, "with -force, how long to wait for a run to stop")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("usage: delete THREAD… [-force]")
	}
	if lg, ok := s.(*langgraph.Reader); ok {
		return lgRefuse(lg, "delete")
	}
	for _, id := range pos {
		if _, err := s.Get(ctx, checkpoint.Ref{ThreadID: id}); errors.Is(err, checkpoint.ErrNotFound) {
			return fmt.Errorf("thread %q not found in this store; nothing was deleted", id)
		} else if err != nil {
			return err
		}
	}
	// Hold every thread first, so that either all are deleted or none.
	if l, ok := s.(checkpoint.Leaser); ok {
		var held []checkpoint.Lease
		defer func() {
			for _, lease := range held {
				if err := l.ReleaseLease(context.WithoutCancel(ctx), lease); err != nil {
					warnf(ctx, "weft delete: %v", err)
				}
			}
		}()
		for _, id := range pos {
			lease, err := holdForDelete(ctx, l, id, *force, *wait)
			if err != nil {
				return err
			}
			held = append(held, lease)
		}
	}
	for _, id := range pos {
		if err := s.DeleteThread(ctx, id); err != nil {
			return fmt.Errorf("deleting thread %q: %w", id, err)
		}
	}
	return printJSON(w, map[string]any{"deleted_threads": pos})
}
