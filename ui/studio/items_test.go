package studio

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/checkpoint/store"
	"github.com/weftstudio/weft/engine"
)

// overlayObjects returns every object of the window's top overlay (an open
// dialog), nil when none is open.
func overlayObjects(w fyne.Window) []fyne.CanvasObject {
	top := w.Canvas().Overlays().Top()
	if top == nil {
		return nil
	}
	return test.LaidOutObjects(top)
}

func overlayButton(w fyne.Window, text string) *widget.Button {
	for _, o := range overlayObjects(w) {
		if b, ok := o.(*widget.Button); ok && b.Text == text {
			return b
		}
	}
	return nil
}

// Item 6: "?" and "!" are drawn from what the store holds, on checkpoints
// never opened in this window.
func TestTimelineMarksFromStoredData(t *testing.T) {
	saver := memory.New()
	first := newStudio(t, saver)
	startThread(t, first, "m-1")
	act(func() { test.Tap(first.tb.run) })
	idle(t, first)
	act(func() { test.Tap(first.ip.items[0].choices[1]) }) // Revise: asked again later
	idle(t, first)
	asked := first.m.scope().tl.prev(first.m.scope().tl.prev(first.m.scope().head))

	// A fresh window on the same store: nothing has been opened in it.
	s := newStudio(t, saver)
	idle(t, s)
	sc := s.m.scope()
	if sc.thread != "m-1" {
		t.Fatalf("thread %q", sc.thread)
	}
	if sc.marks[sc.head] != markInterrupt {
		t.Errorf("the head (waiting for review) is not marked ?")
	}
	if sc.marks[asked] != markInterrupt {
		t.Errorf("the checkpoint whose review was answered with Revise is not marked ? (marks %v)", sc.marks)
	}
	for id, mk := range sc.marks {
		if mk == markError {
			t.Errorf("checkpoint %s marked ! in a thread without failures", id)
		}
	}
	// A failed step: "!".
	act(func() { s.m.setGraph(2) })
	idle(t, s)
	act(func() { s.startThread("f-1", engine.Values{"subjects": []string{}}) })
	idle(t, s)
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	again := newStudio(t, saver)
	act(func() { again.m.setGraph(2) })
	idle(t, again)
	if sc := again.m.scope(); sc.marks[sc.head] != markError {
		t.Errorf("the failed step's checkpoint is not marked ! (marks %v)", sc.marks)
	}
}

// Item 6: Step or Run on an older checkpoint asks; "Continue from here"
// branches from it.
func TestStepOnHistoryAsks(t *testing.T) {
	s := newThread(t, "h-1")
	step(t, s)
	step(t, s)
	count := s.m.scope().tl.count()
	act(func() { s.travel(-1) })
	idle(t, s)
	older := s.m.scope().sel
	act(func() { pressKey(s.win, fyne.KeyF10) })
	idle(t, s)
	fromHere := overlayButton(s.win, "Continue from here")
	if fromHere == nil || s.m.scope().tl.count() != count {
		t.Fatalf("F10 on an older checkpoint did not ask (timeline %d → %d)", count, s.m.scope().tl.count())
	}
	act(func() { test.Tap(fromHere) })
	idle(t, s)
	sc := s.m.scope()
	// A fork checkpoint copies the one shown, then the step.
	if sc.tl.count() != count+2 || sc.tl.lanes != 2 {
		t.Fatalf("Continue from here: %d checkpoints (want %d), %d lanes", sc.tl.count(), count+2, sc.tl.lanes)
	}
	if p := sc.tl.prev(sc.head); p != older && sc.tl.prev(p) != older {
		t.Errorf("the new branch does not start at the checkpoint shown")
	}
}

