package studio

// The watches along the timeline: a row per watch under the branches, the
// value at each checkpoint in its column (true in the success colour,
// false muted, a value that changed from the checkpoint before in bold),
// the watch's name kept at the left edge of the view.

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

const (
	watchRowH    = 16 // one watch row, in pixels
	maxWatchRows = 4  // rows the timeline draws; more watches show in the Watches tab only
)

// shownWatches is how many watch rows the timeline draws.
func shownWatches(m *model) int { return min(len(m.dbg.Watches), maxWatchRows) }

// watchRowsH is the height the watch rows add to the timeline.
func watchRowsH(m *model) float32 {
	if n := shownWatches(m); n > 0 {
		return float32(n*watchRowH + 4)
	}
	return 0
}

// watchRowY is the top of watch row k: the rows stay at the bottom of the
// view whatever its scroll, under the branches when they are few.
func (r *stripRenderer) watchRowY(k int) float32 {
	p := r.t.p
	t := p.tl()
	top := float32(tlPad + max(1, t.lanes)*laneH - 2)
	if sub := p.m.scope().sub; sub != nil && len(sub.Lanes) > 0 {
		top += float32(len(sub.Lanes)*subH) + laneH/3
	}
	if vh := p.scroll.Size().Height; vh > 0 {
		top = min(top, p.scroll.Offset.Y+vh-watchRowsH(p.m)+2)
	}
	return top + float32(k*watchRowH)
}

// watchRows sets the watch values of the visible slots and the names at
// the left edge; place positions them.
func (r *stripRenderer) watchRows() {
	p := r.t.p
	m := p.m
	t := p.tl()
	sc := m.scope()
	n := shownWatches(m)
	cols := sc.dbg.cols
	if cols != nil && cols.Gen != m.dbg.gen {
		cols = nil
	}
	fg := theme.Color(theme.ColorNameForeground)
	muted := theme.Color(theme.ColorNameDisabled)
	trueC := theme.Color(theme.ColorNameSuccess)
	bad := theme.Color(theme.ColorNameError)
	size := theme.CaptionTextSize()
	for _, sl := range r.slots {
		for k, w := range sl.watch {
			w.Text, w.TextSize = "", size
			if k >= n || cols == nil || sl.item >= len(t.items) {
				w.Hidden = true
				continue
			}
			it := t.items[sl.item]
			row, has := cols.Rows[it.id]
			if !has || k >= len(row.Values) {
				w.Hidden = true
				continue
			}
			w.Hidden = false
			v, err := row.Values[k], row.Errs[k]
			w.Text, w.Color, w.TextStyle.Bold = watchText(v, err), fg, false
			switch b, isBool := v.(bool); {
			case err != nil:
				w.Color = bad
			case isBool && b:
				w.Color, w.TextStyle.Bold = trueC, true
			case isBool:
				w.Color = muted
			default:
				if it.parent >= 0 {
					prow, known := cols.Rows[t.items[it.parent].id]
					switch {
					case known && k < len(prow.Values) && !jsonEqual(toJSON(prow.Values[k]), toJSON(v)):
						w.TextStyle.Bold = true // changed here
					case known:
						w.Color = muted
					}
				}
			}
		}
	}
	// Names at the left edge of the view, on the panel's background.
	bg := theme.Color(theme.ColorNameBackground)
	r.wbg.Hidden = n == 0
	r.wbg.FillColor = withAlpha(bg, 0xe6)
	widest := float32(0)
	for k, l := range r.wnames {
		l.TextSize, l.Color = size, fg
		if k >= n {
			l.Text, l.Hidden = "", true
			continue
		}
		l.Text, l.Hidden = oneLine(m.dbg.Watches[k].Src, 14), false
		widest = max(widest, l.MinSize().Width)
	}
	r.wband.Hidden = n == 0
	r.wband.FillColor = bg
	r.wbgWidth = widest + 12
	r.placeWatchNames()
}

// placeWatchNames keeps the watch rows' band and names in view.
func (r *stripRenderer) placeWatchNames() {
	p := r.t.p
	n := shownWatches(p.m)
	if n == 0 {
		return
	}
	x := p.scroll.Offset.X
	for k, l := range r.wnames {
		l.Move(fyne.NewPos(x+6, r.watchRowY(k)+(watchRowH-l.MinSize().Height)/2))
	}
	r.wbg.Move(fyne.NewPos(x, r.watchRowY(0)))
	r.wbg.Resize(fyne.NewSize(r.wbgWidth, float32(n*watchRowH)))
	w := p.scroll.Size().Width
	if w <= 0 {
		w = maxView
	}
	r.wband.Move(fyne.NewPos(x, r.watchRowY(0)-2))
	r.wband.Resize(fyne.NewSize(w, float32(n*watchRowH)+4))
}

// withAlpha returns c with alpha a.
func withAlpha(c color.Color, a uint8) color.Color {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	n.A = a
	return n
}
