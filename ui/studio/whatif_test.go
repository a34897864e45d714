package studio

import (
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
)

// What if: the writes of the step that ran from a past checkpoint are
// toggled off or replaced and the state recomputed, no node run; the
// channels that come out different are marked; Keep as fork stores it as a
// fork whose history lists the edits, shown on the timeline.
func TestWhatIf(t *testing.T) {
	s := newThread(t, "wi-1")
	act(func() { test.Tap(s.tb.run) })
	idle(t, s) // at the review, after write
	sc := s.m.scope()
	structure := sc.tl.prev(sc.head) // its step ran write
	act(func() { s.m.selectCheckpoint(structure) })
	idle(t, s)
	count := sc.tl.count()
	act(func() { test.Tap(s.insp.whatIfB) })
	idle(t, s)
	f, _ := inOverlays[*whatIfForm](s.win)
	if f == nil || f.base == nil || f.result == nil {
		t.Fatalf("what-if not computed: %+v", f)
	}
	if len(f.changed) != 0 || !f.keepB.Disabled() || !strings.Contains(f.status.Text, "as it ran") {
		t.Errorf("without edits: changed %v, keep enabled %v, status %q", f.changed, !f.keepB.Disabled(), f.status.Text)
	}
	res := f.writes.tasks[0].Result
	draft := slices.IndexFunc(res, func(w engine.Write) bool { return w.Channel == "draft" })
	revs := slices.IndexFunc(res, func(w engine.Write) bool { return w.Channel == "revisions" })
	// Drop the draft write; replace the revisions write with 5.
	act(func() { f.writes.checks[0][draft].SetChecked(false) })
	idle(t, s)
	act(func() { test.Tap(f.writes.replaceB[0][revs]) })
	v, _ := inOverlays[*valueForm](s.win)
	act(func() {
		v.entry.SetText("5")
		test.Tap(v.okB)
	})
	idle(t, s)
	if !slices.Equal(f.changed, []string{"draft", "revisions"}) {
		t.Fatalf("channels marked %v", f.changed)
	}
	if _, has := f.result.Values["draft"]; has || f.result.Values["revisions"] != 5 || !slices.Equal(f.result.Next, []string{"review"}) {
		t.Errorf("recomputed %+v next %v", f.result.Values, f.result.Next)
	}
	if sc.tl.count() != count {
		t.Error("a what-if stored something before Keep")
	}
	act(func() { test.Tap(f.keepB) })
	idle(t, s)
	if sc.tl.count() != count+1 {
		t.Fatalf("Keep as fork: %d checkpoints, want %d", sc.tl.count(), count+1)
	}
	vw := s.tview()
	if vw == nil || vw.Snap.Metadata.Source != checkpoint.SourceFork || *vw.Snap.Parent != (checkpoint.Ref{ThreadID: "wi-1", CheckpointID: structure}) {
		t.Fatalf("the fork: %+v", vw)
	}
	if vw.Snap.Values["revisions"] != 5 || editsText(vw.Snap.Metadata) != "dropped write's draft, replaced write's revisions" {
		t.Errorf("fork values %+v, edits %q", vw.Snap.Values, editsText(vw.Snap.Metadata))
	}
	i := sc.tl.at(vw.Snap.Ref.CheckpointID)
	if label, _ := sc.tl.text(i); label != "4 fork, 2 edits" || sc.tl.items[i].lane == 0 {
		t.Errorf("timeline label %q on lane %d", label, sc.tl.items[i].lane)
	}
	if !strings.Contains(s.insp.title.Text, "dropped write's draft, replaced write's revisions") {
		t.Errorf("inspector title %q", s.insp.title.Text)
	}
	// The fork goes on from there: its next task is review.
	if !slices.Equal(vw.Snap.Next, []string{"review"}) {
		t.Errorf("next on the fork %v", vw.Snap.Next)
	}
}

// At a checkpoint whose step has not run (the head waiting for an
// answer) the what-if says so instead of inventing writes.
func TestWhatIfOfAStepNotRun(t *testing.T) {
	s := newThread(t, "wi-2")
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	act(s.whatIfDialog)
	idle(t, s)
	f, _ := inOverlays[*whatIfForm](s.win)
	if f.result != nil || !f.keepB.Disabled() || !strings.Contains(f.status.Text, "only a step whose tasks all finished can be edited") {
		t.Errorf("status %q", f.status.Text)
	}
}
