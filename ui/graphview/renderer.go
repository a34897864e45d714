package graphview

import (
	"image/color"
	"math"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/render"
)

// Text sizes on screen, in pixels: labels never get smaller than
// minText (so they stay readable when zoomed out, overflowing their box if
// they must) nor larger than maxText; notes and edge labels are hidden
// below minSmallText instead, as they are secondary.
const (
	minText      = 7
	maxText      = 30
	minSmallText = 6.5
	minBadgeText = 10 // badges ("?", "×3") stay readable at any zoom
)

// graphRenderer draws a GraphView. All graph objects live in one
// container whose position is the pan offset, so panning moves one object;
// zooming places every object again; highlights only recolour.
type graphRenderer struct {
	gv      *GraphView
	geom    *render.Geometry // what the objects were built for
	content *fyne.Container  // every graph object, in graph order, positioned for the zoom
	bar     *fyne.Container  // zoom buttons
	barBg   *canvas.Rectangle

	clusters []clusterObjs
	edges    []edgeObjs
	nodes    []nodeObjs

	selection      *canvas.Rectangle
	ghosts         [2]*canvas.Circle // breakpoint markers of the hovered node
	pal            render.Palette
	placedZoom     float32
	placedPal      bool
	objects        []fyne.CanvasObject
	fittedSize     fyne.Size // the size the graph was last fitted to
	lastHighlights []nodeLook
}

type clusterObjs struct {
	box   *canvas.Rectangle
	label *canvas.Text
	look  render.NodeState
}

type edgeObjs struct {
	segs   [][2]render.Point // graph coordinates, dashes already cut
	lines  []*canvas.Line
	arrow  *canvas.Polygon // nil when the edge has no arrowhead
	labels []*canvas.Text
	lpos   []render.TextLine
	width  float64
}

type nodeObjs struct {
	box    *canvas.Rectangle // nil for dots
	inner  *canvas.Rectangle // second border of END and collapsed subgraphs; nil otherwise
	dot    *canvas.Circle    // junctions and the START/END dots of expanded subgraphs; nil otherwise
	ring   bool              // dot is END's: a ring around a smaller dot
	texts  []*canvas.Text
	lines  []render.TextLine
	fit    float32 // shrinks the text when Fyne's font is wider than Graphviz's estimate
	before *canvas.Circle
	after  *canvas.Circle
	badgeB *canvas.Rectangle
	badge  *canvas.Text
}

// nodeLook is what a node's appearance depends on, to skip unchanged nodes.
type nodeLook struct {
	state         render.NodeState
	before, after bool
	badge         string
}

func newRenderer(gv *GraphView) *graphRenderer {
	r := &graphRenderer{gv: gv, content: container.NewWithoutLayout()}
	zoom := func(icon fyne.Resource, f func()) *widget.Button {
		b := widget.NewButtonWithIcon("", icon, f)
		b.Importance = widget.LowImportance
		return b
	}
	r.bar = container.NewHBox(
		zoom(theme.ZoomOutIcon(), gv.ZoomOut),
		zoom(theme.ZoomInIcon(), gv.ZoomIn),
		zoom(theme.ZoomFitIcon(), gv.Fit),
	)
	r.barBg = canvas.NewRectangle(color.Transparent)
	r.barBg.CornerRadius = 6
	r.build()
	return r
}

