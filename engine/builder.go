package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/longterm"
	"github.com/weftstudio/weft/checkpoint/nodecache"
)

// NodeFunc is a node's body. It reads the state and returns what to write
// and where to go. Returning an error fails the task; returning the error of
// Interrupt pauses it for a human.
type NodeFunc func(ctx context.Context, s State) (Output, error)

// PathFunc is a conditional edge's path function. It sees the committed state
// plus the writes of the node it leaves (LangGraph's fresh read).
type PathFunc func(ctx context.Context, s State) (Route, error)

// RetryPolicy says how often and how patiently to retry a failing node. The
// zero RetryPolicy means a single attempt.
type RetryPolicy struct {
	MaxAttempts     int           // total attempts, including the first; ≤ 1 means no retry
	InitialInterval time.Duration // wait before the second attempt; 0 retries at once
	BackoffFactor   float64       // multiplier per attempt; 0 means 2
	MaxInterval     time.Duration // cap on the wait; 0 means no cap
	Jitter          bool          // add up to one InitialInterval of random wait
	// RetryOn decides whether an error is worth another attempt. nil is the
	// reference's default retry-on: never panics, cancellation, interrupts
	// and errors wrapped with Permanent, which routing errors are (a route
	// to an unknown node, a path key missing from the path map, a write to
	// a channel that is not there or does not fit); with LangGraphJS every
	// other error; with LangGraphPython (the default) every other error but
	// those whose ErrorClass Python's default_retry_on does not retry
	// (ClassInvalid, ClassProgram, ClassOS, ClassClientStatus).
	RetryOn func(error) bool
}

// DefaultRetry is LangGraph's default policy: 3 attempts, 0.5 s then doubling
// up to 128 s, with jitter.
var DefaultRetry = RetryPolicy{MaxAttempts: 3, InitialInterval: 500 * time.Millisecond, BackoffFactor: 2, MaxInterval: 128 * time.Second, Jitter: true}

// NodeOption configures a node at AddNode.
type NodeOption func(*nodeDef)

// Defer makes the node wait until the graph would otherwise stop, so a fan-in
// over branches of unequal length runs once, after all of them.
func Defer() NodeOption { return func(n *nodeDef) { n.deferred = true } }

// OnInput makes the node run on the graph's input in the input's own step,
// as LangGraph's functional entrypoint does (a Pregel node triggered by
// START): the graph has no hidden __start__ task, so a run's first
// checkpoint (source input, step -1) lists this node as next and the node
// runs in step 0. The node reads the input's values through its State, the
// other channels as they are. The graph still declares the edge from START
// to the node, which must be START's only edge; one node at most is
// OnInput.
func OnInput() NodeOption { return func(n *nodeDef) { n.onInput = true } }

// WithRetry gives the node its own retry policy.
func WithRetry(p RetryPolicy) NodeOption { return func(n *nodeDef) { n.retry = &p } }

// Destinations declares the nodes this node may route to by returning a
// Command (Goto or Sends), so the graph view draws those edges and the
// compiler counts those nodes as reachable.
func Destinations(nodes ...string) NodeOption {
	return func(n *nodeDef) { n.destinations = append(n.destinations, nodes...) }
}

// Writes declares the channels the node writes; Compile rejects a declared
// channel that is not in the state schema. Undeclared writes are still
// checked when they happen.
func Writes(channels ...Decl) NodeOption {
	return func(n *nodeDef) {
		for _, c := range channels {
			n.writes = append(n.writes, c.Name())
		}
	}
}

// BranchOption configures a conditional edge.
type BranchOption func(*branchDef)

// PathMap maps the path function's keys to node names (END allowed). Keys
// not in the map are an error at run time.
func PathMap(m map[string]string) BranchOption {
	return func(b *branchDef) {
		b.pathMap = make(map[string]string, len(m))
		for k, v := range m {
			b.pathMap[k] = v
		}
	}
}

// Targets declares the nodes the path function may return by name, when it
// returns node names rather than path-map keys.
func Targets(nodes ...string) BranchOption {
	return func(b *branchDef) { b.targets = append(b.targets, nodes...) }
}

