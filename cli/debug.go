package cli

// The debugger's headless commands: run a graph with breakpoints on data,
// watch expressions along a thread's timeline, and compare two branches.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/google/uuid"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/inspect"
)

// multiFlag collects a repeated flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, "; ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// RunJSON is what run prints: the run's result and, when a breakpoint
// stopped it, which one.
type RunJSON struct {
	ResultJSON
	Breakpoint string `json:"breakpoint,omitempty"` // the spec that hit
	Step       int    `json:"step,omitempty"`
}

func cmdRun(ctx context.Context, s checkpoint.Saver, graphs []*engine.Graph, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	input := fs.String("input", "", "the new run's input, a JSON object of channel values")
	thread := fs.String("thread", "", "the thread (default: a new one for a new run)")
	var breaks multiFlag
	fs.Var(&breaks, "break", "a breakpoint: change:CH, when:EXPR (or a bare EXPR), write:NODE:CH, before:NODE [if EXPR], after:NODE [if EXPR]; repeatable")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	var g *engine.Graph
	var in engine.Input
	switch {
	case len(pos) == 1 && *input != "":
		for _, c := range graphs {
			if c.Name() == pos[0] {
				g = c
			}
		}
		if g == nil {
			return usagef("unknown graph %q: this binary has %s", pos[0], quoteList(graphNames(graphs)))
		}
		vals, err := g.DecodeValues([]byte(*input))
		if err != nil {
			return usagef("-input: %v", err)
		}
		in = vals
		if *thread == "" {
			*thread = uuid.NewString()
		}
	case len(pos) == 0 && *input == "" && *thread != "":
		if g, err = graphOf(ctx, s, graphs, *thread); err != nil {
			return err
		}
	default:
		return usagef("usage: run GRAPH -input JSON [-thread ID] [-break SPEC]… | run -thread ID [-break SPEC]… (continue a thread)")
	}
	env := inspect.NewEnv(g)
	bs := &inspect.Breakpoints{}
	for _, spec := range breaks {
		b, err := inspect.Parse(g, env, spec)
		if err != nil {
			return usagef("-break: %v", err)
		}
		bs.List = append(bs.List, b)
	}
	var condErr error
	bs.Err = func(b inspect.Breakpoint, err error) { condErr = fmt.Errorf("breakpoint %q: %w", b.Spec, err) }
	res, err := g.Invoke(ctx, in, engine.WithThread(*thread), engine.WithPhases(bs.Phases()), stopAtBoundary(ctx))
	if err != nil {
		return err
	}
	if condErr != nil {
		return condErr
	}
	out := RunJSON{ResultJSON: ResultJSON{ThreadID: *thread, CheckpointID: res.Ref.CheckpointID, Done: res.Done, Next: res.Next, Values: res.Values, Interrupts: res.Interrupts}}
	if out.Next == nil {
		out.Next = []string{}
	}
	if h := bs.Hit(); h != nil {
		out.Breakpoint, out.Step = h.Breakpoint.Spec, h.Step
	}
	return printJSON(w, out)
}

// WatchJSON is one checkpoint's watch values as watch prints them.
type WatchJSON struct {
	CheckpointID string   `json:"checkpoint_id"`
	Step         int      `json:"step"`
	Values       []any    `json:"values"`
	Errors       []string `json:"errors,omitempty"`
}

func cmdWatch(ctx context.Context, s checkpoint.Saver, graphs []*engine.Graph, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("watch", flag.ContinueOnError)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 2 {
		return usagef("usage: watch THREAD EXPR… (each EXPR over the thread's channels, at every checkpoint, newest first)")
	}
	g, done, err := readGraphOf(ctx, s, graphs, pos[0])
	if err != nil {
		return err
	}
	defer done()
	return watchOn(ctx, g, pos[0], pos[1:], w)
}

// watchOn is watch of thread on g (bound to its store): srcs evaluated at
// every checkpoint, newest first.
func watchOn(ctx context.Context, g *engine.Graph, thread string, srcs []string, w io.Writer) error {
	env := inspect.NewEnv(g)
	var exprs []*inspect.Expr
	for _, src := range srcs {
		e, err := env.Compile(src)
		if err != nil {
			return usagef("%v", err)
		}
		exprs = append(exprs, e)
	}
	rows, err := inspect.WatchTimeline(ctx, g, exprs, engine.WithThread(thread))
	if err != nil {
		return err
	}
	out := make([]WatchJSON, len(rows))
	for i, r := range rows {
		out[i] = WatchJSON{CheckpointID: r.Checkpoint, Step: r.Step, Values: r.Values}
		for _, e := range r.Errs {
			if e != nil {
				out[i].Errors = append(out[i].Errors, e.Error())
			}
		}
	}
	return printJSON(w, out)
}

func cmdCompare(ctx context.Context, s checkpoint.Saver, graphs []*engine.Graph, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 3 {
		return usagef("usage: compare THREAD CHECKPOINT_A CHECKPOINT_B")
	}
	g, done, err := readGraphOf(ctx, s, graphs, pos[0])
	if err != nil {
		return err
	}
	defer done()
	return compareOn(ctx, g, pos[0], pos[1], pos[2], w)
}

// compareOn is compare of checkpoints a and b of thread on g (bound to its
// store).
func compareOn(ctx context.Context, g *engine.Graph, thread, a, b string, w io.Writer) error {
	c, err := inspect.Compare(ctx, g, a, b, engine.WithThread(thread))
	if err != nil {
		return err
	}
	return printJSON(w, c)
}
