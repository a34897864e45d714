package studio

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/examples"
	"github.com/weftstudio/weft/internal/jsondiff"
)

// demoGraphs converts the bundled demos (compiled without a saver).
func demoGraphs(t testing.TB) []Graph {
	t.Helper()
	demos, err := examples.All(nil)
	if err != nil {
		t.Fatal(err)
	}
	return graphsOf(t, demos)
}

// graphsOf is demos as the studio shows them; each demo is closed when
// the test ends.
func graphsOf(t testing.TB, demos []examples.Demo) []Graph {
	var gs []Graph
	for _, d := range demos {
		gs = append(gs, Graph{Graph: d.Graph, Description: d.Description, Example: d.Example})
		if d.Close != nil {
			t.Cleanup(func() { d.Close() })
		}
	}
	return gs
}

// newStudio opens a studio on the demos and saver in a test app.
func newStudio(t testing.TB, saver checkpoint.Saver) *Studio {
	t.Helper()
	a := test.NewTempApp(t)
	if saver == nil {
		saver = memory.New()
	}
	s := openStudio(t, a, Config{Store: saver, StoreName: "test.db", Graphs: demoGraphs(t)})
	act(func() { s.Window().Resize(fyne.NewSize(1280, 800)) }) // the graph's layout may arrive meanwhile
	s.WaitIdle()
	return s
}

// openStudio opens a studio as New does and closes its window when the
// test ends, waiting for its background work: a window left open would
// go on following its store (a server polled every second) into the
// tests after it, and raise their dialogs on a window nobody checks.
func openStudio(t testing.TB, a fyne.App, cfg Config) *Studio {
	t.Helper()
	s := New(a, cfg)
	t.Cleanup(func() {
		if !s.sess.closed.Load() {
			act(s.Window().Close)
		}
		idle(t, s)
	})
	return s
}

// act runs fn as a UI action: with the studio's UI callbacks held off, as
// the one UI goroutine of a real app would (the test driver runs fyne.Do
// callbacks on whichever goroutine calls them).
func act(fn func()) {
	uiMu.Lock()
	defer uiMu.Unlock()
	fn()
}

