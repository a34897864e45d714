package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
)

// linearABC is the graph of §11 scenarios 1–3: START → a → b → c with a list
// reducer; b appends "b<n>" where n counts its calls.
func linearABC(t *testing.T, saver checkpoint.Saver, opts ...engine.CompileOption) (*engine.Graph, *atomic.Int32) {
	value := engine.List[string]("value")
	var bCalls atomic.Int32
	g := compile(t, engine.NewGraph("abc", value).
		AddNode("a", node(func(engine.State) engine.Output { return engine.Updates(value.Add("a")) })).
		AddNode("b", node(func(engine.State) engine.Output {
			return engine.Updates(value.Add(fmt.Sprintf("b%d", bCalls.Add(1))))
		})).
		AddNode("c", node(func(engine.State) engine.Output { return engine.Updates(value.Add("c")) })).
		AddEdge(engine.START, "a").AddEdge("a", "b").AddEdge("b", "c"), append(opts, engine.WithSaver(saver))...)
	return g, &bCalls
}

type histRow struct {
	next, values, source string
	step                 int
}

func history(t *testing.T, g *engine.Graph, thread string) ([]*engine.Snapshot, []histRow) {
	t.Helper()
	snaps, err := g.History(ctx, checkpoint.ListOptions{}, engine.WithThread(thread))
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]histRow, len(snaps))
	for i, s := range snaps {
		rows[i] = histRow{strings.Join(s.Next, ","), fmt.Sprint(s.Values["value"]), string(s.Metadata.Source), s.Metadata.Step}
	}
	return snaps, rows
}

func findNext(t *testing.T, snaps []*engine.Snapshot, next string) *engine.Snapshot {
	t.Helper()
	for _, s := range snaps {
		if strings.Join(s.Next, ",") == next {
			return s
		}
	}
	t.Fatalf("no checkpoint with next %q", next)
	return nil
}

// §11 scenario 1.
func TestLinearHistory(t *testing.T) {
	g, _ := linearABC(t, memory.New())
	res := invoke(t, g, engine.Values{"value": []string{}}, engine.WithThread("1"))
	if got := fmt.Sprint(res.Values["value"]); got != "[a b1 c]" {
		t.Fatalf("value = %s", got)
	}
	_, rows := history(t, g, "1")
	want := []histRow{
		{"", "[a b1 c]", "loop", 3}, {"c", "[a b1]", "loop", 2}, {"b", "[a]", "loop", 1},
		{"a", "[]", "loop", 0}, {"__start__", "[]", "input", -1},
	}
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Errorf("history\n got %v\nwant %v", rows, want)
	}
}

// §11 scenario 2: replaying from a past checkpoint writes a fork
// checkpoint first and keeps the old ones, under both references (B6).
func TestReplayBranch(t *testing.T) {
	for _, ref := range []engine.Reference{engine.LangGraphPython, engine.LangGraphJS} {
		t.Run(ref.String(), func(t *testing.T) {
			g, _ := linearABC(t, memory.New(), engine.WithReference(ref))
			invoke(t, g, engine.Values{"value": []string{}}, engine.WithThread("1"))
			snaps, _ := history(t, g, "1")
			beforeB := findNext(t, snaps, "b")
			res := invoke(t, g, nil, engine.WithThread("1"), engine.WithCheckpoint(beforeB.Ref.CheckpointID))
			if got := fmt.Sprint(res.Values["value"]); got != "[a b2 c]" {
				t.Fatalf("replay value = %s", got)
			}
			snaps2, rows := history(t, g, "1")
			var nexts []string
			for _, r := range rows {
				nexts = append(nexts, "("+r.next+")")
			}
			if got := strings.Join(nexts, " "); got != "() (c) (b) () (c) (b) (a) (__start__)" {
				t.Errorf("nexts %s", got)
			}
			fork := snaps2[2]
			if fork.Metadata.Source != checkpoint.SourceFork || fork.Parent == nil || fork.Parent.CheckpointID != beforeB.Ref.CheckpointID {
				t.Errorf("fork checkpoint %+v parent %+v", fork.Metadata, fork.Parent)
			}
			for _, old := range snaps {
				if _, err := g.GetState(ctx, engine.WithThread("1"), engine.WithCheckpoint(old.Ref.CheckpointID)); err != nil {
					t.Errorf("old checkpoint %s lost: %v", old.Ref.CheckpointID, err)
				}
			}
			st, err := g.GetState(ctx, engine.WithThread("1"))
			if err != nil || fmt.Sprint(st.Values["value"]) != "[a b2 c]" {
				t.Errorf("latest state %v, %v", st, err)
			}
		})
	}
}

