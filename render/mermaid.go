package render

import (
	"strings"

	"github.com/weftstudio/weft/engine"
)

// Mermaid returns a Mermaid flowchart of t for docs and issues (GitHub
// renders it in ```mermaid blocks). It follows DOT's conventions where
// Mermaid can: START and END are stadiums, collapsed subgraphs subroutine
// boxes, expanded ones Mermaid subgraphs; conditional edges are dotted and
// labelled with their path-map key, command edges dotted and labelled
// "Command", Send edges thick and labelled "Send", join edges converge on a
// small junction circle. Node identifiers are n0, n1, … (names go in the
// labels, escaped), so any name is safe. The output is deterministic. A nil
// t gives an empty flowchart.
func Mermaid(t *engine.Topology, opts DOTOptions) string {
	p := newPlan(t, opts)
	var b strings.Builder
	if p.name != "" {
		b.WriteString("%% " + strings.ReplaceAll(p.name, "\n", " ") + "\n")
	}
	b.WriteString("flowchart TD\n")
	p.mermaidLevel(&b, p.root, "\t")
	for _, e := range p.edges {
		b.WriteString("\t" + e.tail.gid + " " + mermaidArrow(e) + " " + e.head.gid + "\n")
	}
	var starts, juncs []string
	for _, n := range p.nodes {
		switch {
		case n.box.Kind == BoxJunction || ((n.box.Kind == BoxStart || n.box.Kind == BoxEnd) && len(n.box.Lines) == 0):
			juncs = append(juncs, n.gid)
		case n.box.Kind == BoxStart || n.box.Kind == BoxEnd:
			starts = append(starts, n.gid)
		}
	}
	b.WriteString("\tclassDef startend fill:#f3f3f3,stroke:#9e9e9e\n")
	b.WriteString("\tclassDef dot fill:#707070,stroke:#707070\n")
	if len(starts) > 0 {
		b.WriteString("\tclass " + strings.Join(starts, ",") + " startend\n")
	}
	if len(juncs) > 0 {
		b.WriteString("\tclass " + strings.Join(juncs, ",") + " dot\n")
	}
	return b.String()
}

func (p *plan) mermaidLevel(b *strings.Builder, c *pCluster, ind string) {
	for _, n := range c.nodes {
		b.WriteString(ind + n.gid + mermaidShape(n.box) + "\n")
	}
	for _, sc := range c.clusters {
		b.WriteString(ind + "subgraph " + sc.gid + ` ["` + mermaidText(sc.box.Label) + `"]` + "\n")
		p.mermaidLevel(b, sc, ind+"\t")
		b.WriteString(ind + "end\n")
	}
}

func mermaidShape(n NodeBox) string {
	label := mermaidText(strings.Join(n.Lines, "\n"))
	if n.Note != "" {
		label += "<br><small>" + mermaidText(n.Note) + "</small>"
	}
	switch {
	case n.Kind == BoxJunction || len(n.Lines) == 0:
		return `((" "))`
	case n.Kind == BoxStart || n.Kind == BoxEnd:
		return `(["` + label + `"])`
	case n.Kind == BoxSubgraph:
		return `[["` + label + `"]]`
	}
	return `("` + label + `")`
}

func mermaidArrow(e *pEdge) string {
	label := func(s string) string {
		if s == "" {
			return ""
		}
		return `|"` + mermaidText(s) + `"|`
	}
	switch e.geom.Kind {
	case engine.EdgeConditional:
		return "-.->" + label(e.geom.Label)
	case engine.EdgeCommand:
		return "-.->" + label("Command")
	case engine.EdgeSend:
		return "==>" + label("Send")
	case engine.EdgeJoin:
		if e.head.box.Kind == BoxJunction {
			return "---"
		}
	}
	return "-->"
}

// mermaidText escapes s for a quoted Mermaid label: entity codes for the
// characters Mermaid or its HTML labels would read, <br> for newlines.
func mermaidText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString("#quot;")
		case '#':
			b.WriteString("#35;")
		case '<':
			b.WriteString("#lt;")
		case '>':
			b.WriteString("#gt;")
		case '&':
			b.WriteString("#amp;")
		case '\n':
			b.WriteString("<br>")
		default:
			if r < 0x20 {
				r = ' '
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}
