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
	"sort"
	"strings"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/longterm"
	"github.com/weftstudio/weft/checkpoint/sqlite"
	"github.com/weftstudio/weft/checkpoint/store"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/internal/textdist"
	"github.com/weftstudio/weft/telemetry"
)

// Env is what the commands run against. Zero Stdout/Stderr discard output.
type Env struct {
	Graphs []*engine.Graph
	Stdout io.Writer
	Stderr io.Writer
	// Extra adds commands implemented elsewhere (serve, export, import), by
	// name; they get the open store and their own arguments.
	Extra map[string]Command
	// NoWindow marks a binary without the studio (cmd/weft-headless): help
	// then offers no window. The zero value is the full weft, where no
	// command opens the studio. Main sets it when it has no window.
	NoWindow bool
	// Embedder gives the store's long-term items semantic search (the
	// graphs' stores, weft store search -query, weft serve's store
	// endpoints); nil searches by filter alone. A binary that links a
	// provider SDK sets it (examples/live, from $WEFT_EMBEDDINGS).
	Embedder longterm.Embedder
}

// longTermKey is the context key of the long-term store's configuration
// the commands open it with (Env.Embedder).
type longTermKey struct{}

// longTermConfig is the configuration the command's long-term store is
// opened with.
func longTermConfig(ctx context.Context) longterm.Config {
	cfg, _ := ctx.Value(longTermKey{}).(longterm.Config)
	return cfg
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
	// Traces commands trace their graphs' runs with OpenTelemetry when
	// the OTEL_* variables ask for it (telemetry.FromEnv).
	Traces bool
}

type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

