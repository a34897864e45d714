// Package graphview is the studio's graph widget: it draws a laid-out
// render.Geometry with Fyne canvas objects (Graphviz computes the layout,
// the widget draws it, because Fyne's SVG display drops text), lets the
// user pan, zoom, select nodes and toggle breakpoints, and shows live
// highlights (next, running, finished, interrupted, failed, breakpoints)
// without laying the graph out again.
//
// Like every Fyne widget, a GraphView must be used from the UI goroutine;
// other goroutines go through fyne.Do.
package graphview

import (
	"math"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/render"
)

// Zoom limits and steps.
const (
	MinZoom = 0.1 // the smallest zoom Fit, ZoomOut and scrolling reach
	MaxZoom = 4   // the largest zoom ZoomIn and scrolling reach
	maxFit  = 1.5 // Fit never enlarges a small graph beyond this
	step    = 1.25
	// scrollZoom turns scroll deltas into a zoom factor: Fyne reports 25
	// per mouse-wheel notch on Linux and Windows, giving about ×1.15.
	scrollZoom = 0.0056
	fitPad     = 16 // room left around the graph by Fit, in pixels
	hitTol     = 5  // how close to an edge or marker a tap counts, in pixels
	// ReadableText is the smallest node label, in pixels, that fitting the
	// graph to the view on its own (on show and resize) allows: a graph
	// that does not fit at that size is shown from its top and scrolls.
	// Fit (the button) shows the whole graph whatever its labels become.
	ReadableText = 12
)

// GraphView shows a laid-out graph. The zero value is not usable; call
// New.
type GraphView struct {
	widget.BaseWidget

	// OnSelected is called after a tap changes the selection, with the
	// ID of the selected node, of the expanded subgraph (cluster) tapped,
	// or "" when the tap hit nothing selectable. nil: taps only select.
	OnSelected func(id string)
	// OnToggleBreakpoint is called on a secondary tap on a node (on its
	// left half: the breakpoint before it; right half: after it), or on a
	// tap on one of the breakpoint markers shown at a node's left and
	// right edges while the pointer is over it. The view does not change
	// its Highlight itself: the owner of the breakpoints updates them and
	// calls SetHighlight. nil: breakpoints cannot be toggled from the view.
	OnToggleBreakpoint func(id string, after bool)
	// OnContextMenu, when set, is called on a secondary tap on a node
	// instead of OnToggleBreakpoint: with the node's ID, the half tapped
	// (after: the right one) and where, in absolute coordinates, for a
	// pop-up menu of breakpoints. nil: a secondary tap toggles.
	OnContextMenu func(id string, after bool, at fyne.Position)

	geom     *render.Geometry
	hl       render.Highlight
	selected string
	hovered  string
	zoom     float32
	offset   fyne.Position // where graph point (0,0) is, in widget coordinates
	needFit  bool          // fit once the widget has a size
	autoFit  bool          // keep fitting on resize until the user pans or zooms
	wholeFit bool          // the last fit was the Fit button's: show everything
	r        *graphRenderer
	// modifiers returns the keyboard modifiers held (Ctrl makes the wheel
	// zoom); nil asks the desktop driver.
	modifiers func() fyne.KeyModifier
}

var (
	_ fyne.Tappable          = (*GraphView)(nil)
	_ fyne.SecondaryTappable = (*GraphView)(nil)
	_ fyne.Draggable         = (*GraphView)(nil)
	_ fyne.Scrollable        = (*GraphView)(nil)
	_ desktop.Hoverable      = (*GraphView)(nil)
)

// New returns an empty graph view; give it a geometry with SetGeometry.
func New() *GraphView {
	gv := &GraphView{zoom: 1}
	gv.ExtendBaseWidget(gv)
	return gv
}

// CreateRenderer is part of fyne.Widget.
func (gv *GraphView) CreateRenderer() fyne.WidgetRenderer {
	gv.r = newRenderer(gv)
	return gv.r
}

