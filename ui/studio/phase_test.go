package studio

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/checkpoint/sqlite"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/render"
)

// waitFor polls cond (read as a UI action) until it holds, failing the
// test after 10 s: a step into waits at its phases, so the studio is not
// idle meanwhile.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok := false
		act(func() { ok = cond() })
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s after 10 s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// shiftF10 presses Shift+F10 the way the driver delivers it: F10 with
// Shift held, to whatever has the focus.
func shiftF10(s *Studio) {
	act(func() {
		s.dbg.modifiers = func() fyne.KeyModifier { return fyne.KeyModifierShift }
		pressKey(s.win, fyne.KeyF10)
		s.dbg.modifiers = func() fyne.KeyModifier { return 0 }
	})
}

// waitPhase waits for the step into to stop at phase ph.
func waitPhase(t *testing.T, s *Studio, ph engine.Phase) *phaseStop {
	t.Helper()
	var stop *phaseStop
	waitFor(t, "the "+ph.String()+" phase", func() bool {
		stop = s.m.waiting()
		return stop != nil && stop.Info.Phase == ph
	})
	return stop
}

// Step into stops at the plan (the tasks that will run, marked on the
// graph), then lets the user run a parallel step's tasks in the order
// they pick; writes still apply in task order, so the state is the one a
// plain Step gives. The status line and the Step tab name each phase;
// Shift+F10 works with the focus in the state tree.
func TestStepIntoChosenOrder(t *testing.T) {
	s := newThread(t, "si-1")
	step(t, s) // plan: research ×3 next
	act(func() { s.win.Canvas().Focus(s.insp.tree) })
	shiftF10(s)
	plan := waitPhase(t, s, engine.PhasePlan)
	if len(plan.Info.Tasks) != 3 {
		t.Fatalf("plan of %d tasks", len(plan.Info.Tasks))
	}
	act(func() {
		if got := s.dbg.phase.title.Text; got != "Step 2 · plan: 3 tasks (research ×3) will run" {
			t.Errorf("Step tab title %q", got)
		}
		if !strings.Contains(s.sb.String(), "stepping into step 2 · plan: 3 tasks (research ×3)") {
			t.Errorf("status %q", s.sb.String())
		}
		if st := s.gp.view.Highlight().State("research"); st != render.StateNext {
			t.Errorf("research is %v on the graph at the plan", st)
		}
		if s.tabs.Selected().Text != "Step" {
			t.Errorf("tab %q open", s.tabs.Selected().Text)
		}
		if got := triggerText(plan.Info.Tasks[0], nil) + " · " + inputText(plan.Info.Tasks[0]); got != `a Send from the previous step · input "tide pools: history"` {
			t.Errorf("why the first task runs: %q", got)
		}
		if s.tb.run.Disabled() || s.tb.stepInto.Disabled() {
			t.Error("Run or Step into disabled while the step into waits")
		}
	})
	shiftF10(s)
	stop := waitPhase(t, s, engine.PhaseTask)
	ids := slices.Clone(stop.Info.Pending)
	if len(ids) != 3 || stop.Next != ids[0] {
		t.Fatalf("pending %v, next %s", ids, stop.Next)
	}
	// The user runs the last task first, then the first.
	act(func() { test.Tap(runNextOf(t, s.dbg.phase, taskLabel(stop.Info.Tasks, ids[2]))) })
	act(func() {
		if s.m.waiting().Next != ids[2] || s.gp.view.Highlight().Badges["research"] != "0/3" {
			t.Errorf("picked %s, badge %q", s.m.waiting().Next, s.gp.view.Highlight().Badges["research"])
		}
	})
	shiftF10(s)
	waitFor(t, "the second task stop", func() bool {
		w := s.m.waiting()
		return w != nil && w.Info.Phase == engine.PhaseTask && len(w.Info.Pending) == 2
	})
	act(func() {
		if p := s.m.waiting().Info.Pending; !slices.Equal(p, []string{ids[0], ids[1]}) {
			t.Errorf("pending after the third ran: %v", p)
		}
		if s.gp.view.Highlight().Badges["research"] != "1/3" {
			t.Errorf("badge %q", s.gp.view.Highlight().Badges["research"])
		}
	})
	shiftF10(s)
	waitFor(t, "the third task stop", func() bool {
		w := s.m.waiting()
		return w != nil && w.Info.Phase == engine.PhaseTask && len(w.Info.Pending) == 1
	})
	shiftF10(s)
	bar := waitPhase(t, s, engine.PhaseBarrier)
	if countWrites(bar.Info.Tasks) != 3 {
		t.Fatalf("%d writes at the barrier", countWrites(bar.Info.Tasks))
	}
	act(func() {
		sum := channelSummary(bar.Info.Tasks, nil, s.m.channels())
		if len(sum) != 1 || sum[0] != "notes ← research ×3 · combined by append" {
			t.Errorf("per channel: %q", sum)
		}
	})
	shiftF10(s)
	idle(t, s)
	v := s.tview()
	if v == nil || v.Snap.Metadata.Source != checkpoint.SourceLoop || v.Snap.Metadata.Step != 2 {
		t.Fatalf("after apply: %+v", v)
	}
	if got := notes(s); len(got) != 3 || !strings.HasPrefix(got[0], "tide pools: history") || !strings.HasPrefix(got[2], "tide pools: how to visit") {
		t.Errorf("notes in task order whatever the run order: %q", got)
	}
	if st := s.m.scope().status; st != "stepped into step 2: applied, changed notes" {
		t.Errorf("status after apply %q", st)
	}
	if s.m.waiting() != nil || s.m.run.Going {
		t.Error("the run still goes after apply")
	}
	// F10 keeps its meaning: one whole step.
	before := s.m.scope().tl.count()
	step(t, s)
	if s.m.scope().tl.count() != before+1 || s.m.scope().dbg.phase != nil {
		t.Errorf("F10 after a step into: %d checkpoints (was %d), phase %+v", s.m.scope().tl.count(), before, s.m.scope().dbg.phase)
	}
}