// build creates the canvas objects for the view's geometry.
func (r *graphRenderer) build() {
	g := r.gv.geom
	r.geom = g
	r.clusters, r.edges, r.nodes = nil, nil, nil
	r.lastHighlights = nil
	r.placedZoom = 0
	var objs []fyne.CanvasObject
	// The selection outline lies under the nodes, so that breakpoint dots
	// and badges stay on top of it.
	r.selection = canvas.NewRectangle(color.Transparent)
	r.selection.StrokeWidth = 2
	r.selection.Hide()
	if g != nil {
		r.clusters = make([]clusterObjs, len(g.Clusters))
		for i, c := range g.Clusters {
			co := &r.clusters[i]
			co.box = canvas.NewRectangle(color.Transparent)
			co.label = canvas.NewText(c.Label, color.Black)
			co.label.Alignment = fyne.TextAlignCenter
			co.look = -1
			objs = append(objs, co.box, co.label)
		}
		r.edges = make([]edgeObjs, len(g.Edges))
		for i := range g.Edges {
			e := &g.Edges[i]
			eo := &r.edges[i]
			eo.width = render.EdgeWidth(e.Kind)
			eo.segs = cutDashes(e, render.EdgeDash(e.Kind))
			eo.lines = make([]*canvas.Line, len(eo.segs))
			for k := range eo.segs {
				eo.lines[k] = canvas.NewLine(color.Black)
				objs = append(objs, eo.lines[k])
			}
			if e.Head != nil {
				eo.arrow = canvas.NewPolygon(3, color.Black)
				objs = append(objs, eo.arrow)
			}
			eo.lpos = render.EdgeTextLayout(g, e)
			for _, l := range eo.lpos {
				t := canvas.NewText(l.Text, color.Black)
				t.Alignment = fyne.TextAlignCenter
				eo.labels = append(eo.labels, t)
				objs = append(objs, t)
			}
		}
		objs = append(objs, r.selection)
		r.nodes = make([]nodeObjs, len(g.Nodes))
		for i := range g.Nodes {
			n := &g.Nodes[i]
			no := &r.nodes[i]
			if n.Kind == render.BoxJunction || len(n.Lines) == 0 {
				no.dot = canvas.NewCircle(color.Black)
				no.ring = n.Kind == render.BoxEnd
				objs = append(objs, no.dot)
				continue
			}
			no.box = canvas.NewRectangle(color.Black)
			objs = append(objs, no.box)
			if n.Kind == render.BoxEnd || n.Kind == render.BoxSubgraph {
				no.inner = canvas.NewRectangle(color.Transparent)
				objs = append(objs, no.inner)
			}
			no.lines = render.NodeTextLayout(g, *n)
			no.fit = 1
			for _, l := range no.lines {
				t := canvas.NewText(l.Text, color.Black)
				t.Alignment = fyne.TextAlignCenter
				no.texts = append(no.texts, t)
				objs = append(objs, t)
				// Graphviz sized the box with its own font metrics; if
				// the theme's font is wider, shrink this node's text.
				if w := measure(l.Text, float32(l.Size)); w > 0 {
					no.fit = min(no.fit, float32(n.Rect.W-8)/w)
				}
			}
			no.before, no.after = canvas.NewCircle(color.Black), canvas.NewCircle(color.Black)
			no.badgeB = canvas.NewRectangle(color.Black)
			no.badge = canvas.NewText("", color.Black)
			no.badge.Alignment = fyne.TextAlignCenter
			no.badge.TextStyle.Bold = true
			for _, o := range []fyne.CanvasObject{no.before, no.after, no.badgeB, no.badge} {
				o.Hide()
			}
			objs = append(objs, no.before, no.after, no.badgeB, no.badge)
		}
	}
	r.ghosts = [2]*canvas.Circle{canvas.NewCircle(color.Transparent), canvas.NewCircle(color.Transparent)}
	r.ghosts[0].Hide()
	r.ghosts[1].Hide()
	objs = append(objs, r.ghosts[0], r.ghosts[1])
	r.content.Objects = objs
	r.objects = []fyne.CanvasObject{r.content, r.barBg, r.bar}
	r.placedPal = false
}

// minFit returns the smallest text shrink of the nodes (1 when none
// shrinks).
func (r *graphRenderer) minFit() float32 {
	f := float32(1)
	for _, no := range r.nodes {
		if no.fit > 0 {
			f = min(f, no.fit)
		}
	}
	return f
}

// measure returns the width of s in the theme's font at size, 0 when no
// app is running to measure with.
func measure(s string, size float32) float32 {
	if fyne.CurrentApp() == nil || fyne.CurrentApp().Driver() == nil {
		return 0
	}
	return fyne.MeasureText(s, size, fyne.TextStyle{}).Width
}