// SetGeometry shows g (nil clears the view) and fits it to the widget.
// The selection is kept if the selected node is still there. This is the
// only call that creates canvas objects; highlights reuse them.
func (gv *GraphView) SetGeometry(g *render.Geometry) {
	gv.geom = g
	gv.hovered = ""
	if gv.selected != "" && !gv.selectable(gv.selected) {
		gv.selected = ""
	}
	gv.needFit, gv.autoFit, gv.wholeFit = true, true, false
	if gv.r != nil {
		gv.r.build()
		if s := gv.Size(); s.Width > 0 && s.Height > 0 {
			gv.fit(s)
		}
	}
	gv.Refresh()
}

// Geometry returns the geometry shown, nil when none.
func (gv *GraphView) Geometry() *render.Geometry { return gv.geom }

// SetHighlight shows h: node states, breakpoints and badges. It only
// changes colours, strokes and the visibility of existing canvas objects,
// refreshing those whose look changed; nothing is laid out again. The view
// keeps h and reads it later (on a theme change), so the caller must not
// modify its maps afterwards; pass new maps instead.
func (gv *GraphView) SetHighlight(h render.Highlight) {
	gv.hl = h
	if gv.r != nil {
		gv.r.applyStyles(false)
	}
}

// Highlight returns the highlight shown.
func (gv *GraphView) Highlight() render.Highlight { return gv.hl }

// Selected returns the ID of the selected node or cluster, "" for none.
func (gv *GraphView) Selected() string { return gv.selected }

// Select selects the node or expanded subgraph with the given ID ("" or
// an unknown ID: none) without calling OnSelected.
func (gv *GraphView) Select(id string) {
	if !gv.selectable(id) {
		id = ""
	}
	gv.selected = id
	if gv.r != nil {
		gv.r.placeSelection()
	}
}

func (gv *GraphView) selectable(id string) bool {
	if gv.geom == nil || id == "" {
		return false
	}
	if n, ok := gv.geom.Node(id); ok {
		return n.Kind != render.BoxJunction
	}
	_, ok := gv.geom.Cluster(id)
	return ok
}

// Zoom returns the current zoom: screen pixels per graph point.
func (gv *GraphView) Zoom() float32 { return gv.zoom }

// ZoomIn enlarges the drawing by one step around the widget's centre.
func (gv *GraphView) ZoomIn() { gv.zoomAt(gv.centre(), step) }

// ZoomOut shrinks the drawing by one step around the widget's centre.
func (gv *GraphView) ZoomOut() { gv.zoomAt(gv.centre(), 1/step) }

// Fit zooms and pans so that the whole graph is visible and centred,
// without enlarging a small graph beyond 150% (labels may get small on a
// big graph). The view then keeps the graph fitted as it is resized,
// until the user pans or zooms. Shown at first, a graph is fitted the same
// way except that its labels stay at least ReadableText pixels.
func (gv *GraphView) Fit() {
	gv.autoFit, gv.wholeFit = true, true
	s := gv.Size()
	if s.Width <= 0 || s.Height <= 0 {
		gv.needFit = true
		return
	}
	gv.fit(s)
}

func (gv *GraphView) fit(s fyne.Size) {
	gv.needFit = false
	if gv.geom == nil {
		return
	}
	b := gv.geom.Bounds
	z := float32(maxFit)
	if b.W > 0 && b.H > 0 {
		z = min(z, (s.Width-2*fitPad)/float32(b.W), (s.Height-2*fitPad)/float32(b.H))
	}
	if !gv.wholeFit {
		z = max(z, gv.readableZoom())
	}
	gv.zoom = clampZoom(z)
	w, h := float32(b.W)*gv.zoom, float32(b.H)*gv.zoom
	// Centred when it fits; otherwise from the top (and the left), where
	// the graph starts.
	x, y := (s.Width-w)/2, (s.Height-h)/2
	if w > s.Width {
		x = 0
	}
	if h > s.Height {
		y = 0
	}
	gv.offset = fyne.NewPos(x, y)
	if gv.r != nil {
		gv.r.place()
	}
}

