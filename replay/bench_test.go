package replay_test

import (
	"context"
	"testing"

	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/replay"
)

// BenchmarkReplayWriter replays the writing assistant's demo thread (13
// checkpoints, three answers, a Send fan-out), strictly, from a memory
// store.
func BenchmarkReplayWriter(b *testing.B) {
	s, g := recordWriter(b)
	b.ResetTimer()
	for b.Loop() {
		rep, err := replay.Run(context.Background(), g, s, "w", replay.Strict())
		if err != nil || !rep.Match {
			b.Fatal(err, rep.Text())
		}
	}
}

// BenchmarkReplayChain100 replays a thread of 100 steps of one node
// writing an int: the per-checkpoint cost of a replay.
func BenchmarkReplayChain100(b *testing.B) {
	n := engine.LastValue[int]("n")
	s := memory.New()
	g, err := engine.NewGraph("chain", n).
		AddNode("inc", func(_ context.Context, st engine.State) (engine.Output, error) {
			return engine.Updates(n.Set(n.Get(st) + 1)), nil
		}).
		AddEdge(engine.START, "inc").
		AddConditionalEdges("inc", func(_ context.Context, st engine.State) (engine.Route, error) {
			if n.Get(st) < 100 {
				return engine.To("inc"), nil
			}
			return engine.To(engine.END), nil
		}, engine.Targets("inc", engine.END)).
		Compile(engine.WithSaver(s))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := g.Invoke(context.Background(), engine.Values{"n": 0}, engine.WithThread("c"), engine.WithRecursionLimit(200)); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		rep, err := replay.Run(context.Background(), g, s, "c")
		if err != nil || !rep.Match || rep.Checkpoints != 102 {
			b.Fatal(err, rep)
		}
	}
}
