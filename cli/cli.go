// Package cli is the studio's headless companion: subcommands of the weft
// binary that work on the same store as the window and print JSON, for
// scripts and CI. Each command prints one JSON document on stdout; errors go
// to stderr with exit code 1 (2 for a usage mistake).
package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/langgraph"
	"github.com/weftstudio/weft/checkpoint/sqlite"
	"github.com/weftstudio/weft/checkpoint/store"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/internal/textdist"
)

// Env is what the commands run against. Zero Stdout/Stderr discard output.
type Env struct {
	Graphs []*engine.Graph
	Stdout io.Writer
	Stderr io.Writer
	// Extra adds commands implemented elsewhere (serve, export, import), by
	// name; they get the open store and their own arguments.
	Extra map[string]Command
}

// Command is a subcommand: it gets the open store, the graphs bound to it
// and its arguments after the global flags, and returns an error to report.
type Command struct {
	Summary string
	Run     func(ctx context.Context, s checkpoint.Saver, graphs []*engine.Graph, args []string, stdout io.Writer) error
	// ReadOnly commands open the store read-only (it must exist; nothing
	// in it changes, no -wal or -shm file is left). The zero value opens
	// it for writing: it must exist, unless -create is given.
	ReadOnly bool
	// ReadOnlyFor, when set, decides ReadOnly from the command's own
	// arguments, for a command whose subcommands read or write.
	ReadOnlyFor func(args []string) bool
	// StopsAtSteps commands run graphs: a first SIGINT or SIGTERM lets
	// the running step finish and be stored, then they end cleanly
	// (stopOnSignals); a second stops them at once. The zero value leaves
	// signals as they are: a command that runs no graph just ends.
	StopsAtSteps bool
}

type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

var builtins = map[string]Command{
	"threads": {Summary: "list the store's threads, newest first, with their status: threads [-graph NAME] [-limit N]", Run: cmdThreads, ReadOnly: true},
	"history": {Summary: "list a thread's checkpoints, newest first: history THREAD [-limit N]", Run: cmdHistory, ReadOnly: true},
	"state":   {Summary: "show a thread's state: state THREAD [CHECKPOINT]", Run: cmdState, ReadOnly: true},
	"resume":  {Summary: "answer a thread's interrupt and run on, or without -answer continue a paused thread: resume THREAD [-answer JSON [-id INTERRUPT]]", Run: cmdResume, StopsAtSteps: true},
	"prune":   {Summary: "delete old checkpoints: prune -keep N [THREAD…] | prune -older-than 720h", Run: cmdPrune},
	"delete":  {Summary: "delete threads and all their checkpoints: delete THREAD… [-force]", Run: cmdDelete},
	"answer":  {Summary: "store an answer for a worker to pick up, without running: answer THREAD -answer JSON [-id INTERRUPT]", Run: cmdAnswer},
	"worker":  {Summary: "resume threads whose answers wait and continue threads a dead run left, until none is left: worker [-watch 2s]", Run: cmdWorker, StopsAtSteps: true},
	"run":     {Summary: "run a graph, or continue a thread, stopping at breakpoints: run GRAPH -input JSON [-break SPEC]… | run -thread ID [-break SPEC]…", Run: cmdRun, StopsAtSteps: true},
	"watch":   {Summary: "evaluate expressions at every checkpoint of a thread: watch THREAD EXPR…", Run: cmdWatch, ReadOnly: true},
	"compare": {Summary: "compare two checkpoints of a thread (where they part, steps, state diff): compare THREAD A B", Run: cmdCompare, ReadOnly: true},
	"replay":  {Summary: "re-run a thread against this binary's code on a scratch copy and report the first checkpoint that differs: replay THREAD [-strict] [-to CHECKPOINT]", Run: cmdReplay, ReadOnly: true},
}

