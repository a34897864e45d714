package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
)

// BulkUpdateState applies super-steps of updates, one checkpoint each,
// several as-nodes per step; malformed requests are refused before
// anything is written.
func TestBulkUpdateState(t *testing.T) {
	ctx := context.Background()
	foo := engine.LastValue[string]("foo")
	baz := engine.LastValue[string]("baz")
	log := engine.List[string]("log")
	g, err := engine.NewGraph("bulk", foo, baz, log).
		AddNode("a", logNode(log, "a")).AddNode("b", logNode(log, "b")).
		AddEdge(engine.START, "a").AddEdge("a", "b").
		Compile(engine.WithSaver(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	th := engine.WithThread("t")
	if _, err := g.Invoke(ctx, engine.Values{"foo": "start"}, th); err != nil {
		t.Fatal(err)
	}
	ref, err := g.BulkUpdateState(ctx, [][]engine.StateUpdate{
		{{Values: engine.Updates(foo.Set("updated")), AsNode: "a"}},
		{{Values: engine.Updates(baz.Set("new")), AsNode: "b"}, {Values: engine.Updates(log.Add("also-a")), AsNode: "a"}},
	}, th)
	if err != nil {
		t.Fatal(err)
	}
	hist, err := g.History(ctx, checkpoint.ListOptions{}, th)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 6 || hist[0].Ref != ref {
		t.Fatalf("%d checkpoints, newest %v, want 6 with the returned one newest", len(hist), hist[0].Ref)
	}
	for i, want := range []struct {
		step int
		next []string
		vals string
	}{
		{4, []string{"b"}, "baz=new foo=updated log=[a b also-a]"},
		{3, []string{"b"}, "baz= foo=updated log=[a b]"},
	} {
		s := hist[i]
		v := engine.StateOf(s.Values)
		got := "baz=" + baz.Get(v) + " foo=" + foo.Get(v) + " log=[" + strings.Join(log.Get(v), " ") + "]"
		if s.Metadata.Source != checkpoint.SourceUpdate || s.Metadata.Step != want.step || !slices.Equal(s.Next, want.next) || got != want.vals {
			t.Errorf("checkpoint %d: %s step %d next %v %s, want update step %d next %v %s", i, s.Metadata.Source, s.Metadata.Step, s.Next, got, want.step, want.next, want.vals)
		}
	}
	var iu *engine.InvalidUpdateError
	for name, steps := range map[string][][]engine.StateUpdate{
		"no steps":                   {},
		"an empty step":              {{}},
		"two updates, no as-node":    {{{Values: engine.Updates(foo.Set("x"))}, {Values: engine.Updates(baz.Set("y"))}}},
		"END mixed with other nodes": {{{AsNode: engine.AsEnd}, {Values: engine.Updates(baz.Set("y")), AsNode: "a"}}},
	} {
		_, err := g.BulkUpdateState(ctx, steps, th)
		if err == nil {
			t.Errorf("%s: no error", name)
		}
		if strings.Contains(name, "as-node") || strings.Contains(name, "END") {
			if !errors.As(err, &iu) {
				t.Errorf("%s: err = %v, want an InvalidUpdateError", name, err)
			}
		}
	}
	if after, _ := g.History(ctx, checkpoint.ListOptions{}, th); len(after) != 6 {
		t.Errorf("refused updates wrote checkpoints: %d, want 6", len(after))
	}
}

// UpdateState as END applies the pending tasks' stored writes and marks
// every pending task done: nothing runs next.
func TestUpdateStateAsEnd(t *testing.T) {
	ctx := context.Background()
	log := engine.List[string]("log")
	g, err := engine.NewGraph("end", log).
		AddNode("a", logNode(log, "a")).
		AddNode("ask", func(ctx context.Context, s engine.State) (engine.Output, error) {
			if _, err := engine.Interrupt(ctx, "?"); err != nil {
				return nil, err
			}
			return engine.Updates(log.Add("ask")), nil
		}).
		AddNode("b", logNode(log, "b")).
		AddEdge(engine.START, "a").AddEdge("a", "ask").AddEdge("a", "b").AddEdge("b", engine.END).
		Compile(engine.WithSaver(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	th := engine.WithThread("t")
	res, err := g.Invoke(ctx, engine.Values{}, th)
	if err != nil || len(res.Interrupts) != 1 {
		t.Fatalf("%+v, %v", res, err)
	}
	if _, err := g.UpdateState(ctx, engine.Updates(log.Add("x")), engine.AsEnd, th); err == nil {
		t.Error("as END with values: no error")
	}
	if _, err := g.UpdateState(ctx, nil, engine.AsEnd, th); err != nil {
		t.Fatal(err)
	}
	snap, err := g.GetState(ctx, th)
	if err != nil {
		t.Fatal(err)
	}
	// b finished in the interrupted step: its write is applied; ask is
	// dropped unanswered.
	if !snap.Done() || len(snap.Next) != 0 || !slices.Equal(log.Get(engine.StateOf(snap.Values)), []string{"a", "b"}) {
		t.Errorf("after as END: done %v next %v values %v", snap.Done(), snap.Next, snap.Values)
	}
	res, err = g.Invoke(ctx, nil, th)
	if err != nil || !res.Done || res.Steps != 0 {
		t.Errorf("continuing after END: %+v, %v, want nothing to run", res, err)
	}
}

// HistorySeq streams a thread's snapshots newest first; stopping early
// stops the reading.
func TestHistorySeqStreamsAndStops(t *testing.T) {
	ctx := context.Background()
	n := engine.LastValue[int]("n")
	g, err := engine.NewGraph("count", n).
		AddNode("inc", func(_ context.Context, s engine.State) (engine.Output, error) {
			return engine.Updates(n.Set(n.Get(s) + 1)), nil
		}).
		AddEdge(engine.START, "inc").
		AddConditionalEdges("inc", func(_ context.Context, s engine.State) (engine.Route, error) {
			if n.Get(s) < 300 {
				return engine.To("inc"), nil
			}
			return engine.To(engine.END), nil
		}, engine.Targets("inc", engine.END)).
		Compile(engine.WithSaver(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	th := engine.WithThread("t")
	if _, err := g.Invoke(ctx, engine.Values{}, th, engine.WithRecursionLimit(1000)); err != nil {
		t.Fatal(err)
	}
	var got []int
	for s, err := range g.HistorySeq(ctx, checkpoint.ListOptions{}, th) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, n.Get(engine.StateOf(s.Values)))
		if len(got) == 5 {
			break
		}
	}
	if !slices.Equal(got, []int{300, 299, 298, 297, 296}) {
		t.Errorf("first five = %v", got)
	}
	all, err := g.History(ctx, checkpoint.ListOptions{}, th)
	if err != nil || len(all) != 302 {
		t.Errorf("%d snapshots, %v; want 302", len(all), err)
	}
	for _, err := range g.HistorySeq(ctx, checkpoint.ListOptions{}) {
		if err == nil || !strings.Contains(err.Error(), "needs a thread") {
			t.Errorf("without a thread: %v", err)
		}
	}
}

// An input checkpoint's snapshot carries the input that made it.
func TestSnapshotInput(t *testing.T) {
	ctx := context.Background()
	log := engine.List[string]("log")
	g, err := engine.NewGraph("in", log).AddNode("a", logNode(log, "a")).AddEdge(engine.START, "a").
		Compile(engine.WithSaver(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	th := engine.WithThread("t")
	for _, in := range []engine.Values{{"log": []string{"first"}}, {"log": []string{"second"}}} {
		if _, err := g.Invoke(ctx, in, th); err != nil {
			t.Fatal(err)
		}
	}
	hist, err := g.History(ctx, checkpoint.ListOptions{}, th)
	if err != nil {
		t.Fatal(err)
	}
	var inputs []string
	for _, s := range hist {
		if s.Input != nil {
			inputs = append(inputs, fmt.Sprint(s.Input))
		} else if s.Metadata.Source == checkpoint.SourceInput {
			t.Errorf("input checkpoint %s without its input", s.Ref.CheckpointID)
		}
	}
	if strings.Join(inputs, " ") != "map[log:[second]] map[log:[first]]" {
		t.Errorf("inputs %v", inputs)
	}
}

// B7: following Python, an update as a node is also stored as the writes
// of that node's due task on the checkpoint it updates, whose snapshot then
// shows them; following LangGraph.js it is not. An update that forks the
// past stores nothing there, so a store shared between processes, which
// refuses task writes off the thread's head, accepts it under both.
func TestUpdateWritesStoredAsTaskWrites(t *testing.T) {
	for _, ref := range []engine.Reference{engine.LangGraphPython, engine.LangGraphJS} {
		t.Run(ref.String(), func(t *testing.T) {
			ctx := context.Background()
			g, log, th := stoppedBeforeB(t, ref)
			head, err := g.GetState(ctx, th)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := g.UpdateState(ctx, engine.Updates(log.Add("by hand")), "b", th); err != nil {
				t.Fatal(err)
			}
			was, err := g.GetState(ctx, th, engine.WithCheckpoint(head.Ref.CheckpointID))
			if err != nil || len(was.Tasks) != 1 {
				t.Fatalf("the updated checkpoint: %+v, %v", was, err)
			}
			stored := len(was.Tasks[0].Result) > 0
			if want := ref == engine.LangGraphPython; stored != want {
				t.Errorf("b's due task shows the update as its result: %v, want %v (%+v)", stored, want, was.Tasks[0])
			}
			// The first checkpoint is long past: updating it is a fork.
			hist, err := g.History(ctx, checkpoint.ListOptions{}, th)
			if err != nil {
				t.Fatal(err)
			}
			first := hist[len(hist)-1]
			if _, err := g.UpdateState(ctx, engine.Updates(log.Add("fork")), engine.AsInput, th, engine.WithCheckpoint(first.Ref.CheckpointID)); err != nil {
				t.Fatalf("updating a past checkpoint: %v", err)
			}
			if _, err := g.UpdateState(ctx, engine.Updates(log.Add("fork")), "a", th, engine.WithCheckpoint(hist[len(hist)-2].Ref.CheckpointID)); err != nil {
				t.Fatalf("updating a past checkpoint as a node: %v", err)
			}
		})
	}
}
