package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
)

// The default retry policy given at Compile retries plain failures and
// gives up at once on what another attempt cannot change: routing errors,
// panics, Permanent errors, cancellation. A Send to END is an
// InvalidUpdateError that LangGraph's default policy retries, and so does
// Weft's.
func TestDefaultRetryPolicy(t *testing.T) {
	ctx := context.Background()
	out := engine.LastValue[string]("out")
	policy := engine.RetryPolicy{MaxAttempts: 3} // no waiting
	cases := []struct {
		name     string
		fail     func(call int) (engine.Output, error)
		route    bool // route through a conditional edge that names an unknown path key
		sendEnd  bool // route through a conditional edge that Sends to END
		calls    int
		succeeds bool
	}{
		{"plain error, then success", func(call int) (engine.Output, error) {
			if call < 3 {
				return nil, fmt.Errorf("flaky %d", call)
			}
			return engine.Updates(out.Set("ok")), nil
		}, false, false, 3, true},
		{"plain error every time", func(call int) (engine.Output, error) { return nil, errors.New("down") }, false, false, 3, false},
		{"permanent", func(int) (engine.Output, error) { return nil, engine.Permanent(errors.New("bad request")) }, false, false, 1, false},
		{"panic", func(int) (engine.Output, error) { panic("boom") }, false, false, 1, false},
		{"invalid update", func(int) (engine.Output, error) {
			return engine.Updates(engine.Write{Channel: "nope", Value: 1}), nil
		}, false, false, 1, false},
		{"wrong output type", func(int) (engine.Output, error) { return engine.Commands{{Resume: "x"}}, nil }, false, false, 1, false},
		{"unknown path key", func(int) (engine.Output, error) { return nil, nil }, true, false, 1, false},
		{"Send to END", func(int) (engine.Output, error) { return nil, nil }, false, true, 3, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var calls atomic.Int32
			sg := engine.NewGraph("retry", out).
				AddNode("n", func(context.Context, engine.State) (engine.Output, error) {
					return c.fail(int(calls.Add(1)))
				}).
				AddEdge(engine.START, "n")
			if c.sendEnd {
				sg.AddConditionalEdges("n", func(context.Context, engine.State) (engine.Route, error) {
					return engine.SendTo(engine.Send{Node: engine.END}), nil
				}, engine.Targets(engine.END))
			}
			if c.route {
				sg.AddNode("after", noop)
				sg.AddConditionalEdges("n", func(context.Context, engine.State) (engine.Route, error) {
					return engine.To("missing"), nil
				}, engine.PathMap(map[string]string{"there": "after"}))
			}
			g, err := sg.Compile(engine.WithDefaultRetry(policy))
			if err != nil {
				t.Fatal(err)
			}
			_, err = g.Invoke(ctx, engine.Values{})
			if got := int(calls.Load()); got != c.calls {
				t.Errorf("node ran %d times, want %d (err %v)", got, c.calls, err)
			}
			if (err == nil) != c.succeeds {
				t.Errorf("err = %v, want success %v", err, c.succeeds)
			}
		})
	}
}

