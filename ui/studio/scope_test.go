package studio

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
)

// What belongs to a thread or a graph goes with it: errors and events of
// one thread do not show under another (and error rows name their
// thread), a node's hint does not outlive its graph, and Edit & fork opens
// on a channel of the graph shown, with Fork enabled only for a value the
// channel takes.
func TestNothingLeaksAcrossThreadsAndGraphs(t *testing.T) {
	s := newStudio(t, memory.New())
	// A map-reduce thread that fails: no subjects.
	act(func() { s.m.setGraph(2) })
	idle(t, s)
	act(func() { s.startThread("bad", engine.Values{"subjects": []string{}}) })
	idle(t, s)
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	if n := len(s.m.scope().errors); n != 1 {
		t.Fatalf("%d error rows on the failing thread, want 1", n)
	}
	if r := s.m.scope().errors[0]; r.Thread != "bad" || r.Node != "split" {
		t.Errorf("error row %+v does not name its thread and node", r)
	}
	if !s.errs.list.Visible() || len(s.m.scope().events) == 0 {
		t.Fatal("the failing thread shows no errors or no events")
	}
	// Another thread of the same graph: nothing of the first.
	act(func() { s.startThread("good", engine.Values{"subjects": []string{"otters"}}) })
	idle(t, s)
	if n := len(s.m.scope().errors); n != 0 || s.errs.list.Visible() || !s.errs.none.Visible() {
		t.Errorf("thread good shows %d errors of thread bad", n)
	}
	for _, r := range s.m.scope().events {
		if strings.Contains(r.Text, "no subjects") {
			t.Errorf("thread good shows an event of thread bad: %+v", r)
		}
	}
	// Back on the failing thread, its failure shows again from the store.
	act(func() { s.m.setThread("bad") })
	idle(t, s)
	if n := len(s.m.scope().errors); n != 1 || s.m.scope().errors[0].Thread != "bad" {
		t.Errorf("thread bad shows %d errors after coming back", n)
	}

	// A node's hint under the graph title goes with the graph.
	act(func() { s.gp.view.OnSelected("combine") })
	if !strings.HasPrefix(s.gp.hint.Text, "combine") {
		t.Fatalf("hint %q", s.gp.hint.Text)
	}
	act(func() { s.m.setGraph(0) })
	idle(t, s)
	if s.gp.hint.Text != breakHint || s.gp.view.Selected() != "" {
		t.Errorf("under the writer the hint is %q", s.gp.hint.Text)
	}
	if n := len(s.m.scope().errors) + len(s.m.scope().events); n != 0 {
		t.Errorf("the writer shows %d rows of the map-reduce", n)
	}

	// Edit & fork: a channel the map-reduce has, picked under it, is not
	// offered under the writer.
	act(func() { s.m.setGraph(2) })
	idle(t, s)
	act(func() { s.m.setThread("good") })
	idle(t, s)
	act(func() { s.insp.selCh = "report" })
	act(func() { s.m.setGraph(0) })
	idle(t, s)
	startThread(t, s, "w-1")
	act(s.editDialog)
	f, _ := inOverlays[*forkForm](s.win)
	if f == nil {
		t.Fatal("no fork dialog")
	}
	if f.ch.Selected == "report" || !contains(f.ch.Options, f.ch.Selected) {
		t.Errorf("fork dialog on channel %q of another graph (options %v)", f.ch.Selected, f.ch.Options)
	}
	act(func() { f.ch.SetSelected("revisions") })
	act(func() { f.editor.SetText("not json") })
	if !f.forkB.Disabled() || !f.forkRunB.Disabled() {
		t.Error("Fork enabled for a value the channel does not take")
	}
	act(func() { f.editor.SetText("2") })
	if f.forkB.Disabled() {
		t.Errorf("Fork disabled for a good value: %q", f.errLbl.Text)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
