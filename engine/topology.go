package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"
)

// Topology is the shape of a compiled graph, for renderers and the studio:
// nodes, edges with their kind and label, and nested subgraphs. It holds no
// functions and no state, and is deterministic: nodes are sorted by name
// (START first, END last) and edges by (From, To, Kind, Label).
type Topology struct {
	Name  string     // the graph's name; "" for an unnamed graph
	Nodes []TopoNode // includes START and END
	Edges []TopoEdge
	// Fingerprint is a stable hash of the topology and the channel schema
	// (names, kinds and value types). Two compilations of the same graph code
	// share it; any change to nodes, edges or channels changes it.
	Fingerprint string
	// Channels describes the state schema, sorted by name.
	Channels []ChannelInfo
}

// NodeKind tells a START or END pseudo-node from a real one.
type NodeKind int

// Node kinds. The zero value is an ordinary node.
const (
	NodeNormal NodeKind = iota
	NodeStart           // the graph's entry, named START
	NodeEnd             // the graph's exit, named END
)

// TopoNode is one node of a Topology.
type TopoNode struct {
	Name     string
	Kind     NodeKind
	Deferred bool      // runs only when the graph would otherwise stop
	Retry    bool      // has a retry policy with more than one attempt
	Cached   bool      // has a cache policy (WithCachePolicy): served from the node cache on an input it has seen
	Subgraph *Topology // non-nil when the node runs a compiled graph
}

// EdgeKind classifies an edge of a Topology.
type EdgeKind int

// Edge kinds. The zero value is a static edge.
const (
	EdgeStatic      EdgeKind = iota // From always triggers To
	EdgeConditional                 // a path function may route From to To; Label is the path-map key
	EdgeJoin                        // To waits for every edge sharing the same Join group
	EdgeSend                        // From may Send packets to To (fan-out)
	EdgeCommand                     // From may route to To by returning a Command (declared destinations)
)

// String names the kind as used in exports ("static", "conditional", …).
func (k EdgeKind) String() string {
	switch k {
	case EdgeConditional:
		return "conditional"
	case EdgeJoin:
		return "join"
	case EdgeSend:
		return "send"
	case EdgeCommand:
		return "command"
	default:
		return "static"
	}
}

// TopoEdge is one edge of a Topology.
type TopoEdge struct {
	From, To string
	Kind     EdgeKind
	Label    string // path-map key of a conditional edge when it differs from To; "" otherwise
	// Join names the group of a join edge: every edge with the same Join
	// converges on To, which waits for all of them. "" for other kinds.
	Join string
}

// ChannelInfo describes one channel of the state schema.
type ChannelInfo struct {
	Name string
	Kind string // "last_value", "any_value", "ephemeral", "topic", "reducer", "untracked", "named_barrier"
	Type string // the Go type of the channel's value, e.g. "[]engine.Message"
	// Reducer names the reducer of a reducer channel ("" otherwise).
	Reducer string
	// GoType is the Go type of the channel's value, for tools that build
	// typed environments (expressions over the state); nil in a Topology
	// read back from JSON.
	GoType reflect.Type `json:"-"`
}

// Names of the pseudo-nodes every graph has.
const (
	START = "__start__"
	END   = "__end__"
)

func (gr *Graph) buildTopology(g *StateGraph) Topology {
	t := Topology{Name: g.name}
	t.Nodes = append(t.Nodes, TopoNode{Name: START, Kind: NodeStart})
	for _, n := range gr.nodes {
		if n.start {
			continue
		}
		tn := TopoNode{Name: n.name, Deferred: n.deferred, Retry: n.retry != nil && n.retry.MaxAttempts > 1, Cached: n.cache != nil}
		if n.sub != nil {
			st := n.sub.topo
			tn.Subgraph = &st
		}
		t.Nodes = append(t.Nodes, tn)
	}
	t.Nodes = append(t.Nodes, TopoNode{Name: END, Kind: NodeEnd})
	seen := map[TopoEdge]bool{}
	add := func(e TopoEdge) {
		if !seen[e] {
			seen[e] = true
			t.Edges = append(t.Edges, e)
		}
	}
	for _, e := range g.edges {
		add(TopoEdge{From: e.from, To: e.to, Kind: EdgeStatic})
	}
	for _, j := range g.joins {
		sorted := slices.Clone(j.from)
		slices.Sort(sorted)
		group := strings.Join(sorted, "+") + ":" + j.to
		for _, f := range sorted {
			add(TopoEdge{From: f, To: j.to, Kind: EdgeJoin, Join: group})
		}
	}
	for _, b := range g.branches {
		for k, to := range b.pathMap {
			label := k
			if k == to {
				label = ""
			}
			add(TopoEdge{From: b.from, To: to, Kind: EdgeConditional, Label: label})
		}
		for _, to := range b.targets {
			add(TopoEdge{From: b.from, To: to, Kind: EdgeConditional})
		}
		for _, to := range b.sends {
			add(TopoEdge{From: b.from, To: to, Kind: EdgeSend})
		}
	}
	for _, d := range g.nodes {
		for _, to := range d.destinations {
			add(TopoEdge{From: d.name, To: to, Kind: EdgeCommand})
		}
	}
	// A node with no way out ends the graph when it finishes: draw that as
	// an edge to END rather than leave a dead end.
	hasOut := map[string]bool{}
	for _, e := range t.Edges {
		hasOut[e.From] = true
	}
	for _, n := range t.Nodes {
		if n.Kind == NodeNormal && !hasOut[n.Name] {
			add(TopoEdge{From: n.Name, To: END, Kind: EdgeStatic})
		}
	}
	sort.Slice(t.Edges, func(i, j int) bool {
		a, b := t.Edges[i], t.Edges[j]
		if a.From != b.From {
			return a.From < b.From
		}
		if a.To != b.To {
			return a.To < b.To
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Label < b.Label
	})
	for i := 0; i < gr.nState; i++ {
		t.Channels = append(t.Channels, gr.specs[i].info())
	}
	sort.Slice(t.Channels, func(i, j int) bool { return t.Channels[i].Name < t.Channels[j].Name })
	h := sha256.New()
	enc := json.NewEncoder(h)
	_ = enc.Encode(struct {
		N []TopoNode
		E []TopoEdge
		C []ChannelInfo
	}{t.Nodes, t.Edges, t.Channels})
	t.Fingerprint = hex.EncodeToString(h.Sum(nil))[:16]
	return t
}
