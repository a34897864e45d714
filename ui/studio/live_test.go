package studio

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/checkpoint/sqlite"
	"github.com/weftstudio/weft/engine"
)

// eventually polls cond on the UI goroutine until it holds, failing after
// limit with what.
func eventually(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		ok := false
		act(func() { ok = cond() })
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", limit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// workerFinishes plays weft worker: another process's engine on the same
// store resumes thread with the answer left for it.
func workerFinishes(t *testing.T, s *Studio, saver checkpoint.Saver, thread string) {
	t.Helper()
	g := s.m.graphs[0].Graph.WithSaver(saver)
	res, err := g.Invoke(context.Background(), nil, engine.WithThread(thread))
	if err != nil || !res.Done {
		t.Fatalf("worker run: %v %+v", err, res)
	}
}

// leaveAnswer runs a new writer thread to its review and leaves the answer
// for workers.
func leaveAnswer(t *testing.T, s *Studio, thread string) {
	t.Helper()
	startThread(t, s, thread)
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	act(func() { s.ip.items[0].answer.SetText(`"approve"`); test.Tap(s.ip.leaveB) })
	idle(t, s)
	if len(s.ip.items) != 0 || !strings.Contains(s.ip.empty.Text, "worker") {
		t.Fatalf("after leaving the answer: %d questions, %q", len(s.ip.items), s.ip.empty.Text)
	}
}

func threadStatus(s *Studio, id string) string {
	for _, r := range s.m.threads {
		if r.ID == id {
			return r.Status
		}
	}
	return "(no row)"
}

// A worker process finishes a thread the reviewer answered: the window
// shows it within a second, without user action (the SQLite store tells
// of changes by other connections): no question, the thread "done", the
// published draft at the head.
func TestWindowFollowsOtherProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.db")
	mine, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Close()
	worker, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer worker.Close()
	s := openStudio(t, test.NewTempApp(t), Config{Store: mine, StoreName: "shared.db", Graphs: demoGraphs(t)})
	act(func() { s.Window().Resize(fyne.NewSize(1280, 800)) }) // the graph's layout may arrive meanwhile
	t.Cleanup(func() { act(s.stopWatch) })
	idle(t, s)
	leaveAnswer(t, s, "w1")
	eventually(t, 3*time.Second, "the thread row should say waiting", func() bool { return threadStatus(s, "w1") == "waiting" })
	workerFinishes(t, s, worker, "w1")
	start := time.Now()
	eventually(t, 3*time.Second, "the window did not follow the worker", func() bool {
		v := s.tview()
		return v != nil && len(v.Snap.Next) == 0 && v.Snap.Values["published"] != "" && s.m.scope().atHead() &&
			threadStatus(s, "w1") == "done" && len(s.ip.items) == 0
	})
	t.Logf("followed the worker in %v", time.Since(start).Round(time.Millisecond))
	if !strings.Contains(s.sb.String(), "step") || len(s.m.scope().pending()) != 0 {
		t.Errorf("status %q, pending %d", s.sb.String(), len(s.m.scope().pending()))
	}
}

// File → Reload (Ctrl+R) reads the store again, for stores that cannot
// tell of changes.
func TestReloadShowsOtherProcesses(t *testing.T) {
	saver := memory.New()
	s := newStudio(t, saver)
	leaveAnswer(t, s, "w2")
	workerFinishes(t, s, saver, "w2")
	// Ctrl+R, as File → Reload.
	act(func() {
		s.win.Canvas().(fyne.Shortcutable).TypedShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyR, Modifier: fyne.KeyModifierShortcutDefault})
	})
	idle(t, s)
	if v := s.tview(); v == nil || len(v.Snap.Next) != 0 || threadStatus(s, "w2") != "done" {
		t.Fatalf("after Reload: view %v, status %q", v != nil, threadStatus(s, "w2"))
	}
}

// File → Quit is Ctrl+Q, the Linux desktop's key for it: the menu has one
// Quit item with that key (the driver adds none of its own), and the key
// closes the window as its close button does, keeping the panel layout.
func TestQuitKey(t *testing.T) {
	s := newStudio(t, memory.New())
	var quits []*fyne.MenuItem
	for _, item := range s.menus().Items[0].Items {
		if item.IsQuit {
			quits = append(quits, item)
		}
	}
	if len(quits) != 1 || quits[0].Label != "Quit" || quits[0].Shortcut == nil ||
		quits[0].Shortcut.ShortcutName() != (&desktop.CustomShortcut{KeyName: fyne.KeyQ, Modifier: fyne.KeyModifierShortcutDefault}).ShortcutName() {
		t.Fatalf("File menu quit items: %+v, want one Quit on Ctrl+Q", quits)
	}
	if n := len(s.app.Driver().AllWindows()); n == 0 {
		t.Fatal("no window before quitting")
	}
	act(func() {
		s.win.Canvas().(fyne.Shortcutable).TypedShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyQ, Modifier: fyne.KeyModifierShortcutDefault})
	})
	if n := len(s.app.Driver().AllWindows()); n != 0 {
		t.Errorf("%d windows open after Ctrl+Q, want none", n)
	}
	if got := s.app.Preferences().FloatWithFallback("split_threads", -1); got < 0 {
		t.Errorf("the panel layout was not kept on quitting (split_threads %v)", got)
	}
}

// The status line follows the thread when another process moves it (it
// kept "answer stored · a worker will resume this thread" and the old
// step after the worker had finished), and on an older checkpoint it says
// which step it shows and which is the latest, whose state it gives.
func TestStatusLineFollowsOtherProcesses(t *testing.T) {
	saver := memory.New()
	s := newStudio(t, saver)
	leaveAnswer(t, s, "w3")
	if got := s.sb.String(); !strings.Contains(got, "a worker will resume") {
		t.Fatalf("status %q after leaving the answer", got)
	}
	workerFinishes(t, s, saver, "w3")
	act(s.refresh) // what the store's Watch does
	idle(t, s)
	head := s.m.scope().tl.items[s.m.scope().tl.count()-1].step
	want := fmt.Sprintf("thread w3 · step %d · done", head)
	if got := s.sb.String(); !strings.Contains(got, want) {
		t.Errorf("status %q after the worker finished, want it to say %q", got, want)
	}
	act(func() { s.travel(-1) })
	idle(t, s)
	v := s.tview()
	if v == nil || s.m.scope().atHead() {
		t.Fatal("travel back did not leave the head")
	}
	want = fmt.Sprintf("thread w3 · viewing step %d (history) · latest: step %d · done", v.Snap.Metadata.Step, head)
	if got := s.sb.String(); !strings.Contains(got, want) {
		t.Errorf("status %q on an older checkpoint, want it to say %q", got, want)
	}
}
