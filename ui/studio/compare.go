package studio

// Branch compare: two checkpoints of the thread side by side (two branch
// heads, or a checkpoint and its replay): where their branches part, the
// steps each took since, and every channel that differs, strings diffed
// word by word, with the task that wrote each side's value
// (inspect.Compare, off the UI goroutine).

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/inspect"
)

// compareForm is the compare dialog.
type compareForm struct {
	composite
	dlg    dialog.Dialog
	a, b   *widget.Select
	ids    []string // the checkpoints the selects offer, in their order
	status *widget.Label
	body   *fyne.Container
	cmp    *inspect.Comparison // the comparison shown
	seq    int
	quiet  bool
}

// branchHeads returns the checkpoints of t with no child: the head of
// each branch, main branch first.
func branchHeads(t *timeline) []string {
	hasChild := make([]bool, len(t.items))
	for _, it := range t.items {
		if it.parent >= 0 {
			hasChild[it.parent] = true
		}
	}
	var heads []string
	for lane := 0; lane < max(1, t.lanes); lane++ {
		for i := len(t.items) - 1; i >= 0; i-- {
			if t.items[i].lane == lane && !hasChild[i] {
				heads = append(heads, t.id(i))
				break
			}
		}
	}
	return heads
}

// pointLabel names checkpoint id of t for the compare dialog: its label
// on the timeline and its branch.
func pointLabel(t *timeline, id string) string {
	i := t.at(id)
	if i < 0 {
		return shortID(id)
	}
	label, _ := t.text(i)
	branch := "main branch"
	if lane := t.items[i].lane; lane > 0 {
		branch = fmt.Sprintf("branch %d", lane+1)
	}
	return fmt.Sprintf("%s · %s · …%s", label, branch, id[max(0, len(id)-6):])
}

// compareDialog compares checkpoints a and b of the current thread; ""
// for b picks the newest branch head that is not a (or a's branch).
func (s *Studio) compareDialog(a, b string) {
	sc := s.m.scope()
	t := sc.tl
	if t.count() == 0 {
		return
	}
	if a == "" {
		a = sc.sel
	}
	heads := branchHeads(t)
	if b == "" {
		for k := len(heads) - 1; k >= 0; k-- {
			if heads[k] != a && !onBranchOf(t, heads[k], a) {
				b = heads[k]
				break
			}
		}
		if b == "" {
			b = sc.head
		}
	}
	f := &compareForm{}
	for _, id := range append([]string{a, b}, heads...) {
		if id != "" && !slices.Contains(f.ids, id) {
			f.ids = append(f.ids, id)
		}
	}
	var labels []string
	for _, id := range f.ids {
		labels = append(labels, pointLabel(t, id))
	}
	pick := func(string) {
		if !f.quiet {
			s.runCompare(sc, f)
		}
	}
	f.a = widget.NewSelect(labels, pick)
	f.b = widget.NewSelect(labels, pick)
	f.quiet = true
	f.a.SetSelectedIndex(0)
	f.b.SetSelectedIndex(slices.Index(f.ids, b))
	f.quiet = false
	swap := widget.NewButtonWithIcon("Swap", theme.ViewRefreshIcon(), func() {
		ia, ib := f.a.SelectedIndex(), f.b.SelectedIndex()
		f.quiet = true
		f.a.SetSelectedIndex(ib)
		f.b.SetSelectedIndex(ia)
		f.quiet = false
		s.runCompare(sc, f)
	})
	f.status = widget.NewLabel("Comparing…")
	f.status.Wrapping = fyne.TextWrapWord
	f.body = container.NewVBox()
	pickers := container.NewBorder(nil, nil, nil, swap, container.NewGridWithColumns(2,
		container.NewBorder(nil, nil, widget.NewLabelWithStyle("A", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), nil, f.a),
		container.NewBorder(nil, nil, widget.NewLabelWithStyle("B", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), nil, f.b)))
	closeB := widget.NewButton("Close", func() { f.dlg.Hide() })
	content := container.NewBorder(container.NewVBox(pickers, f.status), container.NewHBox(layoutSpacer(), closeB), nil, nil,
		container.NewVScroll(f.body))
	f.dlg = dialog.NewCustomWithoutButtons("Compare checkpoints", f.compose(f, content), s.win)
	f.dlg.Resize(fyne.NewSize(1120, 680))
	showDialog(f.dlg, content)
	s.runCompare(sc, f)
}