// Names returns the names of the subcommands (built in and in extra),
// sorted.
func Names(extra map[string]Command) []string {
	var names []string
	for n := range builtins {
		names = append(names, n)
	}
	for n := range extra {
		if _, ok := builtins[n]; !ok {
			names = append(names, n)
		}
	}
	for n := range storeless {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// IsCommand reports whether name is a subcommand (built in or in extra).
func IsCommand(name string, extra map[string]Command) bool {
	_, ok := builtins[name]
	if !ok {
		_, ok = extra[name]
	}
	if !ok {
		_, ok = storeless[name]
	}
	return ok || name == "help" || name == "-h" || name == "-help" || name == "--help"
}

// Run runs the subcommand in args[0] with the global flags -db PATH (default
// weft.db) and -store DSN, and returns the process exit code.
func Run(ctx context.Context, args []string, env Env) int {
	if env.Stdout == nil {
		env.Stdout = io.Discard
	}
	if env.Stderr == nil {
		env.Stderr = io.Discard
	}
	cmds := map[string]Command{}
	for k, v := range builtins {
		cmds[k] = v
	}
	for k, v := range env.Extra {
		cmds[k] = v
	}
	if len(args) == 0 {
		usage(env.Stderr, cmds)
		return 2
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		usage(env.Stdout, cmds)
		return 0
	}
	if c, ok := storeless[args[0]]; ok {
		return c.Run(ctx, args[1:], env.Stdout, env.Stderr)
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		msg := fmt.Sprintf("weft: unknown command %q", args[0])
		if near := nearest(args[0], cmds); near != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", near)
		}
		fmt.Fprintln(env.Stderr, msg+"; weft help lists the commands")
		return 2
	}
	spec, create, rest, err := storeFlag(args[1:])
	if err != nil {
		fmt.Fprintf(env.Stderr, "weft %s: %v\n", args[0], err)
		return 2
	}
	if cmd.ReadOnlyFor != nil {
		cmd.ReadOnly = cmd.ReadOnlyFor(rest)
	}
	var mode []store.Option
	switch {
	case cmd.ReadOnly && create:
		fmt.Fprintf(env.Stderr, "weft %s: -create is for commands that write; %s only reads\n", args[0], args[0])
		return 2
	case cmd.ReadOnly:
		mode = append(mode, store.ReadOnly())
	case !create:
		mode = append(mode, store.MustExist())
	}
	s, err := store.Open(ctx, spec, mode...)
	if err != nil {
		fmt.Fprintf(env.Stderr, "weft %s: %v%s\n", args[0], err, openHint(err, cmd.ReadOnly))
		return 1
	}
	defer s.Close()
	noteStoreKind(env.Stderr, s)
	graphs := make([]*engine.Graph, len(env.Graphs))
	for i, g := range env.Graphs {
		graphs[i] = g.WithSaver(s)
	}
	ctx = context.WithValue(ctx, stderrKey{}, env.Stderr)
	if cmd.StopsAtSteps {
		var unwatch func()
		ctx, unwatch = stopOnSignals(ctx, args[0])
		defer unwatch()
	}
	if err := cmd.Run(ctx, s, graphs, rest, env.Stdout); err != nil {
		fmt.Fprintf(env.Stderr, "weft %s: %v\n", args[0], err)
		var ue *usageError
		if errors.As(err, &ue) {
			return 2
		}
		return 1
	}
	return 0
}

// stderrKey carries the command's standard error in its context, for
// progress and warnings (warnf).
type stderrKey struct{}

// warnf writes one line to the running command's standard error.
func warnf(ctx context.Context, format string, args ...any) {
	if w, ok := ctx.Value(stderrKey{}).(io.Writer); ok {
		fmt.Fprintf(w, format+"\n", args...)
	}
}

func usage(w io.Writer, cmds map[string]Command) {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)

	fmt.Fprintln(w, "usage: weft [COMMAND] [-db PATH | -store DSN] [-create] [ARGS]")
	fmt.Fprintln(w, "Without a command, weft opens the studio. Commands print JSON; the store")
	fmt.Fprintln(w, "must exist (-create lets a command that writes make a new one):")
	for n := range storeless {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		summary := cmds[n].Summary
		if c, ok := storeless[n]; ok {
			summary = c.Summary
		}
		fmt.Fprintf(w, "  %-8s %s\n", n, summary)
	}
}

// storeFlag takes -db/-store and -create (anywhere in args) and returns
// the store spec, whether to create it, and the other arguments.
func storeFlag(args []string) (string, bool, []string, error) {
	spec := "weft.db"
	create := false
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && name == "create" {
			switch val {
			case "", "true", "1":
				create = true
			case "false", "0":
				create = false
			default:
				return "", false, nil, usagef("-create takes no value (or true/false), not %q", val)
			}
			continue
		}
		if !strings.HasPrefix(a, "-") || (name != "db" && name != "store") {
			rest = append(rest, a)
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return "", false, nil, usagef("-%s needs a value", name)
			}
			i++
			val = args[i]
		}
		spec = val
	}
	return spec, create, rest, nil
}

