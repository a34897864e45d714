package render

import (
	"math"
	"strings"
	"unicode/utf8"

	"github.com/weftstudio/weft/engine"
)

// Point is a position in graph coordinates: Graphviz points (1/72 inch),
// origin at the top-left of the drawing, y growing downwards, so a widget or
// an image can use it directly after scaling and translating.
type Point struct{ X, Y float64 }

// Add returns p+q.
func (p Point) Add(q Point) Point { return Point{p.X + q.X, p.Y + q.Y} }

// Sub returns p-q.
func (p Point) Sub(q Point) Point { return Point{p.X - q.X, p.Y - q.Y} }

// Scale returns p scaled by f.
func (p Point) Scale(f float64) Point { return Point{p.X * f, p.Y * f} }

// Dist returns the Euclidean distance between p and q.
func (p Point) Dist(q Point) float64 { return math.Hypot(p.X-q.X, p.Y-q.Y) }

// Rect is an axis-aligned box in graph coordinates: X, Y is the top-left
// corner, W and H the size. The zero Rect is empty and contains nothing.
type Rect struct{ X, Y, W, H float64 }

// Contains reports whether p lies inside r or on its border.
func (r Rect) Contains(p Point) bool {
	return p.X >= r.X && p.X <= r.X+r.W && p.Y >= r.Y && p.Y <= r.Y+r.H
}

// Center returns the centre of r.
func (r Rect) Center() Point { return Point{r.X + r.W/2, r.Y + r.H/2} }

// Max returns the bottom-right corner of r.
func (r Rect) Max() Point { return Point{r.X + r.W, r.Y + r.H} }

// Overlaps reports whether r and s share interior area (touching borders do
// not count).
func (r Rect) Overlaps(s Rect) bool {
	return r.X < s.X+s.W && s.X < r.X+r.W && r.Y < s.Y+s.H && s.Y < r.Y+r.H
}

// Inset returns r grown by d on every side (shrunk when d is negative).
func (r Rect) Inset(d float64) Rect { return Rect{r.X - d, r.Y - d, r.W + 2*d, r.H + 2*d} }

// DistToBorder returns the distance from p to the nearest point of r's
// border, whether p is inside or outside.
func (r Rect) DistToBorder(p Point) float64 {
	if !r.Contains(p) {
		dx := math.Max(math.Max(r.X-p.X, 0), p.X-(r.X+r.W))
		dy := math.Max(math.Max(r.Y-p.Y, 0), p.Y-(r.Y+r.H))
		return math.Hypot(dx, dy)
	}
	return math.Min(math.Min(p.X-r.X, r.X+r.W-p.X), math.Min(p.Y-r.Y, r.Y+r.H-p.Y))
}

// BoxKind says how a node box is drawn.
type BoxKind int

// Box kinds. The zero value is an ordinary node.
const (
	BoxNode     BoxKind = iota // an ordinary node: a rounded box
	BoxStart                   // START: a pill; a small dot inside an expanded subgraph
	BoxEnd                     // END: a pill with a double border; a small ringed dot inside an expanded subgraph
	BoxSubgraph                // a collapsed subgraph node: a box with a double border
	BoxJunction                // the point where the edges of a join group converge; not a graph node
)

// NodeBox is one laid-out node.
type NodeBox struct {
	// ID identifies the node in Highlight maps, hit results and edges. A
	// top-level node's ID is its name; a node inside an expanded subgraph
	// has the subgraph node's ID, "/" and its own name (e.g. "research/search").
	// A junction's ID is "join:" and its join group (prefixed like any
	// node inside a subgraph). IDs are unique: one that would repeat an
	// earlier one (a node literally named "a/b" beside node "b" of
	// expanded subgraph "a", say) gets a "#2", "#3", … suffix.
	ID     string
	Name   string  // the node's own name; "" for a junction
	Parent string  // ID of the expanded subgraph (cluster) holding it; "" at top level
	Kind   BoxKind //
	// Lines are the label lines (the name, wrapped when long); empty for
	// junctions and for the small START/END dots of an expanded subgraph.
	Lines []string
	// Note is a small second line listing the node's traits, e.g.
	// "subgraph · deferred · retry"; "" when it has none.
	Note     string
	Deferred bool // runs only when the graph would otherwise stop
	Retry    bool // has a retry policy
	Rect     Rect // the node's box
}

// Arrow is an arrowhead: a triangle from Base (where the edge's polyline
// ends) to Tip (touching the node or cluster border).
type Arrow struct {
	Base, Tip Point
	Open      bool // drawn as an outline only (command edges)
}

// EdgeGeom is one laid-out edge.
type EdgeGeom struct {
	From, To string          // IDs of the NodeBoxes it connects (a junction for join edges)
	Kind     engine.EdgeKind // the edge's kind; join edges keep EdgeJoin on both halves
	Label    string          // text drawn at LabelPos; "" for none
	Join     string          // the join group of a join edge; "" otherwise
	// LTail and LHead are cluster IDs when the edge is clipped at an
	// expanded subgraph's border instead of reaching From / To: the edge
	// logically leaves or enters that subgraph node. "" otherwise.
	LTail, LHead string
	// Points is the edge's path, Graphviz's Bézier spline flattened into a
	// polyline, from the tail to the arrowhead's base (or to the head when
	// there is no arrowhead). It has at least two points.
	Points   []Point
	Head     *Arrow // the arrowhead; nil when the edge has none (join edges into a junction)
	LabelPos Point  // centre of the label; meaningless when Label is ""
}