// readableZoom is the zoom at which every node label is at least
// ReadableText pixels.
func (gv *GraphView) readableZoom() float32 {
	if gv.geom == nil || gv.geom.FontSize <= 0 {
		return MinZoom
	}
	fit := float32(1)
	if gv.r != nil {
		fit = gv.r.minFit()
	}
	return ReadableText / (float32(gv.geom.FontSize) * fit)
}

func clampZoom(z float32) float32 { return max(MinZoom, min(MaxZoom, z)) }

func (gv *GraphView) centre() fyne.Position {
	s := gv.Size()
	return fyne.NewPos(s.Width/2, s.Height/2)
}

// zoomAt multiplies the zoom by f, keeping the graph point under p (in
// widget coordinates) where it is.
func (gv *GraphView) zoomAt(p fyne.Position, f float32) {
	gv.autoFit = false
	z := clampZoom(gv.zoom * f)
	if z == gv.zoom {
		return
	}
	gx, gy := (p.X-gv.offset.X)/gv.zoom, (p.Y-gv.offset.Y)/gv.zoom
	gv.offset = fyne.NewPos(p.X-gx*z, p.Y-gy*z)
	gv.zoom = z
	if gv.r != nil {
		gv.r.place()
	}
}

// toGraph converts a widget position to graph coordinates.
func (gv *GraphView) toGraph(p fyne.Position) render.Point {
	return render.Point{X: float64((p.X - gv.offset.X) / gv.zoom), Y: float64((p.Y - gv.offset.Y) / gv.zoom)}
}

// Tapped selects what is under the pointer, or toggles a breakpoint when
// the tap is on a breakpoint marker. Part of fyne.Tappable.
func (gv *GraphView) Tapped(ev *fyne.PointEvent) {
	if gv.geom == nil {
		return
	}
	if id, after, ok := gv.markerAt(ev.Position); ok && gv.OnToggleBreakpoint != nil {
		gv.OnToggleBreakpoint(id, after)
		return
	}
	h := gv.geom.HitTest(gv.toGraph(ev.Position), hitTol/float64(gv.zoom))
	id := ""
	if h.Kind == render.HitNode || h.Kind == render.HitCluster {
		id = h.ID
	}
	gv.Select(id)
	if gv.OnSelected != nil {
		gv.OnSelected(id)
	}
}

// TappedSecondary opens the node's context menu (OnContextMenu) or, without
// one, toggles the breakpoint before (left half) or after (right half) the
// node under the pointer. Part of fyne.SecondaryTappable.
func (gv *GraphView) TappedSecondary(ev *fyne.PointEvent) {
	if gv.geom == nil || (gv.OnToggleBreakpoint == nil && gv.OnContextMenu == nil) {
		return
	}
	p := gv.toGraph(ev.Position)
	h := gv.geom.HitTest(p, hitTol/float64(gv.zoom))
	if h.Kind != render.HitNode {
		return
	}
	n, _ := gv.geom.Node(h.ID)
	if !breakable(&n) {
		return
	}
	after := p.X > n.Rect.Center().X
	if gv.OnContextMenu != nil {
		gv.OnContextMenu(h.ID, after, ev.AbsolutePosition)
		return
	}
	gv.OnToggleBreakpoint(h.ID, after)
}

// markerAt reports the breakpoint marker under p, if any: the markers of
// the hovered node, and the dots of breakpoints that are set.
func (gv *GraphView) markerAt(p fyne.Position) (id string, after bool, ok bool) {
	g := gv.toGraph(p)
	tol := float64(gv.markerRadius()+hitTol) / float64(gv.zoom)
	for i := range gv.geom.Nodes {
		n := &gv.geom.Nodes[i]
		if !breakable(n) || !n.Rect.Inset(tol).Contains(g) {
			continue
		}
		c := n.Rect.Center()
		for _, side := range []bool{false, true} {
			x := n.Rect.X
			set := gv.hl.BreakBefore[n.ID]
			if side {
				x, set = n.Rect.X+n.Rect.W, gv.hl.BreakAfter[n.ID]
			}
			if (set || gv.hovered == n.ID) && g.Dist(render.Point{X: x, Y: c.Y}) <= tol {
				return n.ID, side, true
			}
		}
	}
	return "", false, false
}

