package studio

import (
	"context"
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/render"
	"github.com/weftstudio/weft/ui/graphview"
)

// graphPanel is the centre: the graph drawn by graphview with highlights
// for the selected checkpoint, zoom buttons and the legend.
type graphPanel struct {
	s      *Studio
	obj    fyne.CanvasObject
	view   *graphview.GraphView
	title  *widget.Label
	hint   *widget.Label
	seq    int
	xray   *widget.Check
	layout func()
}

func newGraphPanel(s *Studio) *graphPanel {
	p := &graphPanel{s: s, view: graphview.New()}
	p.view.OnToggleBreakpoint = s.toggleBreakpoint
	p.view.OnSelected = func(id string) { p.showNodeHint(id) }
	p.title = widget.NewLabelWithStyle("Graph", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	p.xray = widget.NewCheck("Expand subgraphs", func(bool) { p.doLayout() })
	p.xray.Hide()
	p.hint = widget.NewLabel(breakHint)
	p.hint.Importance = widget.LowImportance
	p.hint.Truncation = fyne.TextTruncateEllipsis
	header := container.NewBorder(nil, nil, p.title, p.xray, p.hint)
	p.obj = container.NewBorder(header, graphview.NewLegend(), nil, nil, p.view)
	p.layout = p.doLayout
	return p
}

const breakHint = "right-click a node's left or right half: breakpoint before or after it"

// doLayout lays the selected graph out on the render goroutine and shows it.
func (p *graphPanel) doLayout() {
	name, _, _, topo := p.s.sess.graphInfo()
	p.title.SetText(name)
	p.seq++
	seq := p.seq
	if topo == nil {
		p.view.SetGeometry(nil)
		return
	}
	hasSub := false
	for _, n := range topo.Nodes {
		hasSub = hasSub || n.Subgraph != nil
	}
	if hasSub {
		p.xray.Show()
	} else {
		p.xray.Hide()
	}
	opts := render.DOTOptions{ExpandAll: hasSub && p.xray.Checked}
	goBG(p.s.sess, func() (*render.Geometry, error) {
		return p.s.layouter.Layout(context.Background(), topo, opts)
	}, func(g *render.Geometry, err error) {
		if seq != p.seq {
			return
		}
		if err != nil {
			p.s.showError("Drawing the graph", err)
			return
		}
		p.view.SetGeometry(g)
		p.highlight()
	})
}

// showNodeHint says what is known of a node the user tapped.
func (p *graphPanel) showNodeHint(id string) {
	if id == "" {
		p.hint.SetText(breakHint)
		return
	}
	st := p.view.Highlight().State(id)
	text := fmt.Sprintf("%s · %s", id, st)
	if v := p.s.view; v != nil {
		for _, t := range v.Snap.Tasks {
			if t.Name == id && t.Error != "" {
				text += " · error: " + oneLine(t.Error, 120)
			}
		}
		for _, it := range v.Snap.Interrupts {
			if it.Node == id {
				q, _, _ := splitPayload(it.Value)
				text += " · asks: " + oneLine(q, 120)
			}
		}
	}
	p.hint.SetText(text)
}

// showInterrupt puts the question of an interrupted node under the graph
// title.
func (p *graphPanel) showInterrupt() {
	if v := p.s.view; v != nil && len(v.Snap.Interrupts) > 0 {
		p.showNodeHint(v.Snap.Interrupts[0].Node)
	} else if p.view.Selected() == "" {
		p.hint.SetText(breakHint)
	}
}

// highlight recomputes the highlight for the selected checkpoint and the
// run in progress.
func (p *graphPanel) highlight() {
	p.view.SetHighlight(p.s.computeHighlight())
}

// computeHighlight maps the selected checkpoint (and live task events) to
// node states, breakpoints and badges.
func (s *Studio) computeHighlight() render.Highlight {
	h := render.Highlight{States: map[string]render.NodeState{}, BreakBefore: map[string]bool{},
		BreakAfter: map[string]bool{}, Badges: map[string]string{}}
	if v := s.view; v != nil {
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
		for _, it := range snap.Interrupts {
			h.States[it.Node] = render.StateInterrupted
			h.Badges[it.Node] = "?"
		}
	}
	for n := range s.finished {
		h.States[n] = render.StateFinished
	}
	for n, on := range s.running {
		if on {
			h.States[n] = render.StateRunning
			if s.pulse {
				h.States[n] = render.StateNext // the running node pulses
			}
		}
	}
	if s.breakAll {
		_, nodes, _, _ := s.sess.graphInfo()
		for _, n := range nodes {
			h.BreakBefore[n] = true
		}
	}
	for n, on := range s.breakBefore {
		if on {
			h.BreakBefore[n] = true
		}
	}
	for n, on := range s.breakAfter {
		if on {
			h.BreakAfter[n] = true
		}
	}
	return h
}