// openHint adds what the user can do about a store that is not there.
func openHint(err error, readOnly bool) string {
	switch {
	case errors.Is(err, fs.ErrNotExist) && readOnly:
		return " (check the path and -db; reading never creates a store)"
	case errors.Is(err, fs.ErrNotExist):
		return " (check the path and -db, or add -create to make a new store there)"
	case errors.Is(err, sqlite.ErrEmptyFile) && !readOnly:
		return " (add -create to make it a Weft store)"
	}
	return ""
}

// nearest returns the command closest to name by edit distance, if it is
// close enough to be a likely typo.
func nearest(name string, cmds map[string]Command) string {
	best, bestD := "", 3
	for c := range cmds {
		if d := textdist.Distance(name, c); d < bestD || d == bestD && best != "" && c < best {
			best, bestD = c, d
		}
	}
	if bestD > max(1, len(name)/2) {
		return ""
	}
	return best
}

// parse parses flags that may come before or after positional arguments.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, usagef("%v", err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// ThreadJSON is one thread as the threads command prints it.
type ThreadJSON struct {
	ThreadID    string    `json:"thread_id"`
	Graph       string    `json:"graph"`
	Checkpoints int       `json:"checkpoints"`
	Step        int       `json:"step"`
	Source      string    `json:"source"`
	UpdatedAt   time.Time `json:"updated_at"`
	// Status is engine.StatusOf the thread: running, waiting, failed,
	// paused or done; "unreadable" when its latest checkpoint could not be
	// read (Error says why); "" when this binary does not have its graph.
	Status string `json:"status,omitempty"`
	// Error is why the thread's latest checkpoint could not be read; ""
	// when it could.
	Error string `json:"error,omitempty"`
	// Lease is who runs the thread now, or whose run died holding it
	// (Expired); absent when nobody holds it.
	Lease *LeaseJSON `json:"lease,omitempty"`
}

// LeaseJSON is a thread's lease as the threads command prints it.
type LeaseJSON struct {
	Owner   string    `json:"owner"`
	Since   time.Time `json:"since"`
	Expires time.Time `json:"expires"`
	Expired bool      `json:"expired,omitempty"` // its run died: the thread may be continued
	// Ended says how the run is known to have died before its lease
	// lapsed: "the run by pid N on this host ended without finishing".
	Ended string `json:"ended,omitempty"`
}

func cmdThreads(ctx context.Context, s checkpoint.Saver, graphs []*engine.Graph, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("threads", flag.ContinueOnError)
	graph := fs.String("graph", "", "only threads of this graph")
	limit := fs.Int("limit", 0, "at most this many threads")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if *graph != "" {
		known := graphNames(graphs)
		if !slices.Contains(known, *graph) {
			return usagef("unknown graph %q: this binary has %s", *graph, quoteList(known))
		}
	}
	tl, ok := s.(checkpoint.ThreadLister)
	if !ok {
		return errors.New("this store cannot list threads")
	}
	infos, err := tl.ListThreads(ctx, 0)
	if err != nil {
		return err
	}
	leases, err := leasesByThread(ctx, s)
	if err != nil {
		return err
	}
	byName := graphsByName(graphs)
	out := []ThreadJSON{}
	unreadable := 0
	for _, ti := range infos {
		g, _ := ti.LatestMeta.Extra[engine.MetaGraph].(string)
		// A thread whose listing row is damaged may be of any graph: it
		// is listed whatever -graph says, never hidden.
		if *graph != "" && g != *graph && ti.Err == nil {
			continue
		}
		tj := ThreadJSON{ThreadID: ti.ThreadID, Graph: g, Checkpoints: ti.Checkpoints, Step: ti.LatestMeta.Step,
			Source: string(ti.LatestMeta.Source), UpdatedAt: ti.UpdatedAt}
		lease := leases[ti.ThreadID]
		if lease != nil {
			tj.Lease = &LeaseJSON{Owner: lease.Owner, Since: lease.Since, Expires: lease.Expires, Expired: lease.Expired, Ended: lease.Ended}
		}
		if ti.Err != nil { // its metadata or timestamp is damaged
			tj.Status, tj.Error = "unreadable", ti.Err.Error()
			unreadable++
		} else if lg, ok := s.(*langgraph.Reader); ok {
			if tj.Status, tj.Error = lgStatus(ctx, lg, ti.ThreadID); tj.Error != "" {
				unreadable++
			}
		} else if gr := byName[g]; gr != nil {
			snap, err := gr.GetState(ctx, engine.WithThread(ti.ThreadID))
			if err != nil {
				// One damaged thread must not hide the others: it is
				// listed as such, and the exit status says so.
				tj.Status, tj.Error = "unreadable", err.Error()
				unreadable++
			} else {
				tj.Status = string(engine.StatusOf(snap, lease))
			}
		}
		out = append(out, tj)
		if *limit > 0 && len(out) == *limit {
			break
		}
	}
	if err := printJSON(w, out); err != nil {
		return err
	}
	switch unreadable {
	case 0:
		return nil
	case 1:
		return errors.New(`1 thread could not be read: it is listed with status "unreadable" and its error`)
	}
	return fmt.Errorf(`%d threads could not be read: they are listed with status "unreadable" and their errors`, unreadable)
}

