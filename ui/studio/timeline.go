package studio

import (
	"fmt"
	"image/color"
	"slices"
	"strings"

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

// tlItem is one checkpoint on the timeline.
type tlItem struct {
	h      checkpoint.Header
	lane   int
	parent int // index of the parent item, -1 for none
	label  string
	when   string
}

// timelinePanel shows the thread's checkpoints left to right, oldest first,
// forks on lanes below their parent. Only headers are held (no values), and
// only the visible columns have canvas objects, so 10,000 checkpoints open
// and scroll like ten.
type timelinePanel struct {
	s       *Studio
	obj     fyne.CanvasObject
	strip   *timelineStrip
	scroll  *container.Scroll
	info    *widget.Label
	items   []tlItem
	index   map[string]int
	lanes   int
	sel     int
	headIdx int
}

func newTimelinePanel(s *Studio) *timelinePanel {
	p := &timelinePanel{s: s, index: map[string]int{}, sel: -1, headIdx: -1}
	p.strip = newTimelineStrip(p)
	p.scroll = container.NewScroll(p.strip)
	p.scroll.Direction = container.ScrollBoth
	p.scroll.OnScrolled = func(fyne.Position) { p.strip.Refresh() }
	p.info = widget.NewLabel("")
	p.info.Importance = widget.LowImportance
	title := widget.NewLabelWithStyle("Timeline", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	height := canvas.NewRectangle(color.Transparent)
	height.SetMinSize(fyne.NewSize(0, laneH+laneH/2+2*tlPad))
	p.obj = container.NewBorder(container.NewHBox(title, p.info), nil, nil, nil,
		container.NewStack(height, p.scroll))
	return p
}

func (p *timelinePanel) count() int { return len(p.items) }

func (p *timelinePanel) knows(id string) bool { _, ok := p.index[id]; return ok }

// head returns the id of the newest checkpoint ("" when empty).
func (p *timelinePanel) head() string {
	if p.headIdx < 0 {
		return ""
	}
	return p.items[p.headIdx].h.Ref.CheckpointID
}

func (p *timelinePanel) clear() {
	p.items, p.index, p.lanes, p.sel, p.headIdx = nil, map[string]int{}, 0, -1, -1
	p.info.SetText("one dot per checkpoint once a thread runs")
	p.strip.Refresh()
}

// merge adds headers (any order) it does not hold yet and lays out lanes.
// Pages of older headers are prepended and newer ones appended without
// sorting; anything else is sorted.
func (p *timelinePanel) merge(hs []checkpoint.Header) {
	var add []tlItem
	for _, h := range hs {
		if _, ok := p.index[h.Ref.CheckpointID]; ok {
			continue
		}
		add = append(add, tlItem{h: h})
		p.index[h.Ref.CheckpointID] = -1
	}
	if len(add) == 0 && len(p.items) > 0 {
		return
	}
	selID := ""
	if p.sel >= 0 && p.sel < len(p.items) {
		selID = p.items[p.sel].h.Ref.CheckpointID
	}
	// Ids are UUIDv7: their order is creation order.
	if !slices.IsSortedFunc(add, cmpItems) {
		slices.SortFunc(add, cmpItems)
	}
	switch n := len(p.items); {
	case n == 0:
		p.items = add
	case cmpItems(add[len(add)-1], p.items[0]) < 0:
		p.items = append(add, p.items...)
	case cmpItems(add[0], p.items[n-1]) > 0:
		p.items = append(p.items, add...)
	default:
		p.items = append(p.items, add...)
		slices.SortFunc(p.items, cmpItems)
	}
	p.layoutLanes()
	p.scroll.Refresh()
	if selID != "" {
		p.setSelected(selID) // older pages shift the selection right
	} else {
		p.strip.Refresh()
	}
}

func cmpItems(a, b tlItem) int { return strings.Compare(a.h.Ref.CheckpointID, b.h.Ref.CheckpointID) }

// layoutLanes gives each checkpoint its parent's lane when it is that
// parent's first child, and a new lane when it starts a fork.
func (p *timelinePanel) layoutLanes() {
	hasChild := make([]bool, len(p.items))
	p.lanes = 0
	if len(p.items) > 0 {
		p.lanes = 1
	}
	forks := 0
	for i := range p.items {
		it := &p.items[i]
		p.index[it.h.Ref.CheckpointID] = i
		it.parent = -1
		it.lane = 0
		if it.h.Parent != nil {
			if j, ok := p.index[it.h.Parent.CheckpointID]; ok && j >= 0 && j < i {
				it.parent = j
				if hasChild[j] {
					it.lane = p.lanes
					p.lanes++
					forks++
				} else {
					it.lane = p.items[j].lane
				}
				hasChild[j] = true
			}
		}
		if it.label != "" {
			continue
		}
		md := it.h.Metadata
		what := joinNames(md.Tasks)
		switch {
		case md.Source == checkpoint.SourceInput:
			what = "input"
		case md.Source == checkpoint.SourceFork:
			what = "fork"
		case md.Source == checkpoint.SourceUpdate:
			what = "update " + what
		case what == "":
			what = string(md.Source)
		}
		it.label = fmt.Sprintf("%d %s", md.Step, what)
		it.when = clock(it.h.TS)
	}
	p.headIdx = len(p.items) - 1
	text := fmt.Sprintf("%d checkpoints", len(p.items))
	if forks > 0 {
		text += fmt.Sprintf(" · %d forks", forks)
	}
	p.info.SetText(text + " · click one to travel back in time")
}

// setSelected marks checkpoint id and scrolls it into view.
func (p *timelinePanel) setSelected(id string) {
	i, ok := p.index[id]
	if !ok {
		p.sel = -1
		p.strip.Refresh()
		return
	}
	p.sel = i
	x := float32(tlPad + i*colW)
	off := p.scroll.Offset
	w := p.scroll.Size().Width
	if w > 0 && (x < off.X || x+colW > off.X+w) {
		off.X = max(0, x-w/2)
		p.scroll.Offset = off
		p.scroll.Refresh()
	}
	y := float32(tlPad + p.items[i].lane*laneH)
	if h := p.scroll.Size().Height; h > 0 && (y < off.Y || y+laneH > off.Y+h) {
		off.Y = max(0, y-h/2)
		p.scroll.Offset = off
		p.scroll.Refresh()
	}
	p.strip.Refresh()
}

// refreshMarks redraws interrupt and error marks.
func (p *timelinePanel) refreshMarks() { p.strip.Refresh() }

// selectAt is called when the user taps column i.
func (p *timelinePanel) selectAt(i int) {
	if i < 0 || i >= len(p.items) {
		return
	}
	p.s.selectCheckpoint(p.items[i].h.Ref.CheckpointID)
}

// timelineStrip draws the visible part of the timeline.
type timelineStrip struct {
	widget.BaseWidget
	p *timelinePanel
}

func newTimelineStrip(p *timelinePanel) *timelineStrip {
	t := &timelineStrip{p: p}
	t.ExtendBaseWidget(t)
	return t
}

// Tapped selects the checkpoint in the tapped column.
func (t *timelineStrip) Tapped(ev *fyne.PointEvent) {
	i := int((ev.Position.X - tlPad + colW/2) / colW)
	if i < 0 {
		return
	}
	// Taps between lanes still pick the column's checkpoint.
	t.p.selectAt(i)
}

// CreateRenderer is part of fyne.Widget.
func (t *timelineStrip) CreateRenderer() fyne.WidgetRenderer {
	r := &stripRenderer{t: t}
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
	}
	return r
}

type slot struct {
	dot, ring         *canvas.Circle
	sq                *canvas.Rectangle
	label, when, mark *canvas.Text
	hline, vline      *canvas.Line
	item              int
}

// setHidden hides or shows every object of the slot without refreshing
// (place runs from Layout, which must not refresh).
func (sl *slot) setHidden(h bool) {
	sl.dot.Hidden, sl.ring.Hidden, sl.sq.Hidden = h, h, h
	sl.label.Hidden, sl.when.Hidden, sl.mark.Hidden = h, h, h
	sl.hline.Hidden, sl.vline.Hidden = h, h
}

type stripRenderer struct {
	t       *timelineStrip
	slots   []*slot
	objects []fyne.CanvasObject
}

func (r *stripRenderer) MinSize() fyne.Size {
	p := r.t.p
	return fyne.NewSize(float32(2*tlPad+len(p.items)*colW), float32(2*tlPad+max(1, p.lanes)*laneH-laneH/3))
}

func (r *stripRenderer) Objects() []fyne.CanvasObject { return r.objects }
func (r *stripRenderer) Destroy()                     {}

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
	first := r.first()
	for k, sl := range r.slots {
		i := first + k
		sl.item = i
		if i >= len(p.items) {
			sl.setHidden(true)
			continue
		}
		it := p.items[i]
		c := centre(i, it.lane)
		rad := float32(dotR)
		if i == p.sel {
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
		if it.parent >= 0 {
			pc := centre(it.parent, p.items[it.parent].lane)
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
}

// Refresh restyles the visible slots from the theme and the items.
func (r *stripRenderer) Refresh() {
	p := r.t.p
	fg := theme.Color(theme.ColorNameForeground)
	bg := theme.Color(theme.ColorNameBackground)
	primary := theme.Color(theme.ColorNamePrimary)
	muted := theme.Color(theme.ColorNamePlaceHolder)
	line := render.Blend(fg, bg, 0.35)
	size := theme.CaptionTextSize()
	r.place()
	for _, sl := range r.slots {
		i := sl.item
		if i >= len(p.items) {
			continue
		}
		it := p.items[i]
		src := it.h.Metadata.Source
		col := render.Blend(fg, bg, 0.6)
		if i == p.headIdx {
			col = fg
		}
		if i == p.sel {
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
		sl.ring.Hidden = i != p.sel
		sl.label.Text = oneLine(it.label, 15)
		if src == checkpoint.SourceUpdate || src == checkpoint.SourceFork {
			sl.label.Text = oneLine(it.label, 15)
		}
		sl.label.TextSize, sl.label.Color = size, fg
		sl.label.TextStyle.Bold = i == p.headIdx || i == p.sel
		sl.when.Text, sl.when.TextSize, sl.when.Color = it.when, size*0.9, muted
		sl.mark.Text, sl.mark.TextSize = "", size*1.3
		switch p.s.marks[it.h.Ref.CheckpointID] {
		case "interrupt":
			sl.mark.Text, sl.mark.Color = "?", theme.Color(theme.ColorNameWarning)
		case "error":
			sl.mark.Text, sl.mark.Color = "!", theme.Color(theme.ColorNameError)
		}
		sl.hline.StrokeColor, sl.hline.StrokeWidth = line, 1.5
		sl.vline.StrokeColor, sl.vline.StrokeWidth = line, 1.5
		sl.label.Hidden, sl.when.Hidden, sl.mark.Hidden = false, false, false
	}
	r.place()
	for _, o := range r.objects {
		if o.Visible() {
			o.Refresh()
		}
	}
}