// onBranchOf reports whether id lies on the way from the thread's start
// to other (so comparing them compares a checkpoint with its own past).
func onBranchOf(t *timeline, id, other string) bool {
	for x := other; x != ""; x = t.prev(x) {
		if x == id {
			return true
		}
	}
	return false
}

// runCompare compares the two picked checkpoints off the UI goroutine.
func (s *Studio) runCompare(sc *scope, f *compareForm) {
	ia, ib := f.a.SelectedIndex(), f.b.SelectedIndex()
	if ia < 0 || ib < 0 {
		return
	}
	a, b := f.ids[ia], f.ids[ib]
	f.seq++
	seq := f.seq
	f.status.Importance = widget.MediumImportance
	f.status.SetText("Comparing…")
	g, _ := s.sess.current()
	thread := sc.thread
	goBG(s.sess, func() (*inspect.Comparison, error) {
		return inspect.Compare(context.Background(), g, a, b, engine.WithThread(thread))
	}, func(c *inspect.Comparison, err error) {
		if seq != f.seq {
			return
		}
		if err != nil {
			f.status.Importance = widget.DangerImportance
			f.status.SetText(err.Error())
			return
		}
		f.cmp = c
		s.showCompare(sc, f)
	})
}

// showCompare shows f's comparison: the ancestor, the steps of each branch
// since, and the channels that differ.
func (s *Studio) showCompare(sc *scope, f *compareForm) {
	c := f.cmp
	t := sc.tl
	switch {
	case c.A == c.B:
		f.status.SetText("A and B are the same checkpoint.")
	case c.Differ == 0:
		f.status.SetText(fmt.Sprintf("Their branches part after %s; every channel is the same on both.", pointName(t, c.Ancestor)))
	default:
		f.status.SetText(fmt.Sprintf("Their branches part after %s. %d %s.", pointName(t, c.Ancestor), c.Differ, pluralWord(c.Differ, "channel differs", "channels differ")))
	}
	f.body.Objects = nil
	// The steps each branch took since the ancestor, one line each.
	f.body.Add(container.NewGridWithColumns(2, stepsBox(t, "A", c.StepsA), stepsBox(t, "B", c.StepsB)))
	f.body.Add(widget.NewSeparator())
	// The channels.
	var same []string
	var rows []fyne.CanvasObject
	for _, d := range c.Channels {
		if d.Equal {
			same = append(same, d.Channel)
			continue
		}
		rows = append(rows, channelDiffRow(t, d))
	}
	if len(rows) > 0 {
		for _, r := range rows {
			f.body.Add(r)
			f.body.Add(widget.NewSeparator())
		}
	}
	if len(same) > 0 {
		l := widget.NewLabel("The same on both: " + strings.Join(same, ", "))
		l.Wrapping = fyne.TextWrapWord
		l.Importance = widget.LowImportance
		f.body.Add(l)
	}
	f.body.Refresh()
}

