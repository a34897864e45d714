package studio

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/google/uuid"
	"github.com/weftstudio/weft/engine"
)

// threadsPanel is the left column: the selected graph's threads, newest
// first, with a search field; empty, it offers to start a thread. It shows
// the model's thread list, a page at a time (a last row asks for more),
// and sets the model's thread and thread query.
type threadsPanel struct {
	m *model
	composite
	search *keyEntry
	list   *keyList
	empty  fyne.CanvasObject
	// reading stands in the empty list's place until the store answers.
	reading fyne.CanvasObject
	shown   []threadRow // rows matching the search
	quiet   bool
	// typed asks the store for what the search field says once typing
	// pauses; the rows already listed are filtered at once.
	typed *time.Timer
}

// searchPause is how long typing must pause before the store is searched:
// one query per word, not per key.
const searchPause = 150 * time.Millisecond

func newThreadsPanel(m *model, a *actions) *threadsPanel {
	p := &threadsPanel{m: m}
	p.search = newKeyEntry(a.key, false)
	p.search.SetPlaceHolder("Search threads…")
	p.search.OnChanged = func(string) {
		p.filter()
		if p.typed != nil {
			p.typed.Stop()
		}
		p.typed = time.AfterFunc(searchPause, func() {
			uiDo(func() { m.update(func() { m.setThreadQuery(threadQuery{Search: strings.TrimSpace(p.search.Text)}) }) })
		})
	}
	p.list = newKeyList(a.key, func() int { return len(p.shown) + p.moreRow() },
		func() fyne.CanvasObject {
			title := widget.NewLabel("thread")
			title.TextStyle.Bold = true
			title.Truncation = fyne.TextTruncateEllipsis
			// The subtitle is two short lines, where one long line was cut
			// at the default width: what the thread is doing and when
			// first (a cut takes the tail), then where it is.
			// One label of two lines: one pair of paddings, where two
			// labels would make the row a third taller.
			sub := widget.NewLabel("waiting\nstep")
			sub.SizeName = theme.SizeNameCaptionText
			sub.Truncation = fyne.TextTruncateEllipsis
			return container.NewBorder(nil, nil, widget.NewIcon(theme.HistoryIcon()), nil,
				container.New(&tightVBox{}, title, sub))
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			row := o.(*fyne.Container)
			box := row.Objects[0].(*fyne.Container)
			title, sub, icon := box.Objects[0].(*widget.Label), box.Objects[1].(*widget.Label), row.Objects[1].(*widget.Icon)
			if i >= len(p.shown) {
				setText(title, "More threads…")
				setText(sub, fmt.Sprintf("the newest %d are listed", len(p.m.threads)))
				setIcon(icon, theme.MoreHorizontalIcon())
				return
			}
			r := p.shown[i]
			setText(title, r.ID)
			state, where := threadSubtitle(r)
			setText(sub, state+"\n"+where)
			setIcon(icon, statusIcon(r.Status))
		})
	p.list.OnSelected = func(i widget.ListItemID) {
		switch {
		case p.quiet:
		case i < len(p.shown):
			m.setThread(p.shown[i].ID)
		case i == len(p.shown) && p.moreRow() == 1:
			q := m.threadQ
			q.Limit = q.limit() + threadPage
			m.setThreadQuery(q)
			p.selectThread(m.thread())
		}
	}
	start := newKeyButton(a.key, "Start a thread", theme.ContentAddIcon(), func() { call(a.newThread) })
	start.Importance = widget.HighImportance
	p.empty = container.NewVBox(placeholder("No threads yet for this graph."), container.NewCenter(start))
	header := widget.NewLabelWithStyle("Threads", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	p.reading = placeholder("Reading the store's threads…")
	p.compose(p, container.NewBorder(container.NewVBox(header, p.search), nil, nil, nil, container.NewStack(p.list, p.empty, p.reading)))
	p.list.Hide()
	p.empty.Hide()
	m.subscribe(chThreads|chThread, func(part) { p.filter() })
	return p
}

// threadSubtitle is a thread row's two caption lines: its status (or
// the process running it) and when it last moved, then its step and
// checkpoint count (when the store knows it).
func threadSubtitle(r threadRow) (state, where string) {
	state = ago(r.Updated)
	if r.Holder != "" {
		state = "running · " + r.Holder + " · " + state
	} else if r.Status != "" {
		state = r.Status + " · " + state
	}
	if r.Count < 0 { // the store cannot say without reading the whole thread (a server)
		return state, "step " + grouped(r.Step)
	}
	return state, fmt.Sprintf("step %s · %s checkpoints", grouped(r.Step), grouped(r.Count))
}

// moreRow is 1 when the list ends in a "More threads" row.
func (p *threadsPanel) moreRow() int {
	if p.m.moreThreads {
		return 1
	}
	return 0
}

func (p *threadsPanel) filter() {
	q := strings.ToLower(strings.TrimSpace(p.search.Text))
	p.shown = p.shown[:0]
	for _, r := range p.m.threads {
		if q == "" || strings.Contains(strings.ToLower(r.ID), q) {
			p.shown = append(p.shown, r)
		}
	}
	// Only what changes is hidden or shown: showing the list again
	// refreshed every row, on top of the Refresh below.
	show := p.reading
	switch {
	case len(p.m.threads) > 0 || p.m.threadQ.Search != "":
		show = p.list
	case p.m.threadsRead:
		show = p.empty
	}
	for _, o := range []fyne.CanvasObject{p.list, p.empty, p.reading} {
		if o != show {
			o.Hide()
		}
	}
	show.Show()
	p.list.Refresh()
	p.selectThread(p.m.thread())
}

// setText sets l's text when it differs. The thread list updates every
// row when any thread moves, and a label given its text again still
// measures and cuts it again: half of what the model's updates cost the
// window while it stepped.
func setText(l *widget.Label, s string) {
	if l.Text != s {
		l.SetText(s)
	}
}

// setIcon is setText for an icon: themed resources are made afresh on
// every call, so they are compared by name.
func setIcon(i *widget.Icon, r fyne.Resource) {
	if i.Resource == nil || r == nil || i.Resource.Name() != r.Name() {
		i.SetResource(r)
	}
}

// selectThread marks thread id in the list without reacting to it.
func (p *threadsPanel) selectThread(id string) {
	p.quiet = true
	defer func() { p.quiet = false }()
	i := slices.IndexFunc(p.shown, func(r threadRow) bool { return r.ID == id })
	if i < 0 {
		p.list.UnselectAll()
		return
	}
	p.list.Select(i)
}

// statusIcon is the icon of a thread's status: done, waiting for an
// answer, failed, or paused with work left.
func statusIcon(status string) fyne.Resource {
	switch status {
	case "done":
		return theme.NewSuccessThemedResource(theme.ConfirmIcon())
	case "waiting":
		return theme.NewWarningThemedResource(theme.QuestionIcon())
	case "failed":
		return theme.NewErrorThemedResource(theme.ErrorIcon())
	case statusUnreadable:
		return theme.NewErrorThemedResource(theme.BrokenImageIcon())
	case "paused":
		return theme.NewPrimaryThemedResource(theme.MediaPauseIcon())
	case "running":
		return theme.NewPrimaryThemedResource(theme.MediaPlayIcon())
	}
	return theme.HistoryIcon()
}

// ago says how long ago t was, briefly.
var ago = func(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return t.Local().Format("2 Jan 15:04")
}

// newThreadForm is the new-thread dialog: a field per channel generated from
// the state schema, a raw JSON tab and recent inputs.
type newThreadForm struct {
	composite
	s       *Studio
	dlg     dialog.Dialog
	id      *widget.Entry
	fields  map[string]*widget.Entry
	chans   []engine.ChannelInfo
	raw     *widget.Entry
	tabs    *container.AppTabs
	errLbl  *widget.Label
	startB  *widget.Button
	recent  *widget.Select
	recents []string
}

const recentKey = "recent_inputs/"

// newThreadDialog opens the new-thread dialog pre-filled with the graph's
// example (or the most recent input).
func (s *Studio) newThreadDialog() {
	g := s.m.graph()
	if g.Graph == nil || s.refuseView() {
		return
	}
	f := &newThreadForm{s: s, fields: map[string]*widget.Entry{}}
	name, chans := g.Graph.Name(), g.Graph.Channels()
	if len(chans) == 0 {
		chans = g.Input
	}
	f.chans = chans
	f.id = widget.NewEntry()
	f.id.SetText(s.newThreadID())
	f.id.OnSubmitted = func(string) { f.submit() }
	form := widget.NewForm(widget.NewFormItem("Thread id", f.id))
	for _, ch := range chans {
		e := widget.NewEntry()
		e.OnSubmitted = func(string) { f.submit() }
		if !isStringChan(ch) {
			e.Validator = func(t string) error {
				if strings.TrimSpace(t) == "" || json.Valid([]byte(t)) {
					return nil
				}
				return fmt.Errorf("not valid JSON")
			}
		}
		e.SetPlaceHolder(placeholderFor(ch))
		f.fields[ch.Name] = e
		item := widget.NewFormItem(ch.Name, e)
		item.HintText = ch.Type
		form.AppendItem(item)
	}
	f.raw = widget.NewMultiLineEntry()
	f.raw.TextStyle.Monospace = true
	f.raw.SetMinRowsVisible(8)
	f.tabs = container.NewAppTabs(
		container.NewTabItem("Form", container.NewVScroll(form)),
		container.NewTabItem("JSON", f.raw),
	)
	f.tabs.OnSelected = func(ti *container.TabItem) {
		if ti.Text == "JSON" {
			f.raw.SetText(f.formJSON())
		} else {
			f.fillFields(f.raw.Text)
		}
	}
	f.recents = s.app.Preferences().StringList(recentKey + name)
	f.recent = widget.NewSelect(nil, func(v string) {
		if i := f.recent.SelectedIndex(); i >= 0 && i < len(f.recents) {
			f.fill(f.recents[i])
		}
	})
	for _, r := range f.recents {
		f.recent.Options = append(f.recent.Options, oneLine(r, 60))
	}
	f.recent.PlaceHolder = "Recent inputs…"
	if len(f.recents) == 0 {
		f.recent.Disable()
	}
	example := "{}"
	if ex := g.Example; ex != nil {
		if b, err := json.Marshal(ex); err == nil {
			example = string(b)
		}
	}
	f.fill(example)
	f.errLbl = widget.NewLabel("")
	f.errLbl.Importance = widget.DangerImportance
	f.errLbl.Wrapping = fyne.TextWrapWord
	f.errLbl.Hide()
	f.startB = widget.NewButtonWithIcon("Start", theme.MediaPlayIcon(), f.submit)
	f.startB.Importance = widget.HighImportance
	cancel := widget.NewButton("Cancel", func() { f.dlg.Hide() })
	desc := widget.NewLabel(g.Description)
	desc.Wrapping = fyne.TextWrapWord
	buttons := container.NewHBox(f.recent, layoutSpacer(), cancel, f.startB)
	content := container.NewBorder(desc, container.NewVBox(f.errLbl, buttons), nil, nil, f.tabs)
	f.dlg = dialog.NewCustomWithoutButtons("New thread · "+name, f.compose(f, content), s.win)
	f.dlg.Resize(fyne.NewSize(560, 440))
	showDialog(f.dlg, content)
	// Enter starts the thread with the example input.
	s.win.Canvas().Focus(f.id)
}

// newThreadID proposes a fresh, readable thread id.
func (s *Studio) newThreadID() string {
	if s.m.isView() {
		return uuid.NewString() // LangGraph servers take UUIDs alone
	}
	base := "t-" + time.Now().Format("0102-150405")
	id := base
	for n := 2; s.m.hasThread(id); n++ {
		id = fmt.Sprintf("%s-%d", base, n)
	}
	return id
}

func isStringChan(ch engine.ChannelInfo) bool { return ch.Type == "string" }

func placeholderFor(ch engine.ChannelInfo) string {
	switch {
	case isStringChan(ch):
		return "text (empty: not set)"
	case strings.HasPrefix(ch.Type, "[]"):
		return "JSON list, e.g. [] (empty: not set)"
	}
	return "JSON (empty: not set)"
}

// fill sets the fields and the raw JSON from an input JSON object.
func (f *newThreadForm) fill(js string) {
	f.raw.SetText(indentJSON(js))
	f.fillFields(js)
}

func (f *newThreadForm) fillFields(js string) {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(js), &m) != nil {
		return
	}
	for _, ch := range f.chans {
		e := f.fields[ch.Name]
		raw, ok := m[ch.Name]
		switch {
		case !ok:
			e.SetText("")
		case isStringChan(ch):
			var str string
			if json.Unmarshal(raw, &str) == nil {
				e.SetText(str)
			} else {
				e.SetText(string(raw))
			}
		default:
			e.SetText(string(raw))
		}
	}
}

