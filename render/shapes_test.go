package render

import (
	"fmt"
	"math/rand/v2"

	"github.com/weftstudio/weft/engine"
)

// Hand-built topologies of the shapes the renderer must get right. They do
// not use the rest of the engine, which is built concurrently.

var (
	start = engine.TopoNode{Name: engine.START, Kind: engine.NodeStart}
	end   = engine.TopoNode{Name: engine.END, Kind: engine.NodeEnd}
)

func node(name string) engine.TopoNode { return engine.TopoNode{Name: name} }

func edge(from, to string) engine.TopoEdge { return engine.TopoEdge{From: from, To: to} }

func cond(from, to, label string) engine.TopoEdge {
	return engine.TopoEdge{From: from, To: to, Kind: engine.EdgeConditional, Label: label}
}

func topo(name string, nodes []engine.TopoNode, edges ...engine.TopoEdge) *engine.Topology {
	return &engine.Topology{Name: name, Nodes: nodes, Edges: edges, Fingerprint: name}
}

// linearTopo: START → a → b → END.
func linearTopo() *engine.Topology {
	return topo("linear", []engine.TopoNode{start, node("a"), node("b"), end},
		edge(engine.START, "a"), edge("a", "b"), edge("b", engine.END))
}

// cycleTopo is a ReAct-style loop with a self-loop, two edges between one
// pair and a long conditional label.
func cycleTopo() *engine.Topology {
	return topo("cycle", []engine.TopoNode{start, node("agent"), node("tools"), end},
		edge(engine.START, "agent"),
		cond("agent", "tools", "continue"),
		cond("agent", engine.END, "end"),
		edge("tools", "agent"),
		cond("tools", "tools", "retry the same tool once more"),
		cond("tools", "agent", "back"),
	)
}

// joinTopo: a and b run in parallel; c waits for both.
func joinTopo() *engine.Topology {
	return topo("join", []engine.TopoNode{start, node("a"), node("b"), node("c"), end},
		edge(engine.START, "a"), edge(engine.START, "b"),
		engine.TopoEdge{From: "a", To: "c", Kind: engine.EdgeJoin, Join: "a+b"},
		engine.TopoEdge{From: "b", To: "c", Kind: engine.EdgeJoin, Join: "a+b"},
		edge("c", engine.END))
}

// sendTopo: map-reduce with Send fan-out, a command edge and a deferred
// reducer with retries.
func sendTopo() *engine.Topology {
	reduce := node("reduce")
	reduce.Deferred, reduce.Retry = true, true
	return topo("send", []engine.TopoNode{start, node("plan"), node("worker"), reduce, end},
		edge(engine.START, "plan"),
		engine.TopoEdge{From: "plan", To: "worker", Kind: engine.EdgeSend},
		edge("worker", "reduce"),
		engine.TopoEdge{From: "reduce", To: "plan", Kind: engine.EdgeCommand},
		edge("reduce", engine.END))
}

// subgraphTopo has a subgraph node ("research") holding a nested
// subgraph ("search").
func subgraphTopo() *engine.Topology {
	search := topo("search", []engine.TopoNode{start, node("query"), node("fetch"), end},
		edge(engine.START, "query"), edge("query", "fetch"), cond("fetch", "query", "more"), edge("fetch", engine.END))
	inner := topo("research", []engine.TopoNode{start, {Name: "search", Subgraph: search}, node("summarize"), end},
		edge(engine.START, "search"), edge("search", "summarize"), edge("summarize", engine.END))
	write := node("write")
	write.Retry = true
	return topo("subgraph", []engine.TopoNode{start, node("plan"), {Name: "research", Subgraph: inner}, write, end},
		edge(engine.START, "plan"), edge("plan", "research"), edge("research", "write"),
		cond("write", "research", "revise"), cond("write", engine.END, "done"))
}

// namesTopo has names that need escaping or wrapping.
func namesTopo() *engine.Topology {
	names := []string{`say "hi"`, "a b: c", "ünïcødé ✓", `back\slash\`, "generate_the_final_answer_with_all_citations_included", "<html> & co"}
	nodes := []engine.TopoNode{start, end}
	var edges []engine.TopoEdge
	prev := engine.START
	for _, n := range names {
		nodes = append(nodes, node(n))
		edges = append(edges, cond(prev, n, "→ "+n))
		prev = n
	}
	edges = append(edges, edge(prev, engine.END))
	return topo(`names "quoted"`, nodes, edges...)
}

// genTopo generates a deterministic graph of n nodes and m edges (START
// and END included in n), every node reachable from START, with a mix of
// edge kinds and some join groups.
func genTopo(n, m int) *engine.Topology {
	r := rand.New(rand.NewPCG(1, 2))
	nodes := []engine.TopoNode{start, end}
	names := []string{engine.START}
	for i := range n - 2 {
		nd := node(fmt.Sprintf("node_%03d", i))
		nd.Retry = i%17 == 0
		nd.Deferred = i%29 == 0
		nodes = append(nodes, nd)
		names = append(names, nd.Name)
	}
	var edges []engine.TopoEdge
	seen := map[engine.TopoEdge]bool{}
	// A spanning tree from START keeps everything reachable and gives
	// the graph depth.
	for i := 1; i < len(names); i++ {
		e := edge(names[max(0, i-1-r.IntN(4))], names[i])
		seen[e] = true
		edges = append(edges, e)
	}
	kinds := []engine.EdgeKind{engine.EdgeStatic, engine.EdgeStatic, engine.EdgeConditional, engine.EdgeSend, engine.EdgeCommand}
	for len(edges) < m-1 {
		// Mostly local edges (loops back a few steps, skips ahead), as in
		// real workflows; a random graph with edges spanning the whole
		// depth is not what anyone draws.
		i := 1 + r.IntN(len(names)-1)
		j := min(len(names)-1, max(1, i+r.IntN(13)-8))
		a, b := names[i], names[j]
		e := engine.TopoEdge{From: a, To: b, Kind: kinds[r.IntN(len(kinds))]}
		if e.Kind == engine.EdgeConditional {
			e.Label = fmt.Sprintf("k%d", r.IntN(10))
		}
		if r.IntN(12) == 0 {
			e.Kind, e.Label, e.Join = engine.EdgeJoin, "", "j"+b
		}
		if !seen[e] {
			seen[e] = true
			edges = append(edges, e)
		}
	}
	edges = append(edges, edge(names[len(names)-1], engine.END))
	return topo("gen", nodes, edges...)
}