// WithStopCheck pauses a run cleanly before the next super-step; the
// result says what runs next and Invoke(nil) continues from there.
func TestStopCheckPausesBetweenSteps(t *testing.T) {
	ctx := context.Background()
	log := engine.List[string]("log")
	var stop atomic.Bool
	g, err := engine.NewGraph("stop", log).
		AddNode("a", func(context.Context, engine.State) (engine.Output, error) {
			stop.Store(true) // asked while a runs: the run stops after a's step
			return engine.Updates(log.Add("a")), nil
		}).
		AddNode("b", logNode(log, "b")).AddNode("c", logNode(log, "c")).
		AddEdge(engine.START, "a").AddEdge("a", "b").AddEdge("b", "c").
		Compile(engine.WithSaver(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	th := engine.WithThread("t")
	res, err := g.Invoke(ctx, engine.Values{}, th, engine.WithStopCheck(stop.Load))
	if err != nil {
		t.Fatal(err)
	}
	if res.Breakpoint != "step" || !slices.Equal(res.Next, []string{"b"}) || res.Done {
		t.Fatalf("paused run: %+v, want a step stop with next [b]", res)
	}
	if got := log.Get(engine.StateOf(res.Values)); !slices.Equal(got, []string{"a"}) {
		t.Errorf("log at the pause = %v, want [a]", got)
	}
	res, err = g.Invoke(ctx, nil, th)
	if err != nil || !res.Done || !slices.Equal(log.Get(engine.StateOf(res.Values)), []string{"a", "b", "c"}) {
		t.Fatalf("continued run: %+v, %v", res, err)
	}
}

// A node that fails with a saver's conflict (a subgraph whose thread another
// writer advanced) is not retried: running it again would store the step
// again.
func TestRetryNeverRetriesConflict(t *testing.T) {
	n := engine.LastValue[int]("n")
	var runs atomic.Int32
	b := engine.NewGraph("conflict", n)
	b.AddNode("put", func(context.Context, engine.State) (engine.Output, error) {
		runs.Add(1)
		return nil, fmt.Errorf("subgraph: %w", &checkpoint.ConflictError{ThreadID: "t", ParentID: "a", HeadID: "b", CheckpointID: "c"})
	}, engine.WithRetry(engine.RetryPolicy{MaxAttempts: 3}))
	b.AddEdge(engine.START, "put")
	g := compile(t, b)
	_, err := g.Invoke(context.Background(), engine.Values{"n": 1})
	if !errors.Is(err, checkpoint.ErrConflict) {
		t.Fatalf("err = %v, want a conflict", err)
	}
	if got := runs.Load(); got != 1 {
		t.Errorf("node ran %d times, want 1", got)
	}
}

// invalidInput is an error that says it is a wrong value (Python's
// ValueError).
type invalidInput struct{}

func (invalidInput) Error() string                 { return "invalid input" }
func (invalidInput) ErrorClass() engine.ErrorClass { return engine.ClassInvalid }

// The default retry-on is the root graph's reference's, in its subgraphs
// too, whatever they were compiled with: a node that fails once with an
// error declaring ClassInvalid is retried following LangGraph.js, not
// following Python (B8).
func TestDefaultRetryOnFollowsTheRootReference(t *testing.T) {
	for _, c := range []struct {
		ref      engine.Reference
		calls    int32
		succeeds bool
	}{{engine.LangGraphJS, 2, true}, {engine.LangGraphPython, 1, false}} {
		t.Run(c.ref.String(), func(t *testing.T) {
			out := engine.LastValue[string]("out")
			var calls atomic.Int32
			child := compile(t, engine.NewGraph("child", out).
				AddNode("flaky", func(context.Context, engine.State) (engine.Output, error) {
					if calls.Add(1) == 1 {
						return nil, fmt.Errorf("parsing: %w", invalidInput{})
					}
					return engine.Updates(out.Set("ok")), nil
				}, engine.WithRetry(engine.RetryPolicy{MaxAttempts: 2})).
				AddEdge(engine.START, "flaky")) // the default reference: Python
			g := compile(t, engine.NewGraph("parent", out).
				AddSubgraph("child", child).
				AddEdge(engine.START, "child"), engine.WithReference(c.ref))
			res, err := g.Invoke(context.Background(), engine.Values{})
			if got := calls.Load(); got != c.calls {
				t.Errorf("flaky ran %d times, want %d", got, c.calls)
			}
			if (err == nil) != c.succeeds || (err == nil && res.Values["out"] != "ok") {
				t.Errorf("run: %+v, %v; want success %v", res, err, c.succeeds)
			}
			var ce engine.ClassifiedError
			if err != nil && (!errors.As(err, &ce) || ce.ErrorClass() != engine.ClassInvalid) {
				t.Errorf("the run's error %v does not keep its class", err)
			}
		})
	}
}
