package studio

import (
	"os"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/checkpoint/memory"
)

// typeInto replaces an entry's text as typing does (OnChanged fires).
func typeInto(e *keyEntry, text string) {
	act(func() { e.SetText(text) })
}

// revise answers the writer's review with Revise.
func revise(t *testing.T, s *Studio) {
	t.Helper()
	if len(s.ip.items) != 1 {
		t.Fatalf("%d questions waiting", len(s.ip.items))
	}
	act(func() { test.Tap(s.ip.items[0].choices[1]) })
	idle(t, s)
}

// A watch is checked as it is typed (a mistyped channel is named, with
// the one meant), shows its value at the selected checkpoint, and is
// evaluated along the thread: "when did revisions first exceed 1?" is the
// row's summary, and a click there travels to that checkpoint.
func TestWatches(t *testing.T) {
	s := newThread(t, "w-1")
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	revise(t, s)
	w := s.dbg.watch
	typeInto(w.entry, "revisions > ")
	if w.check.Importance != widget.DangerImportance || !strings.Contains(w.check.Text, "the expression ends too soon") {
		t.Errorf("incomplete expression: %q", w.check.Text)
	}
	typeInto(w.entry, "len(nots)")
	if !strings.Contains(w.check.Text, "did you mean notes?") || !strings.Contains(w.check.Text, "column 5") {
		t.Errorf("mistyped channel: %q", w.check.Text)
	}
	act(w.add)
	if len(s.m.dbg.Watches) != 0 {
		t.Fatal("an expression that does not compile was added")
	}
	for _, src := range []string{"revisions > 1", "len(notes)", "notes[7]"} {
		typeInto(w.entry, src)
		if !strings.HasPrefix(w.check.Text, "OK · reads ") {
			t.Errorf("%s: %q", src, w.check.Text)
		}
		act(w.add)
	}
	idle(t, s)
	if len(s.m.dbg.Watches) != 3 || w.entry.Text != "" {
		t.Fatalf("watches %d, entry %q", len(s.m.dbg.Watches), w.entry.Text)
	}
	// At the head: revisions is 2.
	if v, _ := w.valueAt(0); v != "true" {
		t.Errorf("revisions > 1 at the head: %q", v)
	}
	if v, _ := w.valueAt(1); v != "3" {
		t.Errorf("len(notes) at the head: %q", v)
	}
	if v, imp := w.valueAt(2); !strings.Contains(v, "out of range") || imp != widget.DangerImportance {
		t.Errorf("an expression that fails: %q (importance %d)", v, imp)
	}
	// Along the thread: one row per checkpoint.
	sc := s.m.scope()
	if c := sc.dbg.cols; c == nil || c.Running || len(c.Rows) != sc.tl.count() {
		t.Fatalf("columns %+v for %d checkpoints", c, sc.tl.count())
	}
	// The timeline draws a row per watch: the value in each column.
	var texts []string
	act(func() {
		r := s.tl.strip.r
		s.tl.strip.Refresh()
		for _, sl := range r.slots {
			if sl.item < sc.tl.count() {
				texts = append(texts, sl.watch[0].Text)
			}
		}
		if r.wnames[0].Text != "revisions > 1" || r.wnames[1].Text != "len(notes)" || r.wnames[3].Text != "" {
			t.Errorf("watch names %q %q %q", r.wnames[0].Text, r.wnames[1].Text, r.wnames[3].Text)
		}
		if s.tl.height.MinSize().Height <= laneH+laneH/2+2*tlPad {
			t.Error("the timeline did not grow for the watch rows")
		}
	})
	if got := strings.Join(texts, " "); got != "false false false false false false false true" {
		t.Errorf("revisions > 1 along the timeline: %s", got)
	}
	var first string
	act(func() { first = w.summary[0] })
	if first == "" || !strings.HasPrefix(first, "true from step ") {
		t.Fatalf("summary %q", first)
	}
	jump := w.jump[0]
	if r := sc.dbg.cols.Rows[jump]; r.Values[0] != true || sc.dbg.cols.Rows[sc.tl.prev(jump)].Values[0] != false {
		t.Errorf("the checkpoint named is not where it first held")
	}
	act(func() { w.list.Select(0) })
	var obj fyne.CanvasObject
	act(func() {
		obj = w.createRow()
		w.updateRow(0, obj)
		test.Tap(obj.(*fyne.Container).Objects[2].(*fyne.Container).Objects[0].(*keyButton))
	})
	idle(t, s)
	if sc.sel != jump {
		t.Errorf("the summary's click selected %s, want %s", sc.sel, jump)
	}
	if v, _ := w.valueAt(0); v != "true" {
		t.Errorf("at the first true checkpoint: %q", v)
	}
	// A step adds one evaluation, not the thread again.
	act(func() { s.m.selectCheckpoint(sc.head) })
	idle(t, s)
	revise(t, s)
	if c := s.m.scope().dbg.cols; c == nil || len(c.Rows) != s.m.scope().tl.count() {
		t.Errorf("after another revision: %d rows for %d checkpoints", len(c.Rows), s.m.scope().tl.count())
	}
	// Removing a watch.
	act(func() { s.m.removeWatch(2) })
	if len(s.m.dbg.Watches) != 2 {
		t.Errorf("%d watches after removing one", len(s.m.dbg.Watches))
	}
}

