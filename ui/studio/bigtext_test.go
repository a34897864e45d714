package studio

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/inspect"
)

// longestText walks o's widget tree (renderers included, hidden objects
// too) and returns the longest text any text object holds.
func longestText(o fyne.CanvasObject) string {
	var best string
	var walk func(fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch x := o.(type) {
		case nil:
		case *canvas.Text:
			if len(x.Text) > len(best) {
				best = x.Text
			}
		case *fyne.Container:
			for _, c := range x.Objects {
				walk(c)
			}
		case fyne.Widget:
			for _, c := range test.WidgetRenderer(x).Objects() {
				walk(c)
			}
		}
	}
	walk(o)
	return best
}

// assertBounded fails when any text object of w's content or overlays
// holds more than maxDrawnText bytes.
func assertBounded(t *testing.T, what string, w fyne.Window) {
	t.Helper()
	objs := []fyne.CanvasObject{w.Canvas().Content()}
	objs = append(objs, w.Canvas().Overlays().List()...)
	for _, o := range objs {
		if s := longestText(o); len(s) > maxDrawnText {
			t.Errorf("%s: a text of %s is drawn (%.40q…)", what, byteSize(len(s)), s)
		}
	}
}

// bigText is n bytes of words on one line, ending in a marker.
func bigText(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n-8; i++ {
		b.WriteString("word")
		b.WriteString(strconv.Itoa(i % 10))
		b.WriteByte(' ')
	}
	b.WriteString("THE-END")
	return b.String()
}

// bigSize is the value size the tests use: 10 MB, or WEFT_BIG_VALUE
// bytes.
func bigSize(t *testing.T) int {
	if s := os.Getenv("WEFT_BIG_VALUE"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("WEFT_BIG_VALUE=%q: not a number of bytes", s)
		}
		return n
	}
	return 10 << 20
}

// A 10 MB value draws as a preview in every panel, the state tree, chat,
// diff, tasks, JSON, versions, the interrupt card and a comparison; the
// whole of it is a Copy away and shows in a viewer that draws only rows.
func TestBigValuesDrawBounded(t *testing.T) {
	test.NewTempApp(t)
	big := bigText(bigSize(t))
	m := newModel(demoGraphs(t), memory.New(), "big.db")
	m.setGraph(0)
	a := &actions{}
	in := newInspector(m, a)
	ip := newInterruptPanel(m, a)
	w := test.NewTempWindow(t, container.NewHSplit(in, ip))
	w.Resize(fyne.NewSize(1280, 800))
	ask := map[string]any{"question": big, "draft": big, "options": []any{"approve", "revise"}}
	parent := &engine.Snapshot{Values: engine.Values{"topic": "x", "draft": "short"}}
	snap := &engine.Snapshot{
		Ref: checkpoint.Ref{ThreadID: "x", CheckpointID: "02"},
		Values: engine.Values{"topic": big, "draft": big + " more", "notes": []string{big, "b"},
			"messages": []engine.Message{{ID: "u", Role: engine.RoleUser, Content: big},
				{ID: "a", Role: engine.RoleAssistant, Content: "ok", ToolCalls: []engine.ToolCall{{ID: "c1", Name: "look", Args: `{"q":"` + big + `"}`}}},
				{ID: "r", Role: engine.RoleTool, ToolCallID: "c1", Content: big}}},
		Tasks:      []engine.TaskState{{ID: "t1", Name: "review", Input: big, Interrupts: []engine.PendingInterrupt{{ID: "i1", Node: "review", Value: ask}}}},
		Interrupts: []engine.PendingInterrupt{{ID: "i1", Node: "review", Value: ask}},
		CreatedAt:  time.Now(),
	}
	m.update(func() {
		m.setThread("x")
		sc := m.scope()
		m.mergeHeaders(sc, []checkpoint.Header{header("01", "", -1), header("02", "01", 0)})
		m.selectCheckpoint("02")
		m.setView(sc, "02", &view{Latest: true, Snap: snap, Parent: parent})
	})
	if len(ip.items) != 1 {
		t.Fatalf("%d questions shown", len(ip.items))
	}
	for i, ti := range in.tabs.Items {
		in.tabs.SelectIndex(i)
		assertBounded(t, ti.Text+" tab", w)
	}
	// The JSON tab holds all of it: search finds the end, Copy all copies it.
	in.tabs.SelectIndex(in.tabIndex("JSON"))
	in.json.find.SetText("THE-END")
	in.json.next()
	if !strings.HasPrefix(in.json.status.Text, "line ") {
		t.Errorf("search for the end: %q", in.json.status.Text)
	}
	assertBounded(t, "JSON tab at the end", w)
	in.json.list.Select(0) // the row found shows
	want := prettyJSON(in.values)
	if in.json.text != want {
		t.Errorf("the JSON tab holds %s, want %s", byteSize(len(in.json.text)), byteSize(len(want)))
	}
	// The interrupt's question: a preview, Copy copies the whole.
	q := findValueView(ip, big)
	if q == nil {
		t.Fatal("no cut preview of the question in the interrupt card")
	}
	tapButton(t, q, "Copy")
	if got := fyne.CurrentApp().Clipboard().Content(); got != big {
		t.Errorf("Copy put %s on the clipboard, want %s", byteSize(len(got)), byteSize(len(big)))
	}
	// Show all opens the whole value in a viewer over the window.
	tapButton(t, q, "Show all")
	top := w.Canvas().Overlays().Top()
	if top == nil {
		t.Fatal("Show all opened nothing")
	}
	assertBounded(t, "Show all", w)

	// A comparison of two 10 MB texts differing at their end.
	ops := inspect.DiffWords(big+" a", big+" b")
	row := channelDiffRow(&timeline{}, inspect.ChannelDiff{Channel: "draft", Words: ops})
	w2 := test.NewTempWindow(t, container.NewVScroll(row))
	w2.Resize(fyne.NewSize(1000, 700))
	assertBounded(t, "compare", w2)
	if !strings.Contains(longestText(row), "THE-END") && !strings.Contains(fmt.Sprint(richTexts(row)), "THE-END") {
		t.Errorf("the compare row does not show where the texts differ: %q", richTexts(row))
	}
}

