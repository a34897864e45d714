package studio

import (
	"context"
	"fmt"
	"image/color"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/render"
)

// Sub-lanes: a subgraph task keeps checkpoints of its own (in its
// namespace). When the selected checkpoint's step runs subgraph tasks, the
// timeline shows each task's checkpoints as a lane under the selected
// checkpoint: one small dot per checkpoint, labelled with what ran.

// subLane is one subgraph task's checkpoints, oldest first.
type subLane struct {
	NS      string
	Label   string // "summarize #2"
	Headers []checkpoint.Header
}

// subLanes are the lanes of the subgraph tasks planned at checkpoint At.
type subLanes struct {
	At    string
	Lanes []subLane
}

// Sub-lane geometry, in pixels; labels sit beside their dots.
const (
	subH    = 22  // one lane
	subCol  = 100 // one subgraph checkpoint
	subDot  = 4   // dot radius
	subRows = 3   // lanes the timeline has room for without scrolling
)

// hasSubgraphs reports whether a topology has subgraph nodes.
func hasSubgraphs(t *engine.Topology) bool {
	for _, n := range t.Nodes {
		if n.Subgraph != nil {
			return true
		}
	}
	return false
}

// setSubLanes shows the lanes of the subgraph tasks of checkpoint at.
func (m *model) setSubLanes(sc *scope, at string, lanes []subLane) {
	sc.sub = &subLanes{At: at, Lanes: lanes}
	if sc == m.sc {
		m.changed(chTimeline)
	}
}

// loadSubLanes reads the checkpoints of the subgraph tasks of the shown
// view's step, when it has any.
func (s *Studio) loadSubLanes(sc *scope, v *view) {
	id := v.Snap.Ref.CheckpointID
	if sc.sub != nil && sc.sub.At == id {
		return
	}
	var nss, labels []string
	count := map[string]int{}
	for _, t := range v.Snap.Tasks {
		if t.NS == "" {
			continue
		}
		count[t.Name]++
		nss = append(nss, t.NS)
		labels = append(labels, fmt.Sprintf("%s #%d", t.Name, count[t.Name]))
	}
	if len(nss) == 0 {
		if sc.sub != nil {
			s.m.setSubLanes(sc, id, nil)
		}
		return
	}
	thread := sc.thread
	goBG(s.sess, func() ([]subLane, error) {
		var out []subLane
		for i, ns := range nss {
			hs, err := s.sess.nsHeaders(context.Background(), thread, ns, 200)
			if err != nil {
				return nil, err
			}
			slices.Reverse(hs)
			out = append(out, subLane{NS: ns, Label: labels[i], Headers: hs})
		}
		return out, nil
	}, func(lanes []subLane, err error) {
		if err == nil && sc.sel == id {
			s.m.setSubLanes(sc, id, lanes)
		}
	})
}

// subLabel is a subgraph checkpoint's label: its step and what ran.
func subLabel(h checkpoint.Header) string {
	what := joinNames(h.Metadata.Tasks)
	if h.Metadata.Source == checkpoint.SourceInput {
		what = "input"
	}
	return strings.TrimSpace(fmt.Sprintf("%d %s", h.Metadata.Step, what))
}

// subHit is where a subgraph checkpoint is drawn on a sub-lane.
type subHit struct {
	NS, ID string
	Pos    fyne.Position
	Size   fyne.Size
}

func (h subHit) contains(p fyne.Position) bool {
	return p.X >= h.Pos.X && p.X <= h.Pos.X+h.Size.Width && p.Y >= h.Pos.Y && p.Y <= h.Pos.Y+h.Size.Height
}

// subObjects draws the sub-lanes of sub under column col from y top, a
// connector from lineTop down to them; the checkpoint picked is drawn in
// the accent colour. It returns where each checkpoint is, for taps.
func subObjects(sub *subLanes, col int, lineTop, top float32, picked string) ([]fyne.CanvasObject, []subHit) {
	if sub == nil || col < 0 {
		return nil, nil
	}
	fg := theme.Color(theme.ColorNameForeground)
	bg := theme.Color(theme.ColorNameBackground)
	muted := theme.Color(theme.ColorNameDisabled)
	line := render.Blend(fg, bg, 0.35)
	size := theme.CaptionTextSize()
	primary := theme.Color(theme.ColorNamePrimary)
	x0 := float32(tlPad + col*colW)
	var objs []fyne.CanvasObject
	var hits []subHit
	for k, l := range sub.Lanes {
		y := top + float32(k*subH) + subDot
		// A connector from the checkpoint down to the lane.
		v := canvas.NewLine(line)
		v.StrokeWidth = 1
		v.Position1, v.Position2 = fyne.NewPos(x0, lineTop), fyne.NewPos(x0, y)
		name := canvas.NewText(l.Label, muted)
		name.TextSize = size
		ns := name.MinSize()
		name.Move(fyne.NewPos(x0+6, y-ns.Height/2))
		name.Resize(ns)
		objs = append(objs, v, name)
		x := x0 + 12 + ns.Width
		prevEnd := float32(-1) // where the previous label ends
		for i, h := range l.Headers {
			cx := x + float32(i)*subCol + subDot
			if prevEnd >= 0 && cx-subDot-3 > prevEnd+3 {
				// A line from the previous label to this dot.
				seg := canvas.NewLine(line)
				seg.StrokeWidth = 1
				seg.Position1, seg.Position2 = fyne.NewPos(prevEnd+3, y), fyne.NewPos(cx-subDot-3, y)
				objs = append(objs, seg)
			}
			dot := canvas.NewCircle(render.Blend(fg, bg, 0.6))
			dot.Move(fyne.NewPos(cx-subDot, y-subDot))
			dot.Resize(fyne.NewSize(2*subDot, 2*subDot))
			if h.Metadata.Source == checkpoint.SourceInput {
				dot.FillColor, dot.StrokeColor, dot.StrokeWidth = color.Transparent, render.Blend(fg, bg, 0.6), 1.5
			}
			lbl := canvas.NewText(oneLine(subLabel(h), 14), fg)
			lbl.TextSize = size
			if h.Ref.CheckpointID == picked {
				dot.FillColor, dot.StrokeColor = primary, primary
				lbl.Color, lbl.TextStyle.Bold = primary, true
			}
			ls := lbl.MinSize()
			lbl.Move(fyne.NewPos(cx+subDot+3, y-ls.Height/2))
			lbl.Resize(ls)
			prevEnd = cx + subDot + 3 + ls.Width
			objs = append(objs, dot, lbl)
			hits = append(hits, subHit{NS: l.NS, ID: h.Ref.CheckpointID,
				Pos: fyne.NewPos(cx-subDot-3, y-subH/2), Size: fyne.NewSize(prevEnd-(cx-subDot-3), subH)})
		}
	}
	return objs, hits
}