var builtins = map[string]Command{
	"threads": {Summary: "list the store's threads, newest first, with their status: threads [-graph NAME] [-limit N]", Run: cmdThreads, ReadOnly: true},
	"history": {Summary: "list a thread's checkpoints, newest first: history THREAD [-limit N]", Run: cmdHistory, ReadOnly: true},
	"state":   {Summary: "show a thread's state: state THREAD [CHECKPOINT]", Run: cmdState, ReadOnly: true},
	"resume":  {Summary: "answer a thread's interrupt and run on, or without -answer continue a paused thread: resume THREAD [-answer JSON [-id INTERRUPT]]", Run: cmdResume, StopsAtSteps: true, Traces: true},
	"prune":   {Summary: "delete old checkpoints: prune -keep N [THREAD…] | prune -older-than 720h", Run: cmdPrune},
	"delete":  {Summary: "delete threads and all their checkpoints: delete THREAD… [-force]", Run: cmdDelete},
	"answer":  {Summary: "store an answer for a worker to pick up, without running: answer THREAD -answer JSON [-id INTERRUPT]", Run: cmdAnswer},
	"worker":  {Summary: "resume threads whose answers wait and continue threads a dead run left, until none is left: worker [-watch 2s]", Run: cmdWorker, StopsAtSteps: true, Traces: true},
	"run":     {Summary: "run a graph, or continue a thread, stopping at breakpoints: run GRAPH -input JSON [-break SPEC]… | run -thread ID [-break SPEC]…", Run: cmdRun, StopsAtSteps: true, Traces: true},
	"watch":   {Summary: "evaluate expressions at every checkpoint of a thread: watch THREAD EXPR…", Run: cmdWatch, ReadOnly: true},
	"compare": {Summary: "compare two checkpoints of a thread (where they part, steps, state diff): compare THREAD A B", Run: cmdCompare, ReadOnly: true},
	"replay":  {Summary: "re-run a thread against this binary's code on a scratch copy and report the first checkpoint that differs: replay THREAD [-strict] [-to CHECKPOINT]", Run: cmdReplay, ReadOnly: true},
	"export":  {Summary: "write a thread as a JSON bundle: export THREAD [-o FILE]", Run: cmdExport, ReadOnly: true},
	"import":  {Summary: "read a thread bundle into the store: import FILE [-as THREAD]", Run: cmdImport},
	"serve":   {Summary: "serve every graph over AG-UI at http://ADDR/agents/<graph> and LangGraph's Agent Server API at http://ADDR/: serve [-addr 127.0.0.1:8123] [-allow-origin URL] [-allow-host NAME] [-token T]", Run: cmdServe, Traces: true},
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
		usage(env.Stderr, cmds, env.NoWindow)
		return 2
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		usage(env.Stdout, cmds, env.NoWindow)
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
	if wantsHelp(rest) {
		commandHelp(ctx, env.Stdout, args[0], cmd, rest)
		return 0
	}
	if isServerStore(spec) {
		return runOnServer(ctx, args[0], spec, create, rest, env)
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
	ltc := longterm.Config{Embedder: env.Embedder}
	ctx = context.WithValue(ctx, longTermKey{}, ltc)
	graphs := make([]*engine.Graph, len(env.Graphs))
	for i, g := range env.Graphs {
		graphs[i] = withKept(g.WithSaver(s), s, ltc)
	}
	if cmd.Traces {
		tr, err := telemetry.FromEnv(ctx)
		if err != nil {
			fmt.Fprintf(env.Stderr, "weft %s: %v\n", args[0], err)
			return 2
		}
		if tr != nil {
			defer shutdownTraces(tr, env.Stderr)
			for i, g := range graphs {
				graphs[i] = tr.Instrument(g)
			}
		}
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

// shutdownTraces exports the spans still waiting, for a few seconds at
// most: the command's own outcome does not wait on a collector.
func shutdownTraces(tr *telemetry.Tracer, stderr io.Writer) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tr.Shutdown(ctx); err != nil {
		fmt.Fprintf(stderr, "weft: exporting traces: %v\n", err)
	}
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

func usage(w io.Writer, cmds map[string]Command, noWindow bool) {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)

	if noWindow {
		fmt.Fprintln(w, "usage: weft COMMAND [-db PATH | -store DSN] [-create] [ARGS]")
		fmt.Fprintln(w, "Commands print JSON; the store must exist (-create lets a command that")
		fmt.Fprintln(w, "writes make a new one). COMMAND -h lists a command's flags:")
	} else {
		fmt.Fprintln(w, "usage: weft [COMMAND] [-db PATH | -store DSN] [-create] [ARGS]")
		fmt.Fprintln(w, "Without a command, weft opens the studio. Commands print JSON; the store")
		fmt.Fprintln(w, "must exist (-create lets a command that writes make a new one).")
		fmt.Fprintln(w, "COMMAND -h lists a command's flags:")
	}
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
		if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
			return nil, &helpRequested{fs}
		} else if err != nil {
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

// helpRequested is parse's answer to -h: the command's flags, for
// commandHelp to print instead of running the command.
type helpRequested struct{ fs *flag.FlagSet }

func (h *helpRequested) Error() string { return "help requested" }

// wantsHelp reports whether a command's arguments ask for its help (-h,
// -help or --help before any "--").
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// commandHelp prints a command's usage and flags. It runs the command
// with no store: every command parses its flags first, and parse answers
// -h with helpRequested before the store is touched, so help works
// without a store (and never creates one). A command that does not (one
// from Env.Extra) gets its summary alone; the recover is for such a
// command reaching for the missing store.
func commandHelp(ctx context.Context, w io.Writer, name string, cmd Command, args []string) {
	var hr *helpRequested
	func() {
		defer func() { _ = recover() }()
		err := cmd.Run(ctx, nil, nil, args, io.Discard)
		errors.As(err, &hr)
	}()
	summary, use, _ := strings.Cut(cmd.Summary, ": ")
	if use == "" {
		use = name
	}
	fmt.Fprintf(w, "usage: weft %s\n%s.\n", use, summary)
	fmt.Fprintln(w, "Global flags: -db PATH (default weft.db) | -store DSN; -create lets a command that writes make the store.")
	if hr == nil {
		return
	}
	n := 0
	hr.fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		fmt.Fprintf(w, "%s has no flags of its own.\n", name)
		return
	}
	fmt.Fprintln(w, "Flags:")
	hr.fs.SetOutput(w)
	hr.fs.PrintDefaults()
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