// SendsTo declares the nodes the path function may Send to.
func SendsTo(nodes ...string) BranchOption {
	return func(b *branchDef) { b.sends = append(b.sends, nodes...) }
}

type nodeDef struct {
	name         string
	fn           NodeFunc
	sub          *Graph
	deferred     bool
	retry        *RetryPolicy
	cache        *CachePolicy
	timeout      time.Duration
	destinations []string
	writes       []string
	onInput      bool
}

type branchDef struct {
	from    string
	fn      PathFunc
	pathMap map[string]string
	targets []string
	sends   []string
}

type edgeDef struct{ from, to string }

type joinDef struct {
	from []string
	to   string
}

// StateGraph builds a graph over a state schema. Its methods record the
// first error and ignore later calls, so a definition reads top to bottom
// and Compile reports what went wrong; the zero StateGraph is not usable,
// make one with NewGraph.
type StateGraph struct {
	name     string
	decls    []Decl
	nodes    []*nodeDef
	edges    []edgeDef
	joins    []joinDef
	branches []*branchDef
	err      error
}

// NewGraph starts a graph named name (shown by the studio; may be "") whose
// state is the given channels.
func NewGraph(name string, channels ...Decl) *StateGraph {
	g := &StateGraph{name: name}
	seen := map[string]bool{}
	for _, d := range channels {
		if d == nil || d.spec() == nil {
			g.fail(errors.New("nil or zero channel declaration"))
			continue
		}
		n := d.Name()
		switch {
		case n == "":
			g.fail(errors.New("channel with an empty name"))
		case seen[n]:
			g.fail(fmt.Errorf("channel %q declared twice", n))
		case reservedName(n):
			g.fail(fmt.Errorf("channel name %q is reserved", n))
		case d.spec().err != nil:
			g.fail(d.spec().err)
		}
		seen[n] = true
		g.decls = append(g.decls, d)
	}
	return g
}

func reservedName(n string) bool {
	return n == START || n == END || strings.HasPrefix(n, "__") || strings.HasPrefix(n, "branch:") || strings.HasPrefix(n, "join:")
}

func (g *StateGraph) fail(err error) {
	if g.err == nil {
		g.err = err
	}
}

// Err returns the first error recorded while building, or nil.
func (g *StateGraph) Err() error { return g.err }

// AddNode adds a node running fn.
func (g *StateGraph) AddNode(name string, fn NodeFunc, opts ...NodeOption) *StateGraph {
	if fn == nil {
		g.fail(fmt.Errorf("node %q: nil function", name))
		return g
	}
	return g.addNode(&nodeDef{name: name, fn: fn}, opts)
}

// AddSubgraph adds a node that runs a compiled graph with its own namespace.
// The subgraph reads the parent's channels of the same names as its input,
// and its final values of those channels are written back to the parent.
func (g *StateGraph) AddSubgraph(name string, sub *Graph, opts ...NodeOption) *StateGraph {
	if sub == nil {
		g.fail(fmt.Errorf("subgraph node %q: nil graph", name))
		return g
	}
	return g.addNode(&nodeDef{name: name, sub: sub}, opts)
}

func (g *StateGraph) addNode(n *nodeDef, opts []NodeOption) *StateGraph {
	if g.err != nil {
		return g
	}
	switch {
	case n.name == "":
		g.fail(errors.New("node with an empty name"))
		return g
	case reservedName(n.name) || strings.ContainsAny(n.name, ":|"):
		g.fail(fmt.Errorf("node name %q is reserved (names may not be START/END, start with \"__\", or contain ':' or '|')", n.name))
		return g
	}
	for _, o := range g.nodes {
		if o.name == n.name {
			g.fail(fmt.Errorf("node %q added twice", n.name))
			return g
		}
	}
	for _, d := range g.decls {
		if d.Name() == n.name {
			g.fail(fmt.Errorf("node %q has the name of a state channel", n.name))
			return g
		}
	}
	for _, o := range opts {
		o(n)
	}
	g.nodes = append(g.nodes, n)
	return g
}

