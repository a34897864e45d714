package langgraph

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/weftstudio/weft/checkpoint"
)

// A LangGraph store holds no graph: its shape can only be inferred from
// what the threads did (InferGraph), or read from a file LangGraph saved
// (ParseGraphJSON: Python's graph.get_graph().to_json(), JS'
// getGraph().toJSON()). Both give a Graph.

// Names of the pseudo-nodes, as LangGraph names them.
const (
	StartNode = "__start__"
	EndNode   = "__end__"
)

// Edge kinds of a Graph, as Weft's topology names them.
const (
	EdgeStatic      = "static"      // always taken (inferred: the only edge seen from its source)
	EdgeConditional = "conditional" // chosen at run time (inferred: its source was seen going elsewhere too)
	EdgeJoin        = "join"        // one of the edges a node waits for all of
	EdgeSend        = "send"        // a Send packet to the target
)

// Graph is the shape of a LangGraph graph. The zero value is an empty
// graph read from nowhere.
type Graph struct {
	// Inferred is true for a graph inferred from checkpoints: it holds
	// only what the threads did, so an edge no thread took is missing and
	// static/conditional are guesses (see the edge kinds).
	Inferred bool `json:"inferred"`
	// Source says where the graph came from: the threads it was inferred
	// from, or the file.
	Source string `json:"source"`
	// Nodes are sorted: START first, END last, the others by id.
	Nodes []GraphNode `json:"nodes"`
	// Edges are sorted by source, target and kind.
	Edges []GraphEdge `json:"edges"`
}

// GraphNode is a node of a Graph.
type GraphNode struct {
	ID string `json:"id"`
	// Subgraph is the graph the node runs, when it runs one (inferred:
	// from the checkpoint namespaces named after it); nil otherwise.
	Subgraph *Graph `json:"subgraph,omitempty"`
	// Type and Data are what a LangGraph graph file says of the node
	// ("runnable", "schema", …); empty when inferred.
	Type string `json:"type,omitempty"`
	Data any    `json:"data,omitempty"`
}

// GraphEdge is an edge of a Graph.
type GraphEdge struct {
	Source string `json:"source"`
	Target string `json:"target"`
	// Kind is EdgeStatic, EdgeConditional, EdgeJoin or EdgeSend.
	Kind string `json:"kind"`
	// Label is a conditional edge's path-map key from a graph file; "" when
	// none.
	Label string `json:"label,omitempty"`
	// Seen counts the times threads took the edge; 0 in a graph file.
	Seen int `json:"seen,omitempty"`
}

// InferGraph infers the graph of threadIDs (every thread of the store
// when none is named) from what they did; see InferGraph.
func (r *Reader) InferGraph(ctx context.Context, threadIDs ...string) (*Graph, error) {
	if len(threadIDs) == 0 {
		rows, err := r.b.threads(ctx)
		if err != nil {
			return nil, err
		}
		for _, row := range rows {
			threadIDs = append(threadIDs, row.id)
		}
		sort.Strings(threadIDs)
	}
	var threads []*Thread
	for _, id := range threadIDs {
		t, err := r.ReadThread(ctx, id)
		if errors.Is(err, checkpoint.ErrNotFound) {
			return nil, fmt.Errorf("thread %q not found in this store", id)
		}
		if err != nil {
			return nil, err
		}
		threads = append(threads, t)
	}
	return InferGraph(r.kind.JS(), threads...), nil
}

// InferGraph infers a graph from threads (js: written by LangGraph.js),
// marked Inferred. A store keeps no topology, but every step left traces:
//
//   - nodes: the tasks each checkpoint schedules (its branch:to:NODE and
//     join:…:NODE channels, its Send packets), the nodes of versions_seen;
//   - edges: the writes of each task, stored against the checkpoint that
//     scheduled it, name where it routed: branch:to:NODE (an edge, or a
//     Command's goto), join:…:NODE (a join edge), Send packets in
//     __pregel_tasks (a send edge); a task that finished and routed
//     nowhere went to END;
//   - a node seen routing to different targets has conditional edges;
//   - checkpoint namespaces (NODE:task_id, nested with "|") are the
//     subgraphs of NODE, inferred the same way from their checkpoints.
//
// Threads of different graphs make one graph of all their nodes.
func InferGraph(js bool, threads ...*Thread) *Graph {
	ids := make([]string, len(threads))
	for i, t := range threads {
		ids[i] = t.ID
	}
	root := &inferred{nodes: map[string]bool{}, edges: map[[3]string]int{}, targets: map[string]map[string]bool{}, subs: map[string]*inferred{}}
	for _, t := range threads {
		for _, c := range t.Checkpoints {
			if c.Err != nil {
				continue
			}
			root.at(nsPath(c.NS)).observe(t, c, js)
		}
	}
	g := root.graph()
	g.Inferred = true
	g.Source = "inferred from the checkpoints of " + plural(len(ids), "thread") + ": " + strings.Join(ids, ", ")
	if len(ids) > 5 {
		g.Source = "inferred from the checkpoints of " + plural(len(ids), "thread") + ": " + strings.Join(ids[:5], ", ") + ", …"
	}
	return g
}

