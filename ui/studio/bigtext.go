package studio

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Bounds on what a view draws of one value. Fyne lays out and measures a
// text object whole, so a megabyte drawn as one text freezes the window
// for a minute and takes gigabytes: every panel draws at most a preview of
// a value, and the whole of it only through textViewer, a line at a time.
const (
	previewRunes = 2000 // most runes of a value a panel draws
	previewLines = 30   // most lines of a value a panel draws
	chunkBytes   = 240  // textViewer cuts lines longer than this into rows
	// maxDrawnText is the longest text (bytes) any one text object in a
	// panel holds; tests walk the widget tree against it.
	maxDrawnText = 4 * previewRunes
)

// boundText returns s cut to at most runes runes and lines lines, and
// whether it cut anything. It reads only what it keeps.
func boundText(s string, runes, lines int) (string, bool) {
	n, nl := 0, 1
	for i, r := range s {
		if n == runes {
			return s[:i], true
		}
		if r == '\n' {
			if nl == lines {
				return s[:i], true
			}
			nl++
		}
		n++
	}
	return s, false
}

// textSize describes a text's size for a cut preview: "10.4 MB, 1 line".
func textSize(s string) string {
	return byteSize(len(s)) + ", " + plural(strings.Count(s, "\n")+1, "line")
}

// valueView shows a value's text in a panel: all of it when it is short,
// otherwise a preview (previewRunes, previewLines) and a bar saying how
// much is left out, with Show all (a viewer that scrolls and searches the
// whole text), Copy (the whole text to the clipboard) and Save.
type valueView struct {
	widget.BaseWidget
	title string
	full  string
	label *widget.Label
	note  *widget.Label
	bar   *fyne.Container
	box   *fyne.Container
}

// newValueView shows text (titled title in the viewer and the file name
// offered by Save); mono draws it in the monospace font.
func newValueView(title, text string, mono bool) *valueView {
	v := &valueView{title: title, label: widget.NewLabel("")}
	v.label.Wrapping = fyne.TextWrapWord
	v.label.TextStyle.Monospace = mono
	v.note = widget.NewLabel("")
	v.note.Importance = widget.WarningImportance
	v.note.SizeName = theme.SizeNameCaptionText
	show := widget.NewButtonWithIcon("Show all", theme.VisibilityIcon(), func() { showAllText(v, v.title, v.full) })
	cp := widget.NewButtonWithIcon("Copy", theme.ContentCopyIcon(), func() { copyText(v.full) })
	save := widget.NewButtonWithIcon("Save…", theme.DocumentSaveIcon(), func() { saveText(v, v.title, v.full) })
	for _, b := range []*widget.Button{show, cp, save} {
		b.Importance = widget.LowImportance
	}
	v.bar = container.NewHBox(v.note, show, cp, save)
	v.box = container.NewVBox(v.label, v.bar)
	v.ExtendBaseWidget(v)
	v.set(text)
	return v
}

// set replaces the text shown.
func (v *valueView) set(text string) {
	v.full = text
	shown, cut := boundText(text, previewRunes, previewLines)
	if cut {
		v.label.SetText(shown + " …")
		v.note.SetText("… cut: " + textSize(text))
		v.bar.Show()
	} else {
		v.label.SetText(text)
		v.bar.Hide()
	}
}

// CreateRenderer is part of fyne.Widget.
// composed is what the widget draws (holds looks through it for the focus).
func (v *valueView) composed() fyne.CanvasObject { return v.box }

func (v *valueView) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(v.box)
}