// A data breakpoint typed in the Breakpoints tab stops a run after the
// step that changed its channel; the status line names it; Run goes on.
func TestDataBreakpoint(t *testing.T) {
	s := newStudio(t, memory.New())
	b := s.dbg.brk
	typeInto(b.entry, "write")
	if !strings.Contains(b.check.Text, "write is a node: before:write or after:write") {
		t.Errorf("a bare node name: %q", b.check.Text)
	}
	typeInto(b.entry, "change:outlines")
	if !strings.Contains(b.check.Text, `has no channel "outlines"`) {
		t.Errorf("unknown channel: %q", b.check.Text)
	}
	typeInto(b.entry, "change:outline")
	if b.check.Text != "OK · stops after a step that changed outline · Enter adds it" {
		t.Errorf("check %q", b.check.Text)
	}
	act(b.add)
	if len(b.rows) != 1 || b.rows[0].Text != "change:outline" {
		t.Fatalf("rows %+v", b.rows)
	}
	startThread(t, s, "d-1")
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	v := s.tview()
	if v == nil || v.Snap.Values["outline"] == nil || v.Snap.Values["draft"] != nil {
		t.Fatalf("did not stop after the outline was written: %+v", v.Snap.Values)
	}
	if st := s.m.scope().status; st != "breakpoint change:outline · step 3 · next write" {
		t.Errorf("status %q", st)
	}
	if b.rows[0].Detail != "stopped the last run at step 3" {
		t.Errorf("the hit is not marked: %+v", b.rows[0])
	}
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	if len(s.ip.items) != 1 {
		t.Fatalf("Run after the stop did not reach the review (status %q)", s.m.scope().status)
	}
}

// A conditional breakpoint set from the node's context menu stops before
// the node only when its condition holds, and a Run from that stop goes
// past it.
func TestConditionalBreakpointFromMenu(t *testing.T) {
	s := newStudio(t, memory.New())
	act(func() { s.nodeMenu("write", false, fyne.NewPos(300, 300)) })
	m := overlayMenu(s.win)
	if len(m) != 5 || m[0].Label != "Break before write" || m[3].Label != "Break before write if…" {
		t.Fatalf("menu %+v", m)
	}
	act(func() { m[3].Action() })
	f, _ := inOverlays[*condForm](s.win)
	if f == nil || !f.okB.Disabled() {
		t.Fatal("no condition dialog, or Set enabled with no condition")
	}
	typeInto(f.entry, "revisions + 1")
	if !f.okB.Disabled() || !strings.Contains(f.errLbl.Text, "true or false") {
		t.Errorf("a condition that is no condition: %q", f.errLbl.Text)
	}
	typeInto(f.entry, "revisions >= 1")
	act(func() { test.Tap(f.okB) })
	if c := s.m.dbg.nodeCond("write", false); c != "revisions >= 1" {
		t.Fatalf("condition %q", c)
	}
	if !s.gp.view.Highlight().BreakBefore["write"] {
		t.Error("no dot before write")
	}
	act(func() { s.nodeMenu("write", false, fyne.NewPos(300, 300)) })
	if got := overlayMenu(s.win)[3]; got.Label != "Break before write if revisions >= 1…" || !got.Checked {
		t.Errorf("menu item %q checked %v", got.Label, got.Checked)
	}
	startThread(t, s, "c-1")
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	if len(s.ip.items) != 1 {
		t.Fatalf("the first write (revisions 0) stopped: %q", s.m.scope().status)
	}
	revise(t, s)
	if st := s.m.scope().status; st != "breakpoint before:write if revisions >= 1 · step 6 · next write" {
		t.Fatalf("status %q", st)
	}
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	if v := s.tview(); len(s.ip.items) != 1 || v.Snap.Values["revisions"] != 2 {
		t.Fatalf("Run from the stop did not go past it: status %q, %+v", s.m.scope().status, v.Snap.Values)
	}
	// Remove the condition: the dot goes.
	act(func() { s.condDialog("write", false) })
	act(func() {
		f, _ := inOverlays[*condForm](s.win)
		test.Tap(f.removeB)
	})
	if s.gp.view.Highlight().BreakBefore["write"] || len(s.m.dbg.Breaks) != 0 {
		t.Error("the conditional breakpoint stayed")
	}
}

