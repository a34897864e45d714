package studio

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/checkpoint/store"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/render"

	_ "modernc.org/sqlite"
)

// A node that panics or fails shows its error, node and input; the studio
// keeps working.
func TestFailingNodeShowsError(t *testing.T) {
	n := engine.LastValue[int]("n")
	g, err := engine.NewGraph("fragile", n).
		AddNode("ok", func(context.Context, engine.State) (engine.Output, error) {
			return engine.Updates(n.Set(2)), nil
		}).
		AddNode("explode", func(_ context.Context, s engine.State) (engine.Output, error) {
			if n.Get(s) == 2 {
				panic("kaboom")
			}
			return nil, errors.New("unreachable")
		}).
		AddEdge(engine.START, "ok").AddEdge("ok", "explode").Compile()
	if err != nil {
		t.Fatal(err)
	}
	a := test.NewTempApp(t)
	s := openStudio(t, a, Config{Store: memory.New(), Graphs: []Graph{{Graph: g, Example: engine.Values{"n": 1}}}})
	idle(t, s)
	startThread(t, s, "boom")
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	if len(s.m.scope().errors) != 1 {
		t.Fatalf("errors %+v", s.m.scope().errors)
	}
	r := s.m.scope().errors[0]
	if r.Node != "explode" || !strings.Contains(r.Msg, "kaboom") || !strings.Contains(r.Input, "state at step") {
		t.Errorf("error row %+v", r)
	}
	if s.tabs.SelectedIndex() != 2 || !strings.Contains(s.m.scope().status, "failed at explode") {
		t.Errorf("tab %d, state %q", s.tabs.SelectedIndex(), s.m.scope().status)
	}
	if st := s.gp.view.Highlight().State("explode"); st != render.StateFailed {
		t.Errorf("explode is %v, want failed", st)
	}
	if rows := s.insp.taskRows; len(rows) != 1 || !strings.Contains(rows[0][0], "explode · pull · failed") || !strings.Contains(rows[0][1], "kaboom") {
		t.Errorf("tasks tab %q", rows)
	}
	if s.m.scope().marks[s.m.scope().head] != markError {
		t.Errorf("timeline mark %q", s.m.scope().marks[s.m.scope().head])
	}
	// Still alive: another run fails the same way, without a crash.
	act(func() { test.Tap(s.tb.step) })
	idle(t, s)
	if len(s.m.scope().errors) != 1 || s.sess.running.Load() {
		t.Errorf("after retry: %d rows, running %v", len(s.m.scope().errors), s.sess.running.Load())
	}
}

// Opening a file that is not a Weft store explains why and keeps the
// current store.
func TestForeignStoreExplained(t *testing.T) {
	dir := t.TempDir()
	foreign := filepath.Join(dir, "contacts.db")
	db, err := sql.Open("sqlite", foreign)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE contacts(name TEXT); INSERT INTO contacts VALUES ('Ann')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	garbage := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(garbage, []byte(strings.Repeat("hello, this is not a database\n", 200)), 0o644); err != nil {
		t.Fatal(err)
	}
	a := test.NewTempApp(t)
	s := openStudio(t, a, Config{Store: memory.New(), StoreName: "first.db", Graphs: demoGraphs(t),
		OpenStore: func(spec string) (checkpoint.Saver, string, error) {
			st, err := store.Open(context.Background(), spec)
			if err != nil {
				return nil, "", err
			}
			t.Cleanup(func() { st.Close() })
			return st, filepath.Base(spec), nil
		}})
	idle(t, s)
	act(func() { s.OpenStore(foreign) })
	idle(t, s)
	if said := overlayText(s.win); !strings.Contains(said, "another application") || s.m.storeName != "first.db" {
		t.Errorf("foreign file: %q (store %s)", said, s.m.storeName)
	}
	act(func() { s.OpenStore(garbage) })
	idle(t, s)
	if said := overlayText(s.win); !strings.Contains(said, "not a database") || s.m.storeName != "first.db" {
		t.Errorf("garbage file: %q", said)
	}
	// A good store switches.
	good := filepath.Join(dir, "weft.db")
	act(func() { s.OpenStore(good) })
	idle(t, s)
	if s.m.storeName != "weft.db" || !strings.Contains(s.sb.String(), "weft.db") {
		t.Errorf("store %q status %q", s.m.storeName, s.sb.String())
	}
}

