package studio

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/replay"
	"github.com/weftstudio/weft/replay/replaytest"
)

// restoreOn opens a new studio on saver and graphs, restores ss and waits
// until the restored checkpoint is on screen; it returns the studio and
// what shown was told.
func restoreOn(t *testing.T, saver checkpoint.Saver, graphs []Graph, ss Session) (*Studio, error) {
	t.Helper()
	s := openStudio(t, test.NewTempApp(t), Config{Store: saver, StoreName: "test.db", Graphs: graphs})
	act(func() { s.Window().Resize(fyne.NewSize(1280, 800)) }) // the graph's layout may arrive meanwhile
	got := make(chan error, 1)
	act(func() { s.Restore(ss, func(err error) { got <- err }) })
	idle(t, s)
	select {
	case err := <-got:
		return s, err
	case <-time.After(5 * time.Second):
		t.Fatal("Restore never said the checkpoint is shown")
	}
	return s, nil
}

// A session saved from one window opens another on the same graph,
// thread and (older) checkpoint, with the same size, panel dividers and
// tabs; a session survives JSON.
func TestSessionRestores(t *testing.T) {
	saver := memory.New()
	s := newStudio(t, saver)
	act(func() { s.m.setGraph(1) })
	idle(t, s)
	act(func() { s.startThread("r-1", s.m.graph().Example) })
	idle(t, s)
	step(t, s)
	step(t, s) // tools waits for approval
	act(func() { s.travel(-1) })
	idle(t, s)
	sel := s.m.scope().sel
	if sel == "" || s.m.scope().atHead() {
		t.Fatal("no older checkpoint selected")
	}
	act(func() {
		s.Window().Resize(fyne.NewSize(1100, 700))
		s.insp.tabs.Select(s.insp.callsTab)
		s.tabs.SelectIndex(1)
		s.splits["split_graph"].SetOffset(0.5)
	})
	var ss Session
	act(func() { ss = s.Session() })
	if ss.Graph != "tool agent" || ss.Thread != "r-1" || ss.Checkpoint != sel || ss.Inspector != "Calls" || ss.Bottom != "Events" ||
		ss.Splits["split_graph"] != 0.5 || ss.Width != 1100 || len(ss.Versions) != len(s.m.graphs) {
		t.Fatalf("session %+v", ss)
	}
	b, err := json.Marshal(ss)
	if err != nil {
		t.Fatal(err)
	}
	var back Session
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}

	r, err := restoreOn(t, saver, demoGraphs(t), back)
	if err != nil {
		t.Fatalf("restore: %v", err)
	}
	sc := r.m.scope()
	if r.m.graphIdx != 1 || sc.thread != "r-1" || sc.sel != sel || r.tview() == nil || r.tview().Snap.Ref.CheckpointID != sel {
		t.Fatalf("restored graph %d thread %q checkpoint %q (want %q)", r.m.graphIdx, sc.thread, sc.sel, sel)
	}
	if r.insp.tabs.Selected() != r.insp.callsTab || r.tabs.Selected().Text != "Events" || r.splits["split_graph"].Offset != 0.5 {
		t.Errorf("layout: inspector %q, bottom %q, graph split %v", r.insp.tabs.Selected().Text, r.tabs.Selected().Text, r.splits["split_graph"].Offset)
	}
	if got := r.Window().Canvas().Size(); got.Width != 1100 || got.Height != 700 {
		t.Errorf("window %v", got)
	}
	if len(r.insp.calls.rows) == 0 {
		t.Error("the restored checkpoint's calls are not listed")
	}
	// The thread's head was never selected on the way (no flash of it).
	if !strings.Contains(r.sb.String(), "(history)") {
		t.Errorf("status %q", r.sb.String())
	}
}

// A checkpoint that is gone (pruned, deleted) restores the thread at its
// latest checkpoint and says so; a thread that is gone restores none.
func TestSessionRestoreGone(t *testing.T) {
	saver := memory.New()
	s := newStudio(t, saver)
	startThread(t, s, "g-1")
	head := s.m.scope().head
	r, err := restoreOn(t, saver, demoGraphs(t), Session{Graph: "writing assistant", Thread: "g-1", Checkpoint: "01ffffff-0000-7000-8000-000000000000"})
	if err != nil || r.m.scope().sel != head || !strings.Contains(r.m.note, "is gone; showing the thread's latest") {
		t.Fatalf("gone checkpoint: err %v, selected %q (head %q), note %q", err, r.m.scope().sel, head, r.m.note)
	}
	r, err = restoreOn(t, saver, demoGraphs(t), Session{Graph: "writing assistant", Thread: "nobody", Checkpoint: head})
	if err == nil || r.m.thread() == "nobody" || !strings.Contains(r.m.note, "could not be read") {
		t.Fatalf("gone thread: err %v, thread %q, note %q", err, r.m.thread(), r.m.note)
	}
	if _, err := restoreOn(t, saver, demoGraphs(t), Session{Graph: "no such graph"}); err == nil {
		t.Error("a graph missing from the build restored")
	}
	// A window with no graph has a session too.
	empty := openStudio(t, test.NewTempApp(t), Config{Store: saver})
	idle(t, empty)
	act(func() {
		if ss := empty.Session(); ss.Graph != "" || ss.Thread != "" || len(ss.Versions) != 0 {
			t.Errorf("session of an empty window: %+v", ss)
		}
	})
}

