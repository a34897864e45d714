package studio

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/weftstudio/weft/checkpoint/longterm"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/examples"
)

// The tool agent remembers a preference in the long-term store; the
// long-term store's window shows the namespace, the item and its value, filters on values, and
// a later thread's answer uses what was remembered.
func TestLongTermWindowShowsWhatTheAgentRemembered(t *testing.T) {
	lt := longterm.NewMemory(longterm.Config{})
	s := openStudio(t, test.NewTempApp(t), Config{Store: memory.New(), StoreName: "test.db", Graphs: demoGraphs(t), LongTerm: lt})
	idle(t, s)
	act(func() { s.m.setGraph(1) }) // the tool agent
	idle(t, s)
	say := func(thread, text string) string {
		t.Helper()
		act(func() {
			s.startThread(thread, engine.Values{"messages": []engine.Message{{ID: "u", Role: engine.RoleUser, Content: text}}})
		})
		idle(t, s)
		act(func() { test.Tap(s.tb.run) })
		idle(t, s)
		msgs := examples.AgentMessages.Get(engine.StateOf(s.tview().Snap.Values))
		return msgs[len(msgs)-1].Content
	}
	if got := say("m-1", "Remember that I prefer euros"); got != "Done. Remembered: I prefer euros." {
		t.Fatalf("the agent answered %q", got)
	}
	act(s.openLongTerm)
	idle(t, s)
	p := s.lts
	if len(p.read.namespaces) != 1 || p.read.namespaces[0].String() != "users.demo.preferences" || len(p.read.items) != 1 {
		t.Fatalf("the panel read %+v (status %q)", p.read, p.status.Text)
	}
	if !strings.Contains(p.value.Text, `"preference": "I prefer euros"`) || !strings.Contains(p.facts.Text, "never expires") {
		t.Errorf("the item shows %q / %q", p.facts.Text, p.value.Text)
	}
	if p.status.Text != "1 namespace · 1 item in users.demo.preferences" {
		t.Errorf("status %q", p.status.Text)
	}
	// A filter on values; a filter that is not JSON is refused.
	act(func() {
		p.filterE.SetText(`{"preference": "tea"}`)
		p.applyFilter()
	})
	idle(t, s)
	if len(p.read.items) != 0 || !strings.Contains(p.status.Text, "matching the filter") {
		t.Errorf("a filter nothing matches: %d items, %q", len(p.read.items), p.status.Text)
	}
	act(func() {
		p.filterE.SetText(`preference = tea`)
		p.applyFilter()
	})
	if !strings.HasPrefix(p.status.Text, "The filter is not a JSON object") {
		t.Errorf("a bad filter: %q", p.status.Text)
	}
	act(func() {
		p.filterE.SetText("")
		p.applyFilter()
	})
	idle(t, s)
	// An item put elsewhere (another process, a run on a worker) shows on
	// Refresh, with its expiry.
	if err := lt.Put(context.Background(), examples.PreferencesNamespace, "k2", map[string]any{"preference": "short answers"}, longterm.WithTTL(time.Hour)); err != nil {
		t.Fatal(err)
	}
	act(func() { test.Tap(p.refresh) })
	idle(t, s)
	if len(p.read.items) != 2 || !strings.Contains(itemRow(p.read.items[0]), "k2 · updated ") || !strings.Contains(itemRow(p.read.items[0]), "expires") {
		t.Errorf("after Refresh: %d items, first %q", len(p.read.items), itemRow(p.read.items[0]))
	}
	// Another namespace, picked in the list of namespaces.
	if err := lt.Put(context.Background(), longterm.Namespace{"notes"}, "n1", map[string]any{"text": "hi"}); err != nil {
		t.Fatal(err)
	}
	act(func() { test.Tap(p.refresh) })
	idle(t, s)
	if got := p.nsPick.Options; len(got) != 2 || got[0] != "notes" {
		t.Fatalf("namespaces offered %q", got)
	}
	act(func() { p.nsPick.SetSelected("notes") })
	idle(t, s)
	if len(p.read.items) != 1 || p.read.items[0].Key != "n1" || !strings.Contains(p.value.Text, `"text": "hi"`) {
		t.Errorf("the notes namespace shows %+v", p.read.items)
	}
	// The studio's keys work from the store's window: F5 runs a new thread,
	// and the window shows the item that run put once it ends.
	act(func() { p.nsPick.SetSelected("users.demo.preferences") })
	idle(t, s)
	act(func() {
		s.startThread("m-3", engine.Values{"messages": []engine.Message{{ID: "u", Role: engine.RoleUser, Content: "Remember that I like tea"}}})
	})
	idle(t, s)
	act(func() { s.ltsWin.Canvas().OnTypedKey()(&fyne.KeyEvent{Name: fyne.KeyF5}) })
	idle(t, s)
	if n := len(p.read.items); s.m.scope().status != "done" || n != 3 {
		t.Errorf("F5 in the store's window: status %q, %d items of users.demo.preferences shown after the run, want 3", s.m.scope().status, n)
	}
	if got := say("m-2", "What is my balance?"); !strings.HasSuffix(got, "(I remember: I prefer euros; short answers; I like tea.)") {
		t.Errorf("a later thread answered %q", got)
	}
}

