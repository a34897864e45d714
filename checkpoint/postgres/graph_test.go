package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/examples/bench"
)

// Channels of workGraph.
var (
	workN      = engine.LastValue[int]("n")
	workSum    = engine.Reducer("sum", "add", engine.Sum[int])
	workLog    = engine.List[string]("log")
	workRounds = engine.LastValue[int]("rounds")
)

// workRoundsMax is how many times workGraph's loop node runs.
const workRoundsMax = 4

// workCheckpoints is how many checkpoints one full run of workGraph writes:
// input, the __start__ step, the fan-out step, mix, and one per loop round.
const workCheckpoints = 4 + workRoundsMax

// workGraph is the graph the multi-process and engine tests advance: a
// fan-out of three parallel nodes (a, b, c), joined by mix, then a loop
// node that runs workRoundsMax times. Every value depends on the input n,
// so threads differ.
func workGraph(t testing.TB, saver checkpoint.Saver) *engine.Graph {
	t.Helper()
	add := func(name string, k int) engine.NodeFunc {
		return func(_ context.Context, s engine.State) (engine.Output, error) {
			return engine.Updates(workSum.Add(k*workN.Get(s)), workLog.Add(name)), nil
		}
	}
	g, err := engine.NewGraph("work", workN, workSum, workLog, workRounds).
		AddNode("a", add("a", 1)).
		AddNode("b", add("b", 2)).
		AddNode("c", add("c", 3)).
		AddNode("mix", func(_ context.Context, s engine.State) (engine.Output, error) {
			return engine.Updates(workLog.Add(fmt.Sprintf("mix:%d", workSum.Get(s)))), nil
		}).
		AddNode("loop", func(_ context.Context, s engine.State) (engine.Output, error) {
			r := workRounds.Get(s) + 1
			return engine.Updates(workRounds.Set(r), workSum.Add(r*r), workLog.Add(fmt.Sprintf("r%d", r))), nil
		}).
		AddEdge(engine.START, "a").AddEdge(engine.START, "b").AddEdge(engine.START, "c").
		AddJoin([]string{"a", "b", "c"}, "mix").
		AddEdge("mix", "loop").
		AddConditionalEdges("loop", func(_ context.Context, s engine.State) (engine.Route, error) {
			if workRounds.Get(s) < workRoundsMax {
				return engine.To("loop"), nil
			}
			return engine.To(engine.END), nil
		}, engine.Targets("loop", engine.END)).
		Compile(engine.WithSaver(saver))
	if err != nil {
		t.Fatalf("compile work graph: %v", err)
	}
	return g
}

// chain10 is B1's graph (package examples/bench).
func chain10(t testing.TB, saver checkpoint.Saver) *engine.Graph {
	t.Helper()
	g, err := bench.Chain10(engine.WithSaver(saver))
	if err != nil {
		t.Fatalf("compile chain10: %v", err)
	}
	return g
}

// transcript describes a thread's history without ids, so histories in two
// savers can be compared: one line per checkpoint, newest first, with its
// source, step, next tasks, values, and the position of its parent in the
// list (-1 for none).
func transcript(t testing.TB, g *engine.Graph, thread string) string {
	t.Helper()
	snaps, err := g.History(context.Background(), checkpoint.ListOptions{}, engine.WithThread(thread))
	if err != nil {
		t.Fatalf("history of thread %q: %v", thread, err)
	}
	pos := map[string]int{}
	for i, s := range snaps {
		pos[s.Ref.CheckpointID] = i
	}
	var b strings.Builder
	for i, s := range snaps {
		parent := -1
		if s.Parent != nil {
			p, ok := pos[s.Parent.CheckpointID]
			if !ok {
				t.Fatalf("thread %q: checkpoint %s has parent %s, which is not in its history", thread, s.Ref.CheckpointID, s.Parent.CheckpointID)
			}
			parent = p
		}
		keys := make([]string, 0, len(s.Values))
		for k := range s.Values {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		vals := make([]string, len(keys))
		for j, k := range keys {
			vals[j] = fmt.Sprintf("%s=%v", k, s.Values[k])
		}
		fmt.Fprintf(&b, "%d: %s step %d next [%s] parent %d {%s}\n", i, s.Metadata.Source, s.Metadata.Step,
			strings.Join(s.Next, ","), parent, strings.Join(vals, " "))
	}
	return b.String()
}
