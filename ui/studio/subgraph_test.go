package studio

import (
	"context"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/render"
)

// Tasks running inside a subgraph light up their own node in the expanded
// cluster, and the subgraph node (or cluster) around them, from the run's
// events, which carry the subgraph's namespace.
func TestSubgraphNodesLightUp(t *testing.T) {
	s := onGraph(t, 2)
	act(func() { s.gp.xray.SetChecked(true) })
	idle(t, s)
	if _, ok := s.gp.view.Geometry().Node("summarize/gather"); !ok {
		t.Fatal("the expanded map-reduce has no summarize/gather node")
	}
	// What the observer makes of the run's task events.
	sc := s.m.scope()
	var seen []string
	act(func() {
		s.m.startRun(kindRun, sc.thread)
		s.m.taskMoved(sc, nodeID("summarize:0a1b2c", "gather"), true)
		h := s.gp.view.Highlight()
		if h.State("summarize/gather") != render.StateRunning || h.State("summarize") != render.StateRunning {
			t.Errorf("running gather: gather %v, summarize %v", h.State("summarize/gather"), h.State("summarize"))
		}
		s.m.taskMoved(sc, nodeID("summarize:0a1b2c", "gather"), false)
		s.m.taskMoved(sc, nodeID("summarize:9f8e7d", "condense"), true)
		h = s.gp.view.Highlight()
		if h.State("summarize/gather") != render.StateFinished || h.State("summarize/condense") != render.StateRunning || h.State("summarize") != render.StateRunning {
			t.Errorf("gather done, condense running: %v %v %v", h.State("summarize/gather"), h.State("summarize/condense"), h.State("summarize"))
		}
		s.m.endRun(0)
	})
	// A real run of the demo reports its subgraph tasks with namespaces
	// the view knows.
	startThread(t, s, "mr-1")
	obsIDs := map[string]bool{}
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	for _, r := range s.m.scope().events {
		if r.Mode == "tasks" {
			obsIDs[r.Node] = true
		}
	}
	for id := range obsIDs {
		seen = append(seen, id)
	}
	found := false
	for id := range obsIDs {
		if strings.HasPrefix(id, "summarize › gather") {
			found = true
		}
	}
	if !found {
		t.Errorf("no subgraph task events in the log: %v", seen)
	}
}

// The checkpoint whose step runs subgraph tasks shows each task's own
// checkpoints as a lane under it.
func TestSubgraphLanesOnTheTimeline(t *testing.T) {
	s := onGraph(t, 2)
	startThread(t, s, "mr-2")
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	sc := s.m.scope()
	// The split checkpoint plans three summarize tasks.
	split := sc.tl.prev(sc.tl.prev(sc.head))
	act(func() { s.m.selectCheckpoint(split) })
	idle(t, s)
	sub := s.m.scope().sub
	if sub == nil || sub.At != split || len(sub.Lanes) != 3 {
		t.Fatalf("sub-lanes %+v", sub)
	}
	for _, l := range sub.Lanes {
		var got []string
		for _, h := range l.Headers {
			got = append(got, subLabel(h))
		}
		if strings.Join(got, ", ") != "-1 input, 0 start, 1 gather, 2 condense" || !strings.HasPrefix(l.Label, "summarize #") {
			t.Errorf("lane %s: %v", l.Label, got)
		}
	}
	// Another checkpoint without subgraph tasks: no lanes.
	act(func() { s.m.selectCheckpoint(sc.head) })
	idle(t, s)
	if sub := s.m.scope().sub; sub != nil && len(sub.Lanes) > 0 {
		t.Errorf("lanes under the head: %+v", sub)
	}
}