func graphsByName(graphs []*engine.Graph) map[string]*engine.Graph {
	m := make(map[string]*engine.Graph, len(graphs))
	for _, g := range graphs {
		m[g.Name()] = g
	}
	return m
}

// leasesByThread returns the store's leases by thread id; none when the
// store has no leases.
func leasesByThread(ctx context.Context, s checkpoint.Saver) (map[string]*checkpoint.Lease, error) {
	l, ok := s.(checkpoint.Leaser)
	if !ok {
		return nil, nil
	}
	ls, err := l.Leases(ctx)
	if err != nil {
		return nil, err
	}
	m := make(map[string]*checkpoint.Lease, len(ls))
	for i := range ls {
		m[ls[i].ThreadID] = &ls[i]
	}
	return m, nil
}

// SnapshotJSON is a checkpoint's state as the history and state commands
// print it.
type SnapshotJSON struct {
	CheckpointID string                    `json:"checkpoint_id"`
	ParentID     string                    `json:"parent_id,omitempty"`
	Step         int                       `json:"step"`
	Source       string                    `json:"source"`
	Ran          []string                  `json:"ran,omitempty"`
	CreatedAt    time.Time                 `json:"created_at"`
	Next         []string                  `json:"next"`
	Values       engine.Values             `json:"values"`
	Interrupts   []engine.PendingInterrupt `json:"interrupts,omitempty"`
	Errors       map[string]string         `json:"errors,omitempty"`
}

// valuesMark stands for a snapshot's values in writeSnapshot's first pass.
var valuesMark = engine.Values{"\x00": nil}

// writeSnapshot writes sj as json.MarshalIndent(sj, prefix, "  ") would,
// encoding one channel value at a time: a snapshot of large values costs
// the memory of its largest value's JSON, not of all of them.
func writeSnapshot(w io.Writer, sj SnapshotJSON, prefix string) error {
	vals := sj.Values
	sj.Values = valuesMark
	b, err := json.MarshalIndent(sj, prefix, "  ")
	if err != nil {
		return err
	}
	mark := "{\n" + prefix + "    \"\\u0000\": null\n" + prefix + "  }"
	head, tail, ok := bytes.Cut(b, []byte(mark))
	if !ok {
		return errors.New("unexpected snapshot layout")
	}
	if _, err := w.Write(head); err != nil {
		return err
	}
	inner := prefix + "    "
	switch {
	case vals == nil:
		_, err = io.WriteString(w, "null")
	case len(vals) == 0:
		_, err = io.WriteString(w, "{}")
	default:
		_, err = io.WriteString(w, "{")
		for i, k := range slices.Sorted(maps.Keys(vals)) {
			if err != nil {
				return err
			}
			kb, _ := json.Marshal(k)
			sep := ",\n"
			if i == 0 {
				sep = "\n"
			}
			if _, err = fmt.Fprintf(w, "%s%s%s: ", sep, inner, kb); err != nil {
				return err
			}
			if err = writeValue(w, vals[k], inner); err != nil {
				return fmt.Errorf("channel %q: %w", k, err)
			}
		}
		if err == nil {
			_, err = fmt.Fprintf(w, "\n%s  }", prefix)
		}
	}
	if err != nil {
		return err
	}
	_, err = w.Write(tail)
	return err
}

// writeValue writes v as json.MarshalIndent(v, prefix, "  ") would, a
// list one element at a time (lists are what grow large: messages, notes).
func writeValue(w io.Writer, v any, prefix string) error {
	rv := reflect.ValueOf(v)
	if v == nil || rv.Kind() != reflect.Slice || rv.Len() == 0 || rv.Type().Elem().Kind() == reflect.Uint8 {
		b, err := json.MarshalIndent(v, prefix, "  ")
		if err == nil {
			_, err = w.Write(b)
		}
		return err
	}
	if _, ok := v.(json.Marshaler); ok {
		b, err := json.MarshalIndent(v, prefix, "  ")
		if err == nil {
			_, err = w.Write(b)
		}
		return err
	}
	if _, err := io.WriteString(w, "["); err != nil {
		return err
	}
	for i := range rv.Len() {
		b, err := json.MarshalIndent(rv.Index(i).Interface(), prefix+"  ", "  ")
		if err != nil {
			return err
		}
		sep := ",\n"
		if i == 0 {
			sep = "\n"
		}
		if _, err := fmt.Fprintf(w, "%s%s  %s", sep, prefix, b); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "\n%s]", prefix)
	return err
}

