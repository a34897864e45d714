package graphview

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"math/rand/v2"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"

	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/render"
)

// Topologies are built by hand: the rest of the engine is written
// concurrently and the view only needs the shape.

func cycleTopo() *engine.Topology {
	return &engine.Topology{
		Name: "cycle",
		Nodes: []engine.TopoNode{
			{Name: engine.START, Kind: engine.NodeStart}, {Name: "agent"}, {Name: "tools", Retry: true},
			{Name: engine.END, Kind: engine.NodeEnd},
		},
		Edges: []engine.TopoEdge{
			{From: engine.START, To: "agent"},
			{From: "agent", To: "tools", Kind: engine.EdgeConditional, Label: "continue"},
			{From: "agent", To: engine.END, Kind: engine.EdgeConditional, Label: "end"},
			{From: "tools", To: "agent"},
		},
	}
}

func subgraphTopo() *engine.Topology {
	inner := &engine.Topology{
		Nodes: []engine.TopoNode{{Name: engine.START, Kind: engine.NodeStart}, {Name: "search"}, {Name: engine.END, Kind: engine.NodeEnd}},
		Edges: []engine.TopoEdge{{From: engine.START, To: "search"}, {From: "search", To: engine.END}},
	}
	return &engine.Topology{
		Name:  "sub",
		Nodes: []engine.TopoNode{{Name: engine.START, Kind: engine.NodeStart}, {Name: "research", Subgraph: inner}, {Name: engine.END, Kind: engine.NodeEnd}},
		Edges: []engine.TopoEdge{{From: engine.START, To: "research"}, {From: "research", To: engine.END}},
	}
}

// genTopo is a deterministic n-node, m-edge graph with mostly local edges.
func genTopo(n, m int) *engine.Topology {
	r := rand.New(rand.NewPCG(1, 2))
	t := &engine.Topology{Name: "gen", Nodes: []engine.TopoNode{{Name: engine.START, Kind: engine.NodeStart}, {Name: engine.END, Kind: engine.NodeEnd}}}
	names := []string{engine.START}
	for i := range n - 2 {
		names = append(names, fmt.Sprintf("node_%03d", i))
		t.Nodes = append(t.Nodes, engine.TopoNode{Name: names[len(names)-1], Retry: i%17 == 0})
	}
	seen := map[engine.TopoEdge]bool{}
	add := func(e engine.TopoEdge) {
		if !seen[e] {
			seen[e] = true
			t.Edges = append(t.Edges, e)
		}
	}
	for i := 1; i < len(names); i++ {
		add(engine.TopoEdge{From: names[max(0, i-1-r.IntN(4))], To: names[i]})
	}
	for len(t.Edges) < m-1 {
		i := 1 + r.IntN(len(names)-1)
		j := min(len(names)-1, max(1, i+r.IntN(13)-8))
		add(engine.TopoEdge{From: names[i], To: names[j], Kind: engine.EdgeKind(r.IntN(2)), Label: ""})
	}
	add(engine.TopoEdge{From: names[len(names)-1], To: engine.END})
	return t
}