// A store that keeps no long-term items says so in the window.
func TestLongTermWindowWithoutALongTermStore(t *testing.T) {
	s := newStudio(t, memory.New())
	act(s.openLongTerm)
	idle(t, s)
	if !s.lts.empty.Visible() || !strings.Contains(s.lts.empty.Text, "keeps no long-term items") {
		t.Errorf("the tab shows %q (visible %v)", s.lts.empty.Text, s.lts.empty.Visible())
	}
}

// The long-term store's window says which task of which thread wrote an
// item and lists its changes; Show that step selects that step's
// checkpoint in the main window; "As at the selected checkpoint" shows the
// store as it was at the checkpoint selected there, following the
// selection.
func TestLongTermWindowProvenanceAndPast(t *testing.T) {
	lt := longterm.NewMemory(longterm.Config{})
	s := openStudio(t, test.NewTempApp(t), Config{Store: memory.New(), StoreName: "test.db", Graphs: demoGraphs(t), LongTerm: lt})
	idle(t, s)
	act(func() { s.m.setGraph(1) }) // the tool agent
	idle(t, s)
	remember := func(thread, text string) {
		t.Helper()
		act(func() {
			s.startThread(thread, engine.Values{"messages": []engine.Message{{ID: "u", Role: engine.RoleUser, Content: text}}})
		})
		idle(t, s)
		act(func() { test.Tap(s.tb.run) })
		idle(t, s)
	}
	remember("p-1", "Remember that I prefer euros")
	first := s.m.scope().tl.items // p-1's timeline, oldest first
	remember("p-2", "Remember that I like tea")
	act(s.openLongTerm)
	idle(t, s)
	p := s.lts
	if len(p.read.items) != 2 {
		t.Fatalf("the window lists %d items, want 2 (status %q)", len(p.read.items), p.status.Text)
	}
	var euros int
	for i, it := range p.read.items {
		if strings.Contains(it.Value["preference"].(string), "euros") {
			euros = i
		}
	}
	act(func() { p.itList.Select(euros) })
	idle(t, s)
	w := p.read.items[euros].Writer
	if w.ThreadID != "p-1" || w.Node != "tools" || w.CheckpointID == "" {
		t.Fatalf("the euros item was written by %+v, want the tools node of thread p-1", w)
	}
	if want := fmt.Sprintf("Written by node tools (task %s) at step %d of thread p-1.", shortID(w.TaskID), w.Step); p.writer.Text != want {
		t.Errorf("writer line %q, want %q", p.writer.Text, want)
	}
	if !p.goStep.Visible() || !strings.Contains(p.history.Text, "put by node tools") || len(p.changes) != 1 {
		t.Errorf("changes %q (%d), Show that step visible %v", p.history.Text, len(p.changes), p.goStep.Visible())
	}
	// Show that step: thread p-1, at the checkpoint the tools task ran from.
	act(func() { test.Tap(p.goStep) })
	idle(t, s)
	if sc := s.m.scope(); sc.thread != "p-1" || sc.sel != w.CheckpointID {
		t.Fatalf("Show that step selected thread %q checkpoint %q, want p-1 %q", sc.thread, sc.sel, w.CheckpointID)
	}
	// As at the selected checkpoint: at the tools step's start the euros
	// item was not there yet, and neither was p-2's.
	act(func() { p.asAt.SetChecked(true) })
	idle(t, s)
	if len(p.read.items) != 0 || p.read.at == nil || !strings.HasPrefix(p.status.Text, "No items as at step ") {
		t.Errorf("as at the tools step's start: %d items, status %q", len(p.read.items), p.status.Text)
	}
	// The selection moves to p-1's head: the euros item, but not the tea.
	act(func() { s.m.selectCheckpoint(first[len(first)-1].id) })
	idle(t, s)
	if len(p.read.items) != 1 || !strings.Contains(p.value.Text, "euros") || !strings.Contains(p.status.Text, "as at step") {
		t.Errorf("as at p-1's head: %+v, status %q", p.read.items, p.status.Text)
	}
	// Unchecked, the store as it is now.
	act(func() { p.asAt.SetChecked(false) })
	idle(t, s)
	if len(p.read.items) != 2 || p.read.at != nil {
		t.Errorf("now: %d items", len(p.read.items))
	}
	// A change made outside a run says so.
	if err := lt.Put(context.Background(), examples.PreferencesNamespace, "manual", map[string]any{"preference": "by hand"}); err != nil {
		t.Fatal(err)
	}
	act(func() { test.Tap(p.refresh) })
	idle(t, s)
	for i, it := range p.read.items {
		if it.Key == "manual" {
			act(func() { p.itList.Select(i) })
		}
	}
	idle(t, s)
	if !strings.Contains(p.writer.Text, "outside a run") || p.goStep.Visible() {
		t.Errorf("a put outside a run: %q (Show that step visible %v)", p.writer.Text, p.goStep.Visible())
	}
}