// At the barrier a write can be dropped or replaced before it applies;
// the step's checkpoint is then a fork whose metadata lists the edits,
// and the timeline shows it as one.
func TestStepIntoBarrierEditForks(t *testing.T) {
	s := newThread(t, "si-2")
	step(t, s)
	shiftF10(s)
	waitPhase(t, s, engine.PhasePlan)
	act(func() { test.Tap(s.tb.step) }) // F10 at a phase: finish the step without stops…
	idle(t, s)
	if v := s.tview(); v == nil || v.Snap.Metadata.Step != 2 || len(notes(s)) != 3 {
		t.Fatalf("F10 from the plan did not finish the step: %+v", s.tview())
	}
	step(t, s) // structure
	shiftF10(s)
	waitPhase(t, s, engine.PhasePlan)
	shiftF10(s) // one task (write): no task stop
	bar := waitPhase(t, s, engine.PhaseBarrier)
	if len(bar.Info.Tasks) != 1 || bar.Info.Tasks[0].Name != "write" {
		t.Fatalf("barrier of %+v", bar.Info.Tasks)
	}
	w := s.dbg.phase.writes
	draft := slices.IndexFunc(bar.Info.Tasks[0].Result, func(x engine.Write) bool { return x.Channel == "draft" })
	fb := slices.IndexFunc(bar.Info.Tasks[0].Result, func(x engine.Write) bool { return x.Channel == "feedback" })
	if draft < 0 || fb < 0 {
		t.Fatalf("write's writes %+v", bar.Info.Tasks[0].Result)
	}
	// Replace the draft through the dialog; drop the feedback write.
	act(func() { test.Tap(w.replaceB[0][draft]) })
	f, _ := inOverlays[*valueForm](s.win)
	if f == nil {
		t.Fatal("no replace dialog")
	}
	act(func() {
		f.entry.SetText("A shorter draft.")
		if f.okB.Disabled() {
			t.Fatalf("a text for a text channel refused: %q", f.errLbl.Text)
		}
		test.Tap(f.okB)
	})
	act(func() { w.checks[0][fb].SetChecked(false) })
	act(func() {
		if got := s.m.waiting().Edits; len(got) != 2 {
			t.Fatalf("edits %+v", got)
		}
		if !strings.Contains(s.sb.String(), "2 edited (the step will be a fork)") {
			t.Errorf("status %q", s.sb.String())
		}
	})
	shiftF10(s)
	idle(t, s)
	v := s.tview()
	if v == nil || v.Snap.Metadata.Source != checkpoint.SourceFork {
		t.Fatalf("the edited step is not a fork: %+v", v.Snap.Metadata)
	}
	if v.Snap.Values["draft"] != "A shorter draft." {
		t.Errorf("draft %q", v.Snap.Values["draft"])
	}
	if _, has := v.Snap.Values["feedback"]; has && v.Snap.Values["feedback"] != "" {
		t.Errorf("the dropped feedback write applied: %q", v.Snap.Values["feedback"])
	}
	edits, _ := v.Snap.Metadata.Extra[engine.MetaEdits].([]any)
	if len(edits) != 2 {
		t.Errorf("the fork's history lists %v", v.Snap.Metadata.Extra[engine.MetaEdits])
	}
	sc := s.m.scope()
	if label, _ := sc.tl.text(sc.tl.at(sc.head)); !strings.Contains(label, "fork") {
		t.Errorf("timeline label %q", label)
	}
}