// Two pending interrupts get a card each and are answered by id together.
func TestSeveralInterruptsByID(t *testing.T) {
	out := engine.List[string]("out")
	ask := func(ctx context.Context, s engine.State) (engine.Output, error) {
		a, err := engine.InterruptAs[string](ctx, map[string]any{"question": "Go ahead?", "options": []string{"yes", "no"}})
		if err != nil {
			return nil, err
		}
		return engine.Updates(out.Add(a)), nil
	}
	g, err := engine.NewGraph("pair", out).AddNode("x", ask).AddNode("y", ask).
		AddEdge(engine.START, "x").AddEdge(engine.START, "y").Compile()
	if err != nil {
		t.Fatal(err)
	}
	s := openStudio(t, test.NewTempApp(t), Config{Store: memory.New(), Graphs: []Graph{{Graph: g, Example: engine.Values{"out": []string{}}}}})
	idle(t, s)
	startThread(t, s, "pair-1")
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	if len(s.ip.items) != 2 {
		t.Fatalf("%d cards, want 2", len(s.ip.items))
	}
	// Resume with one answer missing is refused next to that card.
	act(func() { test.Tap(s.ip.items[0].choices[0]) })
	act(func() { test.Tap(s.ip.resumeB) })
	idle(t, s)
	if !s.ip.items[1].errLbl.Visible() || s.ip.items[0].errLbl.Visible() || len(s.ip.items) != 2 {
		t.Fatalf("missing answer not flagged on the second card")
	}
	act(func() { test.Tap(s.ip.items[1].choices[1]) })
	act(func() { test.Tap(s.ip.resumeB) })
	idle(t, s)
	got, _ := s.tview().Snap.Values["out"].([]string)
	if s.m.scope().status != "done" || len(got) != 2 || !slices.Contains(got, "yes") || !slices.Contains(got, "no") {
		t.Fatalf("after answers: %q out=%v", s.m.scope().status, got)
	}
}