// findValueView finds the valueView showing full in o's tree.
func findValueView(o fyne.CanvasObject, full string) *valueView {
	switch x := o.(type) {
	case *valueView:
		if x.full == full {
			return x
		}
	case *fyne.Container:
		for _, c := range x.Objects {
			if v := findValueView(c, full); v != nil {
				return v
			}
		}
	case fyne.Widget:
		for _, c := range test.WidgetRenderer(x).Objects() {
			if v := findValueView(c, full); v != nil {
				return v
			}
		}
	}
	return nil
}

// tapButton taps the button labelled text in o's tree.
func tapButton(t *testing.T, o fyne.CanvasObject, text string) {
	t.Helper()
	var find func(fyne.CanvasObject) *widget.Button
	find = func(o fyne.CanvasObject) *widget.Button {
		switch x := o.(type) {
		case *widget.Button:
			if x.Text == text {
				return x
			}
		case *fyne.Container:
			for _, c := range x.Objects {
				if b := find(c); b != nil {
					return b
				}
			}
		case fyne.Widget:
			for _, c := range test.WidgetRenderer(x).Objects() {
				if b := find(c); b != nil {
					return b
				}
			}
		}
		return nil
	}
	b := find(o)
	if b == nil {
		t.Fatalf("no %q button", text)
	}
	test.Tap(b)
}

// richTexts lists the texts of o's rich texts' segments.
func richTexts(o fyne.CanvasObject) []string {
	var out []string
	switch x := o.(type) {
	case *widget.RichText:
		for _, s := range x.Segments {
			if ts, ok := s.(*widget.TextSegment); ok {
				out = append(out, ts.Text)
			}
		}
	case *fyne.Container:
		for _, c := range x.Objects {
			out = append(out, richTexts(c)...)
		}
	}
	return out
}

