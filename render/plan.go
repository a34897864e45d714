package render

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/weftstudio/weft/engine"
)

// A plan is a topology turned into what gets drawn: boxes, clusters and
// edges with their IDs and DOT attributes, before layout. DOT, Mermaid and
// the layout parser all work from the same plan, so what Graphviz lays out
// and what we draw cannot drift apart. Graphviz hands every node, edge and
// cluster back by its "id" attribute (n0, e0, c0, …), which is how layout
// results are matched to plan items whatever the names contain.
type plan struct {
	name     string
	root     *pCluster // the top level; root.box is unused
	nodes    []*pNode  // every node in DOT order
	edges    []*pEdge  // every edge in DOT order
	clusters []*pCluster
	byGID    map[string]any // "n3" → *pNode, "e2" → *pEdge, "c0" → *pCluster
	ids      map[string]bool
}

type pNode struct {
	gid   string
	box   NodeBox // everything but Rect
	attrs []string
}

type pEdge struct {
	gid        string
	tail, head *pNode
	geom       EdgeGeom // everything but Points, Head and LabelPos
	attrs      []string
}

type pCluster struct {
	gid      string
	box      ClusterBox // everything but Rect and LabelPos
	nodes    []*pNode
	clusters []*pCluster
	edges    []*pEdge
}

// Text sizes in points. The widget scales them with the zoom.
const (
	fontSize     = 12
	noteSize     = 9
	edgeFontSize = 10
	wrapNode     = 22 // runes per line of a node label
	wrapEdge     = 18 // runes per line of an edge label
)

func newPlan(t *engine.Topology, opts DOTOptions) *plan {
	p := &plan{root: &pCluster{}, byGID: map[string]any{}, ids: map[string]bool{}}
	if t == nil {
		return p
	}
	p.name = t.Name
	p.level(t, p.root, "", 0, opts)
	return p
}

// uniqueID returns id, or id with a "#n" suffix when id is already taken
// (a top-level "a/b" beside node "b" of expanded subgraph "a", say).
func (p *plan) uniqueID(id string) string {
	u := id
	for i := 2; p.ids[u]; i++ {
		u = id + "#" + strconv.Itoa(i)
	}
	p.ids[u] = true
	return u
}

func (p *plan) addNode(c *pCluster, box NodeBox, attrs ...string) *pNode {
	n := &pNode{gid: "n" + strconv.Itoa(len(p.nodes)), box: box, attrs: attrs}
	p.nodes = append(p.nodes, n)
	p.byGID[n.gid] = n
	c.nodes = append(c.nodes, n)
	return n
}

func (p *plan) addEdge(c *pCluster, tail, head *pNode, g EdgeGeom, attrs ...string) {
	e := &pEdge{gid: "e" + strconv.Itoa(len(p.edges)), tail: tail, head: head, geom: g, attrs: attrs}
	e.geom.From, e.geom.To = tail.box.ID, head.box.ID
	p.edges = append(p.edges, e)
	p.byGID[e.gid] = e
	c.edges = append(c.edges, e)
}

// port is where edges attach to a graph node: the node itself, or for an
// expanded subgraph its inner START (entry) and END (exit) and the cluster
// the edges are clipped at.
type port struct {
	entry, exit *pNode
	cluster     string // cluster ID when expanded
	clusterGID  string
}