// The window searches by meaning when the store has an embedder: the
// namespace's items ranked most alike first, each row with its score; a
// store without one says what would give it one, and so does a search by
// meaning as at a past checkpoint.
func TestLongTermWindowSearchesByMeaning(t *testing.T) {
	ctx := context.Background()
	lt := longterm.NewMemory(longterm.Config{Embedder: longterm.HashEmbedder{Dims: 64}, Fields: []string{"text"}})
	ns := longterm.Namespace{"users", "ada"}
	for k, text := range map[string]string{"drink": "likes green tea", "pet": "has a cat named Kelp", "sport": "swims in the sea"} {
		if err := lt.Put(ctx, ns, k, map[string]any{"text": text}); err != nil {
			t.Fatal(err)
		}
	}
	s := openStudio(t, test.NewTempApp(t), Config{Store: memory.New(), StoreName: "test.db", Graphs: demoGraphs(t), LongTerm: lt})
	idle(t, s)
	act(s.openLongTerm)
	idle(t, s)
	p := s.lts
	act(func() {
		p.queryE.SetText("which tea")
		p.queryE.OnSubmitted(p.queryE.Text)
	})
	idle(t, s)
	if len(p.read.items) != 3 || p.read.items[0].Key != "drink" || !strings.Contains(itemRow(p.read.items[0]), "alike") ||
		!strings.HasSuffix(p.status.Text, "most alike first") {
		t.Fatalf("search by meaning: %+v, status %q", p.read.items, p.status.Text)
	}
	// As at a checkpoint, a search by meaning is refused, saying why.
	act(func() { s.m.setGraph(1) })
	idle(t, s)
	act(func() {
		s.startThread("q-1", engine.Values{"messages": []engine.Message{{ID: "u", Role: engine.RoleUser, Content: "hello"}}})
	})
	idle(t, s)
	act(func() { p.asAt.SetChecked(true) })
	idle(t, s)
	if !strings.Contains(p.status.Text, "embeddings of past values are not kept") {
		t.Errorf("a search by meaning as at a checkpoint: status %q", p.status.Text)
	}

	bare := longterm.NewMemory(longterm.Config{})
	if err := bare.Put(ctx, ns, "drink", map[string]any{"text": "likes green tea"}); err != nil {
		t.Fatal(err)
	}
	plain := openStudio(t, test.NewTempApp(t), Config{Store: memory.New(), StoreName: "test.db", Graphs: demoGraphs(t), LongTerm: bare})
	idle(t, plain)
	act(plain.openLongTerm)
	idle(t, plain)
	act(func() {
		plain.lts.queryE.SetText("which tea")
		plain.lts.queryE.OnSubmitted(plain.lts.queryE.Text)
	})
	idle(t, plain)
	if got := plain.lts.status.Text; !strings.Contains(got, "no embedder") || !strings.Contains(got, "WEFT_EMBEDDINGS") {
		t.Errorf("a search by meaning without an embedder: status %q", got)
	}
}
