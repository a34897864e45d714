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

// fanGraph: START → fan → {zeta, alpha, mid} (one parallel step, each
// appending its name) → end.
func fanGraph(t *testing.T, log engine.ListKey[string]) *engine.Graph {
	t.Helper()
	g, err := engine.NewGraph("fan", log).
		AddNode("fan", logNode(log, "fan")).
		AddNode("zeta", logNode(log, "zeta")).AddNode("alpha", logNode(log, "alpha")).AddNode("mid", logNode(log, "mid")).
		AddEdge(engine.START, "fan").
		AddEdge("fan", "zeta").AddEdge("fan", "alpha").AddEdge("fan", "mid").
		Compile(engine.WithSaver(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Every step passes through plan, one task phase per task, barrier and
// apply; a parallel step run in the order the hook picks ends in the same
// state as the normal run, because writes apply in task order.
func TestPhasesInOrderAndChosenTaskOrder(t *testing.T) {
	ctx := context.Background()
	log := engine.List[string]("log")
	g := fanGraph(t, log)
	normal, err := g.Invoke(ctx, engine.Values{}, engine.WithThread("normal"))
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	var ran []string
	res, err := g.Invoke(ctx, engine.Values{}, engine.WithThread("stepped"), engine.WithPhases(func(_ context.Context, p *engine.PhaseInfo) error {
		seen = append(seen, fmt.Sprintf("%d:%s", p.Step, p.Phase))
		if p.Phase == engine.PhaseTask {
			p.Next = p.Pending[len(p.Pending)-1] // last first: zeta, mid, alpha
			for _, ts := range p.Tasks {
				if ts.ID == p.Next {
					ran = append(ran, ts.Name)
				}
			}
		}
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := "0:plan 0:task 0:barrier 0:apply 1:plan 1:task 1:barrier 1:apply 2:plan 2:task 2:task 2:task 2:barrier 2:apply"
	if got := strings.Join(seen, " "); got != want {
		t.Errorf("phases\n got %s\nwant %s", got, want)
	}
	if !slices.Equal(ran, []string{"__start__", "fan", "zeta", "mid", "alpha"}) {
		t.Errorf("ran %v, want the hook's order", ran)
	}
	if fmt.Sprint(res.Values) != fmt.Sprint(normal.Values) {
		t.Errorf("stepped run ended in %v, the normal run in %v", res.Values, normal.Values)
	}
}

// At each task phase the hook sees every task of the step in task order,
// those already run with their writes, as PhaseInfo.Tasks says.
func TestPhaseTaskShowsTheWholeStep(t *testing.T) {
	log := engine.List[string]("log")
	g := fanGraph(t, log)
	var got []string
	_, err := g.Invoke(context.Background(), engine.Values{}, engine.WithThread("t"), engine.WithPhases(func(_ context.Context, p *engine.PhaseInfo) error {
		if p.Phase != engine.PhaseTask || p.Step != 2 {
			return nil
		}
		var names []string
		for _, ts := range p.Tasks {
			n := ts.Name
			if ts.Finished && len(ts.Result) > 0 {
				n += "✓"
			}
			names = append(names, n)
		}
		got = append(got, strings.Join(names, ","))
		p.Next = p.Pending[len(p.Pending)-1]
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"alpha,mid,zeta", "alpha,mid,zeta✓", "alpha,mid✓,zeta✓"}
	if !slices.Equal(got, want) {
		t.Errorf("tasks at each task phase\n got %q\nwant %q", got, want)
	}
}

// A hook pauses at plan or apply; Invoke(nil) continues. It cannot pause
// mid-step.
func TestPhasePause(t *testing.T) {
	ctx := context.Background()
	log := engine.List[string]("log")
	g := fanGraph(t, log)
	th := engine.WithThread("t")
	pauseAt := func(ph engine.Phase, step int) engine.RunOption {
		return engine.WithPhases(func(_ context.Context, p *engine.PhaseInfo) error {
			if p.Phase == ph && p.Step == step {
				return engine.ErrPause
			}
			return nil
		})
	}
	res, err := g.Invoke(ctx, engine.Values{}, th, pauseAt(engine.PhasePlan, 2))
	if err != nil {
		t.Fatal(err)
	}
	if res.Breakpoint != "phase" || !slices.Equal(res.Next, []string{"alpha", "mid", "zeta"}) {
		t.Fatalf("paused at plan: %+v", res)
	}
	res, err = g.Invoke(ctx, nil, th, pauseAt(engine.PhaseApply, 2))
	if err != nil {
		t.Fatal(err)
	}
	if res.Breakpoint != "phase" || !res.Done || !slices.Equal(log.Get(engine.StateOf(res.Values)), []string{"fan", "alpha", "mid", "zeta"}) {
		t.Fatalf("paused at apply: %+v", res)
	}
	_, err = g.Invoke(ctx, engine.Values{}, engine.WithThread("mid"), engine.WithPhases(func(_ context.Context, p *engine.PhaseInfo) error {
		if p.Phase == engine.PhaseTask {
			return engine.ErrPause
		}
		return nil
	}))
	if !errors.Is(err, engine.ErrPause) || !strings.Contains(err.Error(), "not at task") {
		t.Errorf("pause at a task: err = %v", err)
	}
}

// Edits at the barrier change what applies; the step's checkpoint is a
// fork that lists them, and the tasks' stored writes stay as they ran.
func TestBarrierEditsFork(t *testing.T) {
	ctx := context.Background()
	log := engine.List[string]("log")
	g := fanGraph(t, log)
	th := engine.WithThread("t")
	res, err := g.Invoke(ctx, engine.Values{}, th, engine.WithPhases(func(_ context.Context, p *engine.PhaseInfo) error {
		if p.Phase != engine.PhaseBarrier || p.Step != 2 {
			return nil
		}
		for _, ts := range p.Tasks {
			switch ts.Name {
			case "zeta":
				p.Edits = append(p.Edits, engine.StepEdit{TaskID: ts.ID, Write: 0, Drop: true})
			case "mid":
				p.Edits = append(p.Edits, engine.StepEdit{TaskID: ts.ID, Write: 0, Value: []string{"MID"}})
			}
		}
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	if got := log.Get(engine.StateOf(res.Values)); !slices.Equal(got, []string{"fan", "alpha", "MID"}) {
		t.Errorf("log = %v, want [fan alpha MID]", got)
	}
	hist, err := g.History(ctx, checkpoint.ListOptions{}, th)
	if err != nil {
		t.Fatal(err)
	}
	edited, before := hist[0], hist[1]
	edits, _ := edited.Metadata.Extra[engine.MetaEdits].([]any)
	if edited.Metadata.Source != checkpoint.SourceFork || len(edits) != 2 {
		t.Errorf("edited checkpoint: source %s, edits %v", edited.Metadata.Source, edited.Metadata.Extra[engine.MetaEdits])
	}
	for _, ts := range before.Tasks {
		if ts.Name == "zeta" && fmt.Sprint(ts.Result) != "[{log [zeta]}]" {
			t.Errorf("zeta's stored write = %v, want what it wrote", ts.Result)
		}
	}
}

// What-if: a past step's writes, edited, recomputed without running a node;
// kept as a fork the run continues from.
func TestRecomputeAndForkEdited(t *testing.T) {
	ctx := context.Background()
	log := engine.List[string]("log")
	calls := 0
	g, err := engine.NewGraph("whatif", log).
		AddNode("a", logNode(log, "a")).
		AddNode("b", func(context.Context, engine.State) (engine.Output, error) {
			calls++
			return engine.Updates(log.Add("b")), nil
		}).
		AddNode("c", logNode(log, "c")).
		AddEdge(engine.START, "a").AddEdge("a", "b").AddEdge("b", "c").
		Compile(engine.WithSaver(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	th := engine.WithThread("t")
	if _, err := g.Invoke(ctx, engine.Values{}, th); err != nil {
		t.Fatal(err)
	}
	hist, err := g.History(ctx, checkpoint.ListOptions{}, th)
	if err != nil {
		t.Fatal(err)
	}
	var atB *engine.Snapshot // the checkpoint b's step ran from
	for _, s := range hist {
		if slices.Equal(s.Next, []string{"b"}) {
			atB = s
		}
	}
	bTask := atB.Tasks[0].ID
	at := engine.WithCheckpoint(atB.Ref.CheckpointID)
	calls = 0
	snap, err := g.Recompute(ctx, []engine.StepEdit{{TaskID: bTask, Write: 0, Value: []string{"B!"}}}, th, at)
	if err != nil {
		t.Fatal(err)
	}
	if got := log.Get(engine.StateOf(snap.Values)); !slices.Equal(got, []string{"a", "B!"}) || !slices.Equal(snap.Next, []string{"c"}) || calls != 0 {
		t.Errorf("recomputed %v next %v with %d calls, want [a B!], next [c], no node run", got, snap.Next, calls)
	}
	if after, _ := g.History(ctx, checkpoint.ListOptions{}, th); len(after) != len(hist) {
		t.Error("Recompute stored something")
	}
	ref, err := g.ForkEdited(ctx, []engine.StepEdit{{TaskID: bTask, Write: 0, Drop: true}}, th, at)
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.Invoke(ctx, nil, th, engine.WithCheckpoint(ref.CheckpointID))
	if err != nil {
		t.Fatal(err)
	}
	if got := log.Get(engine.StateOf(res.Values)); !slices.Equal(got, []string{"a", "c"}) || calls != 0 {
		t.Errorf("continued fork: log %v, %d calls of b, want [a c] and b not run", got, calls)
	}
	for name, edits := range map[string][]engine.StepEdit{
		"unknown task":              {{TaskID: "nope"}},
		"no such write":             {{TaskID: bTask, Write: 3, Drop: true}},
		"a value of the wrong type": {{TaskID: bTask, Write: 0, Value: 42}},
	} {
		if _, err := g.Recompute(ctx, edits, th, at); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	last := engine.WithCheckpoint(hist[0].Ref.CheckpointID)
	if _, err := g.Recompute(ctx, nil, th, last); err == nil || !strings.Contains(err.Error(), "plans no step") {
		t.Errorf("editing past the end: err = %v", err)
	}
}

// subPhaseGraph: START → pre → inner (a subgraph: a → b, each appending)
// → post, on one List.
func subPhaseGraph(t *testing.T, log engine.ListKey[string]) *engine.Graph {
	t.Helper()
	sub, err := engine.NewGraph("inner", log).
		AddNode("a", logNode(log, "a")).AddNode("b", logNode(log, "b")).
		AddEdge(engine.START, "a").AddEdge("a", "b").Compile()
	if err != nil {
		t.Fatal(err)
	}
	g, err := engine.NewGraph("outer", log).
		AddNode("pre", logNode(log, "pre")).AddSubgraph("inner", sub).AddNode("post", logNode(log, "post")).
		AddEdge(engine.START, "pre").AddEdge("pre", "inner").AddEdge("inner", "post").
		Compile(engine.WithSaver(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// With WithSubgraphPhases the hook steps into a subgraph node: between the
// parent task's phase and the parent's barrier come the subgraph's own
// steps, each with its namespace and its own state; the run ends as the
// normal run does. Without it the subgraph is one task. An edit at the
// subgraph's barrier reaches the parent through the subgraph's writes.
func TestPhasesInsideSubgraphs(t *testing.T) {
	ctx := context.Background()
	log := engine.List[string]("log")
	g := subPhaseGraph(t, log)
	normal, err := g.Invoke(ctx, engine.Values{}, engine.WithThread("normal"))
	if err != nil {
		t.Fatal(err)
	}
	trace := func(thread string, opts ...engine.RunOption) ([]string, engine.Values) {
		var seen []string
		hook := func(_ context.Context, p *engine.PhaseInfo) error {
			where := "outer"
			if p.NS != "" {
				where, _, _ = strings.Cut(p.NS, ":")
				if p.Ref.NS != p.NS {
					t.Errorf("phase %s in %s: Ref.NS %q", p.Phase, p.NS, p.Ref.NS)
				}
			}
			seen = append(seen, fmt.Sprintf("%s:%d:%s", where, p.Step, p.Phase))
			return nil
		}
		res, err := g.Invoke(ctx, engine.Values{}, append([]engine.RunOption{engine.WithThread(thread), engine.WithPhases(hook)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		return seen, res.Values
	}
	flat, flatValues := trace("flat")
	for _, s := range flat {
		if !strings.HasPrefix(s, "outer:") {
			t.Fatalf("without WithSubgraphPhases the hook saw %s", s)
		}
	}
	deep, deepValues := trace("deep", engine.WithSubgraphPhases())
	want := strings.Join([]string{
		"outer:0:plan", "outer:0:task", "outer:0:barrier", "outer:0:apply",
		"outer:1:plan", "outer:1:task", "outer:1:barrier", "outer:1:apply",
		"outer:2:plan", "outer:2:task",
		"inner:0:plan", "inner:0:task", "inner:0:barrier", "inner:0:apply", // the subgraph's start step
		"inner:1:plan", "inner:1:task", "inner:1:barrier", "inner:1:apply",
		"inner:2:plan", "inner:2:task", "inner:2:barrier", "inner:2:apply",
		"outer:2:barrier", "outer:2:apply",
		"outer:3:plan", "outer:3:task", "outer:3:barrier", "outer:3:apply",
	}, " ")
	if got := strings.Join(deep, " "); got != want {
		t.Errorf("phases:\n got %s\nwant %s", got, want)
	}
	wantLog := fmt.Sprint(normal.Values["log"])
	if fmt.Sprint(flatValues["log"]) != wantLog || fmt.Sprint(deepValues["log"]) != wantLog {
		t.Errorf("log: normal %v, flat %v, deep %v", normal.Values["log"], flatValues["log"], deepValues["log"])
	}

	// Drop b's write at the subgraph's barrier: the parent never sees it.
	// (The subgraph writes its whole List back, which the parent's reducer
	// appends, "pre" included, as in LangGraph.)
	if got := fmt.Sprint(normal.Values["log"]); got != "[pre pre a b post]" {
		t.Fatalf("normal log %s", got)
	}
	res, err := g.Invoke(ctx, engine.Values{}, engine.WithThread("edited"), engine.WithSubgraphPhases(),
		engine.WithPhases(func(_ context.Context, p *engine.PhaseInfo) error {
			if p.NS != "" && p.Phase == engine.PhaseBarrier {
				for _, ts := range p.Tasks {
					if ts.Name == "b" {
						p.Edits = []engine.StepEdit{{TaskID: ts.ID, Write: 0, Drop: true}}
					}
				}
			}
			return nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(res.Values["log"]); got != "[pre pre a post]" {
		t.Errorf("log after dropping b's write inside the subgraph: %s, want [pre pre a post]", got)
	}

	// ErrPause after a's step inside the subgraph stops the run as a
	// breakpoint inside it does; continuing the thread finishes the
	// subgraph where it stopped (a does not run again).
	th := engine.WithThread("paused")
	paused := false
	pauseOnce := engine.WithPhases(func(_ context.Context, p *engine.PhaseInfo) error {
		if !paused && p.NS != "" && p.Phase == engine.PhaseApply && p.Step == 1 {
			paused = true
			return engine.ErrPause
		}
		return nil
	})
	if _, err := g.Invoke(ctx, engine.Values{}, th, engine.WithSubgraphPhases(), pauseOnce); err != nil {
		t.Fatal(err)
	}
	st, err := g.GetState(ctx, th)
	if err != nil || fmt.Sprint(st.Next) != "[inner]" {
		t.Fatalf("after pausing inside the subgraph: next %v, %v; want [inner]", st.Next, err)
	}
	res, err = g.Invoke(ctx, nil, th, engine.WithSubgraphPhases(), pauseOnce)
	if err != nil || fmt.Sprint(res.Values["log"]) != wantLog {
		t.Fatalf("continued: log %v, %v; want %s", res.Values["log"], err, wantLog)
	}
}
