package render

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"strings"
	"sync"

	"github.com/fogleman/gg"
	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"

	"github.com/weftstudio/weft/engine"
)

// PNGOptions configures PNG export. The zero value draws at scale 2 with
// LightPalette.
type PNGOptions struct {
	Scale   float64 // pixels per graph point; <= 0 means 2
	Palette Palette // colours; nil entries come from LightPalette
}

// maxPNGPixels bounds an export (about 64 MB of RGBA) so that a huge graph
// at a large scale fails with a clear error instead of exhausting memory.
const maxPNGPixels = 16 << 20

// PNG draws g with the highlight hl as a PNG image, from our own geometry
// (Graphviz's PNG output is broken in go-graphviz). It looks like the
// studio's graph view: same shapes, marks and state colours.
func PNG(g *Geometry, hl Highlight, opts PNGOptions) ([]byte, error) {
	img, err := Image(g, hl, opts)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("render: encoding PNG: %w", err)
	}
	return buf.Bytes(), nil
}

// Image draws g with the highlight hl, like PNG, and returns the image.
func Image(g *Geometry, hl Highlight, opts PNGOptions) (image.Image, error) {
	if g == nil {
		return nil, fmt.Errorf("render: drawing an image: no geometry")
	}
	s := opts.Scale
	if s <= 0 {
		s = 2
	}
	w, h := int(math.Ceil(g.Bounds.W*s)), int(math.Ceil(g.Bounds.H*s))
	if w <= 0 || h <= 0 {
		w, h = 1, 1
	}
	if w*h > maxPNGPixels {
		return nil, fmt.Errorf("render: image of %q would be %d×%d pixels at scale %g; the limit is %d pixels", g.Name, w, h, s, maxPNGPixels)
	}
	d := &drawer{dc: gg.NewContext(w, h), s: s, p: opts.Palette.withDefaults()}
	d.draw(g, hl)
	return d.dc.Image(), nil
}

type drawer struct {
	dc    *gg.Context
	s     float64
	p     Palette
	faces map[float64]font.Face
}

func (d *drawer) pt(p Point) (float64, float64) { return p.X * d.s, p.Y * d.s }

func (d *drawer) draw(g *Geometry, hl Highlight) {
	dc, s, p := d.dc, d.s, d.p
	dc.SetColor(p.Background)
	dc.Clear()
	dc.SetLineJoinRound()
	for _, c := range g.Clusters {
		dc.DrawRoundedRectangle(c.Rect.X*s, c.Rect.Y*s, c.Rect.W*s, c.Rect.H*s, 8*s)
		dc.SetColor(p.ClusterFill)
		dc.FillPreserve()
		st := clusterStyle(p, hl.State(c.ID))
		dc.SetColor(st.Stroke)
		dc.SetLineWidth(st.StrokeWidth * s)
		dc.Stroke()
		d.text(c.Label, c.LabelPos, g.FontSize-1, p.MutedText)
	}
	for i := range g.Edges {
		d.edge(g, &g.Edges[i])
	}
	for i := range g.Nodes {
		d.node(g, &g.Nodes[i], hl)
	}
}

// clusterStyle is the border of an expanded subgraph in a given state:
// the state colour when involved, the neutral border otherwise.
func clusterStyle(p Palette, st NodeState) NodeStyle {
	ns := p.StyleFor(st)
	if st == StateIdle {
		return NodeStyle{Stroke: p.ClusterStroke, StrokeWidth: 1}
	}
	return NodeStyle{Stroke: ns.Stroke, StrokeWidth: 2.5}
}

// EdgeWidth returns the stroke width of an edge of kind k at zoom 1.
func EdgeWidth(k engine.EdgeKind) float64 {
	if k == engine.EdgeSend {
		return 2
	}
	return 1.2
}

// EdgeDash returns the dash pattern (on, off lengths at zoom 1) of an
// edge of kind k; nil for a solid line.
func EdgeDash(k engine.EdgeKind) []float64 {
	switch k {
	case engine.EdgeConditional, engine.EdgeCommand:
		return []float64{6, 4}
	case engine.EdgeSend:
		return []float64{2, 3}
	}
	return nil
}