// idle waits for background work, failing the test after 10 s.
func idle(t testing.TB, s *Studio) {
	t.Helper()
	done := make(chan struct{})
	go func() { s.WaitIdle(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("studio still busy after 10 s")
	}
}

func TestOpensOnWriter(t *testing.T) {
	s := newStudio(t, nil)
	if got := s.tb.graphSel.Selected; got != "writing assistant" {
		t.Fatalf("graph %q", got)
	}
	if s.gp.view.Geometry() == nil {
		t.Fatal("graph not drawn")
	}
	if !s.th.empty.Visible() {
		t.Error("empty thread list should say so")
	}
	if !strings.Contains(s.sb.String(), "test.db") {
		t.Errorf("status %q", s.sb.String())
	}
}

func init() {
	clock = func(time.Time) string { return "12:00:00" }
	clockMS = func(time.Time) string { return "12:00:00.000" }
	ago = func(time.Time) string { return "just now" }
}

// startThread starts thread id from the graph's example through the dialog.
// onGraph opens a studio on a new memory store with its i-th graph
// selected.
func onGraph(t *testing.T, i int) *Studio {
	t.Helper()
	s := newStudio(t, memory.New())
	act(func() { s.m.setGraph(i) })
	idle(t, s)
	return s
}

// newThread opens a studio on a new memory store and starts thread id of
// its first graph through the New thread dialog.
func newThread(t *testing.T, id string) *Studio {
	t.Helper()
	s := newStudio(t, memory.New())
	startThread(t, s, id)
	return s
}

func startThread(t *testing.T, s *Studio, id string) {
	t.Helper()
	act(s.newThreadDialog)
	f, _ := inOverlays[*newThreadForm](s.win)
	if f == nil {
		t.Fatal("no new-thread dialog")
	}
	act(func() { f.id.SetText(id); test.Tap(f.startB) })
	idle(t, s)
	if s.m.thread() != id {
		t.Fatalf("thread %q, want %q (dialog error %q)", s.m.thread(), id, f.errLbl.Text)
	}
}

func step(t *testing.T, s *Studio) {
	t.Helper()
	act(func() { test.Tap(s.tb.step) })
	idle(t, s)
}

func notes(s *Studio) []string {
	if s.tview() == nil {
		return nil
	}
	n, _ := s.tview().Snap.Values["notes"].([]string)
	return n
}

// The newcomer's first minute: start a thread, step, travel back, answer
// the review interrupt, fork with an edited outline.
func TestNewcomerFlow(t *testing.T) {
	s := newThread(t, "t-1")
	if got := s.m.scope().tl.count(); got != 2 {
		t.Fatalf("after start: %d checkpoints, want 2 (input, start)", got)
	}
	if got := s.tview().Snap.Next; len(got) != 1 || got[0] != "plan" {
		t.Fatalf("next %v, want plan", got)
	}
	for range 3 {
		step(t, s)
	}
	if got := s.m.scope().tl.count(); got != 5 {
		t.Fatalf("after 3 steps: %d checkpoints, want 5", got)
	}
	if got := notes(s); len(got) != 3 || !strings.HasPrefix(got[0], "tide pools: history") {
		t.Fatalf("notes %v", got)
	}
	if n := s.insp.nodes["notes"]; n == nil || !strings.HasPrefix(n.value, `3 items: ["tide pools: history — `) || n.changed {
		t.Errorf("inspector notes row %+v (notes did not change in the structure step)", n)
	}
	if n := s.insp.nodes["outline"]; n == nil || !n.changed {
		t.Errorf("outline should be marked changed: %+v", n)
	}
	if len(s.insp.changes) == 0 || s.insp.changes[0].Channel != "outline" || !strings.Contains(s.insp.changes[0].By, "structure") {
		t.Errorf("diff %+v", s.insp.changes)
	}
	if st := s.gp.view.Highlight().State("write"); st.String() != "next" {
		t.Errorf("write is %v, want next", st)
	}

	// Time travel: the research checkpoint.
	act(func() { s.tl.selectAt(3) })
	idle(t, s)
	if s.tview().Snap.Metadata.Step != 2 || len(notes(s)) != 3 || s.tview().Snap.Values["outline"] != nil {
		t.Fatalf("step-2 checkpoint: step %d values %v", s.tview().Snap.Metadata.Step, s.tview().Snap.Values)
	}
	if got := len(s.insp.changes); got != 3 {
		t.Errorf("diff at research step: %d changes, want 3 added notes: %+v", got, s.insp.changes)
	}
	if !strings.Contains(s.sb.String(), "(history)") {
		t.Errorf("status %q should say we look at history", s.sb.String())
	}

	// Run while history is shown asks first; "Go to latest" runs from
	// the latest checkpoint to the review interrupt.
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	head := overlayButton(s.win, "Go to latest")
	if head == nil {
		t.Fatal("Run on an older checkpoint did not ask")
	}
	act(func() { test.Tap(head) })
	idle(t, s)
	// Revise, then Approve.
	if len(s.ip.items) != 1 || len(s.ip.items[0].choices) != 2 || s.ip.items[0].choices[1].Text != "Revise" {
		t.Fatalf("interrupt panel: %d cards", len(s.ip.items))
	}
	if s.tabs.SelectedIndex() != 0 {
		t.Error("the interrupt tab should open by itself")
	}
	if rows := s.insp.taskRows; len(rows) != 1 || rows[0][0] != "review · pull · waiting for an answer" || !strings.HasPrefix(rows[0][1], "Approve this draft") {
		t.Errorf("tasks tab %q", rows)
	}
	act(func() { test.Tap(s.ip.items[0].choices[1]) })
	idle(t, s)
	if s.tview().Snap.Values["revisions"] != 2 || len(s.ip.items) != 1 {
		t.Fatalf("after Revise: revisions %v, %d questions", s.tview().Snap.Values["revisions"], len(s.ip.items))
	}
	// Invalid JSON is refused next to the field, nothing is sent.
	act(func() { s.ip.items[0].answer.SetText("approve"); test.Tap(s.ip.resumeB) })
	idle(t, s)
	if !s.ip.items[0].errLbl.Visible() || !strings.Contains(s.ip.items[0].errLbl.Text, "not valid JSON") {
		t.Errorf("invalid answer: %q", s.ip.items[0].errLbl.Text)
	}
	// A JSON answer with feedback sends the draft back with it.
	act(func() {
		s.ip.items[0].answer.SetText(`{"action": "revise", "feedback": "add a safety tip"}`)
		test.Tap(s.ip.resumeB)
	})
	idle(t, s)
	if s.tview().Snap.Values["revisions"] != 3 || len(s.ip.items) != 1 {
		t.Fatalf("after the JSON answer: revisions %v", s.tview().Snap.Values["revisions"])
	}
	act(func() { test.Tap(s.ip.items[0].choices[0]) })
	idle(t, s)
	vals := s.tview().Snap.Values
	published, _ := vals["published"].(string)
	if s.m.scope().status != "done" || published != vals["draft"] || !strings.Contains(published, "Revised after review: add a safety tip") || len(s.ip.items) != 0 {
		t.Fatalf("after Approve: state %q published %q", s.m.scope().status, published)
	}
	total := s.m.scope().tl.count()

	// Fork: edit the outline after the structure step and continue.
	act(func() { s.tl.selectAt(4) })
	idle(t, s)
	if s.tview().Snap.Values["outline"] == nil {
		t.Fatal("checkpoint 4 has no outline")
	}
	act(func() { s.insp.selCh = "outline"; test.Tap(s.insp.forkB) })
	f, _ := inOverlays[*forkForm](s.win)
	if f == nil || f.ch.Selected != "outline" || f.asNode.Selected != "structure" {
		t.Fatalf("fork dialog %+v", f)
	}
	// A text channel is edited as text, new lines and all.
	if !f.text || !strings.HasPrefix(f.editor.Text, "1. tide pools: history\n2.") {
		t.Fatalf("outline not edited as text: %q", f.editor.Text)
	}
	// A JSON channel refuses what its type cannot take.
	act(func() { f.ch.SetSelected("revisions") })
	act(func() { f.editor.SetText(`{"not": "a number"}`) })
	if f.text || f.errLbl.Text == "" || !f.forkB.Disabled() {
		t.Errorf("a map for an int channel should be refused: %q", f.errLbl.Text)
	}
	act(func() { f.ch.SetSelected("outline") })
	act(func() { f.editor.SetText("1. My own outline") })
	if f.errLbl.Text != "" {
		t.Fatalf("valid value refused: %q", f.errLbl.Text)
	}
	act(func() { test.Tap(f.forkB) })
	idle(t, s)
	if got := s.m.scope().tl.count(); got != total+1 || s.m.scope().tl.lanes != 2 {
		t.Fatalf("after fork: %d checkpoints (want %d), %d lanes", got, total+1, s.m.scope().tl.lanes)
	}
	if s.tview().Snap.Values["outline"] != "1. My own outline" || s.tview().Snap.Metadata.Source != "update" || s.m.scope().sel != s.m.scope().head {
		t.Fatalf("fork checkpoint: %v %s", s.tview().Snap.Values["outline"], s.tview().Snap.Metadata.Source)
	}
	if got := s.tview().Snap.Next; len(got) != 1 || got[0] != "write" {
		t.Errorf("fork next %v, want write", got)
	}
	step(t, s)
	if s.tview().Snap.Values["revisions"] != 1 || s.tview().Snap.Values["outline"] != "1. My own outline" {
		t.Errorf("the fork continued with %v", s.tview().Snap.Values)
	}
	// The old branch is still there.
	if s.m.scope().tl.count() != total+2 || s.m.scope().tl.items[s.m.scope().tl.count()-1].lane != 1 {
		t.Errorf("timeline %d items, head lane %d", s.m.scope().tl.count(), s.m.scope().tl.items[s.m.scope().tl.count()-1].lane)
	}
}

// Golden markup of the main panels with a thread stopped at the review.
func TestGoldenPanels(t *testing.T) {
	s := newThread(t, "t-1")
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	act(func() {
		s.m.run.Last = 0
		s.m.changed(chRun)
	})
	for name, obj := range map[string]fyne.CanvasObject{
		"toolbar.xml":   s.tb.composed(),
		"threads.xml":   s.th.composed(),
		"inspector.xml": s.insp.composed(),
		"timeline.xml":  s.tl.composed(),
		"interrupt.xml": s.ip.composed(),
		"statusbar.xml": s.sb.composed(),
	} {
		test.AssertObjectRendersToMarkup(t, name, obj)
	}
}

// Breakpoints set on the graph stop runs; "re-run from here" replays as a
// branch; the event log has the run's stream.
func TestBreakpointsReplayAndEvents(t *testing.T) {
	s := newThread(t, "t-2")
	act(func() { s.gp.view.OnToggleBreakpoint("structure", false) })
	if !s.gp.view.Highlight().BreakBefore["structure"] {
		t.Fatal("breakpoint dot not shown")
	}
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	if !strings.Contains(s.m.scope().status, "breakpoint before structure") || len(s.tview().Snap.Next) != 1 || s.tview().Snap.Next[0] != "structure" {
		t.Fatalf("run state %q next %v", s.m.scope().status, s.tview().Snap.Next)
	}
	// Step from the breakpoint runs the node it stopped before.
	step(t, s)
	if got := s.tview().Snap.Values["outline"]; got == nil || s.tview().Snap.Next[0] != "write" {
		t.Fatalf("step from the breakpoint: outline %v next %v (%q)", got, s.tview().Snap.Next, s.m.scope().status)
	}
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	if !strings.Contains(s.m.scope().status, "interrupted at review") {
		t.Fatalf("second run: %q", s.m.scope().status)
	}
	modes := map[string]int{}
	for _, r := range s.m.scope().events {
		modes[r.Mode]++
	}
	if modes["tasks"] == 0 || modes["updates"] == 0 || modes["messages"] == 0 || modes["checkpoints"] == 0 {
		t.Errorf("event modes %v", modes)
	}
	act(func() {
		s.ev.mode.SetSelected("messages")
		s.ev.node.SetText("research")
	})
	if len(s.ev.shown) == 0 || len(s.ev.shown) != modes["messages"] {
		t.Errorf("filtered %d of %d message rows", len(s.ev.shown), modes["messages"])
	}

	// Break on every node, then re-run from the plan checkpoint.
	act(func() { s.tb.breakAll.SetChecked(true) })
	act(func() { s.tl.selectAt(2) })
	idle(t, s)
	before := s.m.scope().tl.count()
	act(func() { test.Tap(s.insp.rerunB) })
	idle(t, s)
	if s.m.scope().tl.count() <= before || s.m.scope().tl.lanes != 2 {
		t.Fatalf("re-run: %d → %d checkpoints, %d lanes", before, s.m.scope().tl.count(), s.m.scope().tl.lanes)
	}
	if !strings.Contains(s.m.scope().status, "breakpoint before") {
		t.Errorf("break on every node: %q", s.m.scope().status)
	}
}

type explosive struct{}

func (explosive) MarshalJSON() ([]byte, error) { panic("boom") }

func TestToJSONSurvivesPanics(t *testing.T) {
	if got := fmt.Sprint(toJSON(explosive{})); !strings.Contains(got, "cannot show") {
		t.Errorf("toJSON = %q", got)
	}
	var cs []change
	diffJSON("notes", toJSON([]string{"a"}), toJSON([]string{"a", "b"}), &cs)
	diffJSON("m", toJSON(map[string]any{"x": 1, "y": 2}), toJSON(map[string]any{"x": 3, "z": 4}), &cs)
	got := fmt.Sprint(cs)
	want := "[{notes[1] added <nil> b} {m.x changed 1 3} {m.y removed 2 <nil>} {m.z added <nil> 4}]"
	if got != want {
		t.Errorf("diff\n got %s\nwant %s", got, want)
	}
}

// Editing the topic at the start and choosing "Fork and run" writes a new
// draft on a branch; the old one stays.
func TestForkAndRun(t *testing.T) {
	s := newThread(t, "t-3")
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	act(func() { s.tl.selectAt(1) })
	idle(t, s)
	act(func() { s.insp.selCh = "topic"; test.Tap(s.insp.forkB) })
	f, _ := inOverlays[*forkForm](s.win)
	act(func() { f.editor.SetText("kelp forests") })
	act(func() { test.Tap(f.forkRunB) })
	idle(t, s)
	draft, _ := s.tview().Snap.Values["draft"].(string)
	if !strings.Contains(s.m.scope().status, "interrupted at review") || !strings.HasPrefix(draft, "KELP FORESTS") {
		t.Fatalf("fork and run: %q, draft %.40q", s.m.scope().status, draft)
	}
	if s.m.scope().tl.lanes != 2 {
		t.Errorf("%d lanes, want the old branch and the fork", s.m.scope().tl.lanes)
	}
}

// The studio with no graphs opens and its controls do nothing harmful;
// inputs are remembered per graph.
func TestNoGraphsAndRecentInputs(t *testing.T) {
	a := test.NewTempApp(t)
	empty := openStudio(t, a, Config{Store: memory.New()})
	idle(t, empty)
	act(func() { test.Tap(empty.tb.run); test.Tap(empty.tb.step) })
	idle(t, empty)
	if empty.m.thread() != "" {
		t.Fatal("a thread appeared from nowhere")
	}
	s := newThread(t, "t-r")
	recent := s.app.Preferences().StringList(recentKey + "writing assistant")
	if len(recent) == 0 || recent[0] != `{"topic":"tide pools"}` {
		t.Errorf("recent inputs %q", recent)
	}
	act(s.newThreadDialog)
	if f, _ := inOverlays[*newThreadForm](s.win); f == nil || len(f.recent.Options) == 0 || f.recent.Disabled() {
		t.Error("the new-thread dialog should offer the recent input")
	}
}

// On a store shared with worker processes, the reviewer leaves the answer
// and a worker (here: the engine on the same store) finishes the thread.
func TestLeaveAnswerForWorkers(t *testing.T) {
	saver := memory.New()
	s := newStudio(t, saver)
	startThread(t, s, "w1")
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	if len(s.ip.items) != 1 {
		t.Fatalf("no question waiting: %d", len(s.ip.items))
	}
	act(func() { s.ip.items[0].answer.SetText(`"approve"`); test.Tap(s.ip.leaveB) })
	idle(t, s)
	if !strings.Contains(s.m.scope().status, "a worker will resume") || len(s.ip.items) != 0 {
		t.Fatalf("state %q, %d questions", s.m.scope().status, len(s.ip.items))
	}
	g := s.cfg.Graphs[0].Graph.WithSaver(saver)
	waiting, err := g.AnswerWaiting(context.Background(), engine.WithThread("w1"))
	if err != nil || !waiting {
		t.Fatalf("the answer is not waiting for a worker: %v %v", waiting, err)
	}
	res, err := g.Invoke(context.Background(), nil, engine.WithThread("w1"))
	if err != nil || !res.Done || res.Values["published"] == "" {
		t.Fatalf("worker run: %v %+v", err, res)
	}
}

func TestDeleteThread(t *testing.T) {
	saver := memory.New()
	s := newStudio(t, saver)
	startThread(t, s, "gone")
	startThread(t, s, "kept")
	act(func() { s.deleteThread("kept") })
	idle(t, s)
	if _, err := saver.Get(context.Background(), checkpoint.Ref{ThreadID: "kept"}); err == nil {
		t.Fatal("the thread is still in the store")
	}
	ids := map[string]bool{}
	for _, r := range s.m.threads {
		ids[r.ID] = true
	}
	if ids["kept"] || !ids["gone"] || s.m.thread() == "kept" {
		t.Errorf("threads %v, selected %q", ids, s.m.thread())
	}
}

// Threads another process ran (the CLI, the AG-UI server, a worker) show
// under the graph that wrote them, and only there.
func TestThreadsOfOtherProcessesShowUnderTheirGraph(t *testing.T) {
	saver := memory.New()
	agent := demoGraphs(t)[1]
	if _, err := agent.Graph.WithSaver(saver).Invoke(context.Background(), agent.Example, engine.WithThread("from-server")); err != nil {
		t.Fatal(err)
	}
	s := newStudio(t, saver)
	idle(t, s)
	if len(s.m.threads) != 0 {
		t.Fatalf("the writer lists %d threads of the agent", len(s.m.threads))
	}
	act(func() { s.m.setGraph(1) })
	idle(t, s)
	if len(s.m.threads) != 1 || s.m.threads[0].ID != "from-server" || s.m.thread() != "from-server" {
		t.Fatalf("agent threads %+v, selected %q", s.m.threads, s.m.thread())
	}
	if s.tview() == nil || len(s.tview().Snap.Interrupts) != 1 {
		t.Errorf("the thread's waiting question is not shown")
	}
}

// Breakpoints the graph was compiled with show on the graph and stop a run;
// toggled off in the studio, they no longer do.
func TestCompiledBreakpointsShowAndToggle(t *testing.T) {
	n := engine.LastValue[int]("n")
	inc := func(_ context.Context, s engine.State) (engine.Output, error) {
		return engine.Updates(n.Set(n.Get(s) + 1)), nil
	}
	g, err := engine.NewGraph("bp", n).AddNode("a", inc).AddNode("b", inc).
		AddEdge(engine.START, "a").AddEdge("a", "b").
		Compile(engine.WithInterruptBefore("b"), engine.WithInterruptAfter("*"))
	if err != nil {
		t.Fatal(err)
	}
	a := test.NewTempApp(t)
	s := openStudio(t, a, Config{Store: memory.New(), Graphs: []Graph{{Graph: g, Example: engine.Values{"n": 0}}}})
	act(func() { s.Window().Resize(fyne.NewSize(1280, 800)) }) // the graph's layout may arrive meanwhile
	idle(t, s)
	h := s.gp.view.Highlight()
	if !h.BreakBefore["b"] || h.BreakBefore["a"] || !h.BreakAfter["a"] || !h.BreakAfter["b"] {
		t.Fatalf("compiled breakpoints not shown: before %v after %v", h.BreakBefore, h.BreakAfter)
	}
	startThread(t, s, "with") // starting takes one step: the input
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	if s.m.scope().status != "breakpoint after a · next b" {
		t.Fatalf("first stop: %q", s.m.scope().status)
	}
	// Off with all three: the next thread runs to the end.
	act(func() {
		s.gp.view.OnToggleBreakpoint("b", false)
		s.gp.view.OnToggleBreakpoint("a", true)
		s.gp.view.OnToggleBreakpoint("b", true)
	})
	if h := s.gp.view.Highlight(); h.BreakBefore["b"] || h.BreakAfter["a"] || h.BreakAfter["b"] {
		t.Fatalf("toggled off but still shown: before %v after %v", h.BreakBefore, h.BreakAfter)
	}
	startThread(t, s, "without")
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	if got := s.tview().Snap.Values["n"]; got != 2 || len(s.tview().Snap.Next) != 0 {
		t.Fatalf("run without breakpoints: n = %v, next %v (%q)", got, s.tview().Snap.Next, s.m.scope().status)
	}
}

// tview returns the view of the selected checkpoint, nil while it loads.
func (s *Studio) tview() *view { return s.m.scope().viewFor() }

// At the default window size the demos' node labels are at least 12
// pixels: the graph fits at that size or scrolls.
func TestGraphLabelsReadableAtDefaultSize(t *testing.T) {
	s := newStudio(t, memory.New())
	for i, g := range s.m.graphs {
		act(func() { s.m.setGraph(i) })
		idle(t, s)
		if got := s.gp.view.MinLabelSize(); got < 12 {
			t.Errorf("%s: smallest node label %.1f px at 1280×800 (view %v, zoom %.2f)", g.Graph.Name(), got, s.gp.view.Size(), s.gp.view.Zoom())
		}
	}
}

// toJSON shares data that already is plain JSON (a LangGraph store's
// values: a thread of big values is not held again), and copies through
// JSON what is not: Go numbers and structs, nil maps and slices (null),
// strings of invalid UTF-8 (marshalled with U+FFFD), invalid numbers.
func TestToJSONSharesPlainData(t *testing.T) {
	big := strings.Repeat("note ", 1<<16)
	plain := map[string]any{"notes": []any{big, "b"}, "n": json.Number("-1.5e3"), "ok": true, "none": nil}
	got := toJSON(plain)
	m, ok := got.(map[string]any)
	if !ok || !reflect.DeepEqual(got, plain) {
		t.Fatalf("toJSON(plain) = %v", got)
	}
	if unsafe.StringData(m["notes"].([]any)[0].(string)) != unsafe.StringData(big) {
		t.Error("toJSON copied a plain string")
	}
	for _, v := range []any{
		map[string]any{"n": 1.5}, []any{struct{ A int }{1}}, map[string]any(nil), []any{[]any(nil)},
		"bad \xff utf-8", json.Number("1e"), map[string]any{"\xff": "x"},
	} {
		b, err := json.Marshal(v)
		var want any
		if err == nil {
			want, _ = jsondiff.Decode(b)
		} else {
			want = fmt.Sprintf("%v", v)
		}
		if got := toJSON(v); !reflect.DeepEqual(got, want) {
			t.Errorf("toJSON(%#v) = %#v, want %#v (through JSON)", v, got, want)
		}
	}
}