// breakable says whether a node can carry breakpoints: real nodes only.
func breakable(n *render.NodeBox) bool {
	return n.Kind == render.BoxNode || n.Kind == render.BoxSubgraph
}

// markerRadius is the on-screen radius of breakpoint dots and markers:
// never less than at zoom 1 (a 9-pixel dot), so they stay visible.
func (gv *GraphView) markerRadius() float32 {
	return float32(render.BreakpointRadius) * max(1, min(gv.zoom, 1.6))
}

// Dragged pans the drawing. Part of fyne.Draggable.
func (gv *GraphView) Dragged(ev *fyne.DragEvent) {
	gv.autoFit = false
	gv.offset = gv.offset.Add(ev.Dragged)
	if gv.r != nil {
		gv.r.pan()
	}
}

// DragEnd is part of fyne.Draggable.
func (gv *GraphView) DragEnd() {}

// Scrolled scrolls the drawing, as a page does (a graph bigger than the
// view is read by scrolling it); with Ctrl held it zooms around the
// pointer. Part of fyne.Scrollable.
func (gv *GraphView) Scrolled(ev *fyne.ScrollEvent) {
	if gv.held()&(fyne.KeyModifierControl|fyne.KeyModifierSuper) != 0 {
		gv.zoomAt(ev.Position, float32(math.Exp(float64(ev.Scrolled.DY)*scrollZoom)))
		return
	}
	gv.autoFit = false
	gv.offset = gv.offset.Add(ev.Scrolled)
	if gv.r != nil {
		gv.r.pan()
	}
}

// held returns the keyboard modifiers held now.
func (gv *GraphView) held() fyne.KeyModifier {
	if gv.modifiers != nil {
		return gv.modifiers()
	}
	if a := fyne.CurrentApp(); a != nil {
		if d, ok := a.Driver().(desktop.Driver); ok {
			return d.CurrentKeyModifiers()
		}
	}
	return 0
}

// MouseIn is part of desktop.Hoverable.
func (gv *GraphView) MouseIn(ev *desktop.MouseEvent) { gv.MouseMoved(ev) }

// MouseMoved shows the breakpoint markers of the node under the pointer
// (when OnToggleBreakpoint is set). Part of desktop.Hoverable.
func (gv *GraphView) MouseMoved(ev *desktop.MouseEvent) {
	if gv.geom == nil || gv.OnToggleBreakpoint == nil {
		gv.setHovered("")
		return
	}
	id := ""
	g := gv.toGraph(ev.Position)
	tol := float64(gv.markerRadius()+hitTol) / float64(gv.zoom)
	for i := range gv.geom.Nodes {
		if n := &gv.geom.Nodes[i]; breakable(n) && n.Rect.Inset(tol).Contains(g) {
			id = n.ID
			break
		}
	}
	gv.setHovered(id)
}

// MouseOut is part of desktop.Hoverable.
func (gv *GraphView) MouseOut() { gv.setHovered("") }

func (gv *GraphView) setHovered(id string) {
	if id == gv.hovered {
		return
	}
	gv.hovered = id
	if gv.r != nil {
		gv.r.placeHover()
	}
}

// MinLabelSize returns the size, in pixels, of the smallest node label on
// screen (notes under names excluded); 0 when none is shown.
func (gv *GraphView) MinLabelSize() float32 {
	if gv.r == nil {
		return 0
	}
	size := float32(0)
	for _, no := range gv.r.nodes {
		for k, tx := range no.texts {
			if !no.lines[k].Note && tx.Visible() && (size == 0 || tx.TextSize < size) {
				size = tx.TextSize
			}
		}
	}
	return size
}