// level adds one (sub)graph's nodes, clusters and edges to c.
func (p *plan) level(t *engine.Topology, c *pCluster, prefix string, depth int, opts DOTOptions) {
	ports := map[string]port{}
	var joinOuts []func()
	for _, tn := range orderNodes(t, depth > 0) {
		id := tn.Name
		if prefix != "" {
			id = prefix + "/" + tn.Name
		}
		id = p.uniqueID(id)
		if tn.Subgraph != nil && (opts.ExpandAll || opts.Expanded[id]) {
			sc := &pCluster{
				gid: "c" + strconv.Itoa(len(p.clusters)),
				box: ClusterBox{ID: id, Label: tn.Name, Parent: c.box.ID, Depth: depth},
			}
			p.clusters = append(p.clusters, sc)
			p.byGID[sc.gid] = sc
			c.clusters = append(c.clusters, sc)
			p.level(tn.Subgraph, sc, id, depth+1, opts)
			pt := port{cluster: id, clusterGID: "cluster_" + sc.gid}
			for _, n := range sc.nodes {
				if n.box.Kind == BoxStart && pt.entry == nil {
					pt.entry = n
				}
				if n.box.Kind == BoxEnd && pt.exit == nil {
					pt.exit = n
				}
			}
			ports[tn.Name] = pt
			continue
		}
		n := p.addNode(c, p.nodeBox(tn, id, c.box.ID, depth), nodeAttrs(tn, depth)...)
		ports[tn.Name] = port{entry: n, exit: n}
	}
	// Edges may name nodes the topology does not list; draw them rather
	// than lose the edge (Graphviz would invent them too).
	for _, e := range sortedEdges(t) {
		for _, name := range []string{e.From, e.To} {
			if _, ok := ports[name]; !ok {
				id := name
				if prefix != "" {
					id = prefix + "/" + name
				}
				tn := engine.TopoNode{Name: name}
				n := p.addNode(c, p.nodeBox(tn, p.uniqueID(id), c.box.ID, depth), nodeAttrs(tn, depth)...)
				ports[name] = port{entry: n, exit: n}
			}
		}
	}
	junctions := map[[2]string]*pNode{}
	edges := sortedEdges(t)
	side := sidePorts(edges)
	for _, e := range edges {
		from, to := ports[e.From], ports[e.To]
		g := EdgeGeom{Kind: e.Kind, Join: e.Join}
		tail, head := from.exit, to.entry
		var clip []string
		if d := side[e]; d != "" && from.cluster == "" && to.cluster == "" {
			clip = append(clip, "tailport="+d, "headport="+d)
		}
		// A loop on an expanded subgraph runs from its END back to its
		// START inside the cluster; clipping would hide it.
		if loop := e.From == e.To && from.cluster != ""; !loop {
			if from.cluster != "" {
				g.LTail = from.cluster
				clip = append(clip, "ltail="+quote(from.clusterGID))
			}
			if to.cluster != "" {
				g.LHead = to.cluster
				clip = append(clip, "lhead="+quote(to.clusterGID))
			}
		}
		switch e.Kind {
		case engine.EdgeJoin:
			key := [2]string{e.Join, e.To}
			j := junctions[key]
			if j == nil {
				jid := "join:" + e.Join
				if e.Join == "" {
					jid = "join:" + e.To
				}
				if prefix != "" {
					jid = prefix + "/" + jid
				}
				j = p.addNode(c, NodeBox{ID: p.uniqueID(jid), Parent: c.box.ID, Kind: BoxJunction},
					"shape=point", "width=0.09", "height=0.09", `label=""`)
				junctions[key] = j
				jg := g
				jg.LTail, jg.LHead = "", to.cluster
				out := []string{"weight=4"}
				if to.cluster != "" {
					out = append(out, "lhead="+quote(to.clusterGID))
				}
				// The edge out of the junction follows all converging
				// edges, which keeps the DOT easy to read.
				joinOuts = append(joinOuts, func() { p.addEdge(c, j, head, jg, out...) })
			}
			g.LHead = ""
			var in []string
			if from.cluster != "" && e.From != e.To {
				in = append(in, "ltail="+quote(from.clusterGID))
			}
			p.addEdge(c, tail, j, g, append(in, "arrowhead=none", "weight=2")...)
		case engine.EdgeConditional:
			g.Label = wrap(e.Label, wrapEdge)
			attrs := append([]string{"style=dashed"}, clip...)
			if e.Label != "" {
				attrs = append(attrs, "label="+quote(padLabel(g.Label)))
			}
			p.addEdge(c, tail, head, g, attrs...)
		case engine.EdgeSend:
			g.Label = "Send"
			p.addEdge(c, tail, head, g, append([]string{`style="bold,dotted"`, `label=" Send "`, "arrowhead=normal"}, clip...)...)
		case engine.EdgeCommand:
			p.addEdge(c, tail, head, g, append([]string{"style=dashed", "arrowhead=empty"}, clip...)...)
		default:
			p.addEdge(c, tail, head, g, clip...)
		}
	}
	for _, f := range joinOuts {
		f()
	}
}