// A question asked inside a subgraph is answered in the window like any
// other: its card names where it was asked, the graph marks the subgraph
// node, and Resume reaches it.
func TestInterruptInsideSubgraph(t *testing.T) {
	out := engine.LastValue[string]("out")
	inner, err := engine.NewGraph("inner", out).
		AddNode("ask", func(ctx context.Context, s engine.State) (engine.Output, error) {
			a, err := engine.InterruptAs[string](ctx, map[string]any{"question": "Name?", "options": []string{"Ada", "Bob"}})
			if err != nil {
				return nil, err
			}
			return engine.Updates(out.Set("hello " + a)), nil
		}).
		AddEdge(engine.START, "ask").Compile()
	if err != nil {
		t.Fatal(err)
	}
	g, err := engine.NewGraph("outer", out).AddSubgraph("greet", inner).AddEdge(engine.START, "greet").Compile()
	if err != nil {
		t.Fatal(err)
	}
	s := openStudio(t, test.NewTempApp(t), Config{Store: memory.New(), Graphs: []Graph{{Graph: g, Example: engine.Values{"out": ""}}}})
	idle(t, s)
	startThread(t, s, "sub-1")
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	if len(s.ip.items) != 1 {
		t.Fatalf("%d questions", len(s.ip.items))
	}
	c := s.ip.items[0]
	if c.it.NS == "" || !strings.Contains(textIn(s.ip.cards.Objects[0]), "greet › ask asks") {
		t.Errorf("card for the question in the subgraph: ns %q", c.it.NS)
	}
	if st := s.gp.view.Highlight().State("greet"); st != render.StateInterrupted {
		t.Errorf("the subgraph node is %v", st)
	}
	act(func() { test.Tap(c.choices[0]) })
	idle(t, s)
	if v := s.tview(); v == nil || v.Snap.Values["out"] != "hello Ada" || len(v.Snap.Next) != 0 {
		t.Fatalf("after answering: %+v", v.Snap.Values)
	}
}

// The inspector shows a subgraph task's own state (engine.WithSubgraphs):
// a row per task after the graph's channels, the subgraph's channels
// under it; the expanded cluster marks what ran in it.
func TestInspectorShowsSubgraphState(t *testing.T) {
	s := onGraph(t, 2)
	act(func() { s.gp.xray.SetChecked(true) })
	idle(t, s)
	startThread(t, s, "mr-3")
	step(t, s) // split
	step(t, s) // summarize ×3, each in its own subgraph run
	sc := s.m.scope()
	act(func() { s.m.selectCheckpoint(sc.tl.prev(sc.head)) }) // the split checkpoint: its step ran them
	idle(t, s)
	var subs []*tnode
	for _, id := range s.insp.roots {
		if strings.HasPrefix(id, "\x1esub:") {
			subs = append(subs, s.insp.nodes[id])
		}
	}
	if len(subs) != 3 {
		t.Fatalf("%d subgraph rows in the state tree, want 3 (roots %q)", len(subs), s.insp.roots)
	}
	n := subs[0]
	if !strings.HasPrefix(n.key, "summarize #") || !strings.Contains(n.value, "done") {
		t.Errorf("subgraph row %+v", n)
	}
	var keys []string
	for _, c := range n.children {
		keys = append(keys, s.insp.nodes[c].key)
	}
	if strings.Join(keys, ",") != "facts,subject,summaries" {
		t.Errorf("the subgraph's channels: %v", keys)
	}
	facts := s.insp.nodes[n.children[0]]
	if !strings.HasPrefix(facts.value, `["`) || len(facts.children) != 2 {
		t.Errorf("facts row %+v", facts)
	}
	if st := s.gp.view.Highlight().State("summarize/condense"); st != render.StateFinished {
		t.Errorf("summarize/condense is %v in the expanded cluster", st)
	}
}

