package engine_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
)

// callGraph is a one-node graph whose node body is fn.
func callGraph(t *testing.T, fn engine.NodeFunc, nopts ...engine.NodeOption) *engine.Graph {
	t.Helper()
	out := engine.LastValue[string]("out")
	g, err := engine.NewGraph("calls", out).
		AddNode("n", fn, nopts...).
		AddEdge(engine.START, "n").
		AddEdge("n", engine.END).
		Compile(engine.WithSaver(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func counting(n *atomic.Int32, v any) engine.CallFunc {
	return func(context.Context, any) (any, error) { n.Add(1); return v, nil }
}

// A call's result is stored when the call ends: a run that fails after it,
// as a crash would end it, resumes with the stored result instead of
// running the call again.
func TestCallResultSurvivesFailedNode(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int32
	var failNode atomic.Bool
	failNode.Store(true)
	g := callGraph(t, func(ctx context.Context, _ engine.State) (engine.Output, error) {
		v, err := engine.Call(ctx, "fetch", nil, counting(&calls, "data"), engine.CallOptions{}).Wait(ctx)
		if err != nil {
			return nil, err
		}
		if failNode.Load() {
			return nil, engine.Permanent(errors.New("crash"))
		}
		return engine.Updates(engine.Write{Channel: "out", Value: v.(string)}), nil
	})
	if _, err := g.Invoke(ctx, engine.Values{}, engine.WithThread("t")); err == nil {
		t.Fatal("want the node's failure")
	}
	tp, err := g.Saver().Get(ctx, checkpoint.Ref{ThreadID: "t"})
	if err != nil {
		t.Fatal(err)
	}
	stored := false
	for _, pw := range tp.PendingWrites {
		if pw.Channel == checkpoint.Return {
			stored = true
		}
	}
	if !stored {
		t.Fatalf("no stored call result among %v", tp.PendingWrites)
	}
	failNode.Store(false)
	res, err := g.Invoke(ctx, nil, engine.WithThread("t"))
	if err != nil || res.Values["out"] != "data" {
		t.Fatalf("resume: %v %v", err, res)
	}
	if calls.Load() != 1 {
		t.Fatalf("fetch ran %d times, want 1", calls.Load())
	}
}

// A node retried by its policy gets the call its first attempt made, not a
// second run of it.
func TestCallReusedByRetriedNode(t *testing.T) {
	ctx := context.Background()
	var calls, attempts atomic.Int32
	g := callGraph(t, func(ctx context.Context, _ engine.State) (engine.Output, error) {
		v, err := engine.Call(ctx, "fetch", nil, counting(&calls, "x"), engine.CallOptions{}).Wait(ctx)
		if err != nil {
			return nil, err
		}
		if attempts.Add(1) < 3 {
			return nil, errors.New("flaky")
		}
		return engine.Updates(engine.Write{Channel: "out", Value: v.(string)}), nil
	}, engine.WithRetry(engine.RetryPolicy{MaxAttempts: 3}))
	res, err := g.Invoke(ctx, engine.Values{}, engine.WithThread("t"))
	if err != nil || res.Values["out"] != "x" {
		t.Fatalf("%v %v", err, res)
	}
	if calls.Load() != 1 || attempts.Load() != 3 {
		t.Fatalf("fetch ran %d times (want 1) in %d attempts (want 3)", calls.Load(), attempts.Load())
	}
}

// A node that fails cancels its calls still running and waits for them; a
// node that returns without waiting still has its calls finish and stored.
func TestCallEndsWithItsNode(t *testing.T) {
	ctx := context.Background()
	var cancelled atomic.Bool
	g := callGraph(t, func(ctx context.Context, _ engine.State) (engine.Output, error) {
		engine.Call(ctx, "slow", nil, func(ctx context.Context, _ any) (any, error) {
			<-ctx.Done()
			cancelled.Store(true)
			return nil, ctx.Err()
		}, engine.CallOptions{})
		return nil, engine.Permanent(errors.New("boom"))
	})
	if _, err := g.Invoke(ctx, engine.Values{}, engine.WithThread("t")); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("want the node's error, got %v", err)
	}
	if !cancelled.Load() {
		t.Fatal("the running call was not cancelled when its node failed")
	}

	var ran atomic.Int32
	g = callGraph(t, func(ctx context.Context, _ engine.State) (engine.Output, error) {
		engine.Call(ctx, "fire", nil, counting(&ran, 1), engine.CallOptions{})
		return nil, nil
	})
	if _, err := g.Invoke(ctx, engine.Values{}, engine.WithThread("t")); err != nil {
		t.Fatal(err)
	}
	if ran.Load() != 1 {
		t.Fatalf("an unawaited call ran %d times, want 1", ran.Load())
	}
}

// Calls nest, stream their results as updates, and fail clearly outside a
// node or without a name.
func TestCallNestedAndStreamed(t *testing.T) {
	ctx := context.Background()
	g := callGraph(t, func(ctx context.Context, _ engine.State) (engine.Output, error) {
		v, err := engine.Call(ctx, "outer", 2, func(ctx context.Context, in any) (any, error) {
			inner, err := engine.Call(ctx, "inner", in, func(_ context.Context, in any) (any, error) {
				return in.(int) * 10, nil
			}, engine.CallOptions{}).Wait(ctx)
			if err != nil {
				return nil, err
			}
			return inner.(int) + 1, nil
		}, engine.CallOptions{}).Wait(ctx)
		if err != nil {
			return nil, err
		}
		if v != 21 {
			return nil, engine.Permanent(errors.New("nested call returned the wrong value"))
		}
		return engine.Updates(engine.Write{Channel: "out", Value: "ok"}), nil
	})
	var got []string
	for ev, err := range g.Stream(ctx, engine.Values{}, engine.ModeUpdates, engine.WithThread("t")) {
		if err != nil {
			t.Fatal(err)
		}
		if u := ev.Update; u.Returned {
			got = append(got, u.Node)
		}
	}
	if strings.Join(got, ",") != "inner,outer" {
		t.Fatalf("call updates %v, want inner then outer", got)
	}
	if _, err := engine.Call(ctx, "x", nil, counting(new(atomic.Int32), 1), engine.CallOptions{}).Wait(ctx); err == nil || !strings.Contains(err.Error(), "outside a running node") {
		t.Fatalf("want an error outside a node, got %v", err)
	}
}

func TestOnInputChecks(t *testing.T) {
	noop := func(context.Context, engine.State) (engine.Output, error) { return nil, nil }
	_, err := engine.NewGraph("two", engine.LastValue[int]("x")).
		AddNode("a", noop, engine.OnInput()).
		AddNode("b", noop, engine.OnInput()).
		AddEdge(engine.START, "a").AddEdge("a", "b").AddEdge("b", engine.END).Compile()
	if err == nil || !strings.Contains(err.Error(), "both OnInput") {
		t.Fatalf("want an error for two OnInput nodes, got %v", err)
	}
	_, err = engine.NewGraph("other", engine.LastValue[int]("x")).
		AddNode("a", noop, engine.OnInput()).
		AddNode("b", noop).
		AddEdge(engine.START, "a").AddEdge(engine.START, "b").AddEdge("a", engine.END).AddEdge("b", engine.END).Compile()
	if err == nil || !strings.Contains(err.Error(), "START may only lead to it") {
		t.Fatalf("want an error for a second START edge, got %v", err)
	}
}
