package engine_test

import (
	"context"
	"testing"

	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/examples/bench"
)

var benchCount = bench.Count

// chain10 is B1's graph (package examples/bench).
func chain10(t testing.TB, opts ...engine.CompileOption) *engine.Graph {
	g, err := bench.Chain10(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func BenchmarkB1Chain10(b *testing.B) {
	g := chain10(b)
	in := engine.Values{"count": 0}
	b.ReportAllocs()
	for b.Loop() {
		res, err := g.Invoke(ctx, in)
		if err != nil || res.Values["count"] != 10 {
			b.Fatal(err, res)
		}
	}
}

// fanout200 is B4's graph: a node Sends 200 packets to worker, each returning
// i*i into an append reducer, then sum totals them.
func fanout200(t testing.TB) *engine.Graph {
	results := engine.List[int]("results")
	total := engine.LastValue[int]("total")
	return compile(t, engine.NewGraph("fanout", results, total).
		AddNode("fan", func(context.Context, engine.State) (engine.Output, error) { return nil, nil }).
		AddNode("worker", func(_ context.Context, s engine.State) (engine.Output, error) {
			i, _ := engine.ArgAs[int](s)
			return engine.Update{results.Add(i * i)}, nil
		}).
		AddNode("sum", func(_ context.Context, s engine.State) (engine.Output, error) {
			t := 0
			for _, r := range results.Get(s) {
				t += r
			}
			return engine.Update{total.Set(t)}, nil
		}).
		AddEdge(engine.START, "fan").
		AddConditionalEdges("fan", func(context.Context, engine.State) (engine.Route, error) {
			r := engine.Route{Sends: make([]engine.Send, 200)}
			for i := range r.Sends {
				r.Sends[i] = engine.Send{Node: "worker", Arg: i}
			}
			return r, nil
		}, engine.SendsTo("worker")).
		AddEdge("worker", "sum"))
}

func BenchmarkB4FanoutSend200(b *testing.B) {
	g := fanout200(b)
	b.ReportAllocs()
	for b.Loop() {
		res, err := g.Invoke(ctx, engine.Values{})
		if err != nil || res.Values["total"] != 2646700 {
			b.Fatal(err, res.Values["total"])
		}
	}
}

// loop1000 is B5's graph: one node increments count and loops to itself
// until count reaches 1000.
func loop1000(t testing.TB, opts ...engine.CompileOption) *engine.Graph {
	return compile(t, engine.NewGraph("loop", benchCount).
		AddNode("inc", func(_ context.Context, s engine.State) (engine.Output, error) {
			return engine.Update{benchCount.Set(benchCount.Get(s) + 1)}, nil
		}).
		AddEdge(engine.START, "inc").
		AddConditionalEdges("inc", func(_ context.Context, s engine.State) (engine.Route, error) {
			if benchCount.Get(s) >= 1000 {
				return engine.To(engine.END), nil
			}
			return engine.To("inc"), nil
		}, engine.Targets("inc", engine.END)), opts...)
}

func BenchmarkB5Loop1000(b *testing.B) {
	g := loop1000(b)
	b.ReportAllocs()
	for b.Loop() {
		res, err := g.Invoke(ctx, engine.Values{"count": 0}, engine.WithRecursionLimit(2000))
		if err != nil || res.Values["count"] != 1000 {
			b.Fatal(err, res)
		}
	}
}