// Running from the thread's newest checkpoint, named: both LangGraphs
// continue it as it is (LangGraph.js's "resume at head"; recorded in the
// replay_of_the_head scenario), so no fork copy is written (B6).
func TestReplayOfTheHead(t *testing.T) {
	cases := []struct {
		ref   engine.Reference
		nexts string
	}{
		{engine.LangGraphPython, "() (c) (b) (a) (__start__)"},
		{engine.LangGraphJS, "() (c) (b) (a) (__start__)"},
	}
	for _, c := range cases {
		t.Run(c.ref.String(), func(t *testing.T) {
			g, _ := linearABC(t, memory.New(), engine.WithReference(c.ref))
			res := invoke(t, g, engine.Values{"value": []string{}}, engine.WithThread("1"), engine.WithStepLimit(2))
			if res.Done || res.Ref.CheckpointID == "" {
				t.Fatalf("step-limited run: %+v", res)
			}
			res = invoke(t, g, nil, engine.WithThread("1"), engine.WithCheckpoint(res.Ref.CheckpointID))
			if got := fmt.Sprint(res.Values["value"]); !res.Done || got != "[a b1 c]" {
				t.Fatalf("replay: %+v", res)
			}
			_, rows := history(t, g, "1")
			var nexts []string
			for _, r := range rows {
				nexts = append(nexts, "("+r.next+")")
			}
			if got := strings.Join(nexts, " "); got != c.nexts {
				t.Errorf("nexts %s, want %s", got, c.nexts)
			}
		})
	}
}

// §11 scenario 3: fork with an edited state.
func TestForkUpdate(t *testing.T) {
	g, _ := linearABC(t, memory.New())
	invoke(t, g, engine.Values{"value": []string{}}, engine.WithThread("1"))
	snaps, _ := history(t, g, "1")
	beforeB := findNext(t, snaps, "b")
	value := engine.List[string]("value")
	ref, err := g.UpdateState(ctx, engine.Updates(value.Add("x")), "", engine.WithThread("1"), engine.WithCheckpoint(beforeB.Ref.CheckpointID))
	if err != nil {
		t.Fatal(err)
	}
	res := invoke(t, g, nil, engine.WithThread("1"), engine.WithCheckpoint(ref.CheckpointID))
	if got := fmt.Sprint(res.Values["value"]); got != "[a x b2 c]" {
		t.Fatalf("value = %s", got)
	}
	snaps2, rows := history(t, g, "1")
	if len(rows) != 8 {
		t.Fatalf("history has %d entries, want 8: %v", len(rows), rows)
	}
	fork := snaps2[2]
	if fork.Metadata.Source != checkpoint.SourceUpdate || strings.Join(fork.Next, ",") != "b" ||
		fmt.Sprint(fork.Values["value"]) != "[a x]" || fork.Parent.CheckpointID != beforeB.Ref.CheckpointID {
		t.Errorf("fork: source %s next %v values %v parent %v", fork.Metadata.Source, fork.Next, fork.Values, fork.Parent)
	}
	if fork.Metadata.Tasks == nil || fork.Metadata.Tasks[0] != "a" {
		t.Errorf("update attributed to %v, want a", fork.Metadata.Tasks)
	}
}

// §11 scenario 4: a fork does not re-apply the pending writes of the
// checkpoint it came from.
func TestForkIgnoresPendingWrites(t *testing.T) {
	value := engine.Reducer("value", "add", engine.Sum[int])
	add := func(n int) engine.NodeFunc {
		return node(func(engine.State) engine.Output { return engine.Updates(value.Add(n)) })
	}
	g := compile(t, engine.NewGraph("ab", value).AddNode("a", add(10)).AddNode("b", add(100)).
		AddEdge(engine.START, "a").AddEdge("a", "b"), engine.WithSaver(memory.New()))
	res := invoke(t, g, engine.Values{"value": 1}, engine.WithThread("1"))
	if res.Values["value"] != 111 {
		t.Fatalf("value = %v", res.Values["value"])
	}
	snaps, _ := history(t, g, "1")
	beforeA := findNext(t, snaps, "a")
	ref, err := g.UpdateState(ctx, engine.Updates(value.Add(20)), "a", engine.WithThread("1"), engine.WithCheckpoint(beforeA.Ref.CheckpointID))
	if err != nil {
		t.Fatal(err)
	}
	res = invoke(t, g, nil, engine.WithThread("1"), engine.WithCheckpoint(ref.CheckpointID))
	if res.Values["value"] != 121 {
		t.Errorf("value = %v, want 121", res.Values["value"])
	}
}