// Item 7: a refused answer's reason comes first; the placeholder comes from
// the interrupt's own choices; an unclosed brace is named.
func TestInterruptCard(t *testing.T) {
	s := newThread(t, "i-1")
	act(func() { s.splits["split_right"].Offset = 0.3 }) // the user drags the divider
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	if s.splits["split_right"].Offset != 0.3 {
		t.Errorf("the question moved the divider the user set: %.2f", s.splits["split_right"].Offset)
	}
	c := s.ip.items[0]
	if !strings.Contains(c.answer.PlaceHolder, `"approve" or "revise"`) {
		t.Errorf("placeholder %q", c.answer.PlaceHolder)
	}
	act(func() { c.answer.SetText(`{"action": "approve"`); test.Tap(s.ip.resumeB) })
	idle(t, s)
	if !strings.Contains(c.errLbl.Text, "a { is not closed: add } at the end") {
		t.Errorf("unclosed brace: %q", c.errLbl.Text)
	}
	act(func() { c.answer.SetText(`"maybe"`); test.Tap(s.ip.resumeB) })
	idle(t, s)
	c = s.ip.items[0]
	if !c.reason.Visible() || !strings.Contains(c.reason.Text, `review answer maybe`) {
		t.Fatalf("refused answer: reason %q visible %v", c.reason.Text, c.reason.Visible())
	}
	card := s.ip.cards.Objects[0].(*widget.Card)
	objs := card.Content.(*fyne.Container).Objects
	ri := slices.Index(objs, fyne.CanvasObject(c.reason))
	qi := slices.IndexFunc(objs, func(o fyne.CanvasObject) bool {
		return strings.Contains(textIn(o), "Approve this draft")
	})
	if ri < 0 || qi < 0 || ri > qi {
		t.Errorf("reason at %d, question at %d: the reason must come first", ri, qi)
	}
	if s.splits["split_right"].Offset != 0.3 {
		t.Errorf("answering moved the divider the user set: %.2f", s.splits["split_right"].Offset)
	}

	// The agent's transfer question offers its own choices.
	act(func() { s.m.setGraph(1) })
	idle(t, s)
	act(func() { s.startThread("a-1", s.m.graph().Example) })
	idle(t, s)
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	if len(s.ip.items) != 1 {
		t.Fatalf("agent: %d questions", len(s.ip.items))
	}
	if ph := s.ip.items[0].answer.PlaceHolder; !strings.Contains(ph, `"approve" or "reject"`) || strings.Contains(ph, "feedback") {
		t.Errorf("agent placeholder %q", ph)
	}
}

func TestJSONHints(t *testing.T) {
	for in, want := range map[string]string{
		`{"action": "approve"`:   "a { is not closed: add } at the end",
		`["a", "b"`:              "a [ is not closed: add ] at the end",
		`{"a": [1, 2}`:           "a [ is closed by }",
		`"approve`:               `a string is not closed`,
		`approve`:                `text needs quotes, e.g. "approve"`,
		"{\"a\": 1,\n \"b\": }":  "line 2",
		`{"action": "approve"}}`: "there is a } with no { before it",
	} {
		if got := jsonHint(in); !strings.Contains(got, want) {
			t.Errorf("jsonHint(%q) = %q, want it to say %q", in, got, want)
		}
	}
}

// Item 8: values as one-line JSON; where a long string changed; versions
// called versions.
func TestValuesReadable(t *testing.T) {
	for _, c := range []struct {
		v    any
		n    int
		want string
	}{
		{map[string]any{"subject": "otters"}, 80, `{"subject": "otters"}`},
		{[]any{"a", map[string]any{"k": 1.5}}, 80, `["a", {"k": 1.5}]`},
		{[]any{"aaaaaaaaaa", "bbbbbbbbbb", "cccccccccc"}, 24, `3 items: ["aaaaaaaaaa",…`},
		{map[string]any{}, 80, `{}`},
	} {
		if got := preview(c.v, c.n); got != c.want {
			t.Errorf("preview(%v, %d) = %q, want %q", c.v, c.n, got, c.want)
		}
	}
	long := strings.Repeat("Naturalists have catalogued these shores. ", 4)
	r := diffRow{change: change{Path: "draft", Kind: "changed", Old: long + "Draft one ends here.", New: long + "Draft two ends here."}}
	got := r.text()
	if !strings.Contains(got, "one ends") || !strings.Contains(got, "two ends") || !strings.HasPrefix(got, `"…`) {
		t.Errorf("long string diff %q does not show where it changed", got)
	}
	s := newThread(t, "v-1")
	step(t, s)
	if !slices.ContainsFunc(s.insp.verRows, func(r [2]string) bool { return r[0] == "messages" && strings.HasPrefix(r[1], "version ") }) {
		t.Errorf("versions rows %q", s.insp.verRows)
	}
}

