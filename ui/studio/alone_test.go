package studio

import (
	"errors"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/render"
)

// Each panel is a widget built on a model and actions alone: these tests
// build one without a Studio, put it in a window, change the model and
// check what the panel shows, and use the panel and check what it asks.

// aloneModel is a model on the demo graphs, the first selected.
func aloneModel(t testing.TB) *model {
	t.Helper()
	test.NewTempApp(t)
	m := newModel(demoGraphs(t), memory.New(), "alone.db")
	m.setGraph(0)
	return m
}

// showAlone puts panel alone in a window of the given size.
func showAlone(t testing.TB, panel fyne.CanvasObject, w, h float32) {
	t.Helper()
	win := test.NewTempWindow(t, panel)
	win.Resize(fyne.NewSize(w, h))
}

// buttonIn returns the button labelled text that o draws, nil when none.
func buttonIn(o fyne.CanvasObject, text string) fyne.Tappable {
	var found fyne.Tappable
	walkObjects(o, func(x fyne.CanvasObject) bool {
		switch b := x.(type) {
		case *widget.Button:
			if b.Text == text {
				found = b
			}
		case *keyButton:
			if b.Text == text {
				found = b
			}
		}
		return found != nil
	})
	return found
}

// textIn is the text of the labels o draws, one a line.
func textIn(o fyne.CanvasObject) string {
	var b strings.Builder
	walkObjects(o, func(x fyne.CanvasObject) bool {
		if l, ok := x.(*widget.Label); ok {
			b.WriteString(l.Text + "\n")
		}
		return false
	})
	return b.String()
}