// cutDashes returns an edge's polyline (ending at the arrowhead's base) as
// segments, cut into dashes of the pattern dash (on, off) when non-nil.
func cutDashes(e *render.EdgeGeom, dash []float64) [][2]render.Point {
	pts := e.Points
	if e.Head != nil && e.Head.Base != pts[len(pts)-1] {
		pts = append(append([]render.Point(nil), pts...), e.Head.Base)
	}
	var out [][2]render.Point
	if dash == nil {
		for i := 1; i < len(pts); i++ {
			out = append(out, [2]render.Point{pts[i-1], pts[i]})
		}
		return out
	}
	on, period := dash[0], dash[0]+dash[1]
	pos := 0.0 // distance along the pattern
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		l := a.Dist(b)
		for t := 0.0; t < l; {
			phase := math.Mod(pos, period)
			var run float64
			if phase < on {
				run = min(on-phase, l-t)
				// pos carries over from segment to segment, so a dash
				// cut by a vertex goes on along the next segment.
				p := a.Add(b.Sub(a).Scale(t / l))
				q := a.Add(b.Sub(a).Scale((t + run) / l))
				out = append(out, [2]render.Point{p, q})
			} else {
				run = min(period-phase, l-t)
			}
			t += run
			pos += run
		}
	}
	return out
}

// Layout is part of fyne.WidgetRenderer. It places the zoom bar, fits the
// graph on first show, and never refreshes.
func (r *graphRenderer) Layout(s fyne.Size) {
	bs := r.bar.MinSize()
	pad := theme.Padding()
	r.bar.Resize(bs)
	r.bar.Move(fyne.NewPos(s.Width-bs.Width-pad, pad))
	r.barBg.Resize(bs)
	r.barBg.Move(r.bar.Position())
	if (r.gv.needFit || r.gv.autoFit && s != r.fittedSize) && s.Width > 0 && s.Height > 0 {
		r.fittedSize = s
		r.gv.fit(s)
	} else if r.placedZoom != r.gv.zoom {
		r.place()
	}
	r.content.Move(r.gv.offset)
}

// MinSize is part of fyne.WidgetRenderer: room for the zoom bar and a bit
// of graph.
func (r *graphRenderer) MinSize() fyne.Size {
	bs := r.bar.MinSize()
	return fyne.NewSize(max(bs.Width, 120), bs.Height+80)
}

// Refresh is part of fyne.WidgetRenderer: it re-reads the theme and
// recolours everything (Fyne calls it on theme changes).
func (r *graphRenderer) Refresh() {
	if r.geom != r.gv.geom {
		r.build()
	}
	if r.placedZoom != r.gv.zoom {
		r.place()
	}
	r.content.Move(r.gv.offset)
	r.applyStyles(true)
	r.placeSelection()
	r.placeHover()
	// A translucent backdrop keeps the zoom buttons readable over edges.
	r.barBg.FillColor = withAlpha(r.pal.Background, 0xe0)
	r.barBg.Refresh()
	r.bar.Refresh()
	canvas.Refresh(r.content)
}

// Objects is part of fyne.WidgetRenderer.
func (r *graphRenderer) Objects() []fyne.CanvasObject { return r.objects }

// Destroy is part of fyne.WidgetRenderer.
func (r *graphRenderer) Destroy() {
	if r.gv.r == r {
		r.gv.r = nil
	}
}

// pan moves the drawing to the view's offset.
func (r *graphRenderer) pan() { r.content.Move(r.gv.offset) }

// z converts a graph length to pixels at the current zoom.
func (r *graphRenderer) z(v float64) float32 { return float32(v) * r.gv.zoom }

func (r *graphRenderer) pos(p render.Point) fyne.Position {
	return fyne.NewPos(r.z(p.X), r.z(p.Y))
}

func (r *graphRenderer) rect(o fyne.CanvasObject, b render.Rect) {
	o.Move(fyne.NewPos(r.z(b.X), r.z(b.Y)))
	o.Resize(fyne.NewSize(r.z(b.W), r.z(b.H)))
}

// scaled returns a stroke or mark size at the zoom, within bounds that
// keep it visible when zoomed out and modest when zoomed in.
func (r *graphRenderer) scaled(v float64, lo, hi float32) float32 {
	return float32(v) * max(lo, min(r.gv.zoom, hi))
}

