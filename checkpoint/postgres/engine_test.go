package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
)

// engineScenario drives a graph on a saver through one of the engine's
// checkpoint flows and returns the threads it touched. It must behave the
// same on every saver.
type engineScenario func(t *testing.T, s checkpoint.Saver) (*engine.Graph, []string)

func mustInvoke(t *testing.T, g *engine.Graph, in engine.Input, opts ...engine.RunOption) *engine.Result {
	t.Helper()
	res, err := g.Invoke(context.Background(), in, opts...)
	if err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	return res
}

func historyOf(t *testing.T, g *engine.Graph, thread string) []*engine.Snapshot {
	t.Helper()
	snaps, err := g.History(context.Background(), checkpoint.ListOptions{}, engine.WithThread(thread))
	if err != nil {
		t.Fatal(err)
	}
	return snaps
}

func snapshotWithNext(t *testing.T, snaps []*engine.Snapshot, next string) *engine.Snapshot {
	t.Helper()
	for _, s := range snaps {
		if strings.Join(s.Next, ",") == next {
			return s
		}
	}
	t.Fatalf("no checkpoint with next %q", next)
	return nil
}

// engineScenarios are the engine's checkpoint flows (engine/persist_test.go
// and the semantics reference §11): none of them may hit a false conflict.
var engineScenarios = map[string]engineScenario{
	"full_run_each_durability": func(t *testing.T, s checkpoint.Saver) (*engine.Graph, []string) {
		g := workGraph(t, s)
		var threads []string
		for _, d := range []engine.Durability{engine.DurabilityAsync, engine.DurabilitySync, engine.DurabilityExit} {
			th := fmt.Sprintf("durability-%d", d)
			mustInvoke(t, g, engine.Values{"n": 3}, engine.WithThread(th), engine.WithDurability(d))
			mustInvoke(t, g, engine.Values{"n": 5}, engine.WithThread(th), engine.WithDurability(d)) // a second run on the thread
			threads = append(threads, th)
		}
		return g, threads
	},
	"step_by_step": func(t *testing.T, s checkpoint.Saver) (*engine.Graph, []string) {
		g := workGraph(t, s)
		res := mustInvoke(t, g, engine.Values{"n": 2}, engine.WithThread("s"), engine.WithStepLimit(1))
		for !res.Done {
			res = mustInvoke(t, g, nil, engine.WithThread("s"), engine.WithStepLimit(1), engine.WithDurability(engine.DurabilitySync))
		}
		return g, []string{"s"}
	},
	"replay_from_past_checkpoint_forks": func(t *testing.T, s checkpoint.Saver) (*engine.Graph, []string) {
		g := workGraph(t, s)
		mustInvoke(t, g, engine.Values{"n": 1}, engine.WithThread("r"))
		mix := snapshotWithNext(t, historyOf(t, g, "r"), "mix")
		mustInvoke(t, g, nil, engine.WithThread("r"), engine.WithCheckpoint(mix.Ref.CheckpointID))
		return g, []string{"r"}
	},
	"update_state_on_past_checkpoint_then_continue": func(t *testing.T, s checkpoint.Saver) (*engine.Graph, []string) {
		g := workGraph(t, s)
		mustInvoke(t, g, engine.Values{"n": 1}, engine.WithThread("u"))
		mix := snapshotWithNext(t, historyOf(t, g, "u"), "mix")
		ref, err := g.UpdateState(context.Background(), engine.Updates(workSum.Add(100)), "a", engine.WithThread("u"), engine.WithCheckpoint(mix.Ref.CheckpointID))
		if err != nil {
			t.Fatal(err)
		}
		mustInvoke(t, g, nil, engine.WithThread("u"), engine.WithCheckpoint(ref.CheckpointID))
		// And an update of the latest checkpoint, then a new run.
		if _, err := g.UpdateState(context.Background(), engine.Updates(workN.Set(7)), "loop", engine.WithThread("u")); err != nil {
			t.Fatal(err)
		}
		mustInvoke(t, g, engine.Values{"n": 7}, engine.WithThread("u"))
		return g, []string{"u"}
	},
	"new_input_on_past_checkpoint_branches": func(t *testing.T, s checkpoint.Saver) (*engine.Graph, []string) {
		g := workGraph(t, s)
		mustInvoke(t, g, engine.Values{"n": 1}, engine.WithThread("b"))
		mix := snapshotWithNext(t, historyOf(t, g, "b"), "mix")
		mustInvoke(t, g, engine.Values{"n": 9}, engine.WithThread("b"), engine.WithCheckpoint(mix.Ref.CheckpointID))
		return g, []string{"b"}
	},
	"copy_as_sibling_then_continue": func(t *testing.T, s checkpoint.Saver) (*engine.Graph, []string) {
		g := workGraph(t, s)
		mustInvoke(t, g, engine.Values{"n": 4}, engine.WithThread("c"), engine.WithStepLimit(3))
		ref, err := g.UpdateState(context.Background(), nil, engine.AsCopy, engine.WithThread("c"))
		if err != nil {
			t.Fatal(err)
		}
		mustInvoke(t, g, nil, engine.WithThread("c"), engine.WithCheckpoint(ref.CheckpointID))
		return g, []string{"c"}
	},
	"update_as_input": func(t *testing.T, s checkpoint.Saver) (*engine.Graph, []string) {
		g := workGraph(t, s)
		mustInvoke(t, g, engine.Values{"n": 2}, engine.WithThread("i"))
		if _, err := g.UpdateState(context.Background(), engine.Updates(workN.Set(6)), engine.AsInput, engine.WithThread("i")); err != nil {
			t.Fatal(err)
		}
		mustInvoke(t, g, nil, engine.WithThread("i"))
		return g, []string{"i"}
	},
	"interrupts_resumed": func(t *testing.T, s checkpoint.Saver) (*engine.Graph, []string) {
		answers := engine.Reducer("answers", "add", engine.Sum[string])
		g, err := engine.NewGraph("ask", answers).
			AddNode("ask", func(ctx context.Context, st engine.State) (engine.Output, error) {
				a1, err := engine.Interrupt(ctx, "first?")
				if err != nil {
					return nil, err
				}
				a2, err := engine.Interrupt(ctx, "second?")
				if err != nil {
					return nil, err
				}
				return engine.Updates(answers.Add(fmt.Sprint(a1, "+", a2))), nil
			}).
			AddEdge(engine.START, "ask").
			Compile(engine.WithSaver(s), engine.WithInterruptAfter("ask"))
		if err != nil {
			t.Fatal(err)
		}
		res := mustInvoke(t, g, engine.Values{"answers": ">"}, engine.WithThread("q"))
		if len(res.Interrupts) != 1 {
			t.Fatalf("interrupts %+v", res.Interrupts)
		}
		mustInvoke(t, g, engine.Command{Resume: "yes"}, engine.WithThread("q"))
		res = mustInvoke(t, g, engine.Command{Resume: "no"}, engine.WithThread("q"))
		if res.Breakpoint != "after" {
			t.Fatalf("want the static breakpoint after ask, got %+v", res)
		}
		mustInvoke(t, g, nil, engine.WithThread("q"))
		return g, []string{"q"}
	},
	"failed_step_resumed": func(t *testing.T, s checkpoint.Saver) (*engine.Graph, []string) {
		value := engine.Reducer("value", "add", engine.Sum[int])
		fixed := false
		g, err := engine.NewGraph("pending", value).
			AddNode("one", func(context.Context, engine.State) (engine.Output, error) { return engine.Updates(value.Add(2)), nil }).
			AddNode("two", func(context.Context, engine.State) (engine.Output, error) {
				if !fixed {
					return nil, errors.New("not yet")
				}
				return engine.Updates(value.Add(3)), nil
			}).
			AddEdge(engine.START, "one").AddEdge(engine.START, "two").
			Compile(engine.WithSaver(s))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.Invoke(context.Background(), engine.Values{"value": 1}, engine.WithThread("f"), engine.WithDurability(engine.DurabilitySync)); err == nil {
			t.Fatal("the first run should fail")
		}
		fixed = true
		mustInvoke(t, g, nil, engine.WithThread("f"))
		return g, []string{"f"}
	},
	"subgraph": func(t *testing.T, s checkpoint.Saver) (*engine.Graph, []string) {
		sub, err := engine.NewGraph("inner", workLog, workSum).
			AddNode("x", func(context.Context, engine.State) (engine.Output, error) {
				return engine.Updates(workLog.Add("x")), nil
			}).
			AddNode("y", func(_ context.Context, st engine.State) (engine.Output, error) {
				return engine.Updates(workLog.Add("y"), workSum.Add(10)), nil
			}).
			AddEdge(engine.START, "x").AddEdge("x", "y").
			Compile()
		if err != nil {
			t.Fatal(err)
		}
		g, err := engine.NewGraph("outer", workLog, workSum).
			AddNode("pre", func(context.Context, engine.State) (engine.Output, error) {
				return engine.Updates(workLog.Add("pre")), nil
			}).
			AddSubgraph("inner", sub).
			AddEdge(engine.START, "pre").AddEdge("pre", "inner").
			Compile(engine.WithSaver(s))
		if err != nil {
			t.Fatal(err)
		}
		mustInvoke(t, g, engine.Values{"sum": 1}, engine.WithThread("g"))
		mustInvoke(t, g, engine.Values{"sum": 2}, engine.WithThread("g"))
		return g, []string{"g"}
	},
}

// TestEngineFlows runs the engine's checkpoint flows on the PostgreSQL saver
// and on the memory saver: each must succeed (no false conflict) and leave
// the same history, tree shape included.
func TestEngineFlows(t *testing.T) {
	for name, run := range engineScenarios {
		t.Run(name, func(t *testing.T) {
			pg, _ := openFresh(t)
			gm, threads := run(t, memory.New())
			gp, threadsPG := run(t, pg)
			if strings.Join(threads, ",") != strings.Join(threadsPG, ",") {
				t.Fatalf("threads %v vs %v", threads, threadsPG)
			}
			for _, th := range threads {
				want, got := transcript(t, gm, th), transcript(t, gp, th)
				if got != want {
					t.Errorf("thread %q history differs from the memory saver's\npostgres:\n%s\nmemory:\n%s", th, got, want)
				}
				t.Logf("thread %q:\n%s", th, got)
				if strings.Count(want, "\n") < 2 {
					t.Errorf("thread %q: history too short to mean anything:\n%s", th, want)
				}
			}
		})
	}
}
