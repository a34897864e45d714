package graphview

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/render"
)

// Legend explains the graph view's colours and marks in two compact rows:
// node states, then breakpoints and edge kinds. It draws its samples with
// the same palette as the view, so it follows the theme.
type Legend struct {
	widget.BaseWidget
}

// NewLegend returns a legend.
func NewLegend() *Legend {
	l := &Legend{}
	l.ExtendBaseWidget(l)
	return l
}

// CreateRenderer is part of fyne.Widget.
func (l *Legend) CreateRenderer() fyne.WidgetRenderer {
	r := &legendRenderer{l: l}
	states := []render.NodeState{render.StateNext, render.StateRunning, render.StateFinished, render.StateInterrupted, render.StateFailed}
	for _, s := range states {
		r.add(0, &legendItem{state: s, box: canvas.NewRectangle(color.Transparent)}, s.String())
	}
	r.add(1, &legendItem{dot: canvas.NewCircle(color.Transparent)}, "breakpoint")
	for _, k := range []engine.EdgeKind{engine.EdgeConditional, engine.EdgeSend, engine.EdgeJoin} {
		name := k.String()
		if k == engine.EdgeSend {
			name = "Send"
		}
		r.add(1, &legendItem{edge: k, isEdge: true}, name)
	}
	r.Refresh()
	return r
}

type legendItem struct {
	row    int
	state  render.NodeState
	box    *canvas.Rectangle
	badge  *canvas.Text // "!" on the interrupted sample
	dot    *canvas.Circle
	isEdge bool
	edge   engine.EdgeKind
	lines  []*canvas.Line
	label  *canvas.Text
}

type legendRenderer struct {
	l       *Legend
	items   []*legendItem
	objects []fyne.CanvasObject
}

const (
	swatchW, swatchH = 24, 14
	legendGap        = 4  // between a sample and its label
	legendItemGap    = 14 // between items
)

func (r *legendRenderer) add(row int, it *legendItem, text string) {
	it.row = row
	it.label = canvas.NewText(text, color.Black)
	it.label.TextSize = theme.CaptionTextSize()
	switch {
	case it.box != nil:
		it.box.CornerRadius = 4
		r.objects = append(r.objects, it.box)
		if it.state == render.StateInterrupted {
			it.badge = canvas.NewText("!", color.Black)
			it.badge.TextStyle.Bold = true
			it.badge.TextSize = 10
			r.objects = append(r.objects, it.badge)
		}
	case it.dot != nil:
		r.objects = append(r.objects, it.dot)
	case it.isEdge:
		// Converging strokes for a join; a sample stroke otherwise.
		n := 1
		if it.edge == engine.EdgeJoin {
			n = 3
		}
		_, dash := edgeStyle(it.edge)
		if dash != nil {
			n = swatchW / int(dash[0]+dash[1]) // one line per dash
		}
		for range n {
			ln := canvas.NewLine(color.Black)
			it.lines = append(it.lines, ln)
			r.objects = append(r.objects, ln)
		}
	}
	r.objects = append(r.objects, it.label)
	r.items = append(r.items, it)
}

func edgeStyle(k engine.EdgeKind) (float64, []float64) {
	return render.EdgeWidth(k), render.EdgeDash(k)
}

// Layout is part of fyne.WidgetRenderer.
func (r *legendRenderer) Layout(fyne.Size) {
	pad := theme.Padding()
	rowH := max(float32(swatchH), r.items[0].label.MinSize().Height)
	x := [2]float32{pad, pad}
	for _, it := range r.items {
		y := pad + float32(it.row)*(rowH+pad)
		cy := y + rowH/2
		x0 := x[it.row]
		switch {
		case it.box != nil:
			it.box.Move(fyne.NewPos(x0, cy-swatchH/2))
			it.box.Resize(fyne.NewSize(swatchW, swatchH))
			if it.badge != nil {
				s := it.badge.MinSize()
				it.badge.Move(fyne.NewPos(x0+swatchW/2-s.Width/2, cy-s.Height/2))
				it.badge.Resize(s)
			}
		case it.dot != nil:
			d := float32(render.BreakpointRadius * 2)
			it.dot.Move(fyne.NewPos(x0+swatchW/2-d/2, cy-d/2))
			it.dot.Resize(fyne.NewSize(d, d))
		case it.isEdge && it.edge == engine.EdgeJoin:
			it.lines[0].Position1, it.lines[0].Position2 = fyne.NewPos(x0, cy-5), fyne.NewPos(x0+swatchW/2, cy)
			it.lines[1].Position1, it.lines[1].Position2 = fyne.NewPos(x0, cy+5), fyne.NewPos(x0+swatchW/2, cy)
			it.lines[2].Position1, it.lines[2].Position2 = fyne.NewPos(x0+swatchW/2, cy), fyne.NewPos(x0+swatchW, cy)
		case it.isEdge:
			_, dash := edgeStyle(it.edge)
			if dash == nil {
				it.lines[0].Position1, it.lines[0].Position2 = fyne.NewPos(x0, cy), fyne.NewPos(x0+swatchW, cy)
				break
			}
			p := float32(dash[0] + dash[1])
			for k, ln := range it.lines {
				ln.Position1 = fyne.NewPos(x0+float32(k)*p, cy)
				ln.Position2 = fyne.NewPos(x0+float32(k)*p+float32(dash[0]), cy)
			}
		}
		s := it.label.MinSize()
		it.label.Move(fyne.NewPos(x0+swatchW+legendGap, cy-s.Height/2))
		it.label.Resize(s)
		x[it.row] = x0 + swatchW + legendGap + s.Width + legendItemGap
	}
}

// MinSize is part of fyne.WidgetRenderer: both rows, side by side items.
func (r *legendRenderer) MinSize() fyne.Size {
	pad := theme.Padding()
	var w [2]float32
	rowH := float32(swatchH)
	for _, it := range r.items {
		s := it.label.MinSize()
		rowH = max(rowH, s.Height)
		w[it.row] += swatchW + legendGap + s.Width + legendItemGap
	}
	return fyne.NewSize(max(w[0], w[1])-legendItemGap+2*pad, 2*rowH+3*pad)
}

// Refresh is part of fyne.WidgetRenderer: it recolours from the theme.
func (r *legendRenderer) Refresh() {
	p := ThemePalette(r.l)
	for _, it := range r.items {
		it.label.Color = p.Text
		it.label.TextSize = theme.CaptionTextSize()
		switch {
		case it.box != nil:
			st := p.StyleFor(it.state)
			it.box.FillColor, it.box.StrokeColor, it.box.StrokeWidth = st.Fill, st.Stroke, float32(st.StrokeWidth)
			if it.badge != nil {
				it.badge.Color = st.Text
			}
		case it.dot != nil:
			it.dot.FillColor, it.dot.StrokeColor, it.dot.StrokeWidth = p.Error, p.Background, 1.5
		case it.isEdge:
			w, _ := edgeStyle(it.edge)
			for _, ln := range it.lines {
				ln.StrokeColor, ln.StrokeWidth = p.Edge, float32(w)
			}
		}
	}
	r.Layout(r.l.Size())
	for _, o := range r.objects {
		o.Refresh()
	}
}

// Objects is part of fyne.WidgetRenderer.
func (r *legendRenderer) Objects() []fyne.CanvasObject { return r.objects }

// Destroy is part of fyne.WidgetRenderer.
func (r *legendRenderer) Destroy() {}