// moreBar says text was cut to what a panel shows (a caption) and offers
// Show all, Copy and Save for the whole of it.
func moreBar(title, text string) *fyne.Container {
	note := widget.NewLabel("… cut: " + textSize(text))
	note.Importance = widget.WarningImportance
	note.SizeName = theme.SizeNameCaptionText
	bar := container.NewHBox(note)
	show := widget.NewButtonWithIcon("Show all", theme.VisibilityIcon(), func() { showAllText(bar, title, text) })
	cp := widget.NewButtonWithIcon("Copy", theme.ContentCopyIcon(), func() { copyText(text) })
	save := widget.NewButtonWithIcon("Save…", theme.DocumentSaveIcon(), func() { saveText(bar, title, text) })
	for _, b := range []*widget.Button{show, cp, save} {
		b.Importance = widget.LowImportance
		bar.Add(b)
	}
	return bar
}

// elide keeps the first and last keep runes of s, saying how much is
// left out between them.
func elide(s string, keep int) string {
	head, cut := boundText(s, keep, 1<<30)
	if !cut {
		return s
	}
	tail := s[len(head):]
	n := utf8.RuneCountInString(tail)
	if n <= keep+20 {
		return s
	}
	i := len(tail)
	for k := 0; k < keep; k++ {
		_, w := utf8.DecodeLastRuneInString(tail[:i])
		i -= w
	}
	return head + " … " + byteSize(len(tail)-(len(tail)-i)) + " the same … " + tail[i:]
}

// copyText puts the whole of text on the clipboard.
func copyText(text string) {
	fyne.CurrentApp().Clipboard().SetContent(text)
}

// windowOf finds the window showing o (nil when it shows in none).
func windowOf(o fyne.CanvasObject) fyne.Window {
	d := fyne.CurrentApp().Driver()
	c := d.CanvasForObject(o)
	for _, w := range d.AllWindows() {
		if w.Canvas() == c {
			return w
		}
	}
	return nil
}

// saveText asks where to save text, and writes it there.
func saveText(from fyne.CanvasObject, title, text string) {
	w := windowOf(from)
	if w == nil {
		return
	}
	d := dialog.NewFileSave(func(wc fyne.URIWriteCloser, err error) {
		if err == nil && wc != nil {
			_, err = wc.Write([]byte(text))
			if cerr := wc.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			dialog.ShowError(fmt.Errorf("saving %s: %w", title, err), w)
		}
	}, w)
	d.SetFileName(fileNameFor(title) + ".txt")
	d.Show()
}

// fileNameFor makes a title usable as a file name.
func fileNameFor(title string) string {
	out := strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ':' || r < ' ' {
			return '_'
		}
		return r
	}, title)
	if out == "" {
		return "value"
	}
	return out
}

// showAllText opens the whole of text in a viewer over from's window.
func showAllText(from fyne.CanvasObject, title, text string) {
	w := windowOf(from)
	if w == nil {
		return
	}
	tv := newTextViewer(title)
	tv.set(text)
	d := dialog.NewCustom(title+" · "+textSize(text), "Close", tv, w)
	cs := w.Canvas().Size()
	d.Resize(fyne.NewSize(cs.Width*0.85, cs.Height*0.85))
	showDialog(d, tv)
}

// textViewer shows a whole text of any size: a list of its lines (long
// lines cut into rows of chunkBytes), numbered, that only draws the rows
// on screen, with search, Copy and Save.
type textViewer struct {
	widget.BaseWidget
	title  string
	text   string
	starts []int // byte offset of each row
	lineNo []int // line number of each row, 0 on a row continuing a line
	list   *widget.List
	find   *widget.Entry
	status *widget.Label
	from   int // where the next search starts
	obj    fyne.CanvasObject
}

