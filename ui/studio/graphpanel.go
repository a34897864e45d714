package studio

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/render"
	"github.com/weftstudio/weft/ui/graphview"
)

// graphPanel is the centre: the graph drawn by graphview with highlights
// for the selected checkpoint and the run in progress (nodes inside
// expanded subgraphs included), zoom buttons and the legend. It lays out
// the model's graph and follows its view, live tasks and breakpoints.
type graphPanel struct {
	m *model
	composite
	view   *graphview.GraphView
	title  *widget.Label
	hint   *widget.Label
	seq    int
	xray   *keyCheck
	layout func(topo *engine.Topology, opts render.DOTOptions, done func(*render.Geometry, error))
	onErr  func(what string, err error)
}

// newGraphPanel builds the panel; layout computes a geometry off the UI
// goroutine and calls done on it (nil: the graph is not drawn).
func newGraphPanel(m *model, a *actions, layout func(*engine.Topology, render.DOTOptions, func(*render.Geometry, error))) *graphPanel {
	p := &graphPanel{m: m, view: graphview.New(), layout: layout}
	p.view.OnToggleBreakpoint = m.toggleBreakpoint
	p.view.OnSelected = func(id string) { p.showNodeHint(id) }
	p.title = widget.NewLabelWithStyle("Graph", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	p.xray = newKeyCheck(a.key, "Expand subgraphs", func(bool) { p.doLayout() })
	p.xray.Hide()
	p.hint = widget.NewLabel(breakHint)
	p.hint.Importance = widget.LowImportance
	p.hint.Truncation = fyne.TextTruncateEllipsis
	header := container.NewBorder(nil, nil, p.title, p.xray, p.hint)
	// The drawing is larger than the panel when zoomed in or read at a
	// small window: a scroll container that does not scroll clips it to
	// the panel (the view pans and zooms itself).
	clip := container.NewScroll(p.view)
	clip.Direction = container.ScrollNone
	p.compose(p, container.NewBorder(header, graphview.NewLegend(), nil, nil, clip))
	m.subscribe(chGraph|chThread|chView|chLive|chBreakpoints|chRun|chPhase, func(c part) {
		if c&chGraph != 0 {
			p.doLayout()
		}
		if c&(chGraph|chThread) != 0 {
			p.view.Select("")
		}
		p.highlight()
		if c&(chGraph|chThread|chView) != 0 {
			p.showInterrupt()
		}
	})
	return p
}

const breakHint = "right-click a node for breakpoints, with or without a condition"

// doLayout lays the selected graph out and shows it.
func (p *graphPanel) doLayout() {
	g := p.m.graph().Graph
	p.seq++
	seq := p.seq
	if g == nil {
		p.title.SetText("Graph")
		p.view.SetGeometry(nil)
		return
	}
	topo := g.Topology()
	p.title.SetText(g.Name())
	hasSub := false
	for _, n := range topo.Nodes {
		hasSub = hasSub || n.Subgraph != nil
	}
	if hasSub {
		p.xray.Show()
	} else {
		p.xray.Hide()
	}
	if p.layout == nil {
		return
	}
	opts := render.DOTOptions{ExpandAll: hasSub && p.xray.Checked}
	p.layout(topo, opts, func(geom *render.Geometry, err error) {
		if seq != p.seq {
			return
		}
		if err != nil {
			if p.onErr != nil {
				p.onErr("Drawing the graph", err)
			}
			return
		}
		p.view.SetGeometry(geom)
		p.highlight()
	})
}

// showNodeHint says what is known of a node the user tapped.
func (p *graphPanel) showNodeHint(id string) {
	if id == "" {
		p.setHint(breakHint)
		return
	}
	st := p.view.Highlight().State(id)
	text := fmt.Sprintf("%s · %s", id, st)
	for _, after := range []bool{false, true} {
		if c := p.m.dbg.nodeCond(id, after); c != "" {
			text += fmt.Sprintf(" · breaks %s it if %s", map[bool]string{false: "before", true: "after"}[after], c)
		}
	}
	if v := p.m.scope().viewFor(); v != nil {
		for _, t := range v.Snap.Tasks {
			if t.Name == id && t.Error != "" {
				text += " · error: " + oneLine(t.Error, 120)
			}
		}
		for _, it := range v.Snap.OpenInterrupts() {
			if interruptNodeID(it) == id || it.Node == id {
				q, _, _ := splitPayload(it.Value)
				text += " · asks: " + oneLine(q, 120)
			}
		}
	}
	p.setHint(text)
}

func (p *graphPanel) setHint(s string) {
	if p.hint.Text != s {
		p.hint.SetText(s)
	}
}

// showInterrupt puts the question of an interrupted node under the graph
// title, or the breakpoint hint.
func (p *graphPanel) showInterrupt() {
	if v := p.m.scope().viewFor(); v != nil && len(v.Snap.OpenInterrupts()) > 0 {
		p.showNodeHint(interruptNodeID(v.Snap.OpenInterrupts()[0]))
	} else if p.view.Selected() == "" {
		p.setHint(breakHint)
	} else {
		p.showNodeHint(p.view.Selected())
	}
}

// highlight shows the model's highlight.
func (p *graphPanel) highlight() {
	p.view.SetHighlight(highlightOf(p.m))
}

// nodeID is the graph view's ID of a node running in subgraph namespace
// ns ("" at the root): the subgraph nodes' names and its own, joined by
// "/", as render names nodes of expanded subgraphs.
func nodeID(ns, name string) string {
	if ns == "" {
		return name
	}
	return strings.Join(nsNodes(ns), "/") + "/" + name
}

// nsNodes returns the subgraph nodes of namespace ns ("a:<task>|b:<task>"),
// outermost first.
func nsNodes(ns string) []string {
	var out []string
	for _, p := range strings.Split(ns, "|") {
		n, _, _ := strings.Cut(p, ":")
		out = append(out, n)
	}
	return out
}

// interruptNodeID is the graph view's ID of an interrupted node.
func interruptNodeID(it engine.PendingInterrupt) string {
	if it.NS == "" {
		return it.Node
	}
	return nodeID(it.NS, it.Node)
}

// highlightOf maps the model's selected checkpoint, live tasks and
// breakpoints to node states, breakpoint dots and badges. A node running
// inside a subgraph lights up itself when the subgraph is expanded and its
// subgraph node (or cluster) in any case.
func highlightOf(m *model) render.Highlight {
	h := render.Highlight{States: map[string]render.NodeState{}, BreakBefore: map[string]bool{},
		BreakAfter: map[string]bool{}, Badges: map[string]string{}}
	sc := m.scope()
	if v := sc.viewFor(); v != nil {
		snap := v.Snap
		for _, n := range snap.Metadata.Tasks {
			h.States[n] = render.StateFinished
		}
		counts := map[string]int{}
		for _, t := range snap.Tasks {
			counts[t.Name]++
		}
		for _, n := range snap.Next {
			h.States[n] = render.StateNext
			if c := counts[n]; c > 1 {
				h.Badges[n] = fmt.Sprintf("×%d", c)
			}
		}
		for _, t := range snap.Tasks {
			if t.Error != "" {
				h.States[t.Name] = render.StateFailed
			}
		}
		subgraphHighlight(h, snap)
		for _, it := range snap.OpenInterrupts() {
			id := interruptNodeID(it)
			h.States[id] = render.StateInterrupted
			h.Badges[id] = "?"
			for _, anc := range ancestors(id) {
				h.States[anc] = render.StateInterrupted
				h.Badges[anc] = "?"
			}
		}
	}
	// Live tasks: finished first, so a node still running in a parallel
	// branch of the same subgraph keeps its subgraph lit as running.
	for _, pass := range []bool{false, true} {
		for id, running := range sc.live {
			if running != pass {
				continue
			}
			st := render.StateFinished
			if running {
				st = render.StateRunning
				if sc.pulse {
					st = render.StateNext // the running node pulses
				}
			}
			h.States[id] = st
			for _, anc := range ancestors(id) {
				if running || h.States[anc] != render.StateRunning {
					h.States[anc] = st
				}
			}
		}
	}
	phaseHighlight(h, sc)
	condBreakpoints(h, m)
	if m.brk.All {
		if g := m.graph().Graph; g != nil {
			for _, n := range g.Nodes() {
				h.BreakBefore[n] = true
			}
		}
	}
	for n, on := range m.brk.Before {
		if on {
			h.BreakBefore[n] = true
		}
	}
	for n, on := range m.brk.After {
		if on {
			h.BreakAfter[n] = true
		}
	}
	return h
}

// subgraphHighlight marks, for the subgraph tasks of snap that have a
// state of their own, the nodes inside the subgraph that finished in its
// latest step and those it runs next (nodes of an expanded cluster).
func subgraphHighlight(h render.Highlight, snap *engine.Snapshot) {
	for _, t := range snap.Tasks {
		st := t.State
		if st == nil {
			continue
		}
		for _, n := range st.Metadata.Tasks {
			if n != engine.START {
				if id := nodeID(t.NS, n); h.States[id] == render.StateIdle {
					h.States[id] = render.StateFinished
				}
			}
		}
		for _, n := range st.Next {
			h.States[nodeID(t.NS, n)] = render.StateNext
		}
		subgraphHighlight(h, st)
	}
}

// ancestors returns the IDs of the subgraph nodes holding node id,
// innermost last: "a/b/c" → "a", "a/b".
func ancestors(id string) []string {
	var out []string
	for i := 0; i < len(id); i++ {
		if id[i] == '/' {
			out = append(out, id[:i])
		}
	}
	return out
}