// The viewer cuts lines into rows at character boundaries and numbers
// lines; rows rebuild the text exactly.
func TestTextViewerRows(t *testing.T) {
	test.NewTempApp(t)
	tv := newTextViewer("t")
	long := strings.Repeat("é", chunkBytes) // two bytes each: a row ends mid-line
	text := "one\n" + long + "\n\nlast\n"
	tv.set(text)
	var b strings.Builder
	lines := 0
	for i := range tv.starts {
		r := tv.row(i)
		if len(r) > chunkBytes {
			t.Errorf("row %d is %d bytes", i, len(r))
		}
		if tv.lineNo[i] > 0 {
			if i > 0 {
				b.WriteByte('\n')
			}
			lines++
			if tv.lineNo[i] != lines {
				t.Errorf("row %d numbered %d, want %d", i, tv.lineNo[i], lines)
			}
		}
		b.WriteString(r)
	}
	if got := b.String() + "\n"; got != text {
		t.Errorf("rows rebuild %q, want %q", got, text)
	}
	if lines != 4 {
		t.Errorf("%d lines", lines)
	}
	tv.find.SetText("last")
	tv.next()
	if tv.status.Text != "line 4, column 1 · 1 match in the text" {
		t.Errorf("status %q", tv.status.Text)
	}
}

// boundText keeps whole runes and stops at the line or rune budget.
func TestBoundText(t *testing.T) {
	for _, c := range []struct {
		in    string
		r, l  int
		want  string
		isCut bool
	}{
		{"abc", 3, 1, "abc", false},
		{"abcd", 3, 1, "abc", true},
		{"a\nb\nc", 10, 2, "a\nb", true},
		{"éé", 1, 1, "é", true},
	} {
		got, cut := boundText(c.in, c.r, c.l)
		if got != c.want || cut != c.isCut {
			t.Errorf("boundText(%q, %d, %d) = %q, %v", c.in, c.r, c.l, got, cut)
		}
	}
}

// Help → About names the build.
func TestHelpAbout(t *testing.T) {
	s := newStudio(t, nil)
	menu := s.Window().MainMenu()
	help := menu.Items[len(menu.Items)-1]
	item := help.Items[len(help.Items)-1]
	if item.Label != "About Weft Studio" {
		t.Fatalf("last Help item %q", item.Label)
	}
	act(item.Action)
	top := s.Window().Canvas().Overlays().Top()
	if top == nil {
		t.Fatal("About opened nothing")
	}
	var texts []string
	var walk func(fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch x := o.(type) {
		case *canvas.Text:
			texts = append(texts, x.Text)
		case *fyne.Container:
			for _, c := range x.Objects {
				walk(c)
			}
		case fyne.Widget:
			for _, c := range test.WidgetRenderer(x).Objects() {
				walk(c)
			}
		}
	}
	walk(top)
	if all := strings.Join(texts, "\n"); !strings.Contains(all, "Weft Studio ") || !strings.Contains(all, "built with go") {
		t.Errorf("About says %q", all)
	}
}

// Edit & fork on a checkpoint holding a megabyte: the editor never gets
// the value (a Fyne entry lays out all of it), the fork writes it as it
// is, and a file can replace it.
func TestForkDialogOnABigValue(t *testing.T) {
	saver := memory.New()
	s := newStudio(t, saver)
	big := bigText(1 << 20)
	act(func() { s.startThread("big-1", map[string]any{"topic": big}) })
	idle(t, s)
	act(s.editDialog)
	f, _ := inOverlays[*forkForm](s.win)
	if f == nil {
		t.Fatal("no fork dialog")
	}
	act(func() { f.ch.SetSelected("topic") })
	assertBounded(t, "the fork dialog on a 1 MB topic", s.win)
	if f.editor.Text != "" || !f.editor.Disabled() || f.fromFile.Hidden || !strings.Contains(f.hint.Text, "too large to edit here") {
		t.Fatalf("editor %d bytes (disabled %v), Replace from file hidden %v, hint %q", len(f.editor.Text), f.editor.Disabled(), f.fromFile.Hidden, f.hint.Text)
	}
	if f.forkB.Disabled() {
		t.Fatalf("Fork disabled: %q", f.errLbl.Text)
	}
	act(func() { f.replaceFrom("notes.txt", []byte("a topic from a file")) })
	act(func() { test.Tap(f.forkB) })
	idle(t, s)
	st, err := s.m.graph().Graph.WithSaver(saver).GetState(t.Context(), engine.WithThread("big-1"))
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Values["topic"]; got != "a topic from a file" || st.Metadata.Source != checkpoint.SourceUpdate {
		t.Errorf("after the fork: topic %.40q (source %s), want the file's text", fmt.Sprint(got), st.Metadata.Source)
	}
}