func toJSON(s *engine.Snapshot) SnapshotJSON {
	out := SnapshotJSON{CheckpointID: s.Ref.CheckpointID, Step: s.Metadata.Step, Source: string(s.Metadata.Source),
		Ran: s.Metadata.Tasks, CreatedAt: s.CreatedAt, Next: s.Next, Values: s.Values, Interrupts: s.Interrupts}
	if out.Next == nil {
		out.Next = []string{}
	}
	if s.Parent != nil {
		out.ParentID = s.Parent.CheckpointID
	}
	for _, t := range s.Tasks {
		if t.Error != "" {
			if out.Errors == nil {
				out.Errors = map[string]string{}
			}
			out.Errors[t.Name] = t.Error
		}
	}
	return out
}

// graphOf finds the graph that wrote the thread, by the name its checkpoints
// record.
func graphOf(ctx context.Context, s checkpoint.Saver, graphs []*engine.Graph, thread string) (*engine.Graph, error) {
	if _, ok := s.(*langgraph.Reader); ok {
		return nil, errLangGraphNoGraph
	}
	tp, err := s.Get(ctx, checkpoint.Ref{ThreadID: thread})
	if errors.Is(err, checkpoint.ErrNotFound) {
		return nil, fmt.Errorf("thread %q not found in this store", thread)
	}
	if err != nil {
		return nil, err
	}
	name, _ := tp.Metadata.Extra[engine.MetaGraph].(string)
	for _, g := range graphs {
		if g.Name() == name {
			return g, nil
		}
	}
	return nil, fmt.Errorf("thread %q was written by graph %q, which this binary does not have (it has %s)", thread, name, strings.Join(graphNames(graphs), ", "))
}

func graphNames(graphs []*engine.Graph) []string {
	known := make([]string, len(graphs))
	for i, g := range graphs {
		known[i] = g.Name()
	}
	return known
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// historyPage is how many snapshots history rebuilds at a time: it prints
// them before reading more, so a thread with large values costs memory
// for a few of its checkpoints, not all of them.
const historyPage = 1

func cmdHistory(ctx context.Context, s checkpoint.Saver, graphs []*engine.Graph, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("history", flag.ContinueOnError)
	limit := fs.Int("limit", 0, "at most this many checkpoints")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: history THREAD [-limit N]")
	}
	if lg, ok := s.(*langgraph.Reader); ok {
		return lgHistory(ctx, lg, pos[0], *limit, w)
	}
	g, err := graphOf(ctx, s, graphs, pos[0])
	if err != nil {
		return err
	}
	// A JSON array written element by element, laid out as printJSON
	// would lay out the whole array.
	bw := bufio.NewWriterSize(w, 64<<10)
	n, before := 0, ""
	for *limit <= 0 || n < *limit {
		page := historyPage
		if *limit > 0 {
			page = min(page, *limit-n)
		}
		snaps, err := g.History(ctx, checkpoint.ListOptions{Limit: page, Before: before}, engine.WithThread(pos[0]))
		if err != nil {
			if n > 0 {
				bw.WriteString("\n") // the array is cut short; the error says why
				bw.Flush()
			}
			return err
		}
		for _, sn := range snaps {
			sep := ",\n  "
			if n == 0 {
				sep = "[\n  "
			}
			bw.WriteString(sep)
			if err := writeSnapshot(bw, toJSON(sn), "  "); err != nil {
				return fmt.Errorf("checkpoint %s: %w", sn.Ref.CheckpointID, err)
			}
			n++
			before = sn.Ref.CheckpointID
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		if len(snaps) < page {
			break
		}
	}
	if n == 0 {
		bw.WriteString("[]\n")
	} else {
		bw.WriteString("\n]\n")
	}
	return bw.Flush()
}

func cmdState(ctx context.Context, s checkpoint.Saver, graphs []*engine.Graph, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("state", flag.ContinueOnError)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) > 2 {
		return usagef("usage: state THREAD [CHECKPOINT]")
	}
	if lg, ok := s.(*langgraph.Reader); ok {
		return lgState(ctx, lg, pos[0], append(pos[1:], "")[0], w)
	}
	g, err := graphOf(ctx, s, graphs, pos[0])
	if err != nil {
		return err
	}
	opts := []engine.RunOption{engine.WithThread(pos[0])}
	if len(pos) == 2 {
		opts = append(opts, engine.WithCheckpoint(pos[1]))
	}
	sn, err := g.GetState(ctx, opts...)
	if err != nil {
		return err
	}
	return printJSON(w, toJSON(sn))
}