// A breakpoint on a node inside an expanded subgraph is drawn there,
// stops the run inside the subgraph (the status says where), and Run goes
// on from it.
func TestBreakpointInsideSubgraph(t *testing.T) {
	s := onGraph(t, 2)
	act(func() { s.gp.xray.SetChecked(true) })
	idle(t, s)
	act(func() { s.gp.view.OnToggleBreakpoint("summarize/condense", false) })
	if !s.gp.view.Highlight().BreakBefore["summarize/condense"] {
		t.Fatal("no dot on summarize/condense")
	}
	if before, _ := s.m.brk.lists(); len(before) != 1 || before[0] != "summarize|condense" {
		t.Fatalf("the run's breakpoints: %v", before)
	}
	startThread(t, s, "mr-bp")
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	v := s.tview()
	if v == nil || v.Snap.Done() || len(v.Snap.Interrupts) != 0 {
		t.Fatalf("the run did not stop inside the subgraph: %+v", v)
	}
	if st := s.m.scope().status; st != "breakpoint inside summarize · next condense" {
		t.Errorf("status %q", st)
	}
	if n := len(s.gp.view.Highlight().States); n == 0 || s.gp.view.Highlight().State("summarize/condense") != render.StateNext {
		t.Errorf("summarize/condense is %v", s.gp.view.Highlight().State("summarize/condense"))
	}
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	if v := s.tview(); v == nil || !v.Snap.Done() || v.Snap.Values["report"] == "" {
		t.Fatalf("Run after the stop did not finish: %+v (status %q)", v.Snap.Values, s.m.scope().status)
	}
}

// A subgraph checkpoint tapped on its sub-lane opens in the inspector with
// the subgraph's own channels (read with engine.WithNamespace); a tap on
// the thread's checkpoint goes back.
func TestSubgraphCheckpointOpensInInspector(t *testing.T) {
	s := onGraph(t, 2)
	startThread(t, s, "mr-sub")
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	sc := s.m.scope()
	split := sc.tl.prev(sc.tl.prev(sc.head))
	act(func() { s.m.selectCheckpoint(split) })
	idle(t, s)
	var hits []subHit
	act(func() {
		s.tl.strip.Refresh()
		hits = s.tl.strip.r.subHits
	})
	if len(hits) != 12 {
		t.Fatalf("%d subgraph checkpoints drawn, want 3 lanes × 4", len(hits))
	}
	// Under the step that ran the subgraph tasks, not the one that sent them.
	if col, ran := s.tl.strip.r.subCol, sc.tl.at(sc.tl.prev(sc.head)); col != ran {
		t.Errorf("the sub-lanes are drawn under column %d, want %d (the step that ran the tasks; %d sent them)", col, ran, sc.tl.at(split))
	}
	h := hits[2] // the first lane's "1 gather"
	act(func() {
		s.tl.strip.Tapped(&fyne.PointEvent{Position: h.Pos.Add(fyne.NewPos(h.Size.Width/2, h.Size.Height/2))})
	})
	idle(t, s)
	v := s.m.scope().shown()
	if v == nil || v.NS != h.NS || v.Snap.Ref.CheckpointID != h.ID {
		t.Fatalf("inspector shows %+v, want %s in %s", v, h.ID, h.NS)
	}
	if !strings.HasPrefix(s.insp.title.Text, "Subgraph summarize · Step 1 · loop · gather") {
		t.Errorf("title %q", s.insp.title.Text)
	}
	keys := slices.Clone(s.insp.roots)
	if strings.Join(keys, ",") != "facts,subject,summaries" {
		t.Errorf("the subgraph's channels in State: %v", keys)
	}
	if len(s.insp.changes) == 0 || s.insp.changes[0].Channel != "facts" {
		t.Errorf("diff against the subgraph's previous checkpoint: %+v", s.insp.changes)
	}
	if !s.insp.forkB.Disabled() {
		t.Error("Edit & fork offered on a subgraph's checkpoint")
	}
	if r := s.tl.strip.r; r.subPick != h.ID {
		t.Errorf("the picked checkpoint is not marked on its lane")
	}
	// Back to the thread's checkpoint.
	col := sc.tl.at(split)
	act(func() {
		s.tl.strip.Tapped(&fyne.PointEvent{Position: fyne.NewPos(float32(tlPad+col*colW), tlPad+dotR)})
	})
	idle(t, s)
	if v := s.m.scope().shown(); v == nil || v.NS != "" || v.Snap.Ref.CheckpointID != split {
		t.Fatalf("after tapping the thread's checkpoint the inspector shows %+v", v)
	}
	if s.insp.forkB.Disabled() {
		t.Error("Edit & fork stays disabled on the thread's checkpoint")
	}
}