//lint:ignore ST1005 the oracle scenario's message, compared as is
var errNotGood = errors.New("I'm not good")

// §11 scenario 11: after a failure, resuming skips the task that finished.
func TestErrorResumeSkipsFinishedTasks(t *testing.T) {
	value := engine.Reducer("value", "add", engine.Sum[int])
	var one, two atomic.Int32
	var fixed atomic.Bool
	saver := memory.New()
	g := compile(t, engine.NewGraph("pending", value).
		AddNode("one", node(func(engine.State) engine.Output { one.Add(1); return engine.Updates(value.Add(2)) })).
		AddNode("two", func(context.Context, engine.State) (engine.Output, error) {
			two.Add(1)
			if !fixed.Load() {
				return nil, errNotGood
			}
			return engine.Updates(value.Add(3)), nil
		}, engine.WithRetry(engine.RetryPolicy{MaxAttempts: 2})).
		AddEdge(engine.START, "one").AddEdge(engine.START, "two"), engine.WithSaver(saver))
	_, err := g.Invoke(ctx, engine.Values{"value": 1}, engine.WithThread("1"), engine.WithDurability(engine.DurabilitySync))
	var ne *engine.NodeError
	if !errors.As(err, &ne) || ne.Node != "two" || !errors.Is(err, errNotGood) {
		t.Fatalf("err = %v", err)
	}
	if one.Load() != 1 || two.Load() != 2 {
		t.Fatalf("calls one=%d two=%d", one.Load(), two.Load())
	}
	st, err := g.GetState(ctx, engine.WithThread("1"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Values["value"] != 3 || strings.Join(st.Next, ",") != "two" || st.Metadata.Step != 0 {
		t.Errorf("state values %v next %v step %d", st.Values, st.Next, st.Metadata.Step)
	}
	var sawResult, sawError bool
	for _, ts := range st.Tasks {
		if ts.Name == "one" && len(ts.Result) == 1 && ts.Result[0].Value == 2 {
			sawResult = true
		}
		if ts.Name == "two" && strings.Contains(ts.Error, "I'm not good") {
			sawError = true
		}
	}
	if !sawResult || !sawError {
		t.Errorf("tasks %+v", st.Tasks)
	}
	if _, err := g.Invoke(ctx, nil, engine.WithThread("1")); err == nil {
		t.Fatal("resume should fail again")
	}
	if one.Load() != 1 || two.Load() != 4 {
		t.Fatalf("after resume calls one=%d two=%d", one.Load(), two.Load())
	}
	fixed.Store(true)
	res := invoke(t, g, nil, engine.WithThread("1"))
	if res.Values["value"] != 6 || one.Load() != 1 {
		t.Errorf("value %v, one ran %d times", res.Values["value"], one.Load())
	}
	snaps, _ := history(t, g, "1")
	if len(snaps) != 3 || snaps[0].Metadata.Step != 1 || fmt.Sprint(snaps[0].Updated) != "[value]" {
		t.Errorf("history: %d entries, latest step %d updated %v", len(snaps), snaps[0].Metadata.Step, snaps[0].Updated)
	}
}

func twoInterruptsGraph(t *testing.T) *engine.Graph {
	key := engine.Reducer("my_key", "add", engine.Sum[string])
	return compile(t, engine.NewGraph("ask", key).
		AddNode("node", func(ctx context.Context, s engine.State) (engine.Output, error) {
			a1, err := engine.Interrupt(ctx, map[string]any{"value": 1})
			if err != nil {
				return nil, err
			}
			a2, err := engine.Interrupt(ctx, map[string]any{"value": 2})
			if err != nil {
				return nil, err
			}
			return engine.Updates(key.Add(a1.(string) + " " + a2.(string))), nil
		}).AddEdge(engine.START, "node"), engine.WithSaver(memory.New()))
}

// §11 scenario 12: several interrupts in one node, answered in order.
func TestMultipleInterruptsInOneNode(t *testing.T) {
	for _, byID := range []bool{false, true} {
		t.Run(fmt.Sprintf("byID=%v", byID), func(t *testing.T) {
			g := twoInterruptsGraph(t)
			key := engine.Reducer("my_key", "add", engine.Sum[string])
			var ints []engine.PendingInterrupt
			for ev, err := range g.Stream(ctx, engine.Values{"my_key": "DE"}, engine.ModeUpdates, engine.WithThread("1")) {
				if err != nil {
					t.Fatal(err)
				}
				if ev.Update.Node == "__interrupt__" {
					ints = append(ints, ev.Update.Interrupts...)
				}
			}
			if len(ints) != 1 || fmt.Sprint(ints[0].Value) != "map[value:1]" {
				t.Fatalf("interrupts %v", ints)
			}
			answer := func(v string) engine.Command {
				if byID {
					return engine.Command{ResumeByID: map[string]any{ints[0].ID: v}}
				}
				return engine.Command{Resume: v}
			}
			cmd := answer("answer 1")
			cmd.Update = engine.Updates(key.Add(" foofoo "))
			res := invoke(t, g, cmd, engine.WithThread("1"))
			if len(res.Interrupts) != 1 || fmt.Sprint(res.Interrupts[0].Value) != "map[value:2]" || res.Interrupts[0].ID != ints[0].ID {
				t.Fatalf("second interrupt %v", res.Interrupts)
			}
			var values []string
			for ev, err := range g.Stream(ctx, answer("answer 2"), engine.ModeValues, engine.WithThread("1")) {
				if err != nil {
					t.Fatal(err)
				}
				values = append(values, ev.Values["my_key"].(string))
			}
			if got := strings.Join(values, "|"); got != "DE foofoo |DE foofoo answer 1 answer 2" {
				t.Errorf("values %q", got)
			}
		})
	}
}

// Parallel interrupts must be answered by id.
func TestParallelInterruptsByID(t *testing.T) {
	out := engine.List[string]("out")
	ask := func(ctx context.Context, s engine.State) (engine.Output, error) {
		a, err := engine.InterruptAs[string](ctx, "ok?")
		if err != nil {
			return nil, err
		}
		return engine.Updates(out.Add(a)), nil
	}
	g := compile(t, engine.NewGraph("par", out).AddNode("x", ask).AddNode("y", ask).
		AddEdge(engine.START, "x").AddEdge(engine.START, "y"), engine.WithSaver(memory.New()))
	res := invoke(t, g, engine.Values{}, engine.WithThread("t"))
	if len(res.Interrupts) != 2 || res.Interrupts[0].ID == res.Interrupts[1].ID {
		t.Fatalf("interrupts %+v", res.Interrupts)
	}
	_, err := g.Invoke(ctx, engine.Command{Resume: "yes"}, engine.WithThread("t"))
	if err == nil || !strings.Contains(err.Error(), "by id") {
		t.Fatalf("single resume with two pending: err = %v", err)
	}
	answers := map[string]any{}
	for _, it := range res.Interrupts {
		answers[it.ID] = "yes-" + it.Node
	}
	res = invoke(t, g, engine.Command{ResumeByID: answers}, engine.WithThread("t"))
	if !res.Done || fmt.Sprint(res.Values["out"]) != "[yes-x yes-y]" {
		t.Errorf("result %+v", res)
	}
}

// §11 scenario 13: a static breakpoint resumed with a Command.
func TestStaticBreakpointResumedWithCommand(t *testing.T) {
	t.Run("resume", func(t *testing.T) {
		foo := engine.LastValue[string]("foo")
		step := func(n string) engine.NodeFunc {
			return node(func(s engine.State) engine.Output { return engine.Updates(foo.Set(foo.Get(s) + "|" + n)) })
		}
		g := compile(t, engine.NewGraph("bp", foo).AddNode("node1", step("node-1")).AddNode("node2", step("node-2")).
			AddEdge(engine.START, "node1").AddEdge("node1", "node2"),
			engine.WithSaver(memory.New()), engine.WithInterruptBefore("node1"))
		res := invoke(t, g, engine.Values{"foo": "abc"}, engine.WithThread("1"))
		if res.Breakpoint != "before" || strings.Join(res.Next, ",") != "node1" || res.Values["foo"] != "abc" {
			t.Fatalf("stopped %+v", res)
		}
		res = invoke(t, g, engine.Command{Resume: "go"}, engine.WithThread("1"))
		if res.Values["foo"] != "abc|node-1|node-2" || !res.Done {
			t.Errorf("foo = %v", res.Values["foo"])
		}
	})
	t.Run("goto", func(t *testing.T) {
		foo := engine.Reducer("foo", "add", engine.Sum[string])
		step := func(n string) engine.NodeFunc {
			return node(func(s engine.State) engine.Output { return engine.Updates(foo.Add("|" + n)) })
		}
		g := compile(t, engine.NewGraph("bp", foo).AddNode("node1", step("node-1")).AddNode("node2", step("node-2")).
			AddEdge(engine.START, "node1").AddEdge("node1", "node2"),
			engine.WithSaver(memory.New()), engine.WithInterruptBefore("node1"))
		invoke(t, g, engine.Values{"foo": "abc"}, engine.WithThread("1"))
		res := invoke(t, g, engine.Command{Goto: []string{"node2"}}, engine.WithThread("1"))
		if res.Values["foo"] != "abc|node-1|node-2|node-2" {
			t.Errorf("foo = %v", res.Values["foo"])
		}
	})
}

// Stepping: WithStepLimit runs exactly one super-step at a time.
func TestStepLimit(t *testing.T) {
	g, _ := linearABC(t, memory.New())
	res := invoke(t, g, engine.Values{"value": []string{}}, engine.WithThread("s"), engine.WithStepLimit(1))
	if res.Breakpoint != "step" || strings.Join(res.Next, ",") != "a" || res.Steps != 1 {
		t.Fatalf("after one step: %+v", res)
	}
	var trail []string
	for !res.Done {
		res = invoke(t, g, nil, engine.WithThread("s"), engine.WithStepLimit(1))
		trail = append(trail, fmt.Sprint(res.Values["value"]))
	}
	if got := strings.Join(trail, " "); got != "[a] [a b1] [a b1 c]" {
		t.Errorf("trail %s", got)
	}
	_, rows := history(t, g, "s")
	if len(rows) != 5 {
		t.Errorf("stepping wrote %d checkpoints, want 5", len(rows))
	}
}

func memorySaver() checkpoint.Saver { return memory.New() }

var checkpointListAll = checkpoint.ListOptions{}

// failingSaver fails every Put after the first n.
type failingSaver struct {
	checkpoint.Saver
	n, puts atomic.Int32
}

var errDiskFull = errors.New("disk full")

func (f *failingSaver) Put(ctx context.Context, parent checkpoint.Ref, cp checkpoint.Checkpoint, md checkpoint.Metadata, nv map[string]int64) (checkpoint.Ref, error) {
	if f.puts.Add(1) > f.n.Load() {
		return checkpoint.Ref{}, errDiskFull
	}
	return f.Saver.Put(ctx, parent, cp, md, nv)
}

// A checkpoint that cannot be stored fails the run in every durability
// mode, the background one included.
func TestSaveFailureFailsTheRun(t *testing.T) {
	for _, d := range []engine.Durability{engine.DurabilityAsync, engine.DurabilitySync, engine.DurabilityExit} {
		fs := &failingSaver{Saver: memory.New()}
		if d != engine.DurabilityExit {
			fs.n.Store(2) // fail in the middle of the run; exit mode has only the final put
		}
		g, _ := linearABC(t, fs)
		_, err := g.Invoke(ctx, engine.Values{"value": []string{}}, engine.WithThread("1"), engine.WithDurability(d))
		if !errors.Is(err, errDiskFull) {
			t.Errorf("durability %d: err = %v, want disk full", d, err)
		}
	}
}

// An answer stored without running is picked up by the next run on the
// thread (a worker's), used once, and not handed out again.
func TestSubmitAnswerForAWorker(t *testing.T) {
	g := twoInterruptsGraph(t)
	th := engine.WithThread("w")
	invoke(t, g, engine.Values{"my_key": "DE"}, th)
	waiting := func() bool {
		ok, err := g.AnswerWaiting(ctx, th)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if waiting() {
		t.Fatal("no answer was given yet")
	}
	if _, err := g.SubmitAnswer(ctx, engine.Command{ResumeByID: map[string]any{"nope": 1}}, th); err == nil || !strings.Contains(err.Error(), `no pending interrupt "nope"`) {
		t.Fatalf("unknown id: %v", err)
	}
	if _, err := g.SubmitAnswer(ctx, engine.Command{Resume: "one"}, th); err != nil {
		t.Fatal(err)
	}
	if !waiting() {
		t.Fatal("the stored answer is not reported as work")
	}
	res := invoke(t, g, nil, th) // the worker
	if len(res.Interrupts) != 1 || fmt.Sprint(res.Interrupts[0].Value) != "map[value:2]" {
		t.Fatalf("after the first answer: %+v", res)
	}
	if waiting() {
		t.Fatal("a used answer is reported as work again")
	}
	res = invoke(t, g, nil, th) // a worker that runs again without a new answer asks again
	if len(res.Interrupts) != 1 || fmt.Sprint(res.Interrupts[0].Value) != "map[value:2]" {
		t.Fatalf("rerun without an answer: %+v", res)
	}
	if _, err := g.SubmitAnswer(ctx, engine.Command{Resume: "two"}, th); err != nil {
		t.Fatal(err)
	}
	res = invoke(t, g, nil, th)
	if !res.Done || res.Values["my_key"] != "DEone two" {
		t.Fatalf("final: %+v", res.Values)
	}
}

// With durability exit, history keeps one checkpoint per run, and an
// interrupt is still stored and answerable.
func TestDurabilityExit(t *testing.T) {
	g := twoInterruptsGraph(t)
	th := engine.WithThread("x")
	exit := engine.WithDurability(engine.DurabilityExit)
	res := invoke(t, g, engine.Values{"my_key": "DE"}, th, exit)
	if len(res.Interrupts) != 1 {
		t.Fatalf("interrupts %v", res.Interrupts)
	}
	snaps, err := g.History(ctx, checkpoint.ListOptions{}, th)
	if err != nil || len(snaps) != 1 || len(snaps[0].Interrupts) != 1 || strings.Join(snaps[0].Next, ",") != "node" {
		t.Fatalf("after the first run: %d checkpoints, %v", len(snaps), err)
	}
	invoke(t, g, engine.Command{Resume: "one"}, th, exit)
	res = invoke(t, g, engine.Command{Resume: "two"}, th, exit)
	if !res.Done || res.Values["my_key"] != "DEone two" {
		t.Fatalf("final %+v", res.Values)
	}
	snaps, _ = g.History(ctx, checkpoint.ListOptions{}, th)
	if len(snaps) != 2 {
		t.Errorf("%d checkpoints, want one per run that moved the thread", len(snaps))
	}
}

// Breakpoints after nodes say which nodes just ran; a run's BreakBefore and
// BreakAfter replace the compiled ones, and with no nodes clear them.
func TestBreakpointsAfterAndRunOverrides(t *testing.T) {
	foo := engine.Reducer("foo", "add", engine.Sum[string])
	step := func(n string) engine.NodeFunc {
		return node(func(s engine.State) engine.Output { return engine.Updates(foo.Add(n)) })
	}
	g := compile(t, engine.NewGraph("bp", foo).AddNode("a", step("a")).AddNode("b", step("b")).
		AddEdge(engine.START, "a").AddEdge("a", "b"),
		engine.WithSaver(memory.New()), engine.WithInterruptBefore("b"), engine.WithInterruptAfter("*"))
	res := invoke(t, g, engine.Values{"foo": ""}, engine.WithThread("compiled"))
	if res.Breakpoint != "after" || fmt.Sprint(res.After) != "[a]" || fmt.Sprint(res.Next) != "[b]" {
		t.Fatalf("first stop: %+v", res)
	}
	// Before b falls on the checkpoint that just stopped: as in LangGraph it
	// does not stop again; after b does.
	res = invoke(t, g, nil, engine.WithThread("compiled"))
	if res.Breakpoint != "after" || fmt.Sprint(res.After) != "[b]" || !res.Done || res.Values["foo"] != "ab" {
		t.Fatalf("second stop: %+v", res)
	}
	res = invoke(t, g, engine.Values{"foo": ""}, engine.WithThread("cleared"), engine.BreakBefore(), engine.BreakAfter())
	if res.Breakpoint != "" || res.After != nil || !res.Done || res.Values["foo"] != "ab" {
		t.Fatalf("with breakpoints cleared: %+v", res)
	}
	res = invoke(t, g, engine.Values{"foo": ""}, engine.WithThread("before"), engine.BreakBefore("b"), engine.BreakAfter())
	if res.Breakpoint != "before" || res.After != nil || fmt.Sprint(res.Next) != "[b]" || res.Values["foo"] != "a" {
		t.Fatalf("before b only: %+v", res)
	}
}
