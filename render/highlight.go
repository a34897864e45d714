package render

import "image/color"

// NodeState is what a node is doing in the step being shown.
type NodeState int

// Node states. The zero value, StateIdle, means the node is not involved.
const (
	StateIdle        NodeState = iota // not involved: neutral
	StateNext                         // will run in the next step: accent outline
	StateRunning                      // running now: accent fill
	StateFinished                     // finished in the selected step: success fill
	StateInterrupted                  // interrupted, waiting for a human: warning fill and a badge
	StateFailed                       // failed: error fill
)

// String names the state as the legend shows it.
func (s NodeState) String() string {
	switch s {
	case StateNext:
		return "next"
	case StateRunning:
		return "running"
	case StateFinished:
		return "finished"
	case StateInterrupted:
		return "interrupted"
	case StateFailed:
		return "failed"
	default:
		return "idle"
	}
}

// Highlight is the live state drawn over a laid-out graph. Every map is
// keyed by node ID (see NodeBox.ID; for an expanded subgraph, the cluster's
// ID); a nil map or a missing key means "idle", "no breakpoint", "no badge".
// The zero Highlight shows nothing. A Highlight is read, never modified, by
// the functions that take one.
type Highlight struct {
	States      map[string]NodeState
	BreakBefore map[string]bool // a breakpoint before the node runs: a dot on its left edge
	BreakAfter  map[string]bool // a breakpoint after the node runs: a dot on its right edge
	// Badges are short texts shown at a node's top-right corner, e.g. "?"
	// on an interrupted node or "×3" for a node with three pending tasks.
	// An interrupted node without a badge gets "!".
	Badges map[string]string
}

// State returns the state of a node (StateIdle when not set).
func (h Highlight) State(id string) NodeState { return h.States[id] }

// Badge returns the badge shown on a node: Badges[id], or "!" for an
// interrupted node that has none.
func (h Highlight) Badge(id string) string {
	if b := h.Badges[id]; b != "" {
		return b
	}
	if h.States[id] == StateInterrupted {
		return "!"
	}
	return ""
}

// Palette holds the colours a drawing uses. The widget builds one from the
// Fyne theme; PNG export uses LightPalette unless told otherwise. A nil
// colour in a Palette is replaced by LightPalette's.
type Palette struct {
	Background    color.Color // behind the graph
	NodeFill      color.Color // an idle node
	NodeStroke    color.Color // an idle node's border
	Text          color.Color // node labels on NodeFill
	MutedText     color.Color // notes and edge labels
	Edge          color.Color // edge lines and arrowheads
	ClusterFill   color.Color // inside an expanded subgraph
	ClusterStroke color.Color // its border
	Primary       color.Color // next (outline) and running (fill)
	OnPrimary     color.Color // text on Primary
	Success       color.Color // finished
	OnSuccess     color.Color
	Warning       color.Color // interrupted
	OnWarning     color.Color
	Error         color.Color // failed; also breakpoint dots
	OnError       color.Color
	Selection     color.Color // the selected node's outline
}

// LightPalette approximates Fyne's default light theme, so a PNG export
// looks like the studio.
var LightPalette = Palette{
	Background:    color.NRGBA{0xff, 0xff, 0xff, 0xff},
	NodeFill:      color.NRGBA{0xf3, 0xf3, 0xf3, 0xff},
	NodeStroke:    color.NRGBA{0x9e, 0x9e, 0x9e, 0xff},
	Text:          color.NRGBA{0x33, 0x33, 0x33, 0xff},
	MutedText:     color.NRGBA{0x5e, 0x5e, 0x5e, 0xff},
	Edge:          color.NRGBA{0x70, 0x70, 0x70, 0xff},
	ClusterFill:   color.NRGBA{0xf7, 0xf8, 0xfc, 0xff},
	ClusterStroke: color.NRGBA{0xb8, 0xbc, 0xc8, 0xff},
	Primary:       color.NRGBA{0x29, 0x6f, 0xf6, 0xff},
	OnPrimary:     color.NRGBA{0xff, 0xff, 0xff, 0xff},
	Success:       color.NRGBA{0x43, 0xf4, 0x36, 0xff},
	OnSuccess:     color.NRGBA{0x1c, 0x1c, 0x1c, 0xff},
	Warning:       color.NRGBA{0xff, 0x98, 0x00, 0xff},
	OnWarning:     color.NRGBA{0x1c, 0x1c, 0x1c, 0xff},
	Error:         color.NRGBA{0xf4, 0x43, 0x36, 0xff},
	OnError:       color.NRGBA{0xff, 0xff, 0xff, 0xff},
	Selection:     color.NRGBA{0x1c, 0x1c, 0x1c, 0xff},
}

