// Package cli is the studio's headless companion: subcommands of the weft
// binary that work on the same store as the window and print JSON, for
// scripts and CI. Each command prints one JSON document on stdout; errors go
// to stderr with exit code 1 (2 for a usage mistake).
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/sqlite"
	"github.com/weftstudio/weft/checkpoint/store"
	"github.com/weftstudio/weft/engine"
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
}

type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

var builtins = map[string]Command{
	"threads": {Summary: "list the store's threads, newest first: threads [-graph NAME] [-limit N]", Run: cmdThreads, ReadOnly: true},
	"history": {Summary: "list a thread's checkpoints, newest first: history THREAD [-limit N]", Run: cmdHistory, ReadOnly: true},
	"state":   {Summary: "show a thread's state: state THREAD [CHECKPOINT]", Run: cmdState, ReadOnly: true},
	"resume":  {Summary: "answer a thread's interrupt and run on: resume THREAD -answer JSON [-id INTERRUPT]", Run: cmdResume},
	"prune":   {Summary: "delete old checkpoints: prune -keep N [THREAD…] | prune -older-than 720h", Run: cmdPrune},
	"delete":  {Summary: "delete threads and all their checkpoints: delete THREAD…", Run: cmdDelete},
	"answer":  {Summary: "store an answer for a worker to pick up, without running: answer THREAD -answer JSON [-id INTERRUPT]", Run: cmdAnswer},
	"worker":  {Summary: "resume threads whose answers are waiting, until none is left: worker [-watch 2s]", Run: cmdWorker},
	"run":     {Summary: "run a graph, or continue a thread, stopping at breakpoints: run GRAPH -input JSON [-break SPEC]… | run -thread ID [-break SPEC]…", Run: cmdRun},
	"watch":   {Summary: "evaluate expressions at every checkpoint of a thread: watch THREAD EXPR…", Run: cmdWatch, ReadOnly: true},
	"compare": {Summary: "compare two checkpoints of a thread (where they part, steps, state diff): compare THREAD A B", Run: cmdCompare, ReadOnly: true},
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
	graphs := make([]*engine.Graph, len(env.Graphs))
	for i, g := range env.Graphs {
		graphs[i] = g.WithSaver(s)
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
		if d := editDistance(name, c); d < bestD || d == bestD && best != "" && c < best {
			best, bestD = c, d
		}
	}
	if bestD > max(1, len(name)/2) {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
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
	out := []ThreadJSON{}
	for _, ti := range infos {
		g, _ := ti.LatestMeta.Extra[engine.MetaGraph].(string)
		if *graph != "" && g != *graph {
			continue
		}
		out = append(out, ThreadJSON{ThreadID: ti.ThreadID, Graph: g, Checkpoints: ti.Checkpoints, Step: ti.LatestMeta.Step,
			Source: string(ti.LatestMeta.Source), UpdatedAt: ti.UpdatedAt})
		if *limit > 0 && len(out) == *limit {
			break
		}
	}
	return printJSON(w, out)
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
	g, err := graphOf(ctx, s, graphs, pos[0])
	if err != nil {
		return err
	}
	snaps, err := g.History(ctx, checkpoint.ListOptions{Limit: *limit}, engine.WithThread(pos[0]))
	if err != nil {
		return err
	}
	out := make([]SnapshotJSON, len(snaps))
	for i, sn := range snaps {
		out[i] = toJSON(sn)
	}
	return printJSON(w, out)
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

// answerArgs parses THREAD -answer JSON [-id INTERRUPT] and checks the
// answer against the thread's pending interrupts.
func answerArgs(ctx context.Context, name string, s checkpoint.Saver, graphs []*engine.Graph, args []string) (*engine.Graph, string, engine.Command, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	answer := fs.String("answer", "", "the answer, as JSON")
	id := fs.String("id", "", "the interrupt to answer (needed when several are pending)")
	pos, err := parse(fs, args)
	if err != nil {
		return nil, "", engine.Command{}, err
	}
	if len(pos) != 1 || *answer == "" {
		return nil, "", engine.Command{}, usagef("usage: %s THREAD -answer JSON [-id INTERRUPT]", name)
	}
	var v any
	if err := json.Unmarshal([]byte(*answer), &v); err != nil {
		return nil, "", engine.Command{}, usagef("-answer is not valid JSON (%v): quote strings, e.g. -answer '\"approve\"'", err)
	}
	if v == nil {
		return nil, "", engine.Command{}, usagef("-answer null is not an answer (the graph would receive no input): give the value the question asks for, e.g. -answer '\"approve\"' or -answer '{\"approved\": false}'")
	}
	thread := pos[0]
	g, err := graphOf(ctx, s, graphs, thread)
	if err != nil {
		return nil, "", engine.Command{}, err
	}
	st, err := g.GetState(ctx, engine.WithThread(thread))
	if err != nil {
		return nil, "", engine.Command{}, err
	}
	if len(st.Interrupts) == 0 {
		return nil, "", engine.Command{}, fmt.Errorf("thread %q has no pending interrupt to answer", thread)
	}
	cmd := engine.Command{Resume: v}
	if *id != "" {
		ids := make([]string, len(st.Interrupts))
		for i, it := range st.Interrupts {
			ids[i] = it.ID
		}
		if !slices.Contains(ids, *id) {
			return nil, "", engine.Command{}, fmt.Errorf("thread %q has no pending interrupt %q (pending: %s)", thread, *id, strings.Join(ids, ", "))
		}
		cmd = engine.Command{ResumeByID: map[string]any{*id: v}}
	}
	return g, thread, cmd, nil
}

func cmdResume(ctx context.Context, s checkpoint.Saver, graphs []*engine.Graph, args []string, w io.Writer) error {
	g, thread, cmd, err := answerArgs(ctx, "resume", s, graphs, args)
	if err != nil {
		return err
	}
	res, err := g.Invoke(ctx, cmd, engine.WithThread(thread))
	if err != nil {
		return err
	}
	out := ResultJSON{ThreadID: thread, CheckpointID: res.Ref.CheckpointID, Done: res.Done, Next: res.Next, Values: res.Values, Interrupts: res.Interrupts}
	if out.Next == nil {
		out.Next = []string{}
	}
	return printJSON(w, out)
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
	if *keep < 0 {
		return usagef("usage: prune -keep N [THREAD…] | prune -older-than DURATION")
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
	g, thread, cmd, err := answerArgs(ctx, "answer", s, graphs, args)
	if err != nil {
		return err
	}
	ref, err := g.SubmitAnswer(ctx, cmd, engine.WithThread(thread))
	if err != nil {
		return err
	}
	return printJSON(w, map[string]any{"thread_id": thread, "checkpoint_id": ref.CheckpointID, "stored": true})
}

// cmdWorker resumes every thread whose answer waits (SubmitAnswer), and
// with -watch keeps looking until interrupted.
func cmdWorker(ctx context.Context, s checkpoint.Saver, graphs []*engine.Graph, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	watch := fs.Duration("watch", 0, "keep polling at this interval instead of stopping when no work is left")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	tl, ok := s.(checkpoint.ThreadLister)
	if !ok {
		return errors.New("this store cannot list threads")
	}
	byName := map[string]*engine.Graph{}
	for _, g := range graphs {
		byName[g.Name()] = g
	}
	var done []ResultJSON
	ctx, lost := watchStore(ctx, s, storeCheckInterval)
	for {
		if c, ok := s.(store.Checker); ok {
			if err := c.Check(ctx); err != nil {
				return err
			}
		}
		infos, err := tl.ListThreads(ctx, 0)
		if err != nil {
			return err
		}
		for _, ti := range infos {
			name, _ := ti.LatestMeta.Extra[engine.MetaGraph].(string)
			g := byName[name]
			if g == nil {
				continue
			}
			th := engine.WithThread(ti.ThreadID)
			if ok, err := g.AnswerWaiting(ctx, th); err != nil || !ok {
				continue
			}
			res, err := g.Invoke(ctx, nil, th)
			if err != nil {
				return fmt.Errorf("thread %q: %w", ti.ThreadID, err)
			}
			r := ResultJSON{ThreadID: ti.ThreadID, CheckpointID: res.Ref.CheckpointID, Done: res.Done, Next: res.Next, Values: res.Values, Interrupts: res.Interrupts}
			if r.Next == nil {
				r.Next = []string{}
			}
			done = append(done, r)
		}
		if *watch <= 0 {
			break
		}
		select {
		case <-ctx.Done():
			if err := lost(); err != nil {
				return err
			}
			return printJSON(w, done)
		case <-time.After(*watch):
		}
	}
	if done == nil {
		done = []ResultJSON{}
	}
	return printJSON(w, done)
}

func cmdDelete(ctx context.Context, s checkpoint.Saver, _ []*engine.Graph, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("delete", flag.ContinueOnError)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("usage: delete THREAD…")
	}
	for _, id := range pos {
		if _, err := s.Get(ctx, checkpoint.Ref{ThreadID: id}); errors.Is(err, checkpoint.ErrNotFound) {
			return fmt.Errorf("thread %q not found in this store; nothing was deleted", id)
		} else if err != nil {
			return err
		}
	}
	for _, id := range pos {
		if err := s.DeleteThread(ctx, id); err != nil {
			return fmt.Errorf("deleting thread %q: %w", id, err)
		}
	}
	return printJSON(w, map[string]any{"deleted_threads": pos})
}