// text sizes and centres t on c; it hides t when size is 0.
func (r *graphRenderer) text(t *canvas.Text, c render.Point, size float32) {
	if size <= 0 {
		t.Hide()
		return
	}
	t.Show()
	t.TextSize = size
	s := t.MinSize()
	p := r.pos(c)
	t.Move(fyne.NewPos(p.X-s.Width/2, p.Y-s.Height/2))
	t.Resize(s)
	t.Refresh()
}

func textSize(pt float64, zoom, fit float32) float32 {
	return max(minText, min(maxText, float32(pt)*zoom*fit))
}

func smallTextSize(pt float64, zoom float32) float32 {
	s := float32(pt) * zoom
	if s < minSmallText {
		return 0
	}
	return min(maxText, s)
}

// place positions every object for the current zoom.
func (r *graphRenderer) place() {
	g := r.geom
	r.placedZoom = r.gv.zoom
	if g == nil {
		return
	}
	zoom := r.gv.zoom
	for i, c := range g.Clusters {
		co := &r.clusters[i]
		r.rect(co.box, c.Rect)
		co.box.CornerRadius = r.scaled(8, 0.3, 1)
		r.text(co.label, c.LabelPos, textSize(g.FontSize-1, zoom, 1))
	}
	for i := range g.Edges {
		e := &g.Edges[i]
		eo := &r.edges[i]
		w := r.scaled(eo.width, 0.7, 2)
		for k, s := range eo.segs {
			l := eo.lines[k]
			l.Position1, l.Position2 = r.pos(s[0]), r.pos(s[1])
			l.StrokeWidth = w
			l.Refresh()
		}
		if eo.arrow != nil {
			a := e.Head
			// A regular triangle whose first vertex is the tip: its centre
			// lies one circumradius behind the tip, its base 1.5 radii.
			length := r.z(a.Tip.Dist(a.Base))
			rad := length / 1.5
			dx, dy := a.Tip.X-a.Base.X, a.Tip.Y-a.Base.Y
			n := math.Hypot(dx, dy)
			if n == 0 {
				n = 1
			}
			tip := r.pos(a.Tip)
			cx, cy := tip.X-float32(dx/n)*rad, tip.Y-float32(dy/n)*rad
			eo.arrow.Move(fyne.NewPos(cx-rad, cy-rad))
			eo.arrow.Resize(fyne.NewSize(2*rad, 2*rad))
			eo.arrow.Angle = float32(math.Atan2(dy, dx)*180/math.Pi) + 90
			if a.Open {
				eo.arrow.StrokeWidth = r.scaled(1.2, 0.7, 1.5)
			}
			eo.arrow.Refresh()
		}
		for k, l := range eo.lpos {
			r.text(eo.labels[k], l.Center, smallTextSize(l.Size, zoom))
		}
	}
	for i := range g.Nodes {
		n := &g.Nodes[i]
		no := &r.nodes[i]
		if no.dot != nil {
			r.rect(no.dot, n.Rect)
			continue
		}
		r.rect(no.box, n.Rect)
		no.box.CornerRadius = r.z(render.NodeRadius(*n))
		if no.inner != nil {
			px := 3.5 * max(0.6, min(zoom, 1.5)) // gap between the two borders
			r.rect(no.inner, n.Rect.Inset(-float64(px/zoom)))
			no.inner.CornerRadius = max(0, no.box.CornerRadius-px)
		}
		for k, l := range no.lines {
			size := textSize(l.Size, zoom, no.fit)
			if l.Note {
				size = smallTextSize(l.Size, zoom*no.fit)
			}
			r.text(no.texts[k], l.Center, size)
		}
		rad := r.gv.markerRadius()
		c := n.Rect.Center()
		for k, d := range []*canvas.Circle{no.before, no.after} {
			x := n.Rect.X + float64(k)*n.Rect.W
			p := r.pos(render.Point{X: x, Y: c.Y})
			d.Move(fyne.NewPos(p.X-rad, p.Y-rad))
			d.Resize(fyne.NewSize(2*rad, 2*rad))
			d.StrokeWidth = 1.5
		}
		r.placeBadge(i)
	}
	r.placeSelection()
	r.placeHover()
}