// pluralWord picks the singular or plural wording for n.
func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// grouped writes n with its thousands grouped ("100,002"): the counts a long
// thread reaches are read at a glance.
func grouped(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// pointName is a checkpoint's timeline label, quoted.
func pointName(t *timeline, id string) string {
	if i := t.at(id); i >= 0 {
		label, _ := t.text(i)
		return "“" + label + "”"
	}
	return shortID(id)
}

// label is a checkpoint's timeline label ("4 write"), its short id when
// it is not on the timeline.
func (t *timeline) label(id string) string {
	if i := t.at(id); i >= 0 {
		label, _ := t.text(i)
		return label
	}
	return shortID(id)
}

// stepsBox says which steps a branch took since the ancestor, oldest
// first, in a line that wraps: "A took 3 steps: 2 fork → 3 structure → 4 write".
func stepsBox(t *timeline, side string, steps []inspect.BranchStep) fyne.CanvasObject {
	head := fmt.Sprintf("%s took %d %s: ", side, len(steps), pluralWord(len(steps), "step", "steps"))
	if len(steps) == 0 {
		head = side + " is the common ancestor"
	}
	const most = 12
	var names []string
	for k, st := range steps {
		if k == most && len(steps) > most+1 {
			names = append(names, fmt.Sprintf("… %d more … %s", len(steps)-most-1, t.label(steps[len(steps)-1].Checkpoint)))
			break
		}
		text := t.label(st.Checkpoint)
		if st.Source != "loop" && !strings.Contains(text, st.Source) {
			text += " (" + st.Source + ")"
		}
		names = append(names, text)
	}
	l := widget.NewLabel(head + strings.Join(names, " → "))
	l.Wrapping = fyne.TextWrapWord
	return l
}

// channelDiffRow is one differing channel: A's value and B's side by
// side (a word diff for texts), each with the task that wrote it.
func channelDiffRow(t *timeline, d inspect.ChannelDiff) fyne.CanvasObject {
	name := widget.NewLabelWithStyle(d.Channel, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	var left, right fyne.CanvasObject
	switch {
	case d.Words != nil:
		left, right = wordDiff(d.Words, "-"), wordDiff(d.Words, "+")
	default:
		a, b := toJSON(d.A), toJSON(d.B)
		la, okA := a.([]any)
		lb, okB := b.([]any)
		if okA && okB {
			left, right = listDiff(la, lb)
		} else {
			left, right = valueText(a), valueText(b)
		}
	}
	return container.NewVBox(name, container.NewGridWithColumns(2,
		container.New(&tightVBox{}, left, writerText(t, d.WriterA)),
		container.New(&tightVBox{}, right, writerText(t, d.WriterB))))
}

// wordDiff shows one side of a word diff: the words both share, and those
// only this side has (op "-" for A, "+" for B) marked.
func wordDiff(ops []inspect.WordOp, mine string) fyne.CanvasObject {
	rt := widget.NewRichText()
	rt.Wrapping = fyne.TextWrapWord
	color, side := theme.ColorNameError, "A"
	if mine == "+" {
		color, side = theme.ColorNameSuccess, "B"
	}
	// The words both share are kept only around the changes, and the
	// side is drawn up to previewRunes: the whole of it shows with Show all.
	budget := previewRunes
	var full strings.Builder
	cut := false
	for _, op := range ops {
		if op.Op != "=" && op.Op != mine {
			continue
		}
		full.WriteString(op.Text)
		if budget <= 0 {
			cut = true
			continue
		}
		text := op.Text
		st := widget.RichTextStyleInline
		if op.Op == "=" {
			text = elide(text, 80)
		} else {
			st = widget.RichTextStyleStrong
			st.ColorName = color
		}
		shown, c := boundText(text, budget, previewLines)
		cut = cut || c || len(text) != len(op.Text)
		budget -= utf8.RuneCountInString(shown)
		if c {
			budget = 0
			shown += " …"
		}
		rt.Segments = append(rt.Segments, &widget.TextSegment{Style: st, Text: shown})
	}
	rt.Refresh()
	if !cut {
		return rt
	}
	return container.NewVBox(rt, moreBar(side+" value", full.String()))
}

// valueText shows JSON data as wrapped JSON, shortened.
func valueText(v any) fyne.CanvasObject {
	l := widget.NewLabel("(empty)")
	if v != nil {
		l.SetText(preview(v, 300))
	}
	l.Wrapping = fyne.TextWrapWord
	return l
}

// listDiff shows two lists by what they share at the start and the items
// after it on each side.
func listDiff(a, b []any) (fyne.CanvasObject, fyne.CanvasObject) {
	same := 0
	for same < len(a) && same < len(b) && jsonEqual(a[same], b[same]) {
		same++
	}
	side := func(l []any) fyne.CanvasObject {
		head := fmt.Sprintf("%d %s", len(l), pluralWord(len(l), "item", "items"))
		if same > 0 {
			head += fmt.Sprintf(", the first %d as on the other side", same)
		}
		rest := l[same:]
		text := head
		if len(rest) > 0 {
			text += "; then " + preview(rest, 300)
		}
		lbl := widget.NewLabel(text)
		lbl.Wrapping = fyne.TextWrapWord
		return lbl
	}
	return side(a), side(b)
}

// writerText says which task wrote a side's value since the ancestor.
func writerText(t *timeline, w *inspect.Writer) fyne.CanvasObject {
	text := "not written on this branch since the ancestor"
	if w != nil {
		who := w.Node
		if who == "" {
			who = "an update"
		}
		text = fmt.Sprintf("written by %s at %s", who, pointName(t, w.Checkpoint))
		if w.Task != "" {
			text += " · task " + shortID(w.Task)
		}
	}
	l := widget.NewLabel(text)
	l.Importance = widget.LowImportance
	l.SizeName = theme.SizeNameCaptionText
	l.Wrapping = fyne.TextWrapWord
	return l
}