// ResultJSON is what resume prints.
type ResultJSON struct {
	ThreadID     string                    `json:"thread_id"`
	CheckpointID string                    `json:"checkpoint_id"`
	Done         bool                      `json:"done"`
	Next         []string                  `json:"next"`
	Values       engine.Values             `json:"values"`
	Interrupts   []engine.PendingInterrupt `json:"interrupts,omitempty"`
}

// answerFlags are the flags of resume and answer.
type answerFlags struct {
	fs     *flag.FlagSet
	answer *string
	id     *string
	ttl    *time.Duration
}

func newAnswerFlags(name string) answerFlags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	return answerFlags{fs: fs,
		answer: fs.String("answer", "", "the answer, as JSON"),
		id:     fs.String("id", "", "the interrupt to answer (needed when several are pending)"),
		ttl:    fs.Duration("lease-ttl", checkpoint.DefaultLeaseTTL, "how long the thread stays claimed if this process dies")}
}

// answerCommand checks -answer against st's pending interrupts and returns
// the Command that answers them.
func answerCommand(thread, answer, id string, st *engine.Snapshot) (engine.Command, error) {
	var v any
	if err := json.Unmarshal([]byte(answer), &v); err != nil {
		return engine.Command{}, usagef("-answer is not valid JSON (%v): quote strings, e.g. -answer '\"approve\"'", err)
	}
	if v == nil {
		return engine.Command{}, usagef("-answer null is not an answer (the graph would receive no input): give the value the question asks for, e.g. -answer '\"approve\"' or -answer '{\"approved\": false}'")
	}
	if len(st.OpenInterrupts()) == 0 {
		return engine.Command{}, fmt.Errorf("thread %q has no pending interrupt to answer (it is %s)", thread, engine.StatusOf(st, nil))
	}
	ids := make([]string, len(st.OpenInterrupts()))
	for i, it := range st.OpenInterrupts() {
		ids[i] = it.ID
	}
	if id == "" {
		if len(ids) == 1 {
			// By id, so that if another run answered it first, this answer
			// is refused instead of reaching whatever asks next.
			return engine.Command{ResumeByID: map[string]any{ids[0]: v}}, nil
		}
		return engine.Command{Resume: v}, nil // the engine explains that each needs an id
	}
	if !slices.Contains(ids, id) {
		return engine.Command{}, fmt.Errorf("thread %q has no pending interrupt %q (pending: %s)", thread, id, strings.Join(ids, ", "))
	}
	return engine.Command{ResumeByID: map[string]any{id: v}}, nil
}

// claimThread claims thread for this command (see engine.Graph.Claim).
func claimThread(ctx context.Context, g *engine.Graph, thread string, ttl time.Duration) (*engine.Claim, error) {
	return g.Claim(ctx, engine.WithThread(thread), engine.WithLeaseTTL(ttl))
}

// claimedState finds thread's graph, claims the thread and reads its state
// under the claim: the state a run started under the claim starts from,
// whatever other processes do meanwhile. The caller releases the claim.
func claimedState(ctx context.Context, s checkpoint.Saver, graphs []*engine.Graph, thread string, ttl time.Duration) (*engine.Graph, *engine.Claim, *engine.Snapshot, error) {
	g, err := graphOf(ctx, s, graphs, thread)
	if err != nil {
		return nil, nil, nil, err
	}
	claim, err := claimThread(ctx, g, thread, ttl)
	if err != nil {
		return nil, nil, nil, err
	}
	st, err := g.GetState(ctx, engine.WithThread(thread))
	if err != nil {
		claim.Release()
		return nil, nil, nil, err
	}
	return g, claim, st, nil
}