// placeBadge sizes node i's badge for its text.
func (r *graphRenderer) placeBadge(i int) {
	n := &r.geom.Nodes[i]
	no := &r.nodes[i]
	if no.badge == nil || no.badge.Text == "" {
		return
	}
	// The badge's text is never smaller than minBadgeText, and its pill
	// grows around it.
	f := max(minBadgeText/9.0, min(r.gv.zoom, 1.6))
	no.badge.TextSize = 9 * f
	s := no.badge.MinSize()
	hs := render.BadgeRadius(no.badge.Text)
	w, h := max(float32(hs.X*2)*f, s.Width+6), max(float32(hs.Y*2)*f, s.Height)
	c := r.pos(render.Point{X: n.Rect.X + n.Rect.W - 2, Y: n.Rect.Y + 2})
	no.badgeB.Move(fyne.NewPos(c.X-w/2, c.Y-h/2))
	no.badgeB.Resize(fyne.NewSize(w, h))
	no.badgeB.CornerRadius = h / 2
	no.badgeB.StrokeWidth = 1.5
	no.badge.Move(fyne.NewPos(c.X-s.Width/2, c.Y-s.Height/2))
	no.badge.Resize(s)
}

// placeSelection puts the selection outline around the selected node or
// cluster, or hides it.
func (r *graphRenderer) placeSelection() {
	sel := r.selection
	if sel == nil {
		return
	}
	id := r.gv.selected
	var b render.Rect
	radius := 0.0
	ok := false
	if r.geom != nil && id != "" {
		if n, found := r.geom.Node(id); found {
			b, radius, ok = n.Rect, render.NodeRadius(n), true
		} else if c, found := r.geom.Cluster(id); found {
			b, radius, ok = c.Rect, 8, true
		}
	}
	if !ok {
		if sel.Visible() {
			sel.Hide()
			r.dirty()
		}
		return
	}
	const gap = 4 // pixels between the node and the outline
	p := r.pos(render.Point{X: b.X, Y: b.Y})
	sel.Move(fyne.NewPos(p.X-gap, p.Y-gap))
	sel.Resize(fyne.NewSize(r.z(b.W)+2*gap, r.z(b.H)+2*gap))
	sel.CornerRadius = r.z(radius) + gap
	sel.StrokeColor = r.pal.Selection
	sel.Show()
	sel.Refresh()
	r.dirty()
}

// dirty makes the canvas repaint. Showing an object that was hidden does
// not: the driver only finds the canvas of objects it has drawn, and it
// skips hidden ones. The content container is always drawn.
func (r *graphRenderer) dirty() { canvas.Refresh(r.content) }

// placeHover shows hollow breakpoint markers on the hovered node where no
// breakpoint is set, so that the user sees where to tap.
func (r *graphRenderer) placeHover() {
	id := r.gv.hovered
	n, ok := render.NodeBox{}, false
	if r.geom != nil && id != "" {
		n, ok = r.geom.Node(id)
	}
	rad := r.gv.markerRadius()
	for k, gh := range r.ghosts {
		set := r.gv.hl.BreakBefore[id]
		if k == 1 {
			set = r.gv.hl.BreakAfter[id]
		}
		if !ok || set || !breakable(&n) {
			if gh.Visible() {
				gh.Hide()
			}
			continue
		}
		x := n.Rect.X + float64(k)*n.Rect.W
		p := r.pos(render.Point{X: x, Y: n.Rect.Center().Y})
		gh.Move(fyne.NewPos(p.X-rad, p.Y-rad))
		gh.Resize(fyne.NewSize(2*rad, 2*rad))
		gh.FillColor = r.pal.Background
		gh.StrokeColor = r.pal.Error
		gh.StrokeWidth = 1.5
		gh.Show()
		gh.Refresh()
	}
	r.dirty()
}