func plural(n int, s string) string {
	if n == 1 {
		return "1 " + s
	}
	return strconv.Itoa(n) + " " + s + "s"
}

// nsPath is the node path of a checkpoint namespace: "" → nil,
// "review:id" → [review], "a:id|b:id" → [a, b].
func nsPath(ns string) []string {
	if ns == "" {
		return nil
	}
	var out []string
	for _, part := range strings.Split(ns, "|") {
		name, _, _ := strings.Cut(part, ":")
		out = append(out, name)
	}
	return out
}

// inferred gathers one graph level's observations.
type inferred struct {
	nodes map[string]bool
	edges map[[3]string]int // (source, target, kind) → times seen
	// targets holds, per task instance "source\x00task id", where it
	// routed, to tell conditional edges (different target sets) apart.
	targets map[string]map[string]bool
	subs    map[string]*inferred
}

func (in *inferred) at(path []string) *inferred {
	for _, p := range path {
		in.nodes[p] = true
		if in.subs[p] == nil {
			in.subs[p] = &inferred{nodes: map[string]bool{}, edges: map[[3]string]int{}, targets: map[string]map[string]bool{}, subs: map[string]*inferred{}}
		}
		in = in.subs[p]
	}
	return in
}

func (in *inferred) observe(t *Thread, c *Checkpoint, js bool) {
	for node := range c.Seen {
		// __input__ and __interrupt__ are LangGraph's bookkeeping, not nodes.
		if node == StartNode || !(strings.HasPrefix(node, "__") && strings.HasSuffix(node, "__")) {
			in.nodes[node] = true
		}
	}
	for ch := range c.Versions {
		if node, ok := triggerNode(ch); ok {
			in.nodes[node] = true
		}
		if rest, ok := strings.CutPrefix(ch, "join:"); ok {
			if from, _, ok := strings.Cut(rest, ":"); ok {
				for _, n := range strings.Split(from, "+") {
					in.nodes[n] = true
				}
			}
		}
	}
	if len(c.Writes) == 0 {
		return
	}
	names := map[string]string{} // task id → node
	for _, task := range t.nextTasks(c, js) {
		names[task.ID] = task.Name
		in.nodes[task.Name] = true
	}
	type route struct {
		finished, routed bool
		targets          map[string]bool
	}
	routes := map[string]*route{}
	var order []string
	for _, w := range c.Writes {
		node, ok := names[w.TaskID]
		if !ok {
			continue // input, Command or update_state writes: no node
		}
		r := routes[w.TaskID]
		if r == nil {
			r = &route{targets: map[string]bool{}}
			routes[w.TaskID] = r
			order = append(order, w.TaskID)
		}
		add := func(to, kind string) {
			in.nodes[to] = true
			in.edges[[3]string{node, to, kind}]++
			r.routed = true
			r.targets[to] = true
		}
		switch {
		case w.Channel == checkpoint.Error || w.Channel == checkpoint.Interrupt || w.Channel == "__resume__":
			continue
		case strings.HasPrefix(w.Channel, "branch:to:"):
			add(strings.TrimPrefix(w.Channel, "branch:to:"), "")
		case strings.HasPrefix(w.Channel, "join:"):
			if to, ok := triggerNode(w.Channel); ok {
				add(to, EdgeJoin)
			}
		case w.Channel == checkpoint.Tasks:
			if m, ok := w.Value.(map[string]any); ok {
				if to, ok := m["node"].(string); ok {
					add(to, EdgeSend)
				}
			}
		}
		r.finished = true
	}
	for _, id := range order {
		r := routes[id]
		node := names[id]
		if r.finished && !r.routed && node != StartNode {
			in.nodes[EndNode] = true
			in.edges[[3]string{node, EndNode, ""}]++
			r.targets[EndNode] = true
		}
		if r.finished {
			key := node + "\x00" + targetsKey(r.targets)
			in.targets[key] = r.targets
		}
	}
}

func targetsKey(m map[string]bool) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, "\x00")
}

