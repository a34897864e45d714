package studio

import (
	"fmt"
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/render"
)

// Timeline geometry, in pixels.
const (
	colW    = 112 // one checkpoint per column
	laneH   = 46  // one branch per lane
	tlPad   = 12
	dotR    = 6
	maxView = 2600 // widest viewport the slot pool covers
)

// timelinePanel shows the thread's checkpoints left to right, oldest first,
// forks on lanes below their parent, with "?" on checkpoints whose step
// asked a question and "!" on those whose step failed. It draws the
// model's timeline; only the visible columns have canvas objects, so
// 10,000 checkpoints open and scroll like ten. A tap selects a checkpoint
// in the model.
type timelinePanel struct {
	m *model
	composite
	strip  *timelineStrip
	scroll *container.Scroll
	info   *widget.Label
	// onVisible is told the range of columns on screen, so that the marks
	// of those checkpoints can be read from the store; nil: not told.
	onVisible func(first, last int)
	height    *canvas.Rectangle // sets the panel's height
	fp        string            // the selected graph's fingerprint: other versions' checkpoints say "old graph"
	// onCompare is asked to compare two checkpoints (a Ctrl+click on a
	// second one, or its context menu); nil: not offered.
	onCompare func(a, b string)
	// modifiers returns the keyboard modifiers held; nil asks the
	// desktop driver.
	modifiers func() fyne.KeyModifier
}