func newTextViewer(title string) *textViewer {
	t := &textViewer{title: title}
	t.list = widget.NewList(func() int { return len(t.starts) },
		func() fyne.CanvasObject {
			no := widget.NewLabel("00000")
			no.Importance = widget.LowImportance
			no.TextStyle.Monospace = true
			txt := widget.NewLabel("")
			txt.TextStyle.Monospace = true
			return container.NewBorder(nil, nil, no, nil, txt)
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			if i >= len(t.starts) {
				return
			}
			c := o.(*fyne.Container)
			no := ""
			if t.lineNo[i] > 0 {
				no = strconv.Itoa(t.lineNo[i])
			}
			c.Objects[1].(*widget.Label).SetText(no)
			c.Objects[0].(*widget.Label).SetText(t.row(i))
		})
	t.find = widget.NewEntry()
	t.find.SetPlaceHolder("Find in the text (Enter: next)")
	t.find.OnSubmitted = func(string) { t.next() }
	t.find.OnChanged = func(string) { t.from = 0 }
	t.status = widget.NewLabel("")
	t.status.SizeName = theme.SizeNameCaptionText
	findB := widget.NewButtonWithIcon("", theme.SearchIcon(), t.next)
	cp := widget.NewButtonWithIcon("Copy all", theme.ContentCopyIcon(), func() { copyText(t.text) })
	save := widget.NewButtonWithIcon("Save…", theme.DocumentSaveIcon(), func() { saveText(t, t.title, t.text) })
	top := container.NewBorder(nil, t.status, nil, container.NewHBox(findB, cp, save), t.find)
	t.obj = container.NewBorder(top, nil, nil, nil, t.list)
	t.ExtendBaseWidget(t)
	return t
}

// CreateRenderer is part of fyne.Widget.
// composed is what the widget draws (holds looks through it for the focus).
func (t *textViewer) composed() fyne.CanvasObject { return t.obj }

func (t *textViewer) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(t.obj)
}

// set shows text from its start.
func (t *textViewer) set(text string) {
	t.text, t.from = text, 0
	t.starts, t.lineNo = t.starts[:0], t.lineNo[:0]
	line := 1
	for p := 0; p <= len(text); line++ {
		end := strings.IndexByte(text[p:], '\n')
		if end < 0 {
			end = len(text) - p
		}
		end += p // this line is text[p:end]
		t.starts = append(t.starts, p)
		t.lineNo = append(t.lineNo, line)
		for end-p > chunkBytes {
			cut := p + chunkBytes
			for cut > p && !utf8.RuneStart(text[cut]) {
				cut--
			}
			p = cut
			t.starts = append(t.starts, p)
			t.lineNo = append(t.lineNo, 0)
		}
		p = end + 1
	}
	if n := len(t.starts); n > 1 && t.starts[n-1] >= len(text) && strings.HasSuffix(text, "\n") {
		t.starts, t.lineNo = t.starts[:n-1], t.lineNo[:n-1] // no empty row after a final newline
	}
	t.status.SetText(textSize(text))
	t.list.UnselectAll()
	t.list.Refresh()
	t.list.ScrollToTop()
}

// row is the text of row i without its newline.
func (t *textViewer) row(i int) string {
	end := len(t.text)
	if i+1 < len(t.starts) {
		end = t.starts[i+1]
	}
	return strings.TrimSuffix(t.text[t.starts[i]:end], "\n")
}

// rowOf is the row holding byte offset p.
func (t *textViewer) rowOf(p int) int {
	return sort.Search(len(t.starts), func(i int) bool { return t.starts[i] > p }) - 1
}

// next finds the next match of the search text, from the last one, and
// shows its row; past the last match it starts again at the top.
func (t *textViewer) next() {
	q := t.find.Text
	if q == "" {
		return
	}
	i := strings.Index(t.text[min(t.from, len(t.text)):], q)
	if i >= 0 {
		i += t.from
	} else if i = strings.Index(t.text, q); i < 0 {
		t.status.SetText(strconv.Quote(q) + " is not in the text")
		return
	}
	t.from = i + len(q)
	r := t.rowOf(i)
	line := strings.Count(t.text[:i], "\n") + 1
	col := utf8.RuneCountInString(t.text[strings.LastIndexByte(t.text[:i], '\n')+1:i]) + 1
	t.status.SetText(fmt.Sprintf("line %d, column %d · %s in the text", line, col, fmt.Sprintf("%d %s", strings.Count(t.text, q), pluralWord(strings.Count(t.text, q), "match", "matches"))))
	t.list.ScrollTo(r)
	t.list.Select(r)
}