// AddEdge adds a static edge: from always triggers to. Use START as from for
// an entry point and END as to for an exit.
func (g *StateGraph) AddEdge(from, to string) *StateGraph {
	if g.err != nil {
		return g
	}
	if from == END {
		g.fail(fmt.Errorf("edge %s → %s: END cannot be a start node", from, to))
		return g
	}
	if to == START {
		g.fail(fmt.Errorf("edge %s → %s: START cannot be an end node", from, to))
		return g
	}
	g.edges = append(g.edges, edgeDef{from, to})
	return g
}

// AddJoin adds a join edge: to runs once every node in from has finished
// (in any steps), as LangGraph's add_edge([a, b], c).
func (g *StateGraph) AddJoin(from []string, to string) *StateGraph {
	if g.err != nil {
		return g
	}
	if len(from) < 2 {
		g.fail(fmt.Errorf("join → %s: needs at least two source nodes, got %v", to, from))
		return g
	}
	for _, f := range from {
		if f == END || f == START {
			g.fail(fmt.Errorf("join %v → %s: START and END cannot be join sources", from, to))
			return g
		}
	}
	if to == START {
		g.fail(fmt.Errorf("join %v → START: START cannot be an end node", from))
		return g
	}
	g.joins = append(g.joins, joinDef{slices.Clone(from), to})
	return g
}

// AddConditionalEdges routes from a node (or START) by a path function.
// Declare where it may go with PathMap, Targets and SendsTo: the compiler
// checks those nodes exist and the studio draws the edges.
func (g *StateGraph) AddConditionalEdges(from string, fn PathFunc, opts ...BranchOption) *StateGraph {
	if g.err != nil {
		return g
	}
	if fn == nil {
		g.fail(fmt.Errorf("conditional edge from %q: nil path function", from))
		return g
	}
	if from == END {
		g.fail(errors.New("conditional edge from END"))
		return g
	}
	b := &branchDef{from: from, fn: fn}
	for _, o := range opts {
		o(b)
	}
	if b.pathMap == nil && len(b.targets) == 0 && len(b.sends) == 0 {
		g.fail(fmt.Errorf("conditional edge from %q declares no destinations: give engine.PathMap, engine.Targets or engine.SendsTo", from))
		return g
	}
	g.branches = append(g.branches, b)
	return g
}

// CompileOption configures a graph at Compile.
type CompileOption func(*compileConfig)

type compileConfig struct {
	saver           checkpoint.Saver
	store           longterm.Store
	interruptBefore []string
	interruptAfter  []string
	retry           *RetryPolicy
	reference       Reference
	cache           nodecache.Cache
}

// WithSaver stores every super-step's checkpoint in s; runs then belong to
// threads and can be interrupted, resumed and travelled back. Without a
// saver a graph runs in memory only.
func WithSaver(s checkpoint.Saver) CompileOption { return func(c *compileConfig) { c.saver = s } }

// WithStore gives the graph's nodes the long-term store s, read through
// RuntimeOf(ctx).Store (LangGraph's compile(store=...)): documents kept
// across threads and runs, which no checkpoint holds. A subgraph's nodes
// get the store of the outermost graph that has one.
func WithStore(s longterm.Store) CompileOption { return func(c *compileConfig) { c.store = s } }

// WithInterruptBefore sets static breakpoints before the named nodes ("*" for
// every node). A run may replace them with BreakBefore.
func WithInterruptBefore(nodes ...string) CompileOption {
	return func(c *compileConfig) { c.interruptBefore = nodes }
}

// WithInterruptAfter sets static breakpoints after the named nodes ("*" for
// every node). A run may replace them with BreakAfter.
func WithInterruptAfter(nodes ...string) CompileOption {
	return func(c *compileConfig) { c.interruptAfter = nodes }
}

// WithDefaultRetry gives every node without its own policy the policy p.
func WithDefaultRetry(p RetryPolicy) CompileOption { return func(c *compileConfig) { c.retry = &p } }
