package engine

import "reflect"

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