func TestThreadsPanelAlone(t *testing.T) {
	m := aloneModel(t)
	var started int
	p := newThreadsPanel(m, &actions{newThread: func() { started++ }})
	showAlone(t, p, 300, 500)
	// Until the store answers, the list says it is reading, not that the
	// graph has no threads (a LangGraph thread of hundreds of megabytes
	// takes seconds to list with its status).
	if txt := textIn(p); !strings.Contains(txt, "Reading the store's threads") || strings.Contains(txt, "No threads yet") || buttonIn(p, "Start a thread") != nil {
		t.Fatalf("before the store answered, the list shows:\n%s", txt)
	}
	act(func() { m.setThreads(nil, false) })
	start := buttonIn(p, "Start a thread")
	if start == nil || !p.list.Hidden {
		t.Fatal("an empty list does not offer to start a thread")
	}
	test.Tap(start)
	if started != 1 {
		t.Errorf("Start a thread asked %d times", started)
	}
	act(func() {
		m.setThreads([]threadRow{
			{ID: "alpha", Step: 2, Count: 3, Status: "waiting", Updated: time.Now()},
			{ID: "beta", Step: 5, Count: 6, Status: "done", Updated: time.Now()},
		}, false)
	})
	if len(p.shown) != 2 || p.list.Hidden || !strings.Contains(textIn(p), "alpha") || !strings.Contains(textIn(p), "waiting · just now\nstep 2 · 3 checkpoints") {
		t.Fatalf("listed %d rows, list hidden %v:\n%s", len(p.shown), p.list.Hidden, textIn(p))
	}
	act(func() { p.list.Select(1) })
	if m.thread() != "beta" {
		t.Errorf("selecting beta made %q current", m.thread())
	}
	// Typing filters at once and asks the store once typing pauses.
	act(func() { p.search.SetText("alp") })
	if len(p.shown) != 1 || p.shown[0].ID != "alpha" {
		t.Errorf("the search shows %+v", p.shown)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		var q string
		act(func() { q = m.threadQ.Search })
		if q == "alp" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the store was not asked: query %q", q)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestEventsPanelAlone(t *testing.T) {
	m := aloneModel(t)
	p := newEventsPanel(m, &actions{})
	showAlone(t, p, 600, 400)
	act(func() {
		m.setThread("x")
		m.addEvents(m.scope(), []evRow{
			{Step: 1, Mode: "tasks", Node: "research", Text: "started"},
			{Step: 1, Mode: "updates", Node: "research", Text: "notes"},
			{Step: 2, Mode: "tasks", Node: "write", Text: "started"},
		})
	})
	if len(p.shown) != 3 {
		t.Fatalf("%d rows shown, want 3", len(p.shown))
	}
	act(func() { p.mode.SetSelected("tasks") })
	if len(p.shown) != 2 {
		t.Errorf("tasks: %d rows", len(p.shown))
	}
	act(func() { p.node.SetText("write") })
	if len(p.shown) != 1 || m.scope().events[p.shown[0]].Node != "write" {
		t.Errorf("tasks of write: %v", p.shown)
	}
	clear := buttonIn(p, "Clear")
	if clear == nil {
		t.Fatal("no Clear button")
	}
	act(func() { test.Tap(clear) })
	if len(m.scope().events) != 0 || len(p.shown) != 0 {
		t.Errorf("after Clear: %d events, %d shown", len(m.scope().events), len(p.shown))
	}
}

func TestErrorsPanelAlone(t *testing.T) {
	m := aloneModel(t)
	p := newErrorsPanel(m, &actions{})
	showAlone(t, p, 600, 300)
	if !p.list.Hidden || p.none.Hidden {
		t.Fatal("no errors, yet the list shows")
	}
	act(func() {
		m.setThread("x")
		m.addError(m.scope(), errRow{Node: "write", Msg: "boom", Input: `{"topic":"kelp"}`})
	})
	if p.list.Hidden || !p.none.Hidden || !strings.Contains(textIn(p), "x · write: boom") || !strings.Contains(textIn(p), `input: {"topic":"kelp"}`) {
		t.Fatalf("after a failure the panel shows:\n%s", textIn(p))
	}
	act(func() { m.setThread("y") })
	if !p.list.Hidden || p.none.Hidden {
		t.Error("another thread's panel shows the first one's error")
	}
}

func TestBreakPanelAlone(t *testing.T) {
	m := aloneModel(t)
	p := newBreakPanel(m, &actions{})
	showAlone(t, p, 600, 400)
	if len(p.rows) != 0 || p.empty.Hidden {
		t.Fatalf("rows %+v before any breakpoint", p.rows)
	}
	act(func() { m.toggleBreakpoint("write", false) })
	if len(p.rows) != 1 || p.rows[0].Text != "before write" {
		t.Fatalf("rows %+v", p.rows)
	}
	act(func() { p.rows[0].remove() })
	if m.brk.Before["write"] || len(p.rows) != 0 {
		t.Errorf("removing left %+v / %v", p.rows, m.brk.Before)
	}
	// A typed breakpoint is checked, then added to the model.
	act(func() { p.entry.SetText("change:nosuchchannel") })
	act(func() { test.Tap(buttonIn(p, "Add")) })
	if len(m.dbg.Breaks) != 0 || p.check.Importance != widget.DangerImportance {
		t.Errorf("a channel the graph lacks was accepted (%q)", p.check.Text)
	}
	act(func() { p.entry.SetText("change:draft") })
	act(func() { test.Tap(buttonIn(p, "Add")) })
	if len(m.dbg.Breaks) != 1 || m.dbg.Breaks[0].Spec != "change:draft" || p.entry.Text != "" || len(p.rows) != 1 {
		t.Errorf("breaks %+v, entry %q, rows %+v", m.dbg.Breaks, p.entry.Text, p.rows)
	}
}

func TestWatchPanelAlone(t *testing.T) {
	m := aloneModel(t)
	p := newWatchPanel(m, &actions{})
	showAlone(t, p, 600, 400)
	if p.empty.Hidden {
		t.Fatal("no watches, yet no hint")
	}
	act(func() { p.entry.SetText("revisions +") })
	act(func() { test.Tap(buttonIn(p, "Watch")) })
	if len(m.dbg.Watches) != 0 || p.check.Importance != widget.DangerImportance {
		t.Errorf("a broken expression was watched (%q)", p.check.Text)
	}
	act(func() { p.entry.SetText("revisions > 1") })
	act(func() { test.Tap(buttonIn(p, "Watch")) })
	if len(m.dbg.Watches) != 1 || m.dbg.Watches[0].Src != "revisions > 1" || !p.empty.Hidden {
		t.Fatalf("watches %+v, hint shown %v", m.dbg.Watches, !p.empty.Hidden)
	}
	if !strings.Contains(textIn(p), "revisions > 1") {
		t.Errorf("the watch is not listed:\n%s", textIn(p))
	}
}

func TestBuildPanelAlone(t *testing.T) {
	m := aloneModel(t)
	var reruns int
	var copied []string
	p := newBuildPanel(m, &actions{rerun: func() { reruns++ }}, func() []*engine.Topology { return nil })
	p.copied = func(s string) { copied = append(copied, s) }
	showAlone(t, p, 700, 300)
	act(func() {
		p.set(Build{N: 2, Running: 1, At: time.Now(), Output: "# example\n\n",
			Errors: []BuildError{{File: "main.go", Path: "/src/app/main.go", Line: 3, Col: 5, Msg: "undefined: x"}}})
	})
	if !strings.HasPrefix(p.status.Text, "Build #2 failed at ") || !strings.Contains(p.status.Text, "still runs build #1") {
		t.Errorf("status %q", p.status.Text)
	}
	if len(p.errs) != 1 || len(p.lines) != 1 || p.lines[0] != "# example" {
		t.Fatalf("errors %+v, other lines %q", p.errs, p.lines)
	}
	if buttonIn(p, "Re-run from here with the new code") != nil {
		t.Error("Re-run offered while the new code does not build")
	}
	// A tap on the error copies where it is, whole path and all.
	act(func() { p.list.Select(0) })
	if got := fyne.CurrentApp().Clipboard().Content(); got != "/src/app/main.go:3:5" || len(copied) != 1 || copied[0] != "Copied /src/app/main.go:3:5" {
		t.Errorf("clipboard %q, told %q", got, copied)
	}
	// Once the build runs, its errors go.
	act(func() { p.set(Build{N: 3, Running: 3, OK: true, At: time.Now()}) })
	if len(p.errs) != 0 || !strings.HasPrefix(p.status.Text, "Running build #3") {
		t.Errorf("after a good build: %d errors, %q", len(p.errs), p.status.Text)
	}
	// Re-run is offered once the window runs the new code, and only on a
	// checkpoint shown.
	b, _ := buttonIn(p, "Re-run from here with the new code").(*keyButton)
	if b == nil || !b.Disabled() {
		t.Fatalf("Re-run after a good build with no checkpoint shown: %+v", b)
	}
	act(func() { test.Tap(b) })
	if reruns != 0 {
		t.Errorf("a disabled Re-run ran %d times", reruns)
	}
}

func TestPhasePanelAlone(t *testing.T) {
	m := aloneModel(t)
	var into int
	var modes []stepMode
	p := newPhasePanel(m, &actions{dbg: &debugActions{
		stepInto: func() { into++ },
		phaseGo:  func(mode stepMode, _ bool) { modes = append(modes, mode) },
	}})
	showAlone(t, p, 600, 400)
	if p.help.Text != phaseEmpty || !p.finish.Disabled() || !p.runOn.Disabled() {
		t.Fatalf("with no step into: help %q, finish enabled %v", p.help.Text, !p.finish.Disabled())
	}
	act(func() { test.Tap(p.next) })
	if into != 1 {
		t.Fatalf("Step into asked %d times", into)
	}
	// A step into waits before the tasks of step 1: the user picks the
	// order.
	tasks := []engine.TaskState{{ID: "t1", Name: "research"}, {ID: "t2", Name: "write"}}
	act(func() {
		m.setThread("x")
		m.setPhase(m.scope(), &phaseStop{
			Info:  engine.PhaseInfo{Phase: engine.PhaseTask, Step: 1, Tasks: tasks, Pending: []string{"t1", "t2"}},
			Next:  "t1",
			reply: make(chan phaseReply, 1),
		})
	})
	if p.title.Text != "Step 1 · run: 2 of 2 tasks left" || p.next.Text != "Next phase" || p.finish.Disabled() {
		t.Fatalf("at the task phase: title %q, next %q", p.title.Text, p.next.Text)
	}
	act(func() { test.Tap(runNextOf(t, p, taskLabel(tasks, "t2"))) })
	if m.waiting().Next != "t2" {
		t.Errorf("picked %q", m.waiting().Next)
	}
	act(func() { test.Tap(p.next); test.Tap(p.finish); test.Tap(p.runOn) })
	if len(modes) != 3 || modes[0] != stepPhases || modes[1] != stepFinish || modes[2] != stepRunOn {
		t.Errorf("modes asked %v", modes)
	}
	// Another thread has no step into.
	act(func() { m.setThread("y") })
	if p.help.Text != phaseEmpty {
		t.Errorf("on another thread: %q", p.help.Text)
	}
}

func TestGraphPanelAlone(t *testing.T) {
	m := aloneModel(t)
	type ask struct {
		topo *engine.Topology
		done func(*render.Geometry, error)
	}
	var asked []ask
	p := newGraphPanel(m, &actions{}, func(topo *engine.Topology, _ render.DOTOptions, done func(*render.Geometry, error)) {
		asked = append(asked, ask{topo, done})
	})
	var failed []string
	p.onErr = func(what string, err error) { failed = append(failed, what+": "+err.Error()) }
	showAlone(t, p, 700, 600)
	// The panel lays out the graph the model selects; an answer about a
	// graph no longer selected is dropped.
	act(func() { m.setGraph(0) })
	act(func() { m.setGraph(1) })
	if len(asked) != 2 || asked[0].topo.Name != m.graphs[0].Graph.Name() || asked[1].topo.Name != m.graphs[1].Graph.Name() || p.title.Text != m.graphs[1].Graph.Name() {
		t.Fatalf("%d layouts asked, title %q", len(asked), p.title.Text)
	}
	l := render.NewLayouter()
	t.Cleanup(func() { l.Close() })
	geom := func(topo *engine.Topology) *render.Geometry {
		g, err := l.Layout(t.Context(), topo, render.DOTOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	old, cur := geom(asked[0].topo), geom(asked[1].topo)
	act(func() { asked[0].done(old, nil) })
	if p.view.Geometry() != nil {
		t.Fatal("the first graph's layout was drawn under the second")
	}
	act(func() { asked[1].done(cur, nil) })
	if p.view.Geometry() != cur {
		t.Fatal("the selected graph's layout was not drawn")
	}
	// Breakpoints set in the model show on the graph.
	node := asked[1].topo.Nodes[0].Name
	act(func() { m.toggleBreakpoint(node, false) })
	if !p.view.Highlight().BreakBefore[node] {
		t.Errorf("no breakpoint dot before %s", node)
	}
	// A layout that fails is told, not drawn.
	act(func() { m.setGraph(0) })
	act(func() { asked[2].done(nil, errors.New("no room")) })
	if len(failed) != 1 || failed[0] != "Drawing the graph: no room" {
		t.Errorf("told %q", failed)
	}
}
