package studio

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/render"
)

// sparkline draws a series as bars, one per point, scaled to its largest:
// how a store or a thread grew. Zero values draw a thin baseline mark so
// that gaps read as gaps.
type sparkline struct {
	widget.BaseWidget
	values []float64
	height float32
}

func newSparkline(height float32) *sparkline {
	s := &sparkline{height: height}
	s.ExtendBaseWidget(s)
	return s
}

// set shows values.
func (s *sparkline) set(values []float64) {
	s.values = values
	s.Refresh()
}

// CreateRenderer is part of fyne.Widget.
func (s *sparkline) CreateRenderer() fyne.WidgetRenderer {
	r := &sparkRenderer{s: s, base: canvas.NewRectangle(color.Transparent)}
	r.Refresh()
	return r
}

type sparkRenderer struct {
	s    *sparkline
	base *canvas.Rectangle
	bars []*canvas.Rectangle
	objs []fyne.CanvasObject
}

func (r *sparkRenderer) MinSize() fyne.Size { return fyne.NewSize(120, r.s.height) }
func (r *sparkRenderer) Objects() []fyne.CanvasObject {
	return r.objs
}
func (r *sparkRenderer) Destroy() {}

func (r *sparkRenderer) Layout(size fyne.Size) {
	n := len(r.bars)
	r.base.Move(fyne.NewPos(0, size.Height-1))
	r.base.Resize(fyne.NewSize(size.Width, 1))
	if n == 0 {
		return
	}
	most := 0.0
	for _, v := range r.s.values {
		most = max(most, v)
	}
	w := size.Width / float32(n)
	gap := min(float32(2), w/4)
	for i, b := range r.bars {
		h := float32(1)
		if most > 0 && r.s.values[i] > 0 {
			h = max(2, float32(r.s.values[i]/most)*(size.Height-1))
		}
		b.Move(fyne.NewPos(float32(i)*w+gap/2, size.Height-1-h))
		b.Resize(fyne.NewSize(w-gap, h))
	}
}

func (r *sparkRenderer) Refresh() {
	fg := theme.Color(theme.ColorNameForeground)
	bg := theme.Color(theme.ColorNameBackground)
	primary := theme.Color(theme.ColorNamePrimary)
	r.base.FillColor = render.Blend(fg, bg, 0.3)
	for len(r.bars) < len(r.s.values) {
		r.bars = append(r.bars, canvas.NewRectangle(primary))
	}
	r.bars = r.bars[:len(r.s.values)]
	r.objs = append(r.objs[:0], r.base)
	for i, b := range r.bars {
		b.FillColor = primary
		if r.s.values[i] <= 0 {
			b.FillColor = render.Blend(fg, bg, 0.25)
		}
		r.objs = append(r.objs, b)
	}
	r.Layout(r.s.Size())
	canvas.Refresh(r.s)
}

// stackBar draws parts of a whole side by side, each as wide as its share:
// what a store's bytes are made of.
type stackBar struct {
	widget.BaseWidget
	parts  []float64
	colors []fyne.ThemeColorName
}

func newStackBar(colors ...fyne.ThemeColorName) *stackBar {
	b := &stackBar{colors: colors}
	b.ExtendBaseWidget(b)
	return b
}

// set shows parts (one per colour).
func (b *stackBar) set(parts ...float64) {
	b.parts = parts
	b.Refresh()
}

// CreateRenderer is part of fyne.Widget.
func (b *stackBar) CreateRenderer() fyne.WidgetRenderer {
	r := &stackRenderer{b: b, track: canvas.NewRectangle(color.Transparent)}
	r.track.CornerRadius = 3
	for range b.colors {
		r.segs = append(r.segs, canvas.NewRectangle(color.Transparent))
	}
	r.Refresh()
	return r
}

type stackRenderer struct {
	b     *stackBar
	track *canvas.Rectangle
	segs  []*canvas.Rectangle
}

func (r *stackRenderer) MinSize() fyne.Size { return fyne.NewSize(120, 12) }
func (r *stackRenderer) Destroy()           {}
func (r *stackRenderer) Objects() []fyne.CanvasObject {
	out := []fyne.CanvasObject{r.track}
	for _, s := range r.segs {
		out = append(out, s)
	}
	return out
}

func (r *stackRenderer) Layout(size fyne.Size) {
	r.track.Resize(size)
	total := 0.0
	for _, p := range r.b.parts {
		total += p
	}
	x := float32(0)
	for i, s := range r.segs {
		w := float32(0)
		if total > 0 && i < len(r.b.parts) {
			w = float32(r.b.parts[i]/total) * size.Width
		}
		s.Move(fyne.NewPos(x, 0))
		s.Resize(fyne.NewSize(w, size.Height))
		x += w
	}
}

func (r *stackRenderer) Refresh() {
	fg := theme.Color(theme.ColorNameForeground)
	bg := theme.Color(theme.ColorNameBackground)
	r.track.FillColor = render.Blend(fg, bg, 0.12)
	for i, s := range r.segs {
		s.FillColor = theme.Color(r.b.colors[i])
	}
	r.Layout(r.b.Size())
	canvas.Refresh(r.b)
}

// fracBar is a thin bar filled to a fraction: a row's share of the
// largest row.
type fracBar struct {
	widget.BaseWidget
	frac float64
}

func newFracBar() *fracBar {
	b := &fracBar{}
	b.ExtendBaseWidget(b)
	return b
}

// set fills the bar to f (0 to 1).
func (b *fracBar) set(f float64) {
	if f != b.frac {
		b.frac = f
		b.Refresh()
	}
}

// CreateRenderer is part of fyne.Widget.
func (b *fracBar) CreateRenderer() fyne.WidgetRenderer {
	r := &fracRenderer{b: b, track: canvas.NewRectangle(color.Transparent), fill: canvas.NewRectangle(color.Transparent)}
	r.Refresh()
	return r
}

type fracRenderer struct {
	b           *fracBar
	track, fill *canvas.Rectangle
}

func (r *fracRenderer) MinSize() fyne.Size           { return fyne.NewSize(40, 4) }
func (r *fracRenderer) Destroy()                     {}
func (r *fracRenderer) Objects() []fyne.CanvasObject { return []fyne.CanvasObject{r.track, r.fill} }
func (r *fracRenderer) Layout(size fyne.Size)        { r.track.Resize(size); r.fill.Resize(r.fillSize(size)) }
func (r *fracRenderer) fillSize(size fyne.Size) fyne.Size {
	return fyne.NewSize(size.Width*float32(r.b.frac), size.Height)
}

func (r *fracRenderer) Refresh() {
	fg := theme.Color(theme.ColorNameForeground)
	bg := theme.Color(theme.ColorNameBackground)
	r.track.FillColor = render.Blend(fg, bg, 0.1)
	r.fill.FillColor = theme.Color(theme.ColorNamePrimary)
	r.Layout(r.b.Size())
	canvas.Refresh(r.b)
}
