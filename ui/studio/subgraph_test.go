package studio

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/render"
)

// Tasks running inside a subgraph light up their own node in the expanded
// cluster, and the subgraph node (or cluster) around them, from the run's
// events, which carry the subgraph's namespace.
func TestSubgraphNodesLightUp(t *testing.T) {
	s := newStudio(t, memory.New())
	act(func() { s.m.setGraph(2) })
	idle(t, s)
	act(func() { s.gp.xray.SetChecked(true) })
	idle(t, s)
	if _, ok := s.gp.view.Geometry().Node("summarize/gather"); !ok {
		t.Fatal("the expanded map-reduce has no summarize/gather node")
	}
	// What the observer makes of the run's task events.
	sc := s.m.scope()
	var seen []string
	act(func() {
		s.m.startRun(kindRun, sc.thread)
		s.m.taskMoved(sc, nodeID("summarize:0a1b2c", "gather"), true)
		h := s.gp.view.Highlight()
		if h.State("summarize/gather") != render.StateRunning || h.State("summarize") != render.StateRunning {
			t.Errorf("running gather: gather %v, summarize %v", h.State("summarize/gather"), h.State("summarize"))
		}
		s.m.taskMoved(sc, nodeID("summarize:0a1b2c", "gather"), false)
		s.m.taskMoved(sc, nodeID("summarize:9f8e7d", "condense"), true)
		h = s.gp.view.Highlight()
		if h.State("summarize/gather") != render.StateFinished || h.State("summarize/condense") != render.StateRunning || h.State("summarize") != render.StateRunning {
			t.Errorf("gather done, condense running: %v %v %v", h.State("summarize/gather"), h.State("summarize/condense"), h.State("summarize"))
		}
		s.m.endRun(0)
	})
	// A real run of the demo reports its subgraph tasks with namespaces
	// the view knows.
	startThread(t, s, "mr-1")
	obsIDs := map[string]bool{}
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	for _, r := range s.m.scope().events {
		if r.Mode == "tasks" {
			obsIDs[r.Node] = true
		}
	}
	for id := range obsIDs {
		seen = append(seen, id)
	}
	found := false
	for id := range obsIDs {
		if strings.HasPrefix(id, "summarize › gather") {
			found = true
		}
	}
	if !found {
		t.Errorf("no subgraph task events in the log: %v", seen)
	}
}