// A value that is not one the channel takes keeps Replace disabled and
// says why.
func TestReplaceDialogChecksTheValue(t *testing.T) {
	s := newStudio(t, memory.New())
	act(func() { s.replaceDialog("revisions", 1, func(any) { t.Error("a bad value was accepted") }) })
	f, _ := inOverlays[*valueForm](s.win)
	act(func() { f.entry.SetText(`"two"`) })
	if !f.okB.Disabled() || !strings.Contains(f.errLbl.Text, "revisions") {
		t.Errorf("a text for an int channel: ok enabled %v, error %q", !f.okB.Disabled(), f.errLbl.Text)
	}
	act(func() { f.entry.SetText(`{"a": 1`) })
	if !f.okB.Disabled() || !strings.Contains(f.errLbl.Text, "not closed") {
		t.Errorf("unbalanced JSON: error %q", f.errLbl.Text)
	}
}

// A step into waiting on a thread the user leaves does not wait for ever:
// it stops cleanly (before its step, at the plan), and nothing of it shows
// on the other thread.
func TestStepIntoLeftThreadStops(t *testing.T) {
	s := newThread(t, "si-a")
	startThread(t, s, "si-b")
	shiftF10(s)
	waitPhase(t, s, engine.PhasePlan)
	head := s.m.scope().head
	act(func() { s.m.setThread("si-a") })
	idle(t, s)
	if s.m.run.Going || s.m.waiting() != nil || s.m.scope().dbg.phase != nil {
		t.Fatalf("after leaving the thread: going %v, phase %+v", s.m.run.Going, s.m.scope().dbg.phase)
	}
	if strings.Contains(s.sb.String(), "stepping") {
		t.Errorf("status on the other thread: %q", s.sb.String())
	}
	act(func() { s.m.setThread("si-b") })
	idle(t, s)
	if sc := s.m.scope(); sc.head != head {
		t.Errorf("the left step ran: head %s, was %s", sc.head, head)
	}
}

// intoSummarize opens the map-reduce demo, runs one thread to its end for
// the report a plain run gives, then starts thread and steps into it with
// Shift+F10 up to the first phase inside the summarize subgraph.
func intoSummarize(t *testing.T, thread string) (s *Studio, report any, inner *phaseStop) {
	t.Helper()
	s = newStudio(t, memory.New())
	act(func() { s.m.setGraph(2) }) // map-reduce: split sends to the summarize subgraph
	idle(t, s)
	startThread(t, s, "mr-plain")
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	act(func() { report = s.tview().Snap.Values["report"] })

	startThread(t, s, thread)
	for i := 0; ; i++ {
		var next []string
		act(func() { next = s.tview().Snap.Next })
		if slices.Contains(next, "summarize") {
			break
		}
		if i == 5 {
			t.Fatalf("summarize never next; next %v", next)
		}
		step(t, s)
	}
	shiftF10(s)
	plan := waitPhase(t, s, engine.PhasePlan)
	if plan.Info.NS != "" || len(plan.Info.Tasks) < 2 {
		t.Fatalf("the parent's plan: ns %q, %d tasks", plan.Info.NS, len(plan.Info.Tasks))
	}
	shiftF10(s) // to the first task
	waitPhase(t, s, engine.PhaseTask)
	shiftF10(s) // run it: into the subgraph
	waitFor(t, "a phase inside the subgraph", func() bool {
		inner = s.m.waiting()
		return inner != nil && inner.Info.NS != ""
	})
	return s, report, inner
}