func (in *inferred) graph() *Graph {
	g := &Graph{}
	in.nodes[StartNode] = true
	// A node routed to different sets of targets chose among them.
	variants := map[string]int{}
	for key := range in.targets {
		node, _, _ := strings.Cut(key, "\x00")
		variants[node]++
	}
	for name := range in.nodes {
		n := GraphNode{ID: name}
		if sub := in.subs[name]; sub != nil {
			n.Subgraph = sub.graph()
			n.Subgraph.Inferred = true
		}
		g.Nodes = append(g.Nodes, n)
	}
	for e, seen := range in.edges {
		kind := e[2]
		if kind == "" {
			kind = EdgeStatic
			if variants[e[0]] > 1 {
				kind = EdgeConditional
			}
		}
		g.Edges = append(g.Edges, GraphEdge{Source: e[0], Target: e[1], Kind: kind, Seen: seen})
	}
	g.sort()
	return g
}

func nodeRank(id string) int {
	switch id {
	case StartNode:
		return 0
	case EndNode:
		return 2
	}
	return 1
}

func (g *Graph) sort() {
	slices.SortFunc(g.Nodes, func(a, b GraphNode) int {
		return cmp.Or(cmp.Compare(nodeRank(a.ID), nodeRank(b.ID)), cmp.Compare(a.ID, b.ID))
	})
	slices.SortFunc(g.Edges, func(a, b GraphEdge) int {
		return cmp.Or(cmp.Compare(a.Source, b.Source), cmp.Compare(a.Target, b.Target), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Label, b.Label))
	})
}

// ParseGraphJSON reads a graph LangGraph saved as JSON: Python's
// graph.get_graph().to_json() or JS' getGraph().toJSON(), dumped with
// json.dumps / JSON.stringify: {"nodes": [{"id", "type", "data"}, …],
// "edges": [{"source", "target", "conditional", "data"}, …]}. Node ids
// "parent:child" (a graph drawn with xray) nest child in parent's
// Subgraph; an edge between two nodes of one subgraph goes in it, one
// leaving or entering it attaches to the parent node. An edge naming a
// node the file does not list, or a node without id, is an error naming
// it.
func ParseGraphJSON(b []byte) (*Graph, error) {
	var f struct {
		Nodes []struct {
			ID   json.RawMessage `json:"id"`
			Type string          `json:"type"`
			Data any             `json:"data"`
		} `json:"nodes"`
		Edges []struct {
			Source      json.RawMessage `json:"source"`
			Target      json.RawMessage `json:"target"`
			Conditional bool            `json:"conditional"`
			Data        any             `json:"data"`
		} `json:"edges"`
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&f); err != nil {
		return nil, fmt.Errorf("not a LangGraph graph file (to_json / toJSON): %w", err)
	}
	if f.Nodes == nil {
		return nil, errors.New(`not a LangGraph graph file (to_json / toJSON): no "nodes" list`)
	}
	id := func(raw json.RawMessage) (string, error) {
		var s string
		if err := json.Unmarshal(raw, &s); err == nil && s != "" {
			return s, nil
		}
		var n json.Number
		if err := json.Unmarshal(raw, &n); err == nil {
			return n.String(), nil // JS numbers anonymous nodes
		}
		return "", fmt.Errorf("id %s is neither a string nor a number", raw)
	}
	root := &Graph{Source: "a LangGraph graph file"}
	levels := map[string]*Graph{"": root}
	var levelOf func(path string) *Graph
	levelOf = func(path string) *Graph {
		if g, ok := levels[path]; ok {
			return g
		}
		parent, name := "", path
		if i := strings.LastIndex(path, ":"); i >= 0 {
			parent, name = path[:i], path[i+1:]
		}
		pg := levelOf(parent)
		g := &Graph{Source: root.Source}
		levels[path] = g
		for i := range pg.Nodes {
			if pg.Nodes[i].ID == name {
				pg.Nodes[i].Subgraph = g
				return g
			}
		}
		pg.Nodes = append(pg.Nodes, GraphNode{ID: name, Subgraph: g})
		return g
	}
	known := map[string]bool{}
	for i, n := range f.Nodes {
		full, err := id(n.ID)
		if err != nil {
			return nil, fmt.Errorf("graph file: node %d: %w", i, err)
		}
		if known[full] {
			return nil, fmt.Errorf("graph file: node %d: id %q is listed twice", i, full)
		}
		known[full] = true
		path, name := "", full
		if j := strings.LastIndex(full, ":"); j >= 0 {
			path, name = full[:j], full[j+1:]
		}
		g := levelOf(path)
		found := false
		for k := range g.Nodes {
			if g.Nodes[k].ID == name { // made earlier as a subgraph's parent
				g.Nodes[k].Type, g.Nodes[k].Data = n.Type, n.Data
				found = true
			}
		}
		if !found {
			g.Nodes = append(g.Nodes, GraphNode{ID: name, Type: n.Type, Data: n.Data})
		}
	}
	for i, e := range f.Edges {
		src, err := id(e.Source)
		if err != nil {
			return nil, fmt.Errorf("graph file: edge %d: source: %w", i, err)
		}
		dst, err := id(e.Target)
		if err != nil {
			return nil, fmt.Errorf("graph file: edge %d: target: %w", i, err)
		}
		for _, end := range []string{src, dst} {
			if !known[end] {
				return nil, fmt.Errorf("graph file: edge %d (%s → %s): no node %q", i, src, dst, end)
			}
		}
		// The deepest level holding both ends; each end is named by its
		// ancestor at that level.
		sp, dp := strings.Split(src, ":"), strings.Split(dst, ":")
		common := 0
		for common < len(sp)-1 && common < len(dp)-1 && sp[common] == dp[common] {
			common++
		}
		g := levels[strings.Join(sp[:common], ":")]
		edge := GraphEdge{Source: sp[common], Target: dp[common], Kind: EdgeStatic}
		if e.Conditional {
			edge.Kind = EdgeConditional
		}
		switch v := e.Data.(type) {
		case string:
			edge.Label = v
		case nil:
		default:
			b, _ := json.Marshal(v)
			edge.Label = string(b)
		}
		if edge.Label == edge.Target {
			edge.Label = ""
		}
		g.Edges = append(g.Edges, edge)
	}
	for _, g := range levels {
		g.sort()
	}
	return root, nil
}