// ArrowWings returns the two back corners of an arrowhead's triangle.
func ArrowWings(a Arrow) (Point, Point) {
	dir := a.Tip.Sub(a.Base)
	n := math.Hypot(dir.X, dir.Y)
	if n == 0 {
		return a.Base, a.Base
	}
	half := n * 0.38
	perp := Point{-dir.Y / n * half, dir.X / n * half}
	return a.Base.Add(perp), a.Base.Sub(perp)
}

func (d *drawer) edge(g *Geometry, e *EdgeGeom) {
	dc, s, p := d.dc, d.s, d.p
	dc.SetColor(p.Edge)
	dc.SetLineWidth(EdgeWidth(e.Kind) * s)
	if dash := EdgeDash(e.Kind); dash != nil {
		dc.SetDash(dash[0]*s, dash[1]*s)
	}
	dc.MoveTo(d.pt(e.Points[0]))
	for _, q := range e.Points[1:] {
		dc.LineTo(d.pt(q))
	}
	if e.Head != nil {
		dc.LineTo(d.pt(e.Head.Base))
	}
	dc.Stroke()
	dc.SetDash()
	if a := e.Head; a != nil {
		l, r := ArrowWings(*a)
		dc.MoveTo(d.pt(a.Tip))
		dc.LineTo(d.pt(l))
		dc.LineTo(d.pt(r))
		dc.ClosePath()
		if a.Open {
			dc.SetColor(p.Background)
			dc.FillPreserve()
			dc.SetColor(p.Edge)
			dc.SetLineWidth(1.2 * s)
			dc.Stroke()
		} else {
			dc.Fill()
		}
	}
	for _, l := range EdgeTextLayout(g, e) {
		d.text(l.Text, l.Center, l.Size, p.MutedText)
	}
}

func (d *drawer) node(g *Geometry, n *NodeBox, hl Highlight) {
	dc, s, p := d.dc, d.s, d.p
	r := n.Rect
	x, y, w, h := r.X*s, r.Y*s, r.W*s, r.H*s
	st := p.StyleFor(hl.State(n.ID))
	switch {
	case n.Kind == BoxJunction || (n.Kind == BoxStart && len(n.Lines) == 0):
		dc.DrawCircle(x+w/2, y+h/2, w/2)
		dc.SetColor(p.Edge)
		dc.Fill()
		return
	case n.Kind == BoxEnd && len(n.Lines) == 0:
		dc.DrawCircle(x+w/2, y+h/2, w/2)
		dc.SetColor(p.Edge)
		dc.SetLineWidth(1.2 * s)
		dc.Stroke()
		dc.DrawCircle(x+w/2, y+h/2, w/2-2.5*s)
		dc.Fill()
		return
	}
	radius := NodeRadius(*n)
	dc.DrawRoundedRectangle(x, y, w, h, radius*s)
	dc.SetColor(st.Fill)
	dc.FillPreserve()
	dc.SetColor(st.Stroke)
	dc.SetLineWidth(st.StrokeWidth * s)
	if n.Deferred {
		dc.SetDash(4*s, 3*s)
	}
	dc.Stroke()
	dc.SetDash()
	if n.Kind == BoxSubgraph || n.Kind == BoxEnd {
		in := 3.5 * s
		dc.DrawRoundedRectangle(x+in, y+in, w-2*in, h-2*in, math.Max(0, radius*s-in))
		dc.SetLineWidth(1 * s)
		dc.Stroke()
	}
	for _, l := range NodeTextLayout(g, *n) {
		c := st.Text
		if l.Note && st.Text == p.Text {
			c = p.MutedText
		}
		d.text(l.Text, l.Center, l.Size, c)
	}
	if hl.BreakBefore[n.ID] {
		d.dot(Point{r.X, r.Y + r.H/2})
	}
	if hl.BreakAfter[n.ID] {
		d.dot(Point{r.X + r.W, r.Y + r.H/2})
	}
	if b := hl.Badge(n.ID); b != "" {
		c := Point{r.X + r.W - 2, r.Y + 2}
		rad := BadgeRadius(b)
		dc.DrawRoundedRectangle((c.X-rad.X)*s, (c.Y-rad.Y)*s, 2*rad.X*s, 2*rad.Y*s, rad.Y*s)
		dc.SetColor(p.Warning)
		dc.FillPreserve()
		dc.SetColor(p.Background)
		dc.SetLineWidth(1.5 * s)
		dc.Stroke()
		d.text(b, c, 9, p.OnWarning)
	}
}

