package engine_test

// Tests for behaviours where Weft once differed from LangGraph; each builds
// the reproduction in words from the differential runs.

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/checkpoint/sqlite"
	"github.com/weftstudio/weft/engine"
)

// logNode appends name to log.
func logNode(log engine.ListKey[string], name string) engine.NodeFunc {
	return func(context.Context, engine.State) (engine.Output, error) {
		return engine.Updates(log.Add(name)), nil
	}
}

// A join target stays pending after UpdateState re-reaches its complete
// barrier, and runs on the next Invoke(nil).
func TestJoinTargetSurvivesUpdateState(t *testing.T) {
	ctx := context.Background()
	log := engine.List[string]("log")
	g, err := engine.NewGraph("join", log).
		AddNode("a", logNode(log, "a")).
		AddNode("b", logNode(log, "b")).
		AddNode("c", logNode(log, "c")).
		AddEdge(engine.START, "a").AddEdge(engine.START, "b").
		AddJoin([]string{"a", "b"}, "c").
		Compile(engine.WithSaver(memory.New()), engine.WithInterruptBefore("c"))
	if err != nil {
		t.Fatal(err)
	}
	th := engine.WithThread("t")
	if _, err := g.Invoke(ctx, engine.Values{}, th); err != nil {
		t.Fatal(err)
	}
	if _, err := g.UpdateState(ctx, engine.Updates(log.Add("b2")), "b", th); err != nil {
		t.Fatal(err)
	}
	snap, err := g.GetState(ctx, th)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(snap.Next, []string{"c"}) {
		t.Errorf("next after UpdateState as b = %v, want [c]", snap.Next)
	}
	res, err := g.Invoke(ctx, nil, th)
	if err != nil {
		t.Fatal(err)
	}
	if got := log.Get(engine.StateOf(res.Values)); !slices.Equal(got, []string{"a", "b", "b2", "c"}) {
		t.Errorf("log = %v, want [a b b2 c]", got)
	}
}

