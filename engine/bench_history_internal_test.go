package engine

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/sqlite"
)

// BenchmarkB5Snapshots is the engine's share of BenchmarkB5History alone:
// B5's 1,002 checkpoints are listed from SQLite once, and each op rebuilds
// their snapshots as HistorySeq does. History reads on one goroutine while
// it rebuilds on another, so its time mostly shows the slower half.
func BenchmarkB5Snapshots(b *testing.B) {
	ctx := context.Background()
	s, err := sqlite.Open(filepath.Join(b.TempDir(), "b5.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	count := LastValue[int]("count")
	g, err := NewGraph("loop", count).
		AddNode("inc", func(_ context.Context, st State) (Output, error) {
			return Update{count.Set(count.Get(st) + 1)}, nil
		}).
		AddEdge(START, "inc").
		AddConditionalEdges("inc", func(_ context.Context, st State) (Route, error) {
			if count.Get(st) >= 1000 {
				return To(END), nil
			}
			return To("inc"), nil
		}, Targets("inc", END)).
		Compile(WithSaver(s))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := g.Invoke(ctx, Values{"count": 0}, WithThread("b5"), WithRecursionLimit(2000)); err != nil {
		b.Fatal(err)
	}
	var tuples []*checkpoint.Tuple
	for tp, err := range s.List(ctx, checkpoint.ListOptions{ThreadID: "b5"}) {
		if err != nil {
			b.Fatal(err)
		}
		tuples = append(tuples, tp)
	}
	if len(tuples) != 1002 {
		b.Fatal(len(tuples))
	}
	cfg := newRunConfig([]RunOption{WithThread("b5")})
	b.ReportAllocs()
	for b.Loop() {
		var rt *runtime
		for _, tp := range tuples {
			if _, err := g.snapshotOf(ctx, s, cfg, tp, false, &rt); err != nil {
				b.Fatal(err)
			}
		}
	}
}