// formJSON builds the input JSON from the form's fields.
func (f *newThreadForm) formJSON() string {
	var b bytes.Buffer
	b.WriteString("{")
	n := 0
	for _, ch := range f.chans {
		t := f.fields[ch.Name].Text
		if strings.TrimSpace(t) == "" {
			continue
		}
		if n > 0 {
			b.WriteString(",")
		}
		n++
		k, _ := json.Marshal(ch.Name)
		b.Write(k)
		b.WriteString(":")
		if isStringChan(ch) {
			v, _ := json.Marshal(t)
			b.Write(v)
		} else {
			b.WriteString(t)
		}
	}
	b.WriteString("}")
	return indentJSON(b.String())
}

// submit validates the input and starts the thread.
func (f *newThreadForm) submit() {
	js := f.raw.Text
	if f.tabs.Selected().Text == "Form" {
		for _, ch := range f.chans {
			if err := f.fields[ch.Name].Validate(); err != nil {
				f.fail(fmt.Errorf("%s: %v", ch.Name, err))
				return
			}
		}
		js = f.formJSON()
	}
	id := strings.TrimSpace(f.id.Text)
	if id == "" {
		f.fail(fmt.Errorf("the thread id is empty"))
		return
	}
	// The list holds a page of threads; the store knows them all (one
	// indexed read).
	if f.s.m.hasThread(id) || f.s.sess.threadExists(context.Background(), id) {
		f.fail(fmt.Errorf("thread %q exists already: choose another id", id))
		return
	}
	vals, err := f.s.sess.decodeInput([]byte(js))
	if err != nil {
		f.fail(err)
		return
	}
	f.remember(js)
	f.dlg.Hide()
	f.s.startThread(id, vals)
}