// gatedGraph loops forever; each tick reports on started and waits for
// release (or the run's cancellation).
func gatedGraph(t *testing.T, started chan<- int, release <-chan struct{}) *engine.Graph {
	n := engine.LastValue[int]("n")
	g, err := engine.NewGraph("gated", n).
		AddNode("tick", func(ctx context.Context, s engine.State) (engine.Output, error) {
			select {
			case started <- n.Get(s):
			default:
			}
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return engine.Updates(n.Set(n.Get(s) + 1)), nil
		}).
		AddEdge(engine.START, "tick").AddEdge("tick", "tick").Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestPauseAndCancel(t *testing.T) {
	started := make(chan int, 1)
	release := make(chan struct{})
	g := gatedGraph(t, started, release)
	s := openStudio(t, test.NewTempApp(t), Config{Store: memory.New(), Graphs: []Graph{{Graph: g, Example: engine.Values{"n": 0}}}})
	idle(t, s)
	startThread(t, s, "gate")
	// Pause: the run stops cleanly before the next super-step.
	act(func() { test.Tap(s.tb.run) })
	<-started
	// The live event stream marks the node running on the graph.
	deadline := time.Now().Add(5 * time.Second)
	for running := false; !running; {
		if time.Now().After(deadline) {
			t.Fatal("the running node was never highlighted")
		}
		time.Sleep(10 * time.Millisecond)
		act(func() {
			st := s.gp.view.Highlight().State("tick")
			running = s.m.run.Busy && s.m.scope().live["tick"] && (st == render.StateRunning || st == render.StateNext)
		})
	}
	if s.tb.pause.Disabled() || !s.tb.run.Disabled() {
		t.Error("while running, Pause should be enabled and Run disabled")
	}
	act(func() { test.Tap(s.tb.pause) })
	close(release)
	idle(t, s)
	if !strings.HasPrefix(s.m.scope().status, "paused") || s.tview().Snap.Values["n"] != 1 {
		t.Fatalf("after pause: %q n=%v", s.m.scope().status, s.tview().Snap.Values["n"])
	}
	// Cancel: the node sees its context end.
	release2 := make(chan struct{})
	g2 := gatedGraph(t, started, release2)
	act(func() { s.sess.bind(Graph{Graph: g2}, s.cfg.Store, nil) })
	act(func() { test.Tap(s.tb.run) })
	<-started
	act(s.Cancel)
	idle(t, s)
	if s.m.scope().status != "cancelled" || s.sess.running.Load() {
		t.Fatalf("after cancel: %q", s.m.scope().status)
	}
}

type bufCloser struct{ bytes.Buffer }

func (*bufCloser) Close() error { return nil }

// File → Export thread writes a bundle; Import refuses the same id and
// imports it under a new one.
func TestExportImportThread(t *testing.T) {
	s := newThread(t, "t-x")
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	var buf bufCloser
	act(func() { s.exportThread("t-x", &buf, "t-x.weft.json") })
	idle(t, s)
	if !strings.Contains(buf.String(), `"thread_id": "t-x"`) {
		t.Fatalf("bundle %.300s", buf.String())
	}
	data := buf.Bytes()
	act(func() { s.importThread(data, "") })
	idle(t, s)
	if s.m.thread() != "t-x" {
		t.Fatalf("a refused import must not switch threads (now %q)", s.m.thread())
	}
	act(func() { s.importThread(data, "t-copy") })
	idle(t, s)
	if s.m.thread() != "t-copy" || s.tview() == nil || len(s.tview().Snap.Interrupts) != 1 || len(s.ip.items) != 1 {
		t.Fatalf("imported thread %q not shown with its question", s.m.thread())
	}
	if len(s.m.threads) != 2 {
		t.Errorf("thread list %+v", s.m.threads)
	}
}

func TestExportGraphPicture(t *testing.T) {
	s := newStudio(t, nil)
	var svg, png bufCloser
	act(func() { s.exportGraph(&svg, false, "g.svg"); s.exportGraph(&png, true, "g.png") })
	idle(t, s)
	if !strings.Contains(svg.String(), "<svg") || !strings.Contains(svg.String(), "research") {
		t.Errorf("SVG export %.200q", svg.String())
	}
	if !bytes.HasPrefix(png.Bytes(), []byte("\x89PNG")) {
		t.Errorf("PNG export starts %q", png.Bytes()[:min(8, png.Len())])
	}
}

// Open store on a path in a folder that does not exist says so, naming the
// folder, instead of offering to create a store that cannot be created;
// in an existing folder it still asks before creating.
func TestOpenStoreInAMissingFolder(t *testing.T) {
	dir := t.TempDir()
	a := test.NewTempApp(t)
	s := openStudio(t, a, Config{Store: memory.New(), StoreName: "first.db", Graphs: demoGraphs(t),
		OpenStore: func(spec string) (checkpoint.Saver, string, error) {
			t.Errorf("opened %s", spec)
			return nil, "", errors.New("not expected")
		}})
	idle(t, s)
	missing := filepath.Join(dir, "no-such-folder")
	act(func() { s.openStoreAsking(filepath.Join(missing, "weft.db")) })
	said := overlayText(s.win)
	if !strings.Contains(said, "The folder "+missing+" does not exist") || strings.Contains(said, "Create a new") {
		t.Errorf("a store in a missing folder: %q", said)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the folder was made: %v", err)
	}
	act(func() {
		s.win.Canvas().Overlays().Top().Hide()
		s.win.Canvas().Overlays().Remove(s.win.Canvas().Overlays().Top())
	})
	act(func() { s.openStoreAsking(filepath.Join(dir, "weft.db")) })
	if said := overlayText(s.win); !strings.Contains(said, "Create a new, empty Weft store") {
		t.Errorf("a new store in an existing folder: %q", said)
	}
}

// stallingSearcher is a store whose thread listing, once stall is set,
// waits for release and then fails, as a server that went away does.
type stallingSearcher struct {
	*memory.Saver
	stall   atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (s *stallingSearcher) SearchThreads(ctx context.Context, q checkpoint.ThreadQuery) (checkpoint.ThreadPage, error) {
	if !s.stall.Load() {
		return s.Saver.SearchThreads(ctx, q)
	}
	s.entered <- struct{}{}
	<-s.release
	return checkpoint.ThreadPage{}, errors.New("connection refused")
}

// Work that finishes after the window closed touches nothing: a listing
// that fails then raises no dialog over a window nobody sees.
func TestClosedWindowShowsNothingLate(t *testing.T) {
	st := &stallingSearcher{Saver: memory.New(), entered: make(chan struct{}), release: make(chan struct{})}
	s := newStudio(t, st)
	st.stall.Store(true)
	act(s.refresh)
	<-st.entered // the listing is under way
	act(s.Window().Close)
	close(st.release)
	idle(t, s)
	if txt := overlayText(s.Window()); txt != "" {
		t.Errorf("a closed window shows %q", txt)
	}
}
