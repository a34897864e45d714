// Package render turns an engine.Topology into pictures: DOT for Graphviz,
// a laid-out Geometry (Graphviz computes the layout, we draw), hit testing
// on that geometry, and exports as DOT, SVG, PNG and Mermaid.
//
// Graphviz (go-graphviz, WebAssembly) is only ever called from one
// goroutine owned by this package; see Layouter. Everything else here is
// plain Go and safe for concurrent use.
package render

import (
	"bytes"

	"github.com/weftstudio/weft/engine"
)

// DOTOptions chooses how subgraphs are drawn. The zero value draws every
// subgraph node collapsed, as a single box.
type DOTOptions struct {
	// Expanded holds the IDs (see NodeBox.ID) of the subgraph nodes drawn
	// expanded: as a cluster holding the subgraph's own nodes ("x-ray").
	// A nested subgraph is expanded only if its parent is too. nil or
	// empty: all collapsed.
	Expanded map[string]bool
	// ExpandAll expands every subgraph at every depth; Expanded is then
	// ignored.
	ExpandAll bool
}

// DOT returns the Graphviz DOT text for t. The output depends only on t's
// nodes and edges (not their order) and on opts, byte for byte:
//   - START and END are ovals, END with a double border; inside an
//     expanded subgraph they are small dots where its edges enter and leave;
//   - static edges are solid; conditional edges dashed, labelled with
//     their path-map key when it differs from the target; command edges
//     dashed with an open arrowhead; Send edges bold and dotted, labelled
//     "Send";
//   - the edges of a join group converge on a junction point, from which
//     one edge leads to the waiting node;
//   - deferred nodes have a dashed border; a node's traits (subgraph,
//     deferred, retry) are listed in small type under its name;
//   - collapsed subgraphs have a double border; expanded ones are clusters,
//     edges to and from them clipped at the cluster's border.
//
// Node identifiers are the quoted node IDs (names, nested ones prefixed by
// their subgraph's ID and "/"); every node, edge and cluster also carries
// an "id" attribute (n0, e0, c0, …) by which the layout is read back. A nil
// t gives an empty graph.
func DOT(t *engine.Topology, opts DOTOptions) []byte {
	return newPlan(t, opts).dot()
}

// Graph-wide DOT defaults. The colours match LightPalette so that an SVG
// export looks like the studio's light theme.
const dotHeader = `	graph [compound=true, newrank=true, rankdir=TB, nodesep=0.3, ranksep=0.3, fontname="Helvetica", fontsize=11, bgcolor="transparent", pad=0.1];
	node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=12, margin="0.16,0.06", height=0.38, fillcolor="#f3f3f3", color="#9e9e9e", fontcolor="#333333"];
	edge [fontname="Helvetica", fontsize=10, color="#707070", fontcolor="#5e5e5e", arrowsize=0.7];
`

// bigGraph is the node count above which Graphviz is asked to spend less
// effort on crossing minimisation.
const bigGraph = 100

func (p *plan) dot() []byte {
	var b bytes.Buffer
	name := p.name
	if name == "" {
		name = "graph"
	}
	b.WriteString("digraph " + quote(name) + " {\n")
	b.WriteString(dotHeader)
	if len(p.nodes) > bigGraph {
		// Crossing minimisation dominates Graphviz's time on big graphs;
		// half the iterations cost little in readability there.
		b.WriteString("\tgraph [mclimit=0.5];\n")
	}
	p.writeLevel(&b, p.root, "\t")
	// END is drawn at the bottom even when a short path reaches it early:
	// the flow reads top to bottom.
	for _, n := range p.root.nodes {
		if n.box.Kind == BoxEnd {
			b.WriteString("\t{rank=max; " + quote(n.box.ID) + "}\n")
		}
	}
	b.WriteString("}\n")
	return b.Bytes()
}

func (p *plan) writeLevel(b *bytes.Buffer, c *pCluster, ind string) {
	for _, n := range c.nodes {
		b.WriteString(ind + quote(n.box.ID) + " [id=" + n.gid)
		for _, a := range n.attrs {
			b.WriteString(", " + a)
		}
		b.WriteString("];\n")
	}
	for _, sc := range c.clusters {
		b.WriteString(ind + "subgraph " + quote("cluster_"+sc.gid) + " {\n")
		b.WriteString(ind + "\tgraph [id=" + sc.gid + ", label=" + quote(sc.box.Label) +
			`, style="rounded,filled", fillcolor="#f7f8fc", color="#b8bcc8", fontcolor="#5e5e5e", margin=10];` + "\n")
		p.writeLevel(b, sc, ind+"\t")
		b.WriteString(ind + "}\n")
	}
	for _, e := range c.edges {
		b.WriteString(ind + quote(e.tail.box.ID) + " -> " + quote(e.head.box.ID) + " [id=" + e.gid)
		for _, a := range e.attrs {
			b.WriteString(", " + a)
		}
		b.WriteString("];\n")
	}
}