// dot draws a breakpoint mark centred on c.
func (d *drawer) dot(c Point) {
	dc, s := d.dc, d.s
	dc.DrawCircle(c.X*s, c.Y*s, BreakpointRadius*s)
	dc.SetColor(d.p.Error)
	dc.FillPreserve()
	dc.SetColor(d.p.Background)
	dc.SetLineWidth(1.5 * s)
	dc.Stroke()
}

// BreakpointRadius is the radius of a breakpoint dot at zoom 1.
const BreakpointRadius = 4.5

// BadgeRadius returns the half width and half height of the pill drawn
// for a badge text.
func BadgeRadius(text string) Point {
	n := len([]rune(text))
	return Point{math.Max(6.5, 2.9*float64(n)+4), 6.5}
}

// NodeRadius returns the corner radius of a node's box at zoom 1: START
// and END are pills, other nodes gently rounded.
func NodeRadius(n NodeBox) float64 {
	if n.Kind == BoxStart || n.Kind == BoxEnd {
		return n.Rect.H / 2
	}
	return 6
}

// TextLine is one line of text in a node, centred on Center, with a font
// size in points at zoom 1.
type TextLine struct {
	Text   string
	Center Point
	Size   float64
	Note   bool // the small traits line
}

// NodeTextLayout places a node's label lines and note inside its box: the
// lines stacked and centred as Graphviz sized them.
func NodeTextLayout(g *Geometry, n NodeBox) []TextLine {
	if len(n.Lines) == 0 {
		return nil
	}
	const lead = 1.2
	fs, ns := g.FontSize, g.NoteSize
	total := float64(len(n.Lines)) * fs * lead
	if n.Note != "" {
		total += ns * lead
	}
	c := n.Rect.Center()
	y := c.Y - total/2
	out := make([]TextLine, 0, len(n.Lines)+1)
	for _, l := range n.Lines {
		out = append(out, TextLine{Text: l, Center: Point{c.X, y + fs*lead/2}, Size: fs})
		y += fs * lead
	}
	if n.Note != "" {
		out = append(out, TextLine{Text: n.Note, Center: Point{c.X, y + ns*lead/2}, Size: ns, Note: true})
	}
	return out
}

// EdgeTextLayout places an edge label's lines around its LabelPos.
func EdgeTextLayout(g *Geometry, e *EdgeGeom) []TextLine {
	if e.Label == "" {
		return nil
	}
	lines := strings.Split(e.Label, "\n")
	lh := g.EdgeFontSize * 1.2
	y := e.LabelPos.Y - float64(len(lines))*lh/2 + lh/2
	out := make([]TextLine, len(lines))
	for i, l := range lines {
		out[i] = TextLine{Text: l, Center: Point{e.LabelPos.X, y + float64(i)*lh}, Size: g.EdgeFontSize}
	}
	return out
}

// text draws one line centred on c.
func (d *drawer) text(s string, c Point, size float64, col color.Color) {
	d.dc.SetFontFace(d.face(size * d.s))
	d.dc.SetColor(col)
	// Anchor on the x-height rather than the full ascent so that the
	// text looks vertically centred.
	x, y := d.pt(c)
	w, _ := d.dc.MeasureString(s)
	d.dc.DrawString(s, x-w/2, y+size*d.s*0.36)
}

var (
	fontOnce sync.Once
	goFont   *opentype.Font
	fontErr  error
)

// face returns the Go Regular face at a pixel size. Faces are cached per
// drawer because a font.Face is not safe for concurrent use.
func (d *drawer) face(px float64) font.Face {
	fontOnce.Do(func() { goFont, fontErr = opentype.Parse(goregular.TTF) })
	if fontErr != nil {
		panic("render: the embedded Go font does not parse: " + fontErr.Error())
	}
	px = math.Round(px*4) / 4
	if f, ok := d.faces[px]; ok {
		return f
	}
	f, err := opentype.NewFace(goFont, &opentype.FaceOptions{Size: px, DPI: 72, Hinting: font.HintingNone})
	if err != nil {
		panic("render: making a font face: " + err.Error())
	}
	if d.faces == nil {
		d.faces = map[float64]font.Face{}
	}
	d.faces[px] = f
	return f
}