// applyStyles colours every object for the palette and highlight. With
// all unset, only nodes and clusters whose look changed are touched.
func (r *graphRenderer) applyStyles(all bool) {
	g := r.geom
	if all || !r.placedPal {
		r.pal = ThemePalette(r.gv)
		r.placedPal = true
		all = true
	}
	if g == nil {
		return
	}
	p, hl := r.pal, r.gv.hl
	if all {
		for i := range g.Edges {
			eo := &r.edges[i]
			for _, l := range eo.lines {
				l.StrokeColor = p.Edge
				l.Refresh()
			}
			if eo.arrow != nil {
				if g.Edges[i].Head.Open {
					eo.arrow.FillColor, eo.arrow.StrokeColor = p.Background, p.Edge
				} else {
					eo.arrow.FillColor = p.Edge
				}
				eo.arrow.Refresh()
			}
			for _, t := range eo.labels {
				t.Color = p.MutedText
				t.Refresh()
			}
		}
	}
	for i, c := range g.Clusters {
		co := &r.clusters[i]
		st := hl.State(c.ID)
		if !all && st == co.look {
			continue
		}
		co.look = st
		co.box.FillColor = p.ClusterFill
		co.box.StrokeColor = p.ClusterStroke
		co.box.StrokeWidth = 1
		if st != render.StateIdle {
			co.box.StrokeColor = p.StyleFor(st).Stroke
			co.box.StrokeWidth = 2.5
		}
		co.label.Color = p.MutedText
		co.box.Refresh()
		co.label.Refresh()
	}
	if len(r.lastHighlights) != len(g.Nodes) {
		r.lastHighlights = make([]nodeLook, len(g.Nodes))
		all = true
	}
	for i := range g.Nodes {
		n := &g.Nodes[i]
		look := nodeLook{state: hl.State(n.ID), before: hl.BreakBefore[n.ID], after: hl.BreakAfter[n.ID], badge: hl.Badge(n.ID)}
		if !all && look == r.lastHighlights[i] {
			continue
		}
		r.lastHighlights[i] = look
		r.styleNode(i, look)
	}
	if !all {
		r.placeHover() // markers hide where a breakpoint was just set
	}
}

func (r *graphRenderer) styleNode(i int, look nodeLook) {
	p := r.pal
	no := &r.nodes[i]
	if no.dot != nil {
		no.dot.FillColor = p.Edge
		if no.ring { // END of an expanded subgraph: a ring, unlike START's dot
			no.dot.FillColor, no.dot.StrokeColor, no.dot.StrokeWidth = p.Background, p.Edge, 2.5
		}
		no.dot.Refresh()
		return
	}
	st := p.StyleFor(look.state)
	no.box.FillColor, no.box.StrokeColor = st.Fill, st.Stroke
	no.box.StrokeWidth = float32(st.StrokeWidth)
	no.box.Refresh()
	if no.inner != nil {
		no.inner.StrokeColor = st.Stroke
		no.inner.StrokeWidth = 1
		no.inner.Refresh()
	}
	for k, t := range no.texts {
		t.Color = st.Text
		if no.lines[k].Note && st.Text == p.Text {
			t.Color = p.MutedText
		}
		t.Refresh()
	}
	for k, d := range []*canvas.Circle{no.before, no.after} {
		on := look.before
		if k == 1 {
			on = look.after
		}
		if !on {
			if d.Visible() {
				d.Hide()
			}
			continue
		}
		d.FillColor, d.StrokeColor = p.Error, p.Background
		d.Show()
		d.Refresh()
	}
	if look.badge == "" {
		no.badge.Text = ""
		if no.badge.Visible() {
			no.badge.Hide()
			no.badgeB.Hide()
		}
		return
	}
	no.badge.Text = look.badge
	no.badge.Color = p.OnWarning
	no.badgeB.FillColor, no.badgeB.StrokeColor = p.Warning, p.Background
	r.placeBadge(i)
	no.badge.Show()
	no.badgeB.Show()
	no.badge.Refresh()
	no.badgeB.Refresh()
}

func withAlpha(c color.Color, a uint8) color.Color {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	n.A = a
	return n
}