// askChild is a subgraph whose node asks a question and writes the answer
// to out; it shares log with its parent but never writes it.
func askChild(t *testing.T, log engine.ListKey[string], out engine.Key[string]) *engine.Graph {
	t.Helper()
	g, err := engine.NewGraph("child", log, out).
		AddNode("ask", func(ctx context.Context, s engine.State) (engine.Output, error) {
			a, err := engine.InterruptAs[string](ctx, "question for "+out.Name())
			if err != nil {
				return nil, err
			}
			return engine.Updates(out.Set(a)), nil
		}).
		AddEdge(engine.START, "ask").Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// A subgraph resumed after an interrupt writes back only what its own nodes
// changed, as a fresh run does: two parallel subgraphs resumed by id do not
// clash on a LastValue they only read, and a list they inherit is not
// appended twice.
func TestResumedSubgraphWritesBackOnlyItsChanges(t *testing.T) {
	ctx := context.Background()
	log := engine.List[string]("log")
	a := engine.LastValue[string]("a")
	b := engine.LastValue[string]("b")
	shared := engine.LastValue[string]("shared")
	childA, childB := askChild(t, log, a), askChild(t, log, b)
	// The children read shared too, so a write-back of everything clashes.
	childA2, err := engine.NewGraph("childA", log, a, shared).
		AddSubgraph("inner", childA).AddEdge(engine.START, "inner").Compile()
	if err != nil {
		t.Fatal(err)
	}
	childB2, err := engine.NewGraph("childB", log, b, shared).
		AddSubgraph("inner", childB).AddEdge(engine.START, "inner").Compile()
	if err != nil {
		t.Fatal(err)
	}
	g, err := engine.NewGraph("parent", log, a, b, shared).
		AddNode("before", logNode(log, "before")).
		AddSubgraph("subA", childA2).
		AddSubgraph("subB", childB2).
		AddEdge(engine.START, "before").
		AddEdge("before", "subA").AddEdge("before", "subB").
		Compile(engine.WithSaver(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	th := engine.WithThread("t")
	res, err := g.Invoke(ctx, engine.Values{"shared": "s"}, th)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Interrupts) != 2 {
		t.Fatalf("interrupts = %v, want 2", res.Interrupts)
	}
	answers := map[string]any{}
	for _, it := range res.Interrupts {
		answers[it.ID] = "answer " + it.Value.(string)
	}
	res, err = g.Invoke(ctx, engine.Command{ResumeByID: answers}, th)
	if err != nil {
		t.Fatalf("resuming both subgraphs by id: %v", err)
	}
	vals := engine.StateOf(res.Values)
	if got := log.Get(vals); !slices.Equal(got, []string{"before"}) {
		t.Errorf("log = %v, want [before] (the subgraphs never wrote it)", got)
	}
	if a.Get(vals) != "answer question for a" || b.Get(vals) != "answer question for b" {
		t.Errorf("a, b = %q, %q", a.Get(vals), b.Get(vals))
	}
}

// A Send to a subgraph node carries the child's input in the child's
// schema; a mistyped argument is a clear error, never ignored.
func TestSendToSubgraphNode(t *testing.T) {
	ctx := context.Background()
	log := engine.List[string]("log")
	prompt := engine.LastValue[string]("prompt")
	mode := engine.LastValue[int]("mode") // the child's own: the parent has none
	child, err := engine.NewGraph("child", prompt, log, mode).
		AddNode("answer", func(_ context.Context, s engine.State) (engine.Output, error) {
			return engine.Updates(log.Add("got "+prompt.Get(s)), mode.Set(mode.Get(s)+1)), nil
		}).
		AddEdge(engine.START, "answer").Compile()
	if err != nil {
		t.Fatal(err)
	}
	build := func(arg any) *engine.Graph {
		g, err := engine.NewGraph("parent", log).
			AddNode("fan", logNode(log, "fan")).
			AddSubgraph("child", child).
			AddEdge(engine.START, "fan").
			AddConditionalEdges("fan", func(context.Context, engine.State) (engine.Route, error) {
				return engine.SendTo(engine.Send{Node: "child", Arg: arg}), nil
			}, engine.SendsTo("child")).
			Compile(engine.WithSaver(memory.New()))
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	g := build(engine.Values{"prompt": "x", "mode": 41})
	th := engine.WithThread("t")
	res, err := g.Invoke(ctx, engine.Values{}, th)
	if err != nil {
		t.Fatalf("Send to a subgraph with its own input: %v", err)
	}
	// The child starts from its Send argument alone (its log is empty) and
	// writes back the list it changed.
	if got := log.Get(engine.StateOf(res.Values)); !slices.Equal(got, []string{"fan", "got x"}) {
		t.Errorf("log = %v, want [fan got x]", got)
	}
	if _, err := g.History(ctx, checkpointListAll, th); err != nil {
		t.Errorf("history after a Send in the child's schema: %v", err)
	}

	for name, arg := range map[string]any{
		"not Values":       "x",
		"unknown key":      engine.Values{"nope": 1},
		"wrong value type": engine.Values{"mode": "not an int"},
	} {
		_, err := build(arg).Invoke(ctx, engine.Values{}, engine.WithThread(name))
		if err == nil || !strings.Contains(err.Error(), `Send to subgraph node "child"`) {
			t.Errorf("%s: err = %v, want a clear error about the Send to the subgraph", name, err)
		}
	}
}

// A channel a subgraph shares with its parent by name must have the same
// type in both, or its value could not go back and forth.
func TestSubgraphChannelTypesMustAgree(t *testing.T) {
	child, err := engine.NewGraph("child", engine.LastValue[int]("mode")).
		AddNode("n", noop).AddEdge(engine.START, "n").Compile()
	if err != nil {
		t.Fatal(err)
	}
	_, err = engine.NewGraph("parent", engine.LastValue[string]("mode")).
		AddSubgraph("child", child).AddEdge(engine.START, "child").Compile()
	if err == nil || !strings.Contains(err.Error(), `channel "mode"`) {
		t.Errorf("err = %v, want a compile error naming channel \"mode\"", err)
	}
}

// The checkpoint a Command answered keeps its planned tasks: as in
// LangGraph's get_state, the stored update and goto change the values
// shown there, not the tasks (they take effect when a run resumes).
func TestSnapshotKeepsTasksAfterStoredCommand(t *testing.T) {
	ctx := context.Background()
	log := engine.List[string]("log")
	note := engine.LastValue[string]("note")
	build := func() *engine.Graph {
		g, err := engine.NewGraph("cmd", log, note).
			AddNode("a", logNode(log, "a")).
			AddNode("ask", func(ctx context.Context, s engine.State) (engine.Output, error) {
				ans, err := engine.InterruptAs[string](ctx, "ok?")
				if err != nil {
					return nil, err
				}
				return engine.Updates(log.Add("ask:" + ans)), nil
			}).
			AddNode("c", logNode(log, "c")).
			AddEdge(engine.START, "a").AddEdge("a", "ask").AddEdge("ask", engine.END).
			AddNode("entry", noop, engine.Destinations("c")).AddEdge(engine.START, "entry").
			Compile(engine.WithSaver(memory.New()))
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	for _, c := range []struct {
		name string
		cmd  engine.Command
		next []string
	}{
		{"resume and update", engine.Command{Resume: "yes", Update: engine.Updates(note.Set("n"))}, []string{"ask"}},
		{"resume and goto", engine.Command{Resume: "yes", Goto: []string{"c"}}, []string{"ask"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := build()
			th := engine.WithThread("t")
			res, err := g.Invoke(ctx, engine.Values{}, th)
			if err != nil {
				t.Fatal(err)
			}
			asked := res.Ref.CheckpointID
			if _, err := g.Invoke(ctx, c.cmd, th); err != nil {
				t.Fatal(err)
			}
			snap, err := g.GetState(ctx, th, engine.WithCheckpoint(asked))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(snap.Next, c.next) {
				t.Errorf("next at the answered checkpoint = %v, want %v", snap.Next, c.next)
			}
			if len(snap.Tasks) == 0 || snap.Tasks[0].Name != "ask" || len(snap.Tasks[0].Interrupts) != 1 {
				t.Errorf("tasks = %+v, want ask with its interrupt first", snap.Tasks)
			}
		})
	}
}

// Parallel interrupts answered one at a time: the result shows the answered
// sibling's write, and values mode reports the interrupt, then the state
// with that write.
func TestInterruptedResultShowsFinishedSiblings(t *testing.T) {
	ctx := context.Background()
	a := engine.LastValue[string]("a")
	b := engine.LastValue[string]("b")
	ask := func(k engine.Key[string]) engine.NodeFunc {
		return func(ctx context.Context, s engine.State) (engine.Output, error) {
			v, err := engine.InterruptAs[string](ctx, k.Name()+"?")
			if err != nil {
				return nil, err
			}
			return engine.Updates(k.Set(v)), nil
		}
	}
	g, err := engine.NewGraph("pair", a, b).
		AddNode("ask_a", ask(a)).AddNode("ask_b", ask(b)).
		AddEdge(engine.START, "ask_a").AddEdge(engine.START, "ask_b").
		Compile(engine.WithSaver(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	th := engine.WithThread("t")
	res, err := g.Invoke(ctx, engine.Values{}, th)
	if err != nil {
		t.Fatal(err)
	}
	var idA string
	for _, it := range res.Interrupts {
		if it.Node == "ask_a" {
			idA = it.ID
		}
	}
	var valuesEvents []engine.Event
	res, err = g.Invoke(ctx, engine.Command{ResumeByID: map[string]any{idA: "A"}}, th,
		engine.WithObserver(engine.ModeValues, func(ev engine.Event) { valuesEvents = append(valuesEvents, ev) }))
	if err != nil {
		t.Fatal(err)
	}
	if res.Values["a"] != "A" || len(res.Interrupts) != 1 || res.Interrupts[0].Node != "ask_b" {
		t.Errorf("result = %+v, want a=A with ask_b still asking", res)
	}
	// As both LangGraphs stream it: ask_b's interrupt when it stops, with
	// the state as the step found it (Python), then the state with ask_a's
	// answer applied.
	var asked []engine.Event
	for _, ev := range valuesEvents {
		if ev.Interrupts != nil {
			asked = append(asked, ev)
		}
	}
	if len(asked) != 1 || len(asked[0].Interrupts) != 1 || asked[0].Interrupts[0].Node != "ask_b" || asked[0].Values == nil || asked[0].Values["a"] != nil {
		t.Errorf("interrupt values events = %+v, want one with ask_b's interrupt and the state before ask_a's answer", asked)
	}
	if last := valuesEvents[len(valuesEvents)-1]; last.Interrupts != nil || last.Values["a"] != "A" {
		t.Errorf("last values event = %+v, want the state with a=A", last)
	}
	snap, err := g.GetState(ctx, th)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(snap.Next, []string{"ask_b"}) || snap.Values["a"] != "A" {
		t.Errorf("state = next %v values %v, want next [ask_b] and a=A", snap.Next, snap.Values)
	}
}

// next lists one entry per task, so two Sends to one node show twice.
func TestNextHasOneEntryPerTask(t *testing.T) {
	ctx := context.Background()
	log := engine.List[string]("log")
	g, err := engine.NewGraph("sends", log).
		AddNode("fan", logNode(log, "fan")).
		AddNode("worker", logNode(log, "w")).
		AddEdge(engine.START, "fan").
		AddConditionalEdges("fan", func(context.Context, engine.State) (engine.Route, error) {
			return engine.SendTo(engine.Send{Node: "worker", Arg: engine.Values{}}, engine.Send{Node: "worker", Arg: engine.Values{}}), nil
		}, engine.SendsTo("worker")).
		Compile(engine.WithSaver(memory.New()), engine.WithInterruptBefore("worker"))
	if err != nil {
		t.Fatal(err)
	}
	th := engine.WithThread("t")
	res, err := g.Invoke(ctx, engine.Values{}, th)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"worker", "worker"}
	if !slices.Equal(res.Next, want) {
		t.Errorf("Result.Next = %v, want %v", res.Next, want)
	}
	snap, err := g.GetState(ctx, th)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(snap.Next, want) {
		t.Errorf("Snapshot.Next = %v, want %v", snap.Next, want)
	}
}

// UpdateState on an empty thread writes step 0 as START (its edges make
// the first node next); an unknown or ambiguous as-node is an
// InvalidUpdateError.
func TestUpdateStateOnEmptyThreadAndBadAsNode(t *testing.T) {
	ctx := context.Background()
	log := engine.List[string]("log")
	g, err := engine.NewGraph("u", log).
		AddNode("a", logNode(log, "a")).
		AddNode("b", logNode(log, "b")).
		AddNode("c", logNode(log, "c")).
		AddEdge(engine.START, "a").AddEdge("a", "b").AddEdge("a", "c").
		Compile(engine.WithSaver(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	fresh := engine.WithThread("fresh")
	if _, err := g.UpdateState(ctx, engine.Updates(log.Add("z")), "", fresh); err != nil {
		t.Fatal(err)
	}
	snap, err := g.GetState(ctx, fresh)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Metadata.Step != 0 || !slices.Equal(snap.Next, []string{"a"}) {
		t.Errorf("update of an empty thread: step %d next %v, want step 0 next [a]", snap.Metadata.Step, snap.Next)
	}
	th := engine.WithThread("t")
	if _, err := g.Invoke(ctx, engine.Values{}, th); err != nil {
		t.Fatal(err)
	}
	var iu *engine.InvalidUpdateError
	if _, err := g.UpdateState(ctx, engine.Updates(log.Add("x")), "nope", th); !errors.As(err, &iu) {
		t.Errorf("unknown as-node: err = %v, want an InvalidUpdateError", err)
	}
	if _, err := g.UpdateState(ctx, engine.Updates(log.Add("x")), "", th); !errors.As(err, &iu) {
		t.Errorf("ambiguous as-node (b and c ran last): err = %v, want an InvalidUpdateError", err)
	}
}

// A snapshot lists its tasks in task order: declared nodes in declaration
// order, not sorted by name.
func TestSnapshotTaskOrder(t *testing.T) {
	ctx := context.Background()
	log := engine.List[string]("log")
	g, err := engine.NewGraph("order", log).
		AddNode("fan", logNode(log, "fan")).
		AddNode("zeta", logNode(log, "zeta")).
		AddNode("alpha", logNode(log, "alpha")).
		AddNode("mid", logNode(log, "mid")).
		AddEdge(engine.START, "fan").
		AddEdge("fan", "zeta").AddEdge("fan", "alpha").AddEdge("fan", "mid").
		Compile(engine.WithSaver(memory.New()), engine.WithInterruptAfter("fan"))
	if err != nil {
		t.Fatal(err)
	}
	th := engine.WithThread("t")
	if _, err := g.Invoke(ctx, engine.Values{}, th); err != nil {
		t.Fatal(err)
	}
	snap, err := g.GetState(ctx, th)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ts := range snap.Tasks {
		names = append(names, ts.Name)
	}
	want := []string{"zeta", "alpha", "mid"}
	if !slices.Equal(names, want) || !slices.Equal(snap.Next, want) {
		t.Errorf("tasks %v next %v, want %v for both", names, snap.Next, want)
	}
	// The writes still apply in task-path order (node names).
	res, err := g.Invoke(ctx, nil, th)
	if err != nil {
		t.Fatal(err)
	}
	if got := log.Get(engine.StateOf(res.Values)); !slices.Equal(got, []string{"fan", "alpha", "mid", "zeta"}) {
		t.Errorf("log = %v, want [fan alpha mid zeta]", got)
	}
}

// After the first of two interrupts in one node is answered, the task holds
// a stored answer: it is waiting, not next.
func TestAnsweredFirstOfTwoInterruptsIsNotNext(t *testing.T) {
	ctx := context.Background()
	out := engine.LastValue[string]("out")
	g, err := engine.NewGraph("two", out).
		AddNode("ask", func(ctx context.Context, s engine.State) (engine.Output, error) {
			a1, err := engine.InterruptAs[string](ctx, "first?")
			if err != nil {
				return nil, err
			}
			a2, err := engine.InterruptAs[string](ctx, "second?")
			if err != nil {
				return nil, err
			}
			return engine.Updates(out.Set(a1 + " " + a2)), nil
		}).
		AddEdge(engine.START, "ask").
		Compile(engine.WithSaver(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	th := engine.WithThread("t")
	if _, err := g.Invoke(ctx, engine.Values{}, th); err != nil {
		t.Fatal(err)
	}
	res, err := g.Invoke(ctx, engine.Command{Resume: "one"}, th)
	if err != nil || len(res.Interrupts) != 1 {
		t.Fatalf("after the first answer: %+v, %v", res, err)
	}
	snap, err := g.GetState(ctx, th)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Next) != 0 || len(snap.Tasks) != 1 || len(snap.Tasks[0].Interrupts) != 1 || snap.Tasks[0].Interrupts[0].Value != "second?" {
		t.Errorf("next %v tasks %+v, want no next and ask waiting on its second question", snap.Next, snap.Tasks)
	}
}

// writeSpy records the checkpoints writes are stored against.
type writeSpy struct {
	checkpoint.Saver
	refs []string
}

func (s *writeSpy) PutWrites(ctx context.Context, ref checkpoint.Ref, ws []checkpoint.Write, taskID, path string) error {
	s.refs = append(s.refs, ref.CheckpointID)
	return s.Saver.PutWrites(ctx, ref, ws, taskID, path)
}

// With durability exit a finished run stores its final checkpoint and no
// pending writes: the last step's writes are in that checkpoint, and the
// checkpoint that step started from was never stored.
func TestDurabilityExitStoresNoFinishedWrites(t *testing.T) {
	ctx := context.Background()
	log := engine.List[string]("log")
	spy := &writeSpy{Saver: memory.New()}
	g, err := engine.NewGraph("exit", log).
		AddNode("a", logNode(log, "a")).AddNode("b", logNode(log, "b")).
		AddEdge(engine.START, "a").AddEdge("a", "b").
		Compile(engine.WithSaver(spy))
	if err != nil {
		t.Fatal(err)
	}
	th := engine.WithThread("t")
	if _, err := g.Invoke(ctx, engine.Values{}, th, engine.WithDurability(engine.DurabilityExit)); err != nil {
		t.Fatal(err)
	}
	if len(spy.refs) != 0 {
		t.Errorf("writes stored against %v, want none", spy.refs)
	}
	snaps, err := g.History(ctx, checkpoint.ListOptions{}, th)
	if err != nil || len(snaps) != 1 || !snaps[0].Done() {
		t.Errorf("%d checkpoints (%v), want the final one only, done", len(snaps), err)
	}
}

// GetState with WithSubgraphs gives a pending subgraph task its own state.
func TestGetStateWithSubgraphs(t *testing.T) {
	ctx := context.Background()
	log := engine.List[string]("log")
	answer := engine.LastValue[string]("answer")
	inner := askChild(t, log, answer)
	middle, err := engine.NewGraph("middle", log, answer).
		AddNode("m1", logNode(log, "m1")).
		AddSubgraph("inner", inner).
		AddEdge(engine.START, "m1").AddEdge("m1", "inner").Compile()
	if err != nil {
		t.Fatal(err)
	}
	g, err := engine.NewGraph("parent", log, answer).
		AddSubgraph("child", middle).AddEdge(engine.START, "child").
		Compile(engine.WithSaver(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	th := engine.WithThread("t")
	if _, err := g.Invoke(ctx, engine.Values{}, th); err != nil {
		t.Fatal(err)
	}
	plain, err := g.GetState(ctx, th)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Tasks[0].State != nil {
		t.Error("without WithSubgraphs the task state is filled")
	}
	snap, err := g.GetState(ctx, th, engine.WithSubgraphs())
	if err != nil {
		t.Fatal(err)
	}
	child := snap.Tasks[0].State
	if child == nil || !slices.Equal(child.Next, []string{"inner"}) || !slices.Equal(log.Get(engine.StateOf(child.Values)), []string{"m1"}) {
		t.Fatalf("child state = %+v, want next [inner] and log [m1]", child)
	}
	in := child.Tasks[0].State
	if in == nil || !slices.Equal(in.Next, []string{"ask"}) || len(in.Interrupts) != 1 || in.Ref.NS != child.Tasks[0].NS {
		t.Fatalf("inner state = %+v, want ask waiting in its own namespace", in)
	}
}

// Streams report what LangGraph's do: no events for the hidden start task,
// checkpoints with their parent and metadata, a pull task's input, and a
// static breakpoint as an "__interrupt__" update.
func TestStreamEventsMatchLangGraph(t *testing.T) {
	ctx := context.Background()
	log := engine.List[string]("log")
	g, err := engine.NewGraph("s", log).
		AddNode("a", logNode(log, "a")).AddNode("b", logNode(log, "b")).
		AddEdge(engine.START, "a").AddEdge("a", "b").
		Compile(engine.WithSaver(memory.New()), engine.WithInterruptBefore("b"))
	if err != nil {
		t.Fatal(err)
	}
	var evs []engine.Event
	for ev, err := range g.Stream(ctx, engine.Values{"log": []string{"in"}}, engine.ModeTasks|engine.ModeCheckpoints|engine.ModeUpdates, engine.WithThread("t")) {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	var cps []*engine.Snapshot
	sawBreak := false
	for _, ev := range evs {
		switch {
		case ev.Task != nil && ev.Task.Name == engine.START:
			t.Errorf("a task event for the hidden start task: %+v", ev.Task)
		case ev.Task != nil && ev.Task.Name == "a" && !ev.Task.Done:
			if in, ok := ev.Task.Input.(engine.Values); !ok || !slices.Equal(log.Get(engine.StateOf(in)), []string{"in"}) {
				t.Errorf("a's start event input = %v, want the state it reads", ev.Task.Input)
			}
		case ev.State != nil:
			cps = append(cps, ev.State)
		case ev.Update != nil && ev.Update.Node == "__interrupt__":
			sawBreak = len(ev.Update.Interrupts) == 0
		}
	}
	if !sawBreak {
		t.Error("no {__interrupt__: []} update at the breakpoint before b")
	}
	if len(cps) != 3 {
		t.Fatalf("%d checkpoint events, want 3 (input, after start, after a)", len(cps))
	}
	for i, cp := range cps {
		wantSource := checkpoint.SourceLoop
		if i == 0 {
			wantSource = checkpoint.SourceInput
		}
		if cp.Metadata.Source != wantSource || cp.Metadata.Step != i-1 || cp.CreatedAt.IsZero() {
			t.Errorf("checkpoint event %d: metadata %+v, created %v", i, cp.Metadata, cp.CreatedAt)
		}
		if (i == 0) != (cp.Parent == nil) || (i > 0 && cp.Parent.CheckpointID != cps[i-1].Ref.CheckpointID) {
			t.Errorf("checkpoint event %d: parent %v", i, cp.Parent)
		}
	}
	snap, err := g.GetState(ctx, engine.WithThread("t"))
	if err != nil {
		t.Fatal(err)
	}
	if last := cps[2]; last.Ref != snap.Ref || !slices.Equal(last.Next, snap.Next) || fmt.Sprint(last.Values) != fmt.Sprint(snap.Values) {
		t.Errorf("last checkpoint event %+v differs from GetState %+v", last, snap)
	}
}

// A subgraph's own compiled breakpoints stop the run when it runs as a
// node; resuming the parent continues inside the subgraph.
func TestSubgraphKeepsItsBreakpoints(t *testing.T) {
	ctx := context.Background()
	log := engine.List[string]("log")
	g := childThenAfter(t, log, engine.WithInterruptBefore("c2"))
	th := engine.WithThread("t")
	res, err := g.Invoke(ctx, engine.Values{}, th)
	if err != nil {
		t.Fatal(err)
	}
	if res.Done || !slices.Equal(res.Next, []string{"child"}) {
		t.Fatalf("first run: %+v, want a stop inside child", res)
	}
	snap, err := g.GetState(ctx, th, engine.WithSubgraphs())
	if err != nil {
		t.Fatal(err)
	}
	if in := snap.Tasks[0].State; in == nil || !slices.Equal(in.Next, []string{"c2"}) {
		t.Fatalf("child state %+v, want next [c2]", snap.Tasks[0].State)
	}
	res, err = g.Invoke(ctx, nil, th)
	if err != nil {
		t.Fatal(err)
	}
	if got := log.Get(engine.StateOf(res.Values)); !res.Done || !slices.Equal(got, []string{"c1", "c2", "after"}) {
		t.Errorf("after resuming: done %v log %v, want [c1 c2 after]", res.Done, got)
	}
}

// A run's breakpoints reach inside subgraphs by path, and snapshots of a
// subgraph's own checkpoints are read with WithNamespace.
func TestBreakpointsInsideSubgraphsAndNamespaces(t *testing.T) {
	ctx := context.Background()
	log := engine.List[string]("log")
	g := childThenAfter(t, log)
	th := engine.WithThread("t")
	res, err := g.Invoke(ctx, engine.Values{}, th, engine.BreakBefore("child|c2"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Done || !slices.Equal(res.Next, []string{"child"}) {
		t.Fatalf("stopped %+v, want a stop inside child", res)
	}
	snap, err := g.GetState(ctx, th, engine.WithSubgraphs())
	if err != nil {
		t.Fatal(err)
	}
	ns := snap.Tasks[0].NS
	inner, err := g.GetState(ctx, th, engine.WithNamespace(ns))
	if err != nil || !slices.Equal(inner.Next, []string{"c2"}) || inner.Ref.NS != ns {
		t.Fatalf("child's state through WithNamespace: %+v, %v", inner, err)
	}
	hist, err := g.History(ctx, checkpoint.ListOptions{}, th, engine.WithNamespace(ns))
	if err != nil || len(hist) != 3 {
		t.Fatalf("child's history: %d, %v", len(hist), err)
	}
	if _, err := g.GetState(ctx, th, engine.WithNamespace("after:x")); err == nil {
		t.Error("a namespace of a plain node read")
	}
	res, err = g.Invoke(ctx, nil, th)
	if err != nil || !res.Done || !slices.Equal(log.Get(engine.StateOf(res.Values)), []string{"c1", "c2", "after"}) {
		t.Fatalf("continuing: %+v, %v", res, err)
	}
}

// childThenAfter is a parent running subgraph child (c1 → c2, compiled with
// childOpts) then node after, all appending to log.
func childThenAfter(t *testing.T, log engine.ListKey[string], childOpts ...engine.CompileOption) *engine.Graph {
	t.Helper()
	child, err := engine.NewGraph("child", log).
		AddNode("c1", logNode(log, "c1")).AddNode("c2", logNode(log, "c2")).
		AddEdge(engine.START, "c1").AddEdge("c1", "c2").
		Compile(childOpts...)
	if err != nil {
		t.Fatal(err)
	}
	g, err := engine.NewGraph("parent", log).
		AddSubgraph("child", child).AddNode("after", logNode(log, "after")).
		AddEdge(engine.START, "child").AddEdge("child", "after").
		Compile(engine.WithSaver(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Durability exit on a shared store (SQLite: it refuses writes to a
// superseded checkpoint): a run stopped at an interrupt stores its final
// checkpoint and the interrupt, and the resume finishes the thread.
func TestDurabilityExitOnSQLite(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(filepath.Join(t.TempDir(), "exit.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	log := engine.List[string]("log")
	g, err := engine.NewGraph("exit", log).
		AddNode("a", logNode(log, "a")).
		AddNode("ask", func(ctx context.Context, st engine.State) (engine.Output, error) {
			v, err := engine.InterruptAs[string](ctx, "ok?")
			if err != nil {
				return nil, err
			}
			return engine.Updates(log.Add("ask:" + v)), nil
		}).
		AddEdge(engine.START, "a").AddEdge("a", "ask").
		Compile(engine.WithSaver(s))
	if err != nil {
		t.Fatal(err)
	}
	th, exit := engine.WithThread("t"), engine.WithDurability(engine.DurabilityExit)
	res, err := g.Invoke(ctx, engine.Values{}, th, exit)
	if err != nil || len(res.Interrupts) != 1 {
		t.Fatalf("first run: %+v, %v", res, err)
	}
	snap, err := g.GetState(ctx, th)
	if err != nil || len(snap.OpenInterrupts()) != 1 {
		t.Fatalf("stored state: %+v, %v", snap, err)
	}
	res, err = g.Invoke(ctx, engine.Command{Resume: "yes"}, th, exit)
	if err != nil || !res.Done || !slices.Equal(log.Get(engine.StateOf(res.Values)), []string{"a", "ask:yes"}) {
		t.Fatalf("resume: %+v, %v", res, err)
	}
}

// stoppedBeforeB runs a → b on a new SQLite store (a shared store, which
// refuses loop checkpoints and task writes off the thread's head) under ref,
// stopped by a breakpoint before b on thread "t".
func stoppedBeforeB(t *testing.T, ref engine.Reference) (*engine.Graph, engine.ListKey[string], engine.RunOption) {
	t.Helper()
	s, err := sqlite.Open(filepath.Join(t.TempDir(), "ab.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	log := engine.List[string]("log")
	g, err := engine.NewGraph("ab", log).
		AddNode("a", logNode(log, "a")).AddNode("b", logNode(log, "b")).
		AddEdge(engine.START, "a").AddEdge("a", "b").
		Compile(engine.WithSaver(s), engine.WithInterruptBefore("b"), engine.WithReference(ref))
	if err != nil {
		t.Fatal(err)
	}
	th := engine.WithThread("t")
	if _, err := g.Invoke(context.Background(), engine.Values{}, th); err != nil {
		t.Fatal(err)
	}
	return g, log, th
}

// Replaying a manual update that is no longer the thread's newest
// checkpoint starts a branch: on a store that refuses loop checkpoints off
// the head, a fork copy comes first and the run goes on, under both
// references.
func TestReplayOfAnOlderUpdate(t *testing.T) {
	for _, ref := range []engine.Reference{engine.LangGraphPython, engine.LangGraphJS} {
		t.Run(ref.String(), func(t *testing.T) {
			ctx := context.Background()
			g, log, th := stoppedBeforeB(t, ref)
			upd, err := g.UpdateState(ctx, engine.Updates(log.Add("edited")), "a", th)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := g.Invoke(ctx, nil, th); err != nil { // the head moves on past the update
				t.Fatal(err)
			}
			res, err := g.Invoke(ctx, nil, th, engine.WithCheckpoint(upd.CheckpointID))
			if err != nil {
				t.Fatalf("replaying the older update: %v", err)
			}
			if !res.Done || !slices.Equal(log.Get(engine.StateOf(res.Values)), []string{"a", "edited", "b"}) {
				t.Errorf("replayed branch: %+v", res)
			}
			hist, err := g.History(ctx, checkpoint.ListOptions{Limit: 2}, th)
			if err != nil || hist[1].Metadata.Source != checkpoint.SourceFork || hist[1].Parent.CheckpointID != upd.CheckpointID {
				t.Errorf("the branch does not start with a fork of the update: %+v, %v", hist[1], err)
			}
		})
	}
}

// F22: an input update of a new thread is step -1, as in LangGraph (and as a
// run's input), so the run that follows starts at step 0; a node update of a
// new thread stays step 0. Both UpdateState and BulkUpdateState.
func TestInputUpdateOfNewThreadIsStepMinusOne(t *testing.T) {
	ctx := context.Background()
	log := engine.List[string]("log")
	g, err := engine.NewGraph("u", log).
		AddNode("a", logNode(log, "a")).
		AddNode("b", logNode(log, "b")).
		AddEdge(engine.START, "a").AddEdge("a", "b").
		Compile(engine.WithSaver(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	steps := func(th engine.RunOption) []int {
		t.Helper()
		hist, err := g.History(ctx, checkpoint.ListOptions{}, th)
		if err != nil {
			t.Fatal(err)
		}
		var out []int
		for i := len(hist) - 1; i >= 0; i-- {
			out = append(out, hist[i].Metadata.Step)
		}
		return out
	}
	one := engine.WithThread("single")
	if _, err := g.UpdateState(ctx, engine.Updates(log.Add("in")), engine.AsInput, one); err != nil {
		t.Fatal(err)
	}
	bulk := engine.WithThread("bulk")
	if _, err := g.BulkUpdateState(ctx, [][]engine.StateUpdate{{{Values: engine.Updates(log.Add("in")), AsNode: engine.AsInput}}}, bulk); err != nil {
		t.Fatal(err)
	}
	for name, th := range map[string]engine.RunOption{"UpdateState": one, "BulkUpdateState": bulk} {
		if got := steps(th); !slices.Equal(got, []int{-1}) {
			t.Errorf("%s as input on a new thread: steps %v, want [-1]", name, got)
		}
		if _, err := g.Invoke(ctx, nil, th); err != nil {
			t.Fatal(err)
		}
		if got, want := steps(th), []int{-1, 0, 1, 2}; !slices.Equal(got, want) {
			t.Errorf("%s as input then Invoke: steps %v, want %v", name, got, want)
		}
	}
	node := engine.WithThread("node")
	if _, err := g.UpdateState(ctx, engine.Updates(log.Add("x")), "a", node); err != nil {
		t.Fatal(err)
	}
	if got := steps(node); !slices.Equal(got, []int{0}) {
		t.Errorf("node update of a new thread: steps %v, want [0]", got)
	}
}

// A task whose conditional edge fails after its node's writes were made
// stores those writes with its error, as both LangGraphs do: the state
// update and the static edge count (the task is done, not next), the
// failing route adds none of its writes (its key before the bad Send
// included), and a resume applies the writes without running the node
// again: b runs, c does not.
func TestFailedTaskKeepsWritesMadeBeforeItsError(t *testing.T) {
	ctx := context.Background()
	log := engine.List[string]("log")
	calls := 0
	g, err := engine.NewGraph("f", log).
		AddNode("a", func(context.Context, engine.State) (engine.Output, error) {
			calls++
			return engine.Updates(log.Add("a")), nil
		}).
		AddNode("b", logNode(log, "b")).
		AddNode("c", logNode(log, "c")).
		AddEdge(engine.START, "a").AddEdge("a", "b").
		AddConditionalEdges("a", func(context.Context, engine.State) (engine.Route, error) {
			r := engine.To("c")
			r.Sends = []engine.Send{{Node: engine.END}}
			return r, nil
		}, engine.Targets("c"), engine.SendsTo("c")).
		Compile(engine.WithSaver(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	th := engine.WithThread("t")
	var iu *engine.InvalidUpdateError
	if _, err := g.Invoke(ctx, engine.Values{}, th); !errors.As(err, &iu) {
		t.Fatalf("Invoke: err = %v, want the InvalidUpdateError of the Send to END", err)
	}
	ranFirst := calls
	snap, err := g.GetState(ctx, th)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := snap.Values["log"].([]string); !slices.Equal(v, []string{"a"}) {
		t.Errorf("values after the failure: log %v, want [a] (a's write stored with its error)", v)
	}
	if len(snap.Next) != 0 {
		t.Errorf("next after the failure: %v, want none (a counts as done)", snap.Next)
	}
	if len(snap.Tasks) != 1 || snap.Tasks[0].Name != "a" || snap.Tasks[0].Error == "" || len(snap.Tasks[0].Result) != 1 {
		t.Errorf("tasks after the failure: %+v, want a with its error and its one state write", snap.Tasks)
	}
	res, err := g.Invoke(ctx, nil, th)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := res.Values["log"].([]string); !slices.Equal(v, []string{"a", "b"}) {
		t.Errorf("values after the resume: log %v, want [a b]", v)
	}
	if calls != ranFirst {
		t.Errorf("a ran %d more times on resume, want 0: its stored writes make it done", calls-ranFirst)
	}
}
