package engine_test

import (
	"context"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
)

// HasWork is the one rule the worker, the servers and the studio use for
// "should a worker run this thread?": an answer waiting, or a dead run's
// thread paused; never a question nobody answered, a finished thread, or
// a pause someone chose.
func TestHasWork(t *testing.T) {
	ctx := context.Background()
	v := engine.LastValue[string]("v")
	build := func(opts ...engine.CompileOption) *engine.Graph {
		g, err := engine.NewGraph("w", v).
			AddNode("ask", func(ctx context.Context, s engine.State) (engine.Output, error) {
				a, err := engine.InterruptAs[string](ctx, "go?")
				if err != nil {
					return nil, err
				}
				return engine.Updates(v.Set(a)), nil
			}).
			AddNode("end", func(context.Context, engine.State) (engine.Output, error) { return nil, nil }).
			AddEdge(engine.START, "ask").AddEdge("ask", "end").AddEdge("end", engine.END).
			Compile(append([]engine.CompileOption{engine.WithSaver(memory.New())}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	expired := &checkpoint.Lease{Expired: true}
	has := func(g *engine.Graph, thread string, lease *checkpoint.Lease) bool {
		t.Helper()
		ok, err := g.HasWork(ctx, lease, engine.WithThread(thread))
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}

	g := build()
	th := engine.WithThread("t")
	if _, err := g.Invoke(ctx, engine.Values{}, th); err != nil {
		t.Fatal(err)
	}
	if has(g, "t", nil) || has(g, "t", expired) {
		t.Error("a question nobody answered is work for a worker")
	}
	if _, err := g.SubmitAnswer(ctx, engine.Command{Resume: "yes"}, th); err != nil {
		t.Fatal(err)
	}
	if !has(g, "t", nil) {
		t.Error("a stored answer is not work for a worker")
	}
	if _, err := g.Invoke(ctx, nil, th); err != nil {
		t.Fatal(err)
	}
	if has(g, "t", nil) || has(g, "t", expired) {
		t.Error("a finished thread is work for a worker")
	}

	b := build(engine.WithInterruptBefore("ask"))
	if _, err := b.Invoke(ctx, engine.Values{}, engine.WithThread("p")); err != nil {
		t.Fatal(err)
	}
	if has(b, "p", nil) {
		t.Error("a thread paused at a breakpoint, with no dead run in it, is work for a worker")
	}
	if !has(b, "p", expired) {
		t.Error("a dead run's paused thread is not work for a worker")
	}
}