// Item 10: Open store has room for a path, Enter opens, and a missing file
// is created only after asking; Delete says Delete.
func TestStoreDialogs(t *testing.T) {
	dir := t.TempDir()
	a := test.NewTempApp(t)
	s := openStudio(t, a, Config{Store: memory.New(), StoreName: "first.db", Graphs: demoGraphs(t),
		OpenStore: func(spec string) (checkpoint.Saver, string, error) {
			st, err := store.Open(t.Context(), spec)
			if err != nil {
				return nil, "", err
			}
			t.Cleanup(func() { st.Close() })
			return st, filepath.Base(spec), nil
		}})
	act(func() { s.Window().Resize(fyne.NewSize(1280, 800)) }) // the graph's layout may arrive meanwhile
	idle(t, s)
	act(s.openStoreDialog)
	entry, _ := inOverlays[*widget.Entry](s.win)
	if w := entry.Size().Width; w < 400 {
		t.Errorf("the path field is %.0f px wide", w)
	}
	path := filepath.Join(dir, "new.db")
	act(func() { entry.SetText(path); entry.OnSubmitted(path) })
	idle(t, s)
	create := overlayButton(s.win, "Create")
	if create == nil {
		t.Fatal("Enter on a missing file did not ask before creating it")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) || s.m.storeName != "first.db" {
		t.Fatalf("the store was created or switched before the answer (%v, %s)", err, s.m.storeName)
	}
	act(func() { test.Tap(create) })
	idle(t, s)
	if s.m.storeName != "new.db" {
		t.Fatalf("after Create: store %q", s.m.storeName)
	}

	startThread(t, s, "gone")
	act(s.deleteThreadDialog)
	if b := overlayButton(s.win, "Delete"); b == nil || b.Importance != widget.DangerImportance {
		t.Errorf("the delete button: %+v", b)
	}
	act(func() { test.Tap(overlayButton(s.win, "Delete")) })
	idle(t, s)
	if s.m.thread() == "gone" || s.m.hasThread("gone") {
		t.Error("the thread was not deleted")
	}
}

// Item 10: Import's rename field shows the whole proposed id; Export
// picture asks for the format and says where the file went.
func TestImportAndExportDialogs(t *testing.T) {
	s := newThread(t, "t-exp")
	var buf bufCloser
	act(func() { s.exportThread("t-exp", &buf, "/tmp/t-exp.weft.json") })
	idle(t, s)
	if !strings.Contains(s.m.note, "/tmp/t-exp.weft.json") {
		t.Errorf("export note %q", s.m.note)
	}
	data := buf.Bytes()
	act(func() { s.importThread(data, "") })
	idle(t, s)
	e, _ := inOverlays[*widget.Entry](s.win)
	if e == nil {
		t.Fatal("no rename question")
	}
	if need := fyne.MeasureText(e.Text, 14, fyne.TextStyle{}).Width; e.Size().Width < need {
		t.Errorf("the rename field is %.0f px for an id of %.0f px", e.Size().Width, need)
	}
	act(func() { test.Tap(overlayButton(s.win, "Cancel")) })
	act(s.exportGraphDialog)
	found := false
	for _, o := range overlayObjects(s.win) {
		if r, ok := o.(*widget.RadioGroup); ok && len(r.Options) == 2 && r.Selected != "" {
			found = true
		}
	}
	if !found {
		t.Error("Export picture does not offer the format")
	}
	var png bufCloser
	act(func() { s.exportGraph(&png, true, "/tmp/graphs/writer.png") })
	idle(t, s)
	if !strings.Contains(s.m.note, "/tmp/graphs/writer.png") {
		t.Errorf("export picture note %q", s.m.note)
	}
}

// Once an answer is sent the question is answered: its choices, field
// and Resume are disabled and it says the answer while the run resumes
// (a second click sent a second resume, and the card looked unanswered);
// the run's result then replaces it.
func TestAnsweredCardLocks(t *testing.T) {
	s := newThread(t, "a-1")
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	if len(s.ip.items) != 1 {
		t.Fatalf("%d questions after Run, want 1", len(s.ip.items))
	}
	c := s.ip.items[0]
	act(func() {
		test.Tap(c.choices[1]) // Revise: the run stops at the next review
		if !s.m.run.Going {
			t.Fatal("no run after the answer")
		}
		for _, b := range append(c.choices, s.ip.resumeB, s.ip.leaveB) {
			if !b.Disabled() {
				t.Errorf("%q enabled while the answer resumes the run", b.Text)
			}
		}
		if !c.answer.Disabled() {
			t.Error("the answer field is enabled while the answer resumes the run")
		}
		if !c.sentLbl.Visible() || !strings.Contains(c.sentLbl.Text, `"revise"`) {
			t.Errorf("the card says %q (shown %v), want the answer sent", c.sentLbl.Text, c.sentLbl.Visible())
		}
	})
	idle(t, s)
	act(func() {
		if len(s.ip.items) != 1 || s.ip.items[0] == c {
			t.Fatalf("%d questions after the revision, want the next review's", len(s.ip.items))
		}
		n := s.ip.items[0]
		if n.answer.Disabled() || n.choices[0].Disabled() || s.ip.resumeB.Disabled() || n.sentLbl.Visible() {
			t.Error("the next question is locked")
		}
	})
}