// greeter builds a small graph named "greeter"; with shout, a second node
// and a channel are added, as an edit of the program would.
func greeter(t testing.TB, shout bool) *engine.Graph {
	t.Helper()
	name := engine.LastValue[string]("name")
	greeting := engine.LastValue[string]("greeting")
	chans := []engine.Decl{name, greeting}
	loud := engine.LastValue[bool]("loud")
	if shout {
		chans = append(chans, loud)
	}
	b := engine.NewGraph("greeter", chans...).
		AddNode("greet", func(_ context.Context, s engine.State) (engine.Output, error) {
			return engine.Updates(greeting.Set("Hello, " + name.Get(s))), nil
		}).
		AddEdge(engine.START, "greet")
	if shout {
		b = b.AddNode("shout", func(_ context.Context, s engine.State) (engine.Output, error) {
			return engine.Updates(greeting.Set(strings.ToUpper(greeting.Get(s))), loud.Set(true)), nil
		}).AddEdge("greet", "shout").AddEdge("shout", engine.END)
	} else {
		b = b.AddEdge("greet", engine.END)
	}
	g, err := b.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// After an edit that changes the graph's shape, the checkpoints the older
// version wrote say "old graph" on the timeline, the Build tab says what
// changed and offers to re-run the checkpoint on the new code, which then
// runs the new node.
func TestOlderGraphMarked(t *testing.T) {
	saver := memory.New()
	v1 := []Graph{{Graph: greeter(t, false), Example: engine.Values{"name": "Ada"}}}
	s := openStudio(t, test.NewTempApp(t), Config{Store: saver, Graphs: v1})
	idle(t, s)
	act(func() { s.startThread("e-1", v1[0].Example) })
	idle(t, s)
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	act(func() { s.travel(-1) }) // the checkpoint before greet ran
	idle(t, s)
	var ss Session
	act(func() { ss = s.Session() })
	first := ss.Checkpoint

	v2 := []Graph{{Graph: greeter(t, true), Example: engine.Values{"name": "Ada"}}}
	r, err := restoreOn(t, saver, v2, ss)
	if err != nil {
		t.Fatal(err)
	}
	act(func() {
		r.ShowBuild(Build{N: 2, Running: 2, At: time.Now(), OK: true, Restarted: 800 * time.Millisecond})
	})
	if r.tabs.Selected() != r.buildTab {
		t.Errorf("the Build tab did not open on a changed graph (open: %q)", r.tabs.Selected().Text)
	}
	bp := r.build
	for _, want := range []string{"written by an older version of the graph", "+ node shout", "+ edge greet → shout", "− edge greet → END", "+ channel loud"} {
		if !strings.Contains(bp.change.Text, want) {
			t.Errorf("change %q lacks %q", bp.change.Text, want)
		}
	}
	if !strings.Contains(bp.status.Text, "Running build #2") || !strings.Contains(bp.status.Text, "800 ms after the build finished") {
		t.Errorf("status %q", bp.status.Text)
	}
	// Every checkpoint so far was written by v1.
	olds := 0
	for _, it := range r.m.scope().tl.items {
		if it.olderGraph(r.tl.fp) {
			olds++
		}
	}
	if olds != r.m.scope().tl.count() || olds < 3 {
		t.Errorf("%d of %d checkpoints marked old", olds, r.m.scope().tl.count())
	}
	if bp.rerunB.Disabled() || bp.rerunB.Importance != widget.HighImportance {
		t.Fatal("Re-run with the new code not offered")
	}
	act(func() { test.Tap(bp.rerunB) })
	idle(t, s)
	idle(t, r)
	v := r.tview()
	if v == nil || v.Snap.Values["greeting"] != "HELLO, ADA" || v.Snap.Values["loud"] != true {
		t.Fatalf("re-run on the new code: %v", v)
	}
	if olderGraph(v.Snap.Metadata, r.tl.fp) || r.m.scope().sel == first {
		t.Error("the new branch's head is marked old")
	}
	if strings.Contains(bp.change.Text, "written by an older version") || !strings.Contains(bp.change.Text, "The graph changed since the previous build") {
		t.Errorf("at the new head: %q", bp.change.Text)
	}
}

// A failed build shows its errors in the Build tab, opened by itself,
// with the window still on the build it runs; a tap copies where the
// error is; the next good build clears them.
func TestBuildErrorsShown(t *testing.T) {
	s := newThread(t, "b-1")
	act(func() { s.ShowBuild(Build{Running: 1, N: 1, At: time.Now()}) })
	if s.tabs.Selected() == s.buildTab {
		t.Error("a good build opened the Build tab")
	}
	act(func() { s.ShowBuild(Build{N: 2, Running: 1, Building: true}) })
	if !strings.Contains(s.m.note, "Building #2") {
		t.Errorf("note while building %q", s.m.note)
	}
	errs := []BuildError{
		{File: "./main.go", Path: "/src/app/main.go", Line: 27, Col: 5, Msg: "undefined: greett"},
		{File: "./nodes.go", Path: "/src/app/nodes.go", Line: 3, Msg: "imported and not used: \"fmt\""},
	}
	act(func() {
		s.ShowBuild(Build{N: 2, Running: 1, At: time.Now(), Errors: errs, Output: "# example.com/app\ngo: warning"})
	})
	bp := s.build
	if s.tabs.Selected() != s.buildTab || len(bp.errs) != 2 || len(bp.lines) != 2 {
		t.Fatalf("Build tab open %v, %d errors, %d other lines", s.tabs.Selected() == s.buildTab, len(bp.errs), len(bp.lines))
	}
	if !strings.Contains(bp.status.Text, "Build #2 failed") || !strings.Contains(bp.status.Text, "still runs build #1") ||
		!strings.Contains(s.m.note, "Build #2 failed (2 errors)") {
		t.Errorf("status %q, note %q", bp.status.Text, s.m.note)
	}
	if s.m.scope().thread != "b-1" || s.tview() == nil {
		t.Error("the window lost its thread on a failed build")
	}
	act(func() { bp.list.Select(0) })
	if got := fyne.CurrentApp().Clipboard().Content(); got != "/src/app/main.go:27:5" || !strings.Contains(s.m.note, "Copied /src/app/main.go:27:5") {
		t.Errorf("copied %q, note %q", got, s.m.note)
	}
	if e := errs[1]; e.Where() != "/src/app/nodes.go:3" || e.short() != "./nodes.go:3" {
		t.Errorf("where %q, short %q", e.Where(), e.short())
	}
	act(func() { s.ShowBuild(Build{N: 3, Running: 1, OK: true, At: time.Now()}) })
	if len(bp.errs) != 0 || len(bp.lines) != 0 {
		t.Error("a good build left the errors")
	}
}

// topoDiff names what an edit changed.
func TestTopoDiff(t *testing.T) {
	a, b := greeter(t, false).Topology(), greeter(t, true).Topology()
	got := strings.Join(topoDiff(a, b), "\n")
	want := "+ node shout\n+ edge greet → shout\n+ edge shout → END\n− edge greet → END\n+ channel loud"
	if got != want {
		t.Errorf("diff:\n%s\nwant:\n%s", got, want)
	}
	if d := topoDiff(a, a); len(d) != 1 || !strings.HasPrefix(d[0], "nothing") {
		t.Errorf("no change: %q", d)
	}
}

// File → Save as test writes the thread's bundle under the package's
// testdata/ and a test beside it, in the package's own package clause; the
// bundle replays without a difference against the graph that made it.
func TestSaveThreadAsTest(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	graphs := demoGraphs(t)
	s := openStudio(t, test.NewTempApp(t), Config{Store: memory.New(), Graphs: graphs, Package: dir})
	idle(t, s)
	act(func() { s.m.setGraph(1) })
	idle(t, s)
	act(func() { s.startThread("refund-42", s.m.graph().Example) })
	idle(t, s)
	step(t, s)
	act(s.saveTestDialog)
	f, _ := inOverlays[*saveTestForm](s.win)
	if f == nil || f.name.Text != "TestThreadRefund42" || f.dir.Text != dir || !strings.HasPrefix(f.pkg.Text, "package main") || f.saveB.Disabled() {
		t.Fatalf("dialog: name %q dir %q pkg %q", f.name.Text, f.dir.Text, f.pkg.Text)
	}
	act(func() { f.name.SetText("Testrefund") })
	if !f.saveB.Disabled() || f.errLbl.Text == "" {
		t.Error("a name go test does not run was accepted")
	}
	act(func() { f.dir.SetText(t.TempDir()) })
	if !f.saveB.Disabled() || !strings.Contains(f.errLbl.Text, "holds no Go package") {
		t.Errorf("an empty folder: %q", f.errLbl.Text)
	}
	act(func() {
		f.dir.SetText(dir)
		f.name.SetText("TestRefundThread")
		f.graph.SetText("newAgent(t)")
	})
	act(func() { test.Tap(f.saveB) })
	idle(t, s)
	if !f.done.Visible() || !strings.Contains(f.done.Text, "go test -run '^TestRefundThread$' .") {
		t.Fatalf("after saving: %q / %q", f.done.Text, f.errLbl.Text)
	}
	src, err := os.ReadFile(filepath.Join(dir, "refund_thread_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"package main", "func TestRefundThread(t *testing.T)", `replaytest.Check(t, newAgent(t), "testdata/refund_thread.json", replay.Strict())`} {
		if !strings.Contains(string(src), want) {
			t.Errorf("test file lacks %q:\n%s", want, src)
		}
	}
	rep := replaytest.Check(t, graphs[1].Graph, filepath.Join(dir, "testdata", "refund_thread.json"), replay.Strict())
	if rep == nil {
		t.Fatal("no replay report")
	}
}