// End returns where the edge visually ends: the arrow's tip, or the last
// point of its path.
func (e *EdgeGeom) End() Point {
	if e.Head != nil {
		return e.Head.Tip
	}
	return e.Points[len(e.Points)-1]
}

// ClusterBox is an expanded subgraph drawn as a box around its nodes.
type ClusterBox struct {
	ID       string // the subgraph node's ID (the same key Highlight uses)
	Label    string // the subgraph node's name
	Parent   string // ID of the enclosing cluster; "" at top level
	Depth    int    // 0 for a top-level cluster, 1 inside another, …
	Rect     Rect
	LabelPos Point // centre of the label, at the top of the box
}

// Geometry is a laid-out graph in graph coordinates. Nodes are in DOT order
// (START first, END last at each level), clusters outermost first, edges
// in DOT order. A Geometry is immutable once returned by a Layouter and may
// be shared between goroutines.
type Geometry struct {
	Name     string // the topology's name
	Bounds   Rect   // contains every node, edge, label and cluster; X and Y are 0
	Nodes    []NodeBox
	Edges    []EdgeGeom
	Clusters []ClusterBox

	// Text sizes, in points, that the layout reserved room for; drawing
	// with them (scaled with the zoom) keeps labels inside their boxes.
	FontSize, NoteSize, EdgeFontSize float64

	byID map[string]int // node ID → index in Nodes
}

// Node returns the box of the node with the given ID and whether it exists.
// It also works on a Geometry built by hand (by a linear search).
func (g *Geometry) Node(id string) (NodeBox, bool) {
	if g.byID == nil {
		for _, n := range g.Nodes {
			if n.ID == id {
				return n, true
			}
		}
		return NodeBox{}, false
	}
	i, ok := g.byID[id]
	if !ok {
		return NodeBox{}, false
	}
	return g.Nodes[i], true
}

// Cluster returns the cluster of the expanded subgraph with the given ID
// and whether it exists.
func (g *Geometry) Cluster(id string) (ClusterBox, bool) {
	for _, c := range g.Clusters {
		if c.ID == id {
			return c, true
		}
	}
	return ClusterBox{}, false
}

func (g *Geometry) index() {
	g.byID = make(map[string]int, len(g.Nodes))
	for i, n := range g.Nodes {
		g.byID[n.ID] = i
	}
}

// HitKind says what a point hit.
type HitKind int

// Hit kinds. The zero value means nothing was hit.
const (
	HitNone    HitKind = iota
	HitNode            // a node box (never a junction)
	HitEdge            // an edge's path, arrowhead or label
	HitCluster         // the inside of an expanded subgraph, away from its nodes and edges
)

// Hit is the result of a hit test.
type Hit struct {
	Kind HitKind
	ID   string // the node's or cluster's ID; "" for edges and misses
	Edge int    // index into Geometry.Edges for HitEdge; -1 otherwise
}

// HitTest finds what lies under p. Nodes win over edges, edges over
// clusters; among clusters the innermost wins. tol is how far from an
// edge's path a point still hits it, in graph units; tol <= 0 means 4.
// Junctions are not hit as nodes; the edges through them are.
func (g *Geometry) HitTest(p Point, tol float64) Hit {
	if tol <= 0 {
		tol = 4
	}
	if g == nil {
		return Hit{Edge: -1}
	}
	// Iterate backwards so that, should boxes ever touch, the node drawn
	// last (on top) wins.
	for i := len(g.Nodes) - 1; i >= 0; i-- {
		n := &g.Nodes[i]
		if n.Kind != BoxJunction && n.Rect.Contains(p) {
			return Hit{Kind: HitNode, ID: n.ID, Edge: -1}
		}
	}
	best, bestD := -1, tol
	for i := range g.Edges {
		e := &g.Edges[i]
		if d := e.distance(p); d <= bestD {
			best, bestD = i, d
		}
	}
	if best >= 0 {
		return Hit{Kind: HitEdge, Edge: best}
	}
	for i := len(g.Clusters) - 1; i >= 0; i-- {
		if g.Clusters[i].Rect.Contains(p) {
			return Hit{Kind: HitCluster, ID: g.Clusters[i].ID, Edge: -1}
		}
	}
	return Hit{Edge: -1}
}

// distance is how far p is from the edge's path or arrowhead; a point on
// its label counts as distance 0.
func (e *EdgeGeom) distance(p Point) float64 {
	d := math.Inf(1)
	for i := 1; i < len(e.Points); i++ {
		d = math.Min(d, segDist(p, e.Points[i-1], e.Points[i]))
	}
	if e.Head != nil {
		d = math.Min(d, segDist(p, e.Head.Base, e.Head.Tip))
	}
	if e.Label != "" && math.Abs(p.X-e.LabelPos.X) <= labelHalfWidth(e.Label) &&
		math.Abs(p.Y-e.LabelPos.Y) <= 6*float64(strings.Count(e.Label, "\n")+1) {
		return 0
	}
	return d
}

// labelHalfWidth estimates half the width of an edge label (its longest
// line) for hit tests.
func labelHalfWidth(s string) float64 {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		n = max(n, utf8.RuneCountInString(l))
	}
	return float64(n) * 2.8
}

// segDist returns the distance from p to the segment ab.
func segDist(p, a, b Point) float64 {
	ab := b.Sub(a)
	l2 := ab.X*ab.X + ab.Y*ab.Y
	if l2 == 0 {
		return p.Dist(a)
	}
	t := ((p.X-a.X)*ab.X + (p.Y-a.Y)*ab.Y) / l2
	t = math.Max(0, math.Min(1, t))
	return p.Dist(a.Add(ab.Scale(t)))
}