func layout(t testing.TB, tp *engine.Topology, opts render.DOTOptions) *render.Geometry {
	t.Helper()
	l := render.NewLayouter()
	defer l.Close()
	g, err := l.Layout(context.Background(), tp, opts)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// newView shows a GraphView of g in a 600×500 test window.
func newView(t testing.TB, g *render.Geometry) (*GraphView, fyne.Window) {
	t.Helper()
	test.NewTempApp(t)
	gv := New()
	gv.SetGeometry(g)
	w := test.NewTempWindow(t, gv)
	w.SetPadded(false)
	w.Resize(fyne.NewSize(600, 500))
	return gv, w
}

// at returns where graph point p is in the widget.
func at(gv *GraphView, p render.Point) fyne.Position {
	return fyne.NewPos(gv.offset.X+float32(p.X)*gv.zoom, gv.offset.Y+float32(p.Y)*gv.zoom)
}

func nodeRect(t testing.TB, gv *GraphView, id string) render.Rect {
	t.Helper()
	n, ok := gv.Geometry().Node(id)
	if !ok {
		t.Fatalf("no node %q", id)
	}
	return n.Rect
}

func TestFitOnShow(t *testing.T) {
	gv, _ := newView(t, layout(t, cycleTopo(), render.DOTOptions{}))
	b := gv.Geometry().Bounds
	tl, br := at(gv, render.Point{}), at(gv, render.Point{X: b.W, Y: b.H})
	s := gv.Size()
	if tl.X < 0 || tl.Y < 0 || br.X > s.Width || br.Y > s.Height {
		t.Errorf("graph at %v–%v does not fit the %v widget", tl, br, s)
	}
	if gv.Zoom() <= MinZoom || gv.Zoom() > maxFit {
		t.Errorf("zoom after fit: %v", gv.Zoom())
	}
}

func TestTapSelectsNode(t *testing.T) {
	gv, _ := newView(t, layout(t, cycleTopo(), render.DOTOptions{}))
	var got []string
	gv.OnSelected = func(id string) { got = append(got, id) }

	test.TapAt(gv, at(gv, nodeRect(t, gv, "agent").Center()))
	if gv.Selected() != "agent" || len(got) != 1 || got[0] != "agent" {
		t.Fatalf("after tapping agent: selected %q, callbacks %q", gv.Selected(), got)
	}
	sel := gv.r.selection
	if !sel.Visible() {
		t.Fatal("the selection outline is hidden")
	}
	box := at(gv, render.Point{X: nodeRect(t, gv, "agent").X, Y: nodeRect(t, gv, "agent").Y})
	if p := sel.Position(); p.X >= box.X || p.Y >= box.Y {
		t.Errorf("selection outline at %v does not surround the node at %v", p, box)
	}

	test.TapAt(gv, fyne.NewPos(2, 2)) // a corner: nothing there
	if gv.Selected() != "" || got[len(got)-1] != "" || sel.Visible() {
		t.Errorf("tapping the background should clear the selection: %q %q", gv.Selected(), got)
	}
}

func TestTapSelectsExpandedSubgraph(t *testing.T) {
	gv, _ := newView(t, layout(t, subgraphTopo(), render.DOTOptions{ExpandAll: true}))
	c, ok := gv.Geometry().Cluster("research")
	if !ok {
		t.Fatal("no cluster")
	}
	test.TapAt(gv, at(gv, render.Point{X: c.Rect.X + 3, Y: c.Rect.Y + c.Rect.H - 3}))
	if gv.Selected() != "research" {
		t.Errorf("tap inside the cluster selected %q", gv.Selected())
	}
	test.TapAt(gv, at(gv, nodeRect(t, gv, "research/search").Center()))
	if gv.Selected() != "research/search" {
		t.Errorf("tap on the inner node selected %q", gv.Selected())
	}
}

func TestBreakpointToggles(t *testing.T) {
	gv, _ := newView(t, layout(t, cycleTopo(), render.DOTOptions{}))
	type toggle struct {
		id    string
		after bool
	}
	var got []toggle
	gv.OnToggleBreakpoint = func(id string, after bool) { got = append(got, toggle{id, after}) }
	r := nodeRect(t, gv, "tools")
	test.TapSecondaryAt(gv, at(gv, render.Point{X: r.X + r.W*0.25, Y: r.Center().Y}))
	test.TapSecondaryAt(gv, at(gv, render.Point{X: r.X + r.W*0.75, Y: r.Center().Y}))
	if len(got) != 2 || got[0] != (toggle{"tools", false}) || got[1] != (toggle{"tools", true}) {
		t.Fatalf("secondary taps gave %v", got)
	}

	// A tap on a set breakpoint's dot toggles it and leaves the selection.
	gv.SetHighlight(render.Highlight{BreakBefore: map[string]bool{"tools": true}})
	test.TapAt(gv, at(gv, render.Point{X: r.X, Y: r.Center().Y}))
	if len(got) != 3 || got[2] != (toggle{"tools", false}) || gv.Selected() != "" {
		t.Fatalf("tap on the breakpoint dot gave %v, selected %q", got, gv.Selected())
	}
	// The after marker appears on hover and a tap on it toggles.
	gv.MouseMoved(&desktop.MouseEvent{PointEvent: fyne.PointEvent{Position: at(gv, r.Center())}})
	if gv.hovered != "tools" || !gv.r.ghosts[1].Visible() || gv.r.ghosts[0].Visible() {
		t.Errorf("hover markers: hovered %q, before %v after %v", gv.hovered, gv.r.ghosts[0].Visible(), gv.r.ghosts[1].Visible())
	}
	test.TapAt(gv, at(gv, render.Point{X: r.X + r.W, Y: r.Center().Y}))
	if len(got) != 4 || got[3] != (toggle{"tools", true}) {
		t.Fatalf("tap on the hover marker gave %v", got)
	}
	gv.MouseOut()
	if gv.r.ghosts[1].Visible() {
		t.Error("hover markers stay after the pointer left")
	}
}

// With a context menu, a secondary tap on a node asks for it (with the
// half tapped and where) instead of toggling; one beside the nodes asks
// nothing.
func TestContextMenuOnNodes(t *testing.T) {
	gv, _ := newView(t, layout(t, cycleTopo(), render.DOTOptions{}))
	toggled := 0
	gv.OnToggleBreakpoint = func(string, bool) { toggled++ }
	type ask struct {
		id    string
		after bool
	}
	var got []ask
	var where fyne.Position
	gv.OnContextMenu = func(id string, after bool, at fyne.Position) { got = append(got, ask{id, after}); where = at }
	r := nodeRect(t, gv, "tools")
	p := at(gv, render.Point{X: r.X + r.W*0.75, Y: r.Center().Y})
	test.TapSecondaryAt(gv, p)
	test.TapSecondaryAt(gv, fyne.NewPos(1, 1))
	if len(got) != 1 || got[0] != (ask{"tools", true}) || toggled != 0 {
		t.Fatalf("secondary taps asked %v, toggled %d", got, toggled)
	}
	if abs := fyne.CurrentApp().Driver().AbsolutePositionForObject(gv).Add(p); where != abs {
		t.Errorf("menu asked at %v, the tap was at %v", where, abs)
	}
}

// capture renders the window and returns the colour at widget position p.
func colourAt(img image.Image, p fyne.Position) color.NRGBA {
	return color.NRGBAModel.Convert(img.At(int(p.X), int(p.Y))).(color.NRGBA)
}

func near(a color.NRGBA, b color.Color) bool {
	c := color.NRGBAModel.Convert(b).(color.NRGBA)
	d := func(x, y uint8) int {
		if x > y {
			return int(x - y)
		}
		return int(y - x)
	}
	return d(a.R, c.R) <= 10 && d(a.G, c.G) <= 10 && d(a.B, c.B) <= 10
}

func TestHighlightChangesRendering(t *testing.T) {
	gv, w := newView(t, layout(t, cycleTopo(), render.DOTOptions{}))
	objs := append([]fyne.CanvasObject(nil), gv.r.content.Objects...)
	r := nodeRect(t, gv, "agent")
	probe := at(gv, render.Point{X: r.X + r.W/2, Y: r.Y + 4}) // inside the box, above the text

	before := w.Canvas().Capture()
	pal := ThemePalette(gv)
	if c := colourAt(before, probe); !near(c, pal.NodeFill) {
		t.Errorf("idle node drawn %v, want the neutral fill %v", c, pal.NodeFill)
	}

	gv.SetHighlight(render.Highlight{
		States:      map[string]render.NodeState{"agent": render.StateRunning, "tools": render.StateInterrupted},
		BreakBefore: map[string]bool{"agent": true},
	})
	after := w.Canvas().Capture()
	if c := colourAt(after, probe); !near(c, pal.Primary) {
		t.Errorf("running node drawn %v, want the accent fill %v", c, pal.Primary)
	}
	if c := colourAt(after, at(gv, render.Point{X: r.X, Y: r.Center().Y})); !near(c, pal.Error) {
		t.Errorf("breakpoint dot drawn %v, want %v", c, pal.Error)
	}
	tools := nodeRect(t, gv, "tools")
	badge := at(gv, render.Point{X: tools.X + tools.W - 2, Y: tools.Y + 2}).AddXY(-4, 0) // beside the "!"
	if c := colourAt(after, badge); !near(c, pal.Warning) {
		t.Errorf("interrupted badge drawn %v, want %v", c, pal.Warning)
	}

	// No object was created or replaced, nothing moved.
	if len(objs) != len(gv.r.content.Objects) {
		t.Fatal("SetHighlight changed the set of canvas objects")
	}
	for i, o := range objs {
		if gv.r.content.Objects[i] != o {
			t.Fatal("SetHighlight replaced canvas objects")
		}
	}

	gv.SetHighlight(render.Highlight{})
	if c := colourAt(w.Canvas().Capture(), probe); !near(c, pal.NodeFill) {
		t.Errorf("cleared highlight drawn %v", c)
	}
}

func TestThemeChangeRecolours(t *testing.T) {
	gv, w := newView(t, layout(t, cycleTopo(), render.DOTOptions{}))
	r := nodeRect(t, gv, "agent")
	probe := at(gv, render.Point{X: r.X + r.W/2, Y: r.Y + 4})
	//lint:ignore SA1019 the test needs each variant whatever the user prefers
	test.ApplyTheme(t, theme.LightTheme())
	light := colourAt(w.Canvas().Capture(), probe)
	//lint:ignore SA1019 as above
	test.ApplyTheme(t, theme.DarkTheme())
	dark := colourAt(w.Canvas().Capture(), probe)
	if light == dark {
		t.Errorf("node fill is %v in both themes", light)
	}
	if !near(dark, ThemePalette(gv).NodeFill) {
		t.Errorf("dark node fill %v, want %v", dark, ThemePalette(gv).NodeFill)
	}
}

func TestPanAndZoom(t *testing.T) {
	gv, w := newView(t, layout(t, cycleTopo(), render.DOTOptions{}))
	off, z := gv.offset, gv.Zoom()

	test.Drag(w.Canvas(), fyne.NewPos(300, 250), 40, -20)
	if gv.offset != off.Add(fyne.NewDelta(40, -20)) || gv.r.content.Position() != gv.offset {
		t.Errorf("drag: offset %v → %v, content at %v", off, gv.offset, gv.r.content.Position())
	}

	// Scrolling scrolls, as a page does.
	off = gv.offset
	gv.Scrolled(&fyne.ScrollEvent{Scrolled: fyne.NewDelta(0, -25)})
	if gv.offset != off.Add(fyne.NewDelta(0, -25)) || gv.Zoom() != z {
		t.Errorf("scroll: offset %v → %v, zoom %v → %v", off, gv.offset, z, gv.Zoom())
	}

	// Ctrl+scroll zooms around the pointer: the graph point under it stays.
	gv.modifiers = func() fyne.KeyModifier { return fyne.KeyModifierControl }
	p := fyne.NewPos(250, 200)
	g0 := gv.toGraph(p)
	// test.Scroll leaves the event's position empty; the GLFW driver sets it.
	gv.Scrolled(&fyne.ScrollEvent{PointEvent: fyne.PointEvent{Position: p}, Scrolled: fyne.NewDelta(0, 25)})
	if gv.Zoom() <= z {
		t.Errorf("scrolling up did not zoom in: %v → %v", z, gv.Zoom())
	}
	if g1 := gv.toGraph(p); g1.Dist(g0) > 0.01 {
		t.Errorf("the point under the pointer moved from %v to %v", g0, g1)
	}

	z = gv.Zoom()
	gv.ZoomIn()
	if gv.Zoom() <= z {
		t.Error("ZoomIn did not zoom in")
	}
	gv.ZoomOut()
	gv.ZoomOut()
	if gv.Zoom() >= z {
		t.Error("ZoomOut did not zoom out")
	}
	for range 40 {
		gv.ZoomOut()
	}
	if gv.Zoom() != MinZoom {
		t.Errorf("zoom went below the minimum: %v", gv.Zoom())
	}
	gv.Fit()
	checkFits(t, gv)

	// Objects follow the zoom: a node box is where its geometry says.
	r := nodeRect(t, gv, "agent")
	for _, no := range gv.r.nodes {
		if no.box != nil && no.texts[0].Text == "agent" {
			if want := at(gv, render.Point{X: r.X, Y: r.Y}).Subtract(gv.offset); no.box.Position() != want {
				t.Errorf("agent box at %v, want %v", no.box.Position(), want)
			}
		}
	}
}

// checkFits checks that gv's whole graph is visible.
func checkFits(t *testing.T, gv *GraphView) {
	t.Helper()
	b := gv.Geometry().Bounds
	tl, br := at(gv, render.Point{}), at(gv, render.Point{X: b.W, Y: b.H})
	s := gv.Size()
	if tl.X < -0.5 || tl.Y < -0.5 || br.X > s.Width+0.5 || br.Y > s.Height+0.5 {
		t.Errorf("graph at %v–%v does not fit the %v widget", tl, br, s)
	}
}

func TestZoomButtons(t *testing.T) {
	gv, _ := newView(t, layout(t, cycleTopo(), render.DOTOptions{}))
	z := gv.Zoom()
	in := gv.r.bar.Objects[1].(fyne.Tappable)
	test.Tap(in)
	if gv.Zoom() <= z {
		t.Error("the zoom-in button did not zoom in")
	}
}

// Shown in a view too small for it, a graph keeps its labels at
// ReadableText pixels and starts at its top, to be scrolled; the Fit
// button then shows all of it. Badges keep 10-pixel text and breakpoint
// dots 8 pixels whatever the zoom.
func TestReadableInASmallView(t *testing.T) {
	gv, w := newView(t, layout(t, genTopo(30, 40), render.DOTOptions{}))
	w.Resize(fyne.NewSize(300, 260))
	for _, no := range gv.r.nodes {
		for k, tx := range no.texts {
			if !no.lines[k].Note && tx.TextSize < ReadableText-0.01 {
				t.Errorf("label %q is %.1f px in a small view", tx.Text, tx.TextSize)
			}
		}
	}
	if top := at(gv, render.Point{}); top.Y != 0 {
		t.Errorf("the graph's top is at %v, want the view's top", top.Y)
	}
	gv.Fit()
	checkFits(t, gv)
	h := render.Highlight{States: map[string]render.NodeState{"node_001": render.StateInterrupted},
		Badges: map[string]string{"node_001": "?", "node_002": "×3"}, BreakBefore: map[string]bool{"node_003": true}}
	gv.SetHighlight(h)
	for _, no := range gv.r.nodes {
		if no.badge != nil && no.badge.Visible() {
			if no.badge.TextSize < 10 {
				t.Errorf("badge %q is %.1f px at zoom %.2f", no.badge.Text, no.badge.TextSize, gv.Zoom())
			}
			if b := no.badgeB.Size(); b.Width < no.badge.MinSize().Width || b.Height < no.badge.MinSize().Height {
				t.Errorf("badge %q pill %v smaller than its text %v", no.badge.Text, b, no.badge.MinSize())
			}
		}
		if no.before != nil && no.before.Visible() && no.before.Size().Width < 8 {
			t.Errorf("breakpoint dot is %.1f px at zoom %.2f", no.before.Size().Width, gv.Zoom())
		}
	}
}

func TestTextReadableWhenZoomedOut(t *testing.T) {
	gv, _ := newView(t, layout(t, cycleTopo(), render.DOTOptions{}))
	for range 40 {
		gv.ZoomOut()
	}
	for _, no := range gv.r.nodes {
		for k, tx := range no.texts {
			if !no.lines[k].Note && (!tx.Visible() || tx.TextSize < minText) {
				t.Errorf("label %q is %v px, visible %v", tx.Text, tx.TextSize, tx.Visible())
			}
		}
	}
	for _, eo := range gv.r.edges {
		for _, l := range eo.labels {
			if l.Visible() {
				t.Errorf("edge label %q still shown at zoom %v", l.Text, gv.Zoom())
			}
		}
	}
}

func TestSetGeometryKeepsSelection(t *testing.T) {
	gv, _ := newView(t, layout(t, cycleTopo(), render.DOTOptions{}))
	gv.Select("tools")
	gv.SetGeometry(layout(t, cycleTopo(), render.DOTOptions{}))
	if gv.Selected() != "tools" {
		t.Errorf("selection lost: %q", gv.Selected())
	}
	gv.SetGeometry(layout(t, subgraphTopo(), render.DOTOptions{}))
	if gv.Selected() != "" {
		t.Errorf("selection of a vanished node kept: %q", gv.Selected())
	}
	gv.SetGeometry(nil)
	test.TapAt(gv, fyne.NewPos(100, 100)) // must not panic
	gv.Select("x")
	if gv.Selected() != "" {
		t.Error("selected a node in an empty view")
	}
}

func TestDashedEdgesAreCut(t *testing.T) {
	e := &render.EdgeGeom{Points: []render.Point{{X: 0, Y: 0}, {X: 50, Y: 0}}}
	segs := cutDashes(e, []float64{6, 4})
	if len(segs) != 5 || segs[0][1].X != 6 || segs[1][0].X != 10 || segs[4][1].X != 46 {
		t.Errorf("dashes of a 50-long line: %v", segs)
	}
	if len(cutDashes(e, nil)) != 1 {
		t.Error("a solid line should be one segment")
	}
	// A dash continues across a vertex rather than restarting there.
	e = &render.EdgeGeom{Points: []render.Point{{X: 0, Y: 0}, {X: 3, Y: 0}, {X: 3, Y: 10}}}
	segs = cutDashes(e, []float64{6, 4})
	want := [][2]render.Point{{{X: 0, Y: 0}, {X: 3, Y: 0}}, {{X: 3, Y: 0}, {X: 3, Y: 3}}, {{X: 3, Y: 7}, {X: 3, Y: 10}}}
	if fmt.Sprint(segs) != fmt.Sprint(want) {
		t.Errorf("dashes round a corner: %v", segs)
	}
}

func TestLegend(t *testing.T) {
	test.NewTempApp(t)
	l := NewLegend()
	w := test.NewTempWindow(t, l)
	w.Resize(l.MinSize().AddWidthHeight(20, 20))
	if s := l.MinSize(); s.Width < 200 || s.Height < 30 {
		t.Errorf("legend min size %v", s)
	}
	r := test.WidgetRenderer(l).(*legendRenderer)
	pal := ThemePalette(l)
	var texts []string
	for _, it := range r.items {
		texts = append(texts, it.label.Text)
		if it.box != nil && it.state == render.StateRunning && it.box.FillColor != pal.Primary {
			t.Errorf("running sample is %v", it.box.FillColor)
		}
	}
	want := []string{"next", "running", "finished", "interrupted", "failed", "breakpoint", "conditional", "Send", "join"}
	if fmt.Sprint(texts) != fmt.Sprint(want) {
		t.Errorf("legend items %v, want %v", texts, want)
	}
	// Labels do not overlap within a row.
	for i := 1; i < len(r.items); i++ {
		a, b := r.items[i-1], r.items[i]
		if a.row == b.row && a.label.Position().X+a.label.Size().Width > b.label.Position().X-swatchW {
			t.Errorf("legend items %q and %q overlap", a.label.Text, b.label.Text)
		}
	}
}

// BenchmarkHighlight200 measures SetHighlight on a 200-node, 300-edge
// graph shown in a test window, alternating between two highlights that
// differ on every node, with the refresh of the changed objects.
func BenchmarkHighlight200(b *testing.B) {
	gv, _ := newView(b, layout(b, genTopo(200, 300), render.DOTOptions{}))
	var hs [2]render.Highlight
	for k := range hs {
		hs[k] = render.Highlight{States: map[string]render.NodeState{}, BreakBefore: map[string]bool{}, Badges: map[string]string{}}
	}
	for i, n := range gv.Geometry().Nodes {
		hs[0].States[n.ID] = render.NodeState(i % 6)
		hs[1].States[n.ID] = render.NodeState((i + 1) % 6)
		hs[i%2].BreakBefore[n.ID] = true
		if i%7 == 0 {
			hs[1].Badges[n.ID] = "×2"
		}
	}
	b.ResetTimer()
	i := 0
	for b.Loop() {
		gv.SetHighlight(hs[i%2])
		i++
	}
}