func (f *newThreadForm) fail(err error) {
	f.errLbl.SetText(err.Error())
	f.errLbl.Show()
}

// remember keeps the input among the graph's recent inputs.
func (f *newThreadForm) remember(js string) {
	name := f.s.m.graph().Graph.Name()
	compact := compactJSON(js)
	list := []string{compact}
	for _, r := range f.recents {
		if r != compact && len(list) < 8 {
			list = append(list, r)
		}
	}
	f.s.app.Preferences().SetStringList(recentKey+name, list)
}

func indentJSON(js string) string {
	var b bytes.Buffer
	if json.Indent(&b, []byte(js), "", "  ") != nil {
		return js
	}
	return b.String()
}

func compactJSON(js string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(js)) != nil {
		return js
	}
	return b.String()
}

// oneLine shortens s to one line of at most n runes.
func oneLine(s string, n int) string {
	// It reads only as far as it keeps: the text may be megabytes.
	out := make([]rune, 0, min(n+1, len(s)))
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = len(out) > 0
			continue
		}
		if space {
			out = append(out, ' ')
			space = false
		}
		out = append(out, r)
		if len(out) > n {
			return string(out[:n-1]) + "…"
		}
	}
	return string(out)
}

// tightVBox stacks objects vertically without padding.
type tightVBox struct{}

func (tightVBox) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	y := float32(0)
	for _, o := range objs {
		h := o.MinSize().Height
		o.Move(fyne.NewPos(0, y))
		o.Resize(fyne.NewSize(size.Width, h))
		y += h - theme.Padding()
	}
}

func (tightVBox) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var w, h float32
	for _, o := range objs {
		m := o.MinSize()
		w = max(w, m.Width)
		h += m.Height - theme.Padding()
	}
	return fyne.NewSize(w, h+theme.Padding())
}

func layoutSpacer() fyne.CanvasObject { return layout.NewSpacer() }