func newTimelinePanel(m *model) *timelinePanel {
	p := &timelinePanel{m: m}
	p.strip = newTimelineStrip(p)
	p.scroll = container.NewScroll(p.strip)
	p.scroll.Direction = container.ScrollBoth
	p.scroll.OnScrolled = func(fyne.Position) { p.strip.Refresh(); p.visible() }
	p.info = widget.NewLabel(emptyTimeline)
	p.info.Importance = widget.LowImportance
	title := widget.NewLabelWithStyle("Timeline", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	height := canvas.NewRectangle(color.Transparent)
	height.SetMinSize(fyne.NewSize(0, laneH+laneH/2+2*tlPad))
	p.height = height
	p.compose(p, container.NewBorder(container.NewHBox(title, p.info), nil, nil, nil,
		container.NewStack(height, p.scroll)))
	m.subscribe(chGraph, func(part) {
		p.fp = ""
		if g := m.graph().Graph; g != nil {
			p.fp = g.Topology().Fingerprint
		}
	})
	m.subscribe(chGraph|chDebug|chThread|chTimeline, func(part) { p.fitHeight() })
	m.subscribe(chThread|chTimeline|chSelection|chWatch|chSubSel|chDebug, func(c part) {
		if c&(chThread|chTimeline) != 0 {
			p.setInfo()
			p.scroll.Refresh()
		}
		if c&(chThread|chTimeline|chSelection) != 0 {
			p.scrollTo(m.scope().sel)
		}
		p.strip.Refresh()
		if c&(chThread|chTimeline) != 0 {
			p.visible()
		}
	})
	return p
}

const emptyTimeline = "one dot per checkpoint once a thread runs"

// maxTimelineH bounds the panel's height, so that the window keeps its
// size: more branches, sub-lanes or watches scroll (the watch rows stay
// in view at the bottom).
const maxTimelineH = 150

// fitHeight sizes the panel: room for the branches (two without watches),
// for the lanes of subgraph tasks when the graph has subgraphs (at once,
// so the window does not jump when they show), and a row per watch, up to
// maxTimelineH.
func (p *timelinePanel) fitHeight() {
	m := p.m
	lanes := min(max(1, p.tl().lanes), 2)
	if shownWatches(m) > 0 {
		lanes = 1
	}
	h := float32(lanes*laneH + laneH/2 + 2*tlPad)
	if g := m.graph().Graph; g != nil && hasSubgraphs(g.Topology()) {
		h += subRows * subH
	}
	h = min(h+watchRowsH(m), maxTimelineH)
	if p.height.MinSize().Height != h {
		p.height.SetMinSize(fyne.NewSize(0, h))
		p.Refresh()
	}
}

func (p *timelinePanel) tl() *timeline { return p.m.scope().tl }

func (p *timelinePanel) setInfo() {
	t := p.tl()
	text := emptyTimeline
	if n := t.count(); n > 0 {
		text = grouped(n) + " checkpoints"
		if t.forks > 0 {
			text += fmt.Sprintf(" · %d %s", t.forks, pluralWord(t.forks, "fork", "forks"))
		}
		text += " · click one to travel back in time, ← → to walk its branch, Ctrl+click another to compare"
	}
	if p.info.Text != text {
		p.info.SetText(text)
	}
}

// visible tells onVisible which columns are on screen.
func (p *timelinePanel) visible() {
	if p.onVisible == nil || p.tl().count() == 0 {
		return
	}
	first := max(0, int(p.scroll.Offset.X)/colW-1)
	w := p.scroll.Size().Width
	if w <= 0 {
		w = maxView
	}
	last := min(p.tl().count()-1, first+int(w)/colW+2)
	p.onVisible(first, last)
}

// scrollTo brings checkpoint id into view.
func (p *timelinePanel) scrollTo(id string) {
	i := p.tl().at(id)
	if i < 0 {
		return
	}
	x := float32(tlPad + i*colW)
	off := p.scroll.Offset
	moved := false
	w := p.scroll.Size().Width
	if w > 0 && (x < off.X || x+colW > off.X+w) {
		off.X = max(0, x-w/2)
		moved = true
	}
	y := float32(tlPad + p.tl().items[i].lane*laneH)
	if h := p.scroll.Size().Height; h > 0 && (y < off.Y || y+laneH > off.Y+h) {
		off.Y = max(0, y-h/2)
		moved = true
	}
	if moved {
		p.scroll.Offset = off
		p.scroll.Refresh()
		p.visible()
	}
}

// selectAt is called when the user taps column i.
func (p *timelinePanel) selectAt(i int) {
	if id := p.tl().id(i); id != "" {
		p.m.selectCheckpoint(id)
	}
}

// timelineStrip draws the visible part of the timeline.
type timelineStrip struct {
	widget.BaseWidget
	p *timelinePanel
	r *stripRenderer
}

func newTimelineStrip(p *timelinePanel) *timelineStrip {
	t := &timelineStrip{p: p}
	t.ExtendBaseWidget(t)
	return t
}

// Tapped picks the subgraph checkpoint tapped on a sub-lane, or selects
// the checkpoint in the tapped column.
func (t *timelineStrip) Tapped(ev *fyne.PointEvent) {
	if t.r != nil {
		for _, h := range t.r.subHits {
			if h.contains(ev.Position) {
				t.p.m.pickSub(h.NS, h.ID)
				return
			}
		}
	}
	i := int((ev.Position.X - tlPad + colW/2) / colW)
	if i < 0 {
		return
	}
	// Ctrl+click compares the checkpoint with the selected one.
	if id, sel := t.p.tl().id(i), t.p.m.scope().sel; t.p.onCompare != nil && id != "" && sel != "" && id != sel &&
		heldKeys(t.p.modifiers)&(fyne.KeyModifierControl|fyne.KeyModifierSuper) != 0 {
		t.p.onCompare(sel, id)
		return
	}
	// Taps between lanes still pick the column's checkpoint.
	t.p.m.pickSub("", "")
	t.p.selectAt(i)
}

// TappedSecondary offers to compare the checkpoint in the tapped column
// with the selected one, or two branches.
func (t *timelineStrip) TappedSecondary(ev *fyne.PointEvent) {
	p := t.p
	i := int((ev.Position.X - tlPad + colW/2) / colW)
	id, sel := p.tl().id(i), p.m.scope().sel
	if p.onCompare == nil || id == "" {
		return
	}
	with := fyne.NewMenuItem("Compare with the selected checkpoint", func() { p.onCompare(sel, id) })
	with.Disabled = sel == "" || sel == id
	branches := fyne.NewMenuItem("Compare branches…", func() { p.onCompare(id, "") })
	if c := fyne.CurrentApp().Driver().CanvasForObject(t); c != nil {
		widget.ShowPopUpMenuAtPosition(fyne.NewMenu("", with, branches), c, ev.AbsolutePosition)
	}
}

// CreateRenderer is part of fyne.Widget.
func (t *timelineStrip) CreateRenderer() fyne.WidgetRenderer {
	r := &stripRenderer{t: t}
	t.r = r
	r.wband = canvas.NewRectangle(color.Transparent)
	r.objects = append(r.objects, r.wband)
	for range maxView/colW + 3 {
		sl := &slot{
			dot:   canvas.NewCircle(color.Transparent),
			sq:    canvas.NewRectangle(color.Transparent),
			ring:  canvas.NewCircle(color.Transparent),
			label: canvas.NewText("", color.Black),
			when:  canvas.NewText("", color.Black),
			mark:  canvas.NewText("", color.Black),
			hline: canvas.NewLine(color.Black),
			vline: canvas.NewLine(color.Black),
		}
		sl.mark.TextStyle.Bold = true
		r.slots = append(r.slots, sl)
		r.objects = append(r.objects, sl.hline, sl.vline, sl.ring, sl.dot, sl.sq, sl.label, sl.when, sl.mark)
		for k := range sl.watch {
			sl.watch[k] = canvas.NewText("", color.Black)
			r.objects = append(r.objects, sl.watch[k])
		}
	}
	// The watches' names stay at the left edge of the view, over their rows.
	r.wbg = canvas.NewRectangle(color.Transparent)
	r.objects = append(r.objects, r.wbg)
	for k := range r.wnames {
		r.wnames[k] = canvas.NewText("", color.Black)
		r.objects = append(r.objects, r.wnames[k])
	}
	return r
}

type slot struct {
	dot, ring         *canvas.Circle
	sq                *canvas.Rectangle
	label, when, mark *canvas.Text
	hline, vline      *canvas.Line
	watch             [maxWatchRows]*canvas.Text // the watches' values here
	item              int
}

// setHidden hides or shows every object of the slot without refreshing
// (place runs from Layout, which must not refresh).
func (sl *slot) setHidden(h bool) {
	sl.dot.Hidden, sl.ring.Hidden, sl.sq.Hidden = h, h, h
	sl.label.Hidden, sl.when.Hidden, sl.mark.Hidden = h, h, h
	sl.hline.Hidden, sl.vline.Hidden = h, h
	for _, w := range sl.watch {
		w.Hidden = h
	}
}

type stripRenderer struct {
	t        *timelineStrip
	slots    []*slot
	objects  []fyne.CanvasObject
	sub      *subLanes           // the sub-lanes drawn
	subCol   int                 // the column they are drawn under
	subObjs  []fyne.CanvasObject // their objects, after the slots'
	subHits  []subHit            // where their checkpoints are, for taps
	subPick  string              // the subgraph checkpoint drawn as picked
	subTop   float32             // where they start
	wband    *canvas.Rectangle   // behind the watch rows
	wbg      *canvas.Rectangle   // behind the watches' names
	wbgWidth float32
	wnames   [maxWatchRows]*canvas.Text
}

func (r *stripRenderer) MinSize() fyne.Size {
	p := r.t.p
	t := p.tl()
	w, h := float32(2*tlPad+len(t.items)*colW), float32(2*tlPad+max(1, t.lanes)*laneH-laneH/3)
	h += watchRowsH(p.m)
	if sub := p.m.scope().sub; sub != nil && len(sub.Lanes) > 0 {
		h += float32(len(sub.Lanes)*subH) + laneH/3
		most := 0
		for _, l := range sub.Lanes {
			most = max(most, len(l.Headers))
		}
		w = max(w, float32(tlPad+(t.subColumn(sub)+1)*colW+most*subCol+120))
	}
	return fyne.NewSize(w, h)
}

func (r *stripRenderer) Objects() []fyne.CanvasObject {
	if len(r.subObjs) == 0 {
		return r.objects
	}
	return append(r.objects[:len(r.objects):len(r.objects)], r.subObjs...)
}
func (r *stripRenderer) Destroy() {}

// Layout is part of fyne.WidgetRenderer; slots are placed in Refresh.
func (r *stripRenderer) Layout(fyne.Size) { r.place() }

func centre(i, lane int) fyne.Position {
	return fyne.NewPos(float32(tlPad+i*colW), float32(tlPad+lane*laneH+dotR))
}

// first returns the first visible column.
func (r *stripRenderer) first() int {
	return max(0, int(r.t.p.scroll.Offset.X)/colW-1)
}

// place positions the slots over the visible columns.
func (r *stripRenderer) place() {
	p := r.t.p
	t := p.tl()
	sel := t.at(p.m.scope().sel)
	first := r.first()
	for k, sl := range r.slots {
		i := first + k
		sl.item = i
		if i >= len(t.items) {
			sl.setHidden(true)
			continue
		}
		it := t.items[i]
		c := centre(i, it.lane)
		rad := float32(dotR)
		if i == sel {
			rad += 2
		}
		sl.dot.Move(fyne.NewPos(c.X-rad, c.Y-rad))
		sl.dot.Resize(fyne.NewSize(2*rad, 2*rad))
		sl.sq.Move(fyne.NewPos(c.X-rad, c.Y-rad))
		sl.sq.Resize(fyne.NewSize(2*rad, 2*rad))
		sl.ring.Move(fyne.NewPos(c.X-rad-4, c.Y-rad-4))
		sl.ring.Resize(fyne.NewSize(2*rad+8, 2*rad+8))
		lx := c.X - dotR
		sl.label.Move(fyne.NewPos(lx, c.Y+dotR+2))
		sl.when.Move(fyne.NewPos(lx, c.Y+dotR+2+sl.label.MinSize().Height-2))
		sl.mark.Move(fyne.NewPos(c.X+rad+3, c.Y-sl.mark.MinSize().Height/2))
		for k, w := range sl.watch {
			ws := w.MinSize()
			w.Move(fyne.NewPos(c.X-ws.Width/2, r.watchRowY(k)+(watchRowH-ws.Height)/2))
		}
		if it.parent >= 0 {
			pc := centre(it.parent, t.items[it.parent].lane)
			if pc.Y == c.Y {
				sl.hline.Position1, sl.hline.Position2 = fyne.NewPos(pc.X+dotR, c.Y), fyne.NewPos(c.X-rad, c.Y)
				sl.vline.Hidden = true
			} else {
				sl.vline.Position1, sl.vline.Position2 = fyne.NewPos(pc.X, pc.Y+dotR), fyne.NewPos(pc.X, c.Y)
				sl.hline.Position1, sl.hline.Position2 = fyne.NewPos(pc.X, c.Y), fyne.NewPos(c.X-rad, c.Y)
				sl.vline.Hidden = false
			}
			sl.hline.Hidden = false
		} else {
			sl.hline.Hidden, sl.vline.Hidden = true, true
		}
	}
	r.placeWatchNames()
}

// Refresh restyles the visible slots from the theme and the items.
func (r *stripRenderer) Refresh() {
	p := r.t.p
	t := p.tl()
	sc := p.m.scope()
	sel, head := t.at(sc.sel), len(t.items)-1
	fg := theme.Color(theme.ColorNameForeground)
	bg := theme.Color(theme.ColorNameBackground)
	primary := theme.Color(theme.ColorNamePrimary)
	muted := theme.Color(theme.ColorNameDisabled)
	line := render.Blend(fg, bg, 0.35)
	size := theme.CaptionTextSize()
	r.place()
	for _, sl := range r.slots {
		i := sl.item
		if i >= len(t.items) {
			continue
		}
		it := t.items[i]
		src := it.source
		col := render.Blend(fg, bg, 0.6)
		if i == head {
			col = fg
		}
		if i == sel {
			col = primary
		}
		round := src == checkpoint.SourceLoop || src == checkpoint.SourceInput
		sl.dot.FillColor, sl.dot.StrokeColor, sl.dot.StrokeWidth = col, col, 0
		if src == checkpoint.SourceInput {
			sl.dot.FillColor, sl.dot.StrokeWidth = bg, 2
		}
		sl.sq.FillColor, sl.sq.CornerRadius = col, 2
		sl.dot.Hidden, sl.sq.Hidden = !round, round
		sl.ring.FillColor, sl.ring.StrokeColor, sl.ring.StrokeWidth = color.Transparent, primary, 2
		sl.ring.Hidden = i != sel
		label, when := t.text(i)
		sl.label.Text = oneLine(label, 17)
		sl.label.TextSize, sl.label.Color = size, fg
		sl.label.TextStyle.Bold = i == head || i == sel
		sl.when.Text, sl.when.TextSize, sl.when.Color = when, size, muted
		if it.olderGraph(p.fp) {
			sl.when.Text, sl.when.Color = "old graph", theme.Color(theme.ColorNameWarning)
		}
		sl.mark.Text, sl.mark.TextSize = "", size*1.3
		switch sc.marks[it.id] {
		case markInterrupt:
			sl.mark.Text, sl.mark.Color = "?", theme.Color(theme.ColorNameWarning)
		case markError:
			sl.mark.Text, sl.mark.Color = "!", theme.Color(theme.ColorNameError)
		}
		sl.hline.StrokeColor, sl.hline.StrokeWidth = line, 1.5
		sl.vline.StrokeColor, sl.vline.StrokeWidth = line, 1.5
		sl.label.Hidden, sl.when.Hidden, sl.mark.Hidden = false, false, false
	}
	r.watchRows()
	r.place()
	for _, o := range r.objects {
		if o.Visible() {
			o.Refresh()
		}
	}
	// Sub-lanes are few objects, made again when they or the theme change.
	sub := sc.sub
	col := -1
	if sub != nil {
		col = t.subColumn(sub)
	}
	top := float32(tlPad+max(1, t.lanes)*laneH) + 6
	if sub != r.sub || col != r.subCol || len(r.subObjs) > 0 || r.subPick != sc.dbg.subID || r.subTop != top {
		r.sub, r.subCol, r.subPick, r.subTop = sub, col, sc.dbg.subID, top
		lineTop := float32(0)
		if col >= 0 {
			lineTop = centre(col, t.items[col].lane).Y + 16
		}
		r.subObjs, r.subHits = subObjects(sub, col, lineTop, top, sc.dbg.subID)
	}
}