func cmdResume(ctx context.Context, s checkpoint.Saver, graphs []*engine.Graph, args []string, w io.Writer) error {
	f := newAnswerFlags("resume")
	pos, err := parse(f.fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || (*f.answer == "" && *f.id != "") {
		return usagef("usage: resume THREAD [-answer JSON [-id INTERRUPT]]")
	}
	thread := pos[0]
	g, claim, st, err := claimedState(ctx, s, graphs, thread, *f.ttl)
	if err != nil {
		return err
	}
	defer claim.Release()
	var input engine.Input
	switch {
	case *f.answer != "":
		cmd, err := answerCommand(thread, *f.answer, *f.id, st)
		if err != nil {
			return err
		}
		input = cmd
	case len(st.OpenInterrupts()) > 0:
		ids := make([]string, len(st.OpenInterrupts()))
		for i, it := range st.OpenInterrupts() {
			ids[i] = it.ID
		}
		return fmt.Errorf("thread %q waits for an answer to interrupt %s: give it with -answer JSON", thread, strings.Join(ids, ", "))
	case st.Done():
		return fmt.Errorf("thread %q is done: there is nothing to continue", thread)
	}
	res, err := g.Invoke(ctx, input, engine.WithThread(thread), engine.WithClaim(claim), stopAtBoundary(ctx))
	if err != nil {
		return err
	}
	return printJSON(w, resultJSON(thread, res))
}

func resultJSON(thread string, res *engine.Result) ResultJSON {
	out := ResultJSON{ThreadID: thread, CheckpointID: res.Ref.CheckpointID, Done: res.Done, Next: res.Next, Values: res.Values, Interrupts: res.Interrupts}
	if out.Next == nil {
		out.Next = []string{}
	}
	return out
}

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

func cmdAnswer(ctx context.Context, s checkpoint.Saver, graphs []*engine.Graph, args []string, w io.Writer) error {
	f := newAnswerFlags("answer")
	pos, err := parse(f.fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *f.answer == "" {
		return usagef("usage: answer THREAD -answer JSON [-id INTERRUPT]")
	}
	thread := pos[0]
	g, claim, st, err := claimedState(ctx, s, graphs, thread, *f.ttl)
	if err != nil {
		return err
	}
	defer claim.Release()
	cmd, err := answerCommand(thread, *f.answer, *f.id, st)
	if err != nil {
		return err
	}
	ref, err := g.SubmitAnswer(ctx, cmd, engine.WithThread(thread))
	if err != nil {
		return err
	}
	return printJSON(w, map[string]any{"thread_id": thread, "checkpoint_id": ref.CheckpointID, "stored": true})
}

// cmdWorker runs the threads that have work and nobody to do it: answers
// stored with answer (SubmitAnswer), and threads a run left mid-way when
// its process died (its lease lapsed, or a step's writes are stored with
// no checkpoint after them). With -watch it keeps looking until
// interrupted, and waits out store outages instead of exiting.
func cmdWorker(ctx context.Context, s checkpoint.Saver, graphs []*engine.Graph, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	watch := fs.Duration("watch", 0, "keep polling at this interval instead of stopping when no work is left")
	ttl := fs.Duration("lease-ttl", checkpoint.DefaultLeaseTTL, "how long a thread stays claimed if this process dies")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	tl, ok := s.(checkpoint.ThreadLister)
	if !ok {
		return errors.New("this store cannot list threads")
	}
	byName := graphsByName(graphs)
	done := []ResultJSON{}
	ctx, lost := watchStore(ctx, s, storeCheckInterval)
	wait := time.Duration(0) // the backoff while the store is unreachable
	for {
		if c, ok := s.(store.Checker); ok {
			if err := c.Check(ctx); err != nil {
				return err // the store file is gone or replaced: nothing to wait for
			}
		}
		err := workOnce(ctx, s, tl, byName, *ttl, *watch > 0, &done)
		switch {
		case err == nil:
			if wait > 0 {
				warnf(ctx, "weft worker: the store is reachable again")
			}
			wait = 0
		case ctx.Err() != nil:
			// Stopped (an interrupt, or the store gone): whatever the
			// round was doing ends with the context, which is no failure
			// of its own.
			if cause := lost(); cause != nil {
				return cause
			}
			return printJSON(w, done)
		case *watch <= 0:
			return err
		default:
			wait = min(max(2*wait, time.Second), 30*time.Second)
			warnf(ctx, "weft worker: %v; retrying in %v", err, wait)
		}
		if *watch <= 0 || stopRequested(ctx) {
			break
		}
		pause := *watch
		if wait > 0 {
			pause = wait
		}
		select {
		case <-ctx.Done():
			if err := lost(); err != nil {
				return err
			}
			return printJSON(w, done)
		case <-time.After(pause):
		}
	}
	return printJSON(w, done)
}

// workOnce runs every thread with work once. Under -watch (keepGoing) a
// failed run is reported and the others go on; only a failure to read the
// store is returned.
func workOnce(ctx context.Context, s checkpoint.Saver, tl checkpoint.ThreadLister, byName map[string]*engine.Graph, ttl time.Duration, keepGoing bool, done *[]ResultJSON) error {
	infos, err := tl.ListThreads(ctx, 0)
	if err != nil {
		return err
	}
	leases, err := leasesByThread(ctx, s)
	if err != nil {
		return err
	}
	for _, ti := range infos {
		if stopRequested(ctx) {
			return nil // a signal: no new thread
		}
		name, _ := ti.LatestMeta.Extra[engine.MetaGraph].(string)
		g := byName[name]
		if g == nil {
			continue
		}
		if l := leases[ti.ThreadID]; l != nil && !l.Expired {
			continue // being run
		}
		if ok, err := g.HasWork(ctx, leases[ti.ThreadID], engine.WithThread(ti.ThreadID)); err != nil || !ok {
			if err != nil {
				return fmt.Errorf("thread %q: %w", ti.ThreadID, err)
			}
			continue
		}
		res, err := runWork(ctx, s, g, ti.ThreadID, leases[ti.ThreadID], ttl)
		switch {
		case errors.Is(err, checkpoint.ErrLeaseHeld), errors.Is(err, errNoWork):
			continue // another worker was first
		case err != nil && keepGoing && ctx.Err() == nil:
			warnf(ctx, "weft worker: thread %q: %v", ti.ThreadID, err)
			continue
		case err != nil:
			return fmt.Errorf("thread %q: %w", ti.ThreadID, err)
		}
		*done = append(*done, resultJSON(ti.ThreadID, res))
	}
	return nil
}

// errNoWork: the thread had work when listed, but not once claimed.
var errNoWork = errors.New("nothing left to do")

// runWork claims thread, checks it still has work and continues it. lease
// is the thread's lease when it was listed: an expired one says a run died
// there (claiming the thread replaced it).
func runWork(ctx context.Context, s checkpoint.Saver, g *engine.Graph, thread string, lease *checkpoint.Lease, ttl time.Duration) (*engine.Result, error) {
	claim, err := claimThread(ctx, g, thread, ttl)
	if err != nil {
		return nil, err
	}
	// Another worker may have done the work between the listing and the
	// claim.
	if ok, err := g.HasWork(ctx, lease, engine.WithThread(thread)); err != nil || !ok {
		claim.Release()
		if err == nil {
			err = errNoWork
		}
		return nil, err
	}
	res, err := g.Invoke(ctx, nil, engine.WithThread(thread), engine.WithClaim(claim), stopAtBoundary(ctx))
	if stopRequested(ctx) && err == nil && len(res.Interrupts) == 0 && len(res.Next) > 0 {
		// Stopped by a signal between steps: the lease is left to lapse,
		// so the next worker continues the thread from the step stored.
		claim.Abandon()
		warnf(ctx, "weft worker: thread %q stopped before %v; the next worker continues it", thread, res.Next)
		return res, nil
	}
	claim.Release()
	return res, err
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

// holdForDelete takes thread's lease for a delete. When a run holds it, it
// fails, or with force asks the run to stop and waits up to wait for it.
func holdForDelete(ctx context.Context, l checkpoint.Leaser, thread string, force bool, wait time.Duration) (checkpoint.Lease, error) {
	owner := engine.DefaultLeaseOwner()
	lease, err := l.AcquireLease(ctx, thread, owner, 0)
	if err == nil || !errors.Is(err, checkpoint.ErrLeaseHeld) {
		return lease, err
	}
	if !force {
		return checkpoint.Lease{}, fmt.Errorf("%w; nothing was deleted (use -force to stop that run first)", err)
	}
	if _, err := l.StopLease(ctx, thread, owner+" to delete the thread"); err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
		return checkpoint.Lease{}, err
	}
	warnf(ctx, "weft delete: %v; asked it to stop, waiting", err)
	deadline := time.Now().Add(wait)
	for {
		lease, err := l.AcquireLease(ctx, thread, owner, 0)
		if err == nil || !errors.Is(err, checkpoint.ErrLeaseHeld) {
			return lease, err
		}
		if time.Now().After(deadline) {
			return checkpoint.Lease{}, fmt.Errorf("%w; it did not stop within %v, nothing was deleted", err, wait)
		}
		select {
		case <-ctx.Done():
			return checkpoint.Lease{}, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