// Step into goes inside a subgraph node: after the parent's task phase
// comes the subgraph's own plan, named in the status line and the Step tab,
// with the subgraph node lit on the graph; Run on (F5) from there ends in
// the state a plain run gives.
func TestStepIntoSubgraph(t *testing.T) {
	s, want, inner := intoSummarize(t, "mr-into")
	if inner.Info.Phase != engine.PhasePlan || !strings.HasPrefix(inner.Info.NS, "summarize:") {
		t.Fatalf("first stop inside: %s in %q", inner.Info.Phase, inner.Info.NS)
	}
	act(func() {
		if got := s.sb.String(); !strings.Contains(got, "inside summarize · stepping into step 0 · plan") {
			t.Errorf("status %q", got)
		}
		if got := s.dbg.phase.title.Text; !strings.HasPrefix(got, "Inside summarize · Step 0 · plan") {
			t.Errorf("Step tab title %q", got)
		}
		if st := s.gp.view.Highlight().State("summarize"); st != render.StateRunning {
			t.Errorf("summarize is %v on the graph, want running", st)
		}
	})
	// On through the subgraph's steps: each waits, after apply too.
	seen := map[engine.Phase]bool{}
	for i := 0; i < 12; i++ {
		shiftF10(s)
		var stop *phaseStop
		waitFor(t, "the next phase", func() bool { stop = s.m.waiting(); return stop != nil && stop != inner })
		inner = stop
		if stop.Info.NS == "" {
			break
		}
		seen[stop.Info.Phase] = true
	}
	if !seen[engine.PhaseBarrier] || !seen[engine.PhaseApply] {
		t.Errorf("phases seen inside the subgraph: %v, want its barrier and apply too", seen)
	}
	act(func() { s.Run() }) // F5: run on
	idle(t, s)
	act(func() {
		if v := s.tview(); v == nil || !v.Snap.Done() || fmt.Sprint(v.Snap.Values["report"]) != fmt.Sprint(want) {
			t.Errorf("after running on: %+v, want report %v", v, want)
		}
	})
}

// The barrier's line counts its writes in words that agree with the number.
func TestBarrierLineGrammar(t *testing.T) {
	task := func(n int) engine.TaskState {
		return engine.TaskState{ID: fmt.Sprint("t", n), Name: "w", Result: make([]engine.Write, n)}
	}
	for _, tc := range []struct {
		tasks []engine.TaskState
		want  string
	}{
		{[]engine.TaskState{task(1)}, "stepping into step 2 · barrier: 1 write waits · Shift+F10 applies it"},
		{[]engine.TaskState{task(1), task(2)}, "stepping into step 2 · barrier: 3 writes wait · Shift+F10 applies them"},
	} {
		stop := &phaseStop{Info: engine.PhaseInfo{Phase: engine.PhaseBarrier, Step: 2, Tasks: tc.tasks}}
		if got := phaseLine(stop); got != tc.want {
			t.Errorf("phaseLine = %q, want %q", got, tc.want)
		}
		stop.Info.NS = "summarize:abc"
		if got := phaseLine(stop); got != "inside summarize · "+tc.want {
			t.Errorf("inside a subgraph: %q", got)
		}
	}
}

// Pause (F6) at a phase inside a subgraph stops the run there, as a
// breakpoint inside the subgraph does; Run (F5) then finishes the thread
// with the report a plain run gives.
func TestStepIntoSubgraphPause(t *testing.T) {
	s, want, _ := intoSummarize(t, "mr-pause")
	act(func() { s.Pause() })
	idle(t, s)
	act(func() {
		if s.m.waiting() != nil || s.m.run.Busy {
			t.Fatalf("still stepping after Pause: waiting %v, busy %v", s.m.waiting() != nil, s.m.run.Busy)
		}
		if v := s.tview(); v == nil || !slices.Contains(v.Snap.Next, "summarize") {
			t.Fatalf("after Pause inside the subgraph: %+v, want summarize still next", v)
		}
	})
	act(func() { s.Run() })
	idle(t, s)
	act(func() {
		if v := s.tview(); v == nil || !v.Snap.Done() || fmt.Sprint(v.Snap.Values["report"]) != fmt.Sprint(want) {
			t.Errorf("after running on: %+v, want report %v", v, want)
		}
	})
}

