// Package lgtopo turns the graph of a LangGraph store (inferred from its
// checkpoints, or read from a graph file LangGraph saved; see
// checkpoint/langgraph's Graph) into an engine.Topology, the input of the
// studio's graph drawing (render.DOT, render's layouts). It sits above
// both, so that checkpoint/langgraph needs no engine.
package lgtopo

import (
	"sort"
	"strings"

	"github.com/weftstudio/weft/checkpoint/langgraph"
	"github.com/weftstudio/weft/engine"
)

// InferredPrefix begins the Name of a topology made from an inferred
// graph ("inferred from the checkpoints of …"), so that every drawing of
// it says it is a guess from what threads did, not the graph's code.
const InferredPrefix = "inferred"

// Topology returns g as an engine.Topology: LangGraph's __start__ and
// __end__ become START and END (the same names), a node with a subgraph a
// node with a nested topology, edge kinds map to Weft's (a send edge to
// EdgeSend, a join edge to EdgeJoin grouped by its target). The topology's
// Name is g.Source, after InferredPrefix when g is inferred. It has no
// channels and no fingerprint: a LangGraph store does not describe them.
// A nil g gives nil.
func Topology(g *langgraph.Graph) *engine.Topology {
	if g == nil {
		return nil
	}
	t := &engine.Topology{Name: g.Source}
	if g.Inferred && !strings.HasPrefix(t.Name, InferredPrefix) {
		t.Name = InferredPrefix + ": " + t.Name
	}
	for _, n := range g.Nodes {
		tn := engine.TopoNode{Name: n.ID}
		switch n.ID {
		case langgraph.StartNode:
			tn.Kind = engine.NodeStart
		case langgraph.EndNode:
			tn.Kind = engine.NodeEnd
		}
		if n.Subgraph != nil {
			sub := Topology(n.Subgraph)
			sub.Name = n.ID
			tn.Subgraph = sub
		}
		t.Nodes = append(t.Nodes, tn)
	}
	// Joins: every join edge into one node is one group, as LangGraph
	// names its barrier channel (join:A+B:NODE).
	joins := map[string][]string{}
	for _, e := range g.Edges {
		if e.Kind == langgraph.EdgeJoin {
			joins[e.Target] = append(joins[e.Target], e.Source)
		}
	}
	for _, e := range g.Edges {
		te := engine.TopoEdge{From: e.Source, To: e.Target, Label: e.Label}
		switch e.Kind {
		case langgraph.EdgeConditional:
			te.Kind = engine.EdgeConditional
		case langgraph.EdgeSend:
			te.Kind = engine.EdgeSend
		case langgraph.EdgeJoin:
			te.Kind = engine.EdgeJoin
			from := append([]string{}, joins[e.Target]...)
			sort.Strings(from)
			te.Join = joinName(from, e.Target)
		}
		t.Edges = append(t.Edges, te)
	}
	return t
}

func joinName(from []string, to string) string { return strings.Join(from, "+") + ":" + to }
