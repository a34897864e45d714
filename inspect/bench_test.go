package inspect_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/sqlite"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/inspect"
)

var count = engine.LastValue[int]("count")

// loopGraph counts to limit, one checkpoint per step, on a SQLite store.
func loopGraph(b *testing.B, limit int) *engine.Graph {
	b.Helper()
	saver, err := sqlite.Open(filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { saver.Close() })
	g, err := engine.NewGraph("loop", count, notes).
		AddNode("inc", func(_ context.Context, s engine.State) (engine.Output, error) {
			n := count.Get(s) + 1
			up := engine.Updates(count.Set(n))
			if n%100 == 0 {
				up = append(up, notes.Add(fmt.Sprint("at ", n)))
			}
			return up, nil
		}).
		AddEdge(engine.START, "inc").
		AddConditionalEdges("inc", func(_ context.Context, s engine.State) (engine.Route, error) {
			if count.Get(s) >= limit {
				return engine.To(engine.END), nil
			}
			return engine.To("inc"), nil
		}, engine.Targets("inc", engine.END)).
		Compile(engine.WithSaver(saver))
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// BenchmarkWatchTimeline10000: three watches at every checkpoint of a
// 10,000-checkpoint thread in SQLite (reading the history included).
func BenchmarkWatchTimeline10000(b *testing.B) {
	ctx := context.Background()
	g := loopGraph(b, 9998)
	th := engine.WithThread("t")
	if _, err := g.Invoke(ctx, engine.Values{}, th, engine.WithRecursionLimit(20000)); err != nil {
		b.Fatal(err)
	}
	env := inspect.NewEnv(g)
	var exprs []*inspect.Expr
	for _, src := range []string{"count", "count > 5000", "len(notes)"} {
		e, err := env.Compile(src)
		if err != nil {
			b.Fatal(err)
		}
		exprs = append(exprs, e)
	}
	b.ResetTimer()
	for b.Loop() {
		rows, err := inspect.WatchTimeline(ctx, g, exprs, th)
		if err != nil || len(rows) != 10000 {
			b.Fatalf("%d rows, %v", len(rows), err)
		}
	}
}

// BenchmarkCompareBranches: two branches of 1,000 steps each from one
// checkpoint, compared.
func BenchmarkCompareBranches(b *testing.B) {
	ctx := context.Background()
	g := loopGraph(b, 1000)
	th := engine.WithThread("t")
	first, err := g.Invoke(ctx, engine.Values{}, th, engine.WithRecursionLimit(5000))
	if err != nil {
		b.Fatal(err)
	}
	hist, err := g.History(ctx, checkpoint.ListOptions{}, th)
	if err != nil {
		b.Fatal(err)
	}
	start := hist[len(hist)-2] // after the start step, before any inc
	ref, err := g.UpdateState(ctx, engine.Updates(count.Set(-1)), "inc", th, engine.WithCheckpoint(start.Ref.CheckpointID))
	if err != nil {
		b.Fatal(err)
	}
	second, err := g.Invoke(ctx, nil, th, engine.WithCheckpoint(ref.CheckpointID), engine.WithRecursionLimit(5000))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		c, err := inspect.Compare(ctx, g, first.Ref.CheckpointID, second.Ref.CheckpointID, th)
		if err != nil || len(c.StepsA) < 1000 || len(c.StepsB) < 1000 {
			b.Fatalf("%d and %d steps, %v", len(c.StepsA), len(c.StepsB), err)
		}
	}
}