// runNextOf returns the "Run next" button in the phase panel's row of the
// task labelled name.
func runNextOf(t *testing.T, p *phasePanel, name string) *keyButton {
	t.Helper()
	for _, row := range p.body.Objects {
		var named bool
		var b *keyButton
		walkObjects(row, func(o fyne.CanvasObject) bool {
			switch x := o.(type) {
			case *widget.Label:
				named = named || x.Text == name
			case *keyButton:
				b = x
			}
			return false
		})
		if named && b != nil {
			return b
		}
	}
	t.Fatalf("no Run next button for %s", name)
	return nil
}

// At the barrier of a step whose task sends (the writing assistant's
// plan: a message and three Sends to research), the Step tab lists the
// Send packets with the task's writes, where it listed the message alone.
// On SQLite the run stores the tasks' writes from a goroutine of its own,
// behind the barrier: the Step tab waits for them.
func TestStepIntoShowsSends(t *testing.T) {
	for _, store := range []string{"memory", "sqlite"} {
		t.Run(store, func(t *testing.T) { stepIntoShowsSends(t, store) })
	}
}

func stepIntoShowsSends(t *testing.T, store string) {
	var saver checkpoint.Saver = memory.New()
	if store == "sqlite" {
		db, err := sqlite.Open(filepath.Join(t.TempDir(), "weft.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		saver = db
	}
	s := newStudio(t, saver)
	startThread(t, s, "send-1")
	shiftF10(s)
	waitPhase(t, s, engine.PhasePlan)
	shiftF10(s)
	stop := waitPhase(t, s, engine.PhaseBarrier)
	act(func() {
		if stop.SendsErr != nil {
			t.Fatalf("reading the Sends: %v", stop.SendsErr)
		}
		var nodes []string
		for _, ps := range stop.Sends {
			for _, p := range ps {
				nodes = append(nodes, p.Node)
			}
		}
		if len(nodes) != 3 || nodes[0] != "research" {
			t.Errorf("Sends to %v, want research ×3", nodes)
		}
		text := textIn(s.dbg.phase)
		if strings.Contains(text, "wrote nothing") || strings.Count(text, "Send → research") != 3 || !strings.Contains(text, `Send → research  "tide pools: history"`) {
			t.Errorf("the Step tab reads:\n%s", text)
		}
		if !strings.Contains(s.dbg.phase.title.Text, "1 write and 3 Sends wait") || !strings.Contains(s.sb.String(), "barrier: 1 write and 3 Sends wait") {
			t.Errorf("title %q, status %q", s.dbg.phase.title.Text, s.sb.String())
		}
	})
	shiftF10(s)
	idle(t, s)
}

// The map-reduce's split writes nothing but its three Sends to the
// summarize subgraph: its barrier lists them under "split · 3 Sends".
func TestStepIntoShowsOnlySends(t *testing.T) {
	s := newStudio(t, memory.New())
	for i, g := range s.m.graphs {
		if g.Graph.Name() == "map-reduce" {
			act(func() { s.m.setGraph(i) })
		}
	}
	idle(t, s)
	startThread(t, s, "mr-1")
	shiftF10(s)
	waitPhase(t, s, engine.PhasePlan)
	shiftF10(s)
	waitPhase(t, s, engine.PhaseBarrier)
	act(func() {
		text := textIn(s.dbg.phase)
		if strings.Contains(text, "wrote nothing") || !strings.Contains(text, "split · 3 Sends") ||
			!strings.Contains(text, `Send → summarize  {"subject": "otters"}`) || strings.Count(text, "Send → summarize") != 3 {
			t.Errorf("the Step tab reads:\n%s", text)
		}
	})
	shiftF10(s)
	idle(t, s)
}