// A condition that fails while a run checks it is reported in the Errors
// tab and does not stop the run.
func TestFailingConditionIsReported(t *testing.T) {
	s := newStudio(t, memory.New())
	if err := s.m.addBreak(`when:notes[5] == "x"`); err != nil {
		t.Fatal(err)
	}
	startThread(t, s, "f-1")
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	if len(s.ip.items) != 1 {
		t.Fatalf("the run stopped at %q", s.m.scope().status)
	}
	errs := s.m.scope().errors
	if len(errs) == 0 || !strings.Contains(errs[0].Node, `notes[5] == "x"`) || !strings.Contains(errs[0].Msg, "out of range") {
		t.Errorf("errors %+v", errs)
	}
}

// Breakpoints and watches are kept per graph between sessions, in a file
// under the config directory; one that cannot be read is moved aside and
// reported, and what no longer fits the graph stays, marked.
func TestBreakpointsAndWatchesKept(t *testing.T) {
	dir := t.TempDir()
	old := debugDir
	debugDir = func() (string, error) { return dir, nil }
	t.Cleanup(func() { debugDir = old })

	s := newStudio(t, memory.New())
	act(func() {
		if err := s.m.addWatch("len(notes)"); err != nil {
			t.Fatal(err)
		}
		if err := s.m.addBreak("change:draft"); err != nil {
			t.Fatal(err)
		}
		s.toggleBreakpoint("review", true)
		if err := s.m.setNodeCond("write", false, "revisions > 2"); err != nil {
			t.Fatal(err)
		}
	})
	s.dbg.writer.wait()
	file := debugFile(dir, "writing assistant")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"before:write if revisions > 2"`) || !strings.Contains(string(data), `"review"`) {
		t.Errorf("file %s", data)
	}
	// The map-reduce graph has none of them.
	act(func() { s.m.setGraph(2) })
	idle(t, s) // before the next studio: they share the driver's caches
	if len(s.m.dbg.Watches) != 0 || len(s.m.dbg.Breaks) != 0 {
		t.Errorf("map-reduce shows the writer's: %+v", s.m.dbg)
	}

	s2 := newStudio(t, memory.New())
	d := s2.m.dbg
	if len(d.Watches) != 1 || d.Watches[0].Src != "len(notes)" || len(d.Breaks) != 2 || !s2.m.brk.After["review"] {
		t.Fatalf("restored watches %+v, breaks %+v, after %v", d.Watches, d.Breaks, s2.m.brk.After)
	}
	if !s2.gp.view.Highlight().BreakBefore["write"] || !s2.gp.view.Highlight().BreakAfter["review"] {
		t.Error("restored breakpoints are not drawn")
	}

	// A breakpoint saved for a channel the graph no longer has stays,
	// marked; a file that is not JSON is moved aside.
	idle(t, s2)
	os.WriteFile(file, []byte(`{"graph": "writing assistant", "breakpoints": ["change:gone"], "watches": ["len(notes)"]}`), 0o644)
	s3 := newStudio(t, memory.New())
	if len(s3.dbg.brk.rows) != 1 || !strings.HasPrefix(s3.dbg.brk.rows[0].Detail, "stops nothing: ") {
		t.Errorf("rows %+v", s3.dbg.brk.rows)
	}
	idle(t, s3)
	os.WriteFile(file, []byte(`{"graph": `), 0o644)
	s4 := newStudio(t, memory.New())
	if _, err := os.Stat(file + ".bad"); err != nil {
		t.Errorf("the unreadable file was not kept aside: %v", err)
	}
	if len(s4.m.dbg.Watches) != 0 {
		t.Error("watches read from an unreadable file")
	}
}