// nodeBox describes a graph node before layout.
func (p *plan) nodeBox(tn engine.TopoNode, id, parent string, depth int) NodeBox {
	b := NodeBox{ID: id, Name: tn.Name, Parent: parent, Deferred: tn.Deferred, Retry: tn.Retry}
	switch {
	case isStart(tn):
		b.Kind = BoxStart
		if depth == 0 {
			b.Lines = []string{"START"}
		}
	case isEnd(tn):
		b.Kind = BoxEnd
		if depth == 0 {
			b.Lines = []string{"END"}
		}
	default:
		if tn.Subgraph != nil {
			b.Kind = BoxSubgraph
		}
		b.Lines = strings.Split(wrap(tn.Name, wrapNode), "\n")
		b.Note = note(tn)
	}
	return b
}

// note lists a node's traits for the small second line of its label.
func note(tn engine.TopoNode) string {
	var s []string
	if tn.Subgraph != nil {
		s = append(s, "subgraph")
	}
	if tn.Deferred {
		s = append(s, "deferred")
	}
	if tn.Retry {
		s = append(s, "retry")
	}
	if tn.Cached {
		s = append(s, "cached")
	}
	return strings.Join(s, " · ")
}

func isStart(tn engine.TopoNode) bool {
	return tn.Kind == engine.NodeStart || (tn.Kind == engine.NodeNormal && tn.Name == engine.START)
}

func isEnd(tn engine.TopoNode) bool {
	return tn.Kind == engine.NodeEnd || (tn.Kind == engine.NodeNormal && tn.Name == engine.END)
}

// nodeAttrs returns a node's DOT attributes (besides id); defaults for an
// ordinary node are set once in the graph header.
func nodeAttrs(tn engine.TopoNode, depth int) []string {
	switch {
	case isStart(tn) && depth > 0:
		return []string{"shape=circle", "width=0.16", "height=0.16", "fixedsize=true", `label=""`, `fillcolor="#707070"`}
	case isEnd(tn) && depth > 0:
		return []string{"shape=doublecircle", "width=0.12", "height=0.12", "fixedsize=true", `label=""`, `fillcolor="#707070"`}
	case isStart(tn):
		return []string{"shape=oval", `label="START"`, "width=0.9"}
	case isEnd(tn):
		return []string{"shape=oval", "peripheries=2", `label="END"`, "width=0.9"}
	}
	label := wrap(tn.Name, wrapNode)
	var a []string
	if n := note(tn); n != "" {
		a = append(a, "label=<"+htmlText(label)+`<BR/><FONT POINT-SIZE="`+strconv.Itoa(noteSize)+`">`+htmlText(n)+"</FONT>>")
	} else {
		a = append(a, "label="+quote(label))
	}
	if tn.Subgraph != nil {
		a = append(a, "peripheries=2")
	}
	if tn.Deferred {
		a = append(a, `style="rounded,filled,dashed"`)
	}
	return a
}

// orderNodes returns a graph's nodes in drawing order: START, then the
// others in breadth-first order from START (following edges in sorted
// order), then unreachable ones by name, then END. Graphviz's initial
// ordering follows declaration order, so flow order gives tidier layouts
// than name order while staying deterministic. With ends set, a missing
// START or END is supplied: an expanded subgraph needs both as the places
// where edges enter and leave it.
func orderNodes(t *engine.Topology, ends bool) []engine.TopoNode {
	byName := map[string]engine.TopoNode{}
	var starts, endNodes, rest []engine.TopoNode
	for _, n := range t.Nodes {
		if _, dup := byName[n.Name]; dup {
			continue
		}
		byName[n.Name] = n
		switch {
		case isStart(n):
			starts = append(starts, n)
		case isEnd(n):
			endNodes = append(endNodes, n)
		default:
			rest = append(rest, n)
		}
	}
	if ends && len(starts) == 0 {
		starts = append(starts, engine.TopoNode{Name: engine.START, Kind: engine.NodeStart})
	}
	if ends && len(endNodes) == 0 {
		endNodes = append(endNodes, engine.TopoNode{Name: engine.END, Kind: engine.NodeEnd})
	}
	byNameCmp := func(a, b engine.TopoNode) int { return cmp.Compare(a.Name, b.Name) }
	slices.SortFunc(starts, byNameCmp)
	slices.SortFunc(endNodes, byNameCmp)
	slices.SortFunc(rest, byNameCmp)

	succ := map[string][]string{}
	for _, e := range sortedEdges(t) {
		succ[e.From] = append(succ[e.From], e.To)
	}
	seen := map[string]bool{}
	for _, n := range starts {
		seen[n.Name] = true
	}
	for _, n := range endNodes {
		seen[n.Name] = true
	}
	out := append([]engine.TopoNode(nil), starts...)
	queue := make([]string, 0, len(starts))
	for _, n := range starts {
		queue = append(queue, n.Name)
	}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, next := range succ[cur] {
			if n, ok := byName[next]; ok && !seen[next] {
				seen[next] = true
				out = append(out, n)
				queue = append(queue, next)
			}
		}
	}
	for _, n := range rest {
		if !seen[n.Name] {
			out = append(out, n)
		}
	}
	return append(out, endNodes...)
}