// withDefaults fills nil colours from LightPalette.
func (p Palette) withDefaults() Palette {
	d := LightPalette
	for _, f := range []struct {
		dst *color.Color
		def color.Color
	}{
		{&p.Background, d.Background}, {&p.NodeFill, d.NodeFill}, {&p.NodeStroke, d.NodeStroke},
		{&p.Text, d.Text}, {&p.MutedText, d.MutedText}, {&p.Edge, d.Edge},
		{&p.ClusterFill, d.ClusterFill}, {&p.ClusterStroke, d.ClusterStroke},
		{&p.Primary, d.Primary}, {&p.OnPrimary, d.OnPrimary}, {&p.Success, d.Success},
		{&p.OnSuccess, d.OnSuccess}, {&p.Warning, d.Warning}, {&p.OnWarning, d.OnWarning},
		{&p.Error, d.Error}, {&p.OnError, d.OnError}, {&p.Selection, d.Selection},
	} {
		if *f.dst == nil {
			*f.dst = f.def
		}
	}
	return p
}

// NodeStyle is how a node looks in a given state: the one mapping from
// state to colours that the widget and the PNG export share.
type NodeStyle struct {
	Fill, Stroke, Text color.Color
	StrokeWidth        float64 // in graph units at zoom 1
}

// tint is how much of a state colour is blended over the background for a
// filled node. Theme state colours are saturated (Fyne's success green is
// #43f436) and the theme's "on" text colours do not read on all of them,
// so finished, interrupted and failed nodes get a tinted fill with the
// ordinary text colour and a full-strength border; running keeps the full
// accent fill because it is the one thing to look at.
const tint = 0.4

// StyleFor returns the style of a node in state s.
func (p Palette) StyleFor(s NodeState) NodeStyle {
	p = p.withDefaults()
	st := NodeStyle{Fill: p.NodeFill, Stroke: p.NodeStroke, Text: p.Text, StrokeWidth: 1}
	switch s {
	case StateNext:
		st.Stroke, st.StrokeWidth = p.Primary, 3
	case StateRunning:
		st.Fill, st.Stroke, st.Text, st.StrokeWidth = p.Primary, p.Primary, p.OnPrimary, 2
	case StateFinished:
		st.Fill, st.Stroke, st.StrokeWidth = Blend(p.Success, p.Background, tint), p.Success, 2
	case StateInterrupted:
		st.Fill, st.Stroke, st.StrokeWidth = Blend(p.Warning, p.Background, tint), p.Warning, 2
	case StateFailed:
		st.Fill, st.Stroke, st.StrokeWidth = Blend(p.Error, p.Background, tint), p.Error, 2
	}
	return st
}

// Blend returns c laid over the opaque colour bg with opacity a (0..1),
// as an opaque colour.
func Blend(c, bg color.Color, a float64) color.Color {
	x := color.NRGBAModel.Convert(c).(color.NRGBA)
	y := color.NRGBAModel.Convert(bg).(color.NRGBA)
	a *= float64(x.A) / 255 // a translucent theme colour blends less
	mix := func(p, q uint8) uint8 { return uint8(float64(p)*a + float64(q)*(1-a) + 0.5) }
	return color.NRGBA{mix(x.R, y.R), mix(x.G, y.G), mix(x.B, y.B), 0xff}
}