// DOT returns the graph as Graphviz DOT text, named after its Source so
// that an inferred graph says so wherever it is drawn: START and END
// ovals, conditional edges dashed, send edges dotted, join edges bold,
// subgraphs as clusters. The studio draws graphs with render.DOT, from
// the engine.Topology package lgtopo makes of a Graph; this is for the
// headless commands, which do not link Graphviz.
func (g *Graph) DOT() []byte {
	var b bytes.Buffer
	name := g.Source
	if g.Inferred && !strings.HasPrefix(name, "inferred") {
		name = "inferred: " + name
	}
	fmt.Fprintf(&b, "digraph %s {\n\tlabel=%s;\n\tlabelloc=t;\n\tnode [shape=box, style=rounded];\n", dotQuote(name), dotQuote(name))
	g.writeDOT(&b, "", "\t")
	b.WriteString("}\n")
	return b.Bytes()
}

func (g *Graph) writeDOT(b *bytes.Buffer, prefix, ind string) {
	id := func(n string) string { return dotQuote(prefix + n) }
	for _, n := range g.Nodes {
		switch {
		case n.Subgraph != nil:
			fmt.Fprintf(b, "%ssubgraph %s {\n%s\tlabel=%s;\n", ind, dotQuote("cluster_"+prefix+n.ID), ind, dotQuote(n.ID))
			fmt.Fprintf(b, "%s\t%s [label=%s, shape=box, style=\"rounded,bold\"];\n", ind, id(n.ID), dotQuote(n.ID))
			n.Subgraph.writeDOT(b, prefix+n.ID+":", ind+"\t")
			fmt.Fprintf(b, "%s}\n", ind)
		case n.ID == StartNode || n.ID == EndNode:
			fmt.Fprintf(b, "%s%s [label=%s, shape=oval];\n", ind, id(n.ID), dotQuote(n.ID))
		default:
			fmt.Fprintf(b, "%s%s [label=%s];\n", ind, id(n.ID), dotQuote(n.ID))
		}
	}
	for _, e := range g.Edges {
		var attrs []string
		switch e.Kind {
		case EdgeConditional:
			attrs = append(attrs, "style=dashed")
		case EdgeSend:
			attrs = append(attrs, "style=dotted", `label="Send"`)
		case EdgeJoin:
			attrs = append(attrs, "style=bold")
		}
		if e.Label != "" {
			attrs = append(attrs, "label="+dotQuote(e.Label))
		}
		if e.Seen > 0 {
			attrs = append(attrs, "tooltip="+dotQuote("seen "+plural(e.Seen, "time")))
		}
		fmt.Fprintf(b, "%s%s -> %s", ind, id(e.Source), id(e.Target))
		if len(attrs) > 0 {
			fmt.Fprintf(b, " [%s]", strings.Join(attrs, ", "))
		}
		b.WriteString(";\n")
	}
}

// dotQuote quotes s as a DOT string.
func dotQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}