// sortedEdges returns a copy of t.Edges sorted by (From, To, Kind, Label,
// Join), duplicates removed.
// sidePorts gives, of the edges joining two nodes (both ways or twice), all
// but one a side to leave and enter by: Graphviz would lay them on the one
// straight line between the nodes, one over the other. The edge that stays
// straight is the main flow: a static edge before a Send, before a
// conditional or command edge; the second goes out by the right-hand
// sides, the third by the left ("e" or "w"). Joins and self-loops keep
// their course.
func sidePorts(es []engine.TopoEdge) map[engine.TopoEdge]string {
	rank := func(k engine.EdgeKind) int {
		switch k {
		case engine.EdgeStatic:
			return 0
		case engine.EdgeSend:
			return 1
		}
		return 2
	}
	groups := map[[2]string][]engine.TopoEdge{}
	var keys [][2]string
	for _, e := range es {
		if e.Kind == engine.EdgeJoin || e.From == e.To {
			continue
		}
		k := [2]string{min(e.From, e.To), max(e.From, e.To)}
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], e)
	}
	out := map[engine.TopoEdge]string{}
	for _, k := range keys {
		g := groups[k]
		if len(g) < 2 {
			continue
		}
		slices.SortStableFunc(g, func(a, b engine.TopoEdge) int { return cmp.Compare(rank(a.Kind), rank(b.Kind)) })
		for i, e := range g[1:] {
			if i < 2 {
				out[e] = []string{"e", "w"}[i]
			}
		}
	}
	return out
}

func sortedEdges(t *engine.Topology) []engine.TopoEdge {
	es := slices.Clone(t.Edges)
	slices.SortFunc(es, func(a, b engine.TopoEdge) int {
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To), cmp.Compare(a.Kind, b.Kind),
			cmp.Compare(a.Label, b.Label), cmp.Compare(a.Join, b.Join))
	})
	return slices.Compact(es)
}

// wrap breaks s into lines of at most width runes, preferring to break
// after a space, '_', '-', '.', '/' or ':'; a run longer than width with no
// such place is cut. Existing line breaks are kept.
func wrap(s string, width int) string {
	var out []string
	for _, para := range strings.Split(s, "\n") {
		r := []rune(para)
		for len(r) > width {
			cut := -1
			for i := width; i > width/3; i-- {
				if strings.ContainsRune(" _-./:", r[i-1]) {
					cut = i
					break
				}
			}
			if cut < 0 {
				cut = width
			}
			out = append(out, strings.TrimRight(string(r[:cut]), " "))
			r = r[cut:]
			for len(r) > 0 && r[0] == ' ' {
				r = r[1:]
			}
		}
		out = append(out, string(r))
	}
	return strings.Join(out, "\n")
}

// padLabel puts a space either side of each line of an edge label.
// Graphviz sizes labels with its own font metrics and sets them right next
// to their edge; drawn with a wider font (Fyne's), an unpadded label would
// touch or cross the edge.
func padLabel(s string) string {
	return " " + strings.ReplaceAll(s, "\n", " \n ") + " "
}

// quote returns s as a DOT double-quoted string. Newlines become the
// label escape \n (centred line break); control characters become spaces.
// A backslash is doubled: Graphviz's scanner keeps "\\" as a pair (so a
// trailing backslash cannot swallow the closing quote) and label
// processing turns the pair back into one backslash.
func quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r < 0x20 || r == 0x7f:
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// htmlText escapes s for a Graphviz HTML-like label; newlines become <BR/>.
func htmlText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '"':
			b.WriteString("&quot;")
		case r == '\n':
			b.WriteString("<BR/>")
		case r < 0x20 || r == 0x7f:
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
