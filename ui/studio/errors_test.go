package studio

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	s := New(a, Config{Store: memory.New(), Graphs: []Graph{{Graph: g, Example: engine.Values{"n": 1}}}})
	idle(t, s)
	startThread(t, s, "boom")
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	if len(s.errs.rows) != 1 {
		t.Fatalf("errors %+v", s.errs.rows)
	}
	r := s.errs.rows[0]
	if r.Node != "explode" || !strings.Contains(r.Msg, "kaboom") || !strings.Contains(r.Input, "state at step") {
		t.Errorf("error row %+v", r)
	}
	if s.tabs.SelectedIndex() != 2 || !strings.Contains(s.runState, "failed at explode") {
		t.Errorf("tab %d, state %q", s.tabs.SelectedIndex(), s.runState)
	}
	if st := s.gp.view.Highlight().State("explode"); st != render.StateFailed {
		t.Errorf("explode is %v, want failed", st)
	}
	if s.marks[s.headID] != "error" {
		t.Errorf("timeline mark %q", s.marks[s.headID])
	}
	// Still alive: another run fails the same way, without a crash.
	act(func() { test.Tap(s.tb.step) })
	idle(t, s)
	if len(s.errs.rows) != 1 || s.sess.running.Load() {
		t.Errorf("after retry: %d rows, running %v", len(s.errs.rows), s.sess.running.Load())
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
	s := New(a, Config{Store: memory.New(), StoreName: "first.db", Graphs: demoGraphs(t),
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
	if !strings.Contains(s.lastExplain, "another application") || s.storeName != "first.db" {
		t.Errorf("foreign file: %q (store %s)", s.lastExplain, s.storeName)
	}
	act(func() { s.OpenStore(garbage) })
	idle(t, s)
	if !strings.Contains(s.lastExplain, "not a database") || s.storeName != "first.db" {
		t.Errorf("garbage file: %q", s.lastExplain)
	}
	// A good store switches.
	good := filepath.Join(dir, "weft.db")
	act(func() { s.OpenStore(good) })
	idle(t, s)
	if s.storeName != "weft.db" || !strings.Contains(s.sb.text.Text, "weft.db") {
		t.Errorf("store %q status %q", s.storeName, s.sb.text.Text)
	}
}
