package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/weftstudio/weft/checkpoint"
)

// Graph is a compiled, runnable graph. It is immutable and safe for
// concurrent runs; each run keeps its own channels.
type Graph struct {
	name    string
	specs   []*chanSpec // state channels first (nState of them), then internal ones
	nState  int
	chanIdx map[string]int
	startCh int
	tasksCh int
	nodes   []*node // sorted by name, so a node's index orders it by name
	nodeIdx map[string]int
	// declared lists node indexes in the order the nodes were added, START
	// first: the order tasks are planned in when any node may run.
	declared []int
	// trigToNodes lists, per channel, the nodes it triggers (sorted by name).
	trigToNodes [][]int
	saver       checkpoint.Saver
	before      []string
	after       []string
	topo        Topology
	reference   Reference // WithReference
	// scratch pools putScratch between runs; shared by WithSaver copies,
	// which have the same channels and nodes.
	scratch *sync.Pool
}

type node struct {
	name     string
	idx      int
	fn       NodeFunc
	sub      *Graph
	pullPath string // "pull:<name>", the path of its pull tasks
	start    bool   // the hidden __start__ node
	deferred bool
	retry    *RetryPolicy
	timeout  time.Duration
	triggers []int // channel indexes, sorted
	edges    []int // branch:to:Y channels written after the node
	joins    []int // join channels the node arrives at
	branches []*branchDef
}

// Compile checks the graph and returns it ready to run. Every problem found
// is reported in one *CompileError naming the node or edge.
func (g *StateGraph) Compile(opts ...CompileOption) (*Graph, error) {
	if g.err != nil {
		return nil, &CompileError{Graph: g.name, Errs: []error{g.err}}
	}
	var cc compileConfig
	for _, o := range opts {
		o(&cc)
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	out := &Graph{name: g.name, chanIdx: map[string]int{}, nodeIdx: map[string]int{}, saver: cc.saver, scratch: &sync.Pool{},
		before: cc.interruptBefore, after: cc.interruptAfter, reference: cc.reference}
	addSpec := func(s *chanSpec) int {
		out.chanIdx[s.name] = len(out.specs)
		out.specs = append(out.specs, s)
		return len(out.specs) - 1
	}
	for _, d := range g.decls {
		s := d.spec()
		if s.kind != "untracked" {
			if err := checkStorable(s.codec.goType()); err != nil {
				bad("channel %q: %v", s.name, err)
			}
		}
		addSpec(s)
	}
	out.nState = len(out.specs)
	out.startCh = addSpec(&chanSpec{name: START, kind: "ephemeral", codec: valuesCodec{out},
		newCh: func() channel {
			return &ephemeral{lastValue: lastValue{name: START, codec: valuesCodec{out}}, guard: true}
		}})
	out.tasksCh = addSpec(tasksSpec(out))

	// Nodes, sorted by name so pull tasks run and apply in LangGraph's order.
	defs := slices.Clone(g.nodes)
	defs = append(defs, &nodeDef{name: START})
	sort.Slice(defs, func(i, j int) bool { return defs[i].name < defs[j].name })
	known := map[string]bool{}
	for _, d := range defs {
		known[d.name] = true
	}
	isTarget := func(n string) bool { return known[n] && n != START || n == END }

	for i, d := range defs {
		if d.sub != nil {
			for j := 0; j < d.sub.nState; j++ {
				cs := d.sub.specs[j]
				k, ok := out.chanIdx[cs.name]
				if !ok || k >= out.nState {
					continue
				}
				if pt, ct := out.specs[k].codec.goType(), cs.codec.goType(); pt != ct {
					bad("subgraph node %q: channel %q is %v in graph %q but %v in its subgraph %q; a shared channel needs one type", d.name, cs.name, pt, g.name, ct, d.sub.name)
				}
			}
		}
		n := &node{name: d.name, idx: i, fn: d.fn, sub: d.sub, deferred: d.deferred, retry: d.retry, timeout: d.timeout, start: d.name == START, pullPath: "pull:" + d.name}
		if n.retry == nil {
			n.retry = cc.retry
		}
		if n.start {
			n.triggers = []int{out.startCh}
		} else {
			name := "branch:to:" + d.name
			var s *chanSpec
			if d.deferred {
				s = &chanSpec{name: name, kind: "ephemeral", codec: typedCodec[any]{},
					newCh: func() channel { return &lastValueAfterFinish{name: name} }}
			} else {
				s = &chanSpec{name: name, kind: "ephemeral", codec: typedCodec[any]{},
					newCh: func() channel {
						return &ephemeral{lastValue: lastValue{name: name, codec: typedCodec[any]{}}}
					}}
			}
			n.triggers = []int{addSpec(s)}
		}
		for _, w := range d.writes {
			if i, ok := out.chanIdx[w]; !ok || i >= out.nState {
				bad("node %q declares a write to %q, which is not a channel of the state", d.name, w)
			}
		}
		for _, dst := range d.destinations {
			if !isTarget(dst) {
				bad("node %q: destination %q is not a node", d.name, dst)
			}
		}
		out.nodeIdx[d.name] = i
		out.nodes = append(out.nodes, n)
	}
	branchCh := func(to string) int { return out.chanIdx["branch:to:"+to] }

	for _, e := range g.edges {
		switch {
		case !known[e.from]:
			bad("edge %s → %s: unknown node %q", e.from, e.to, e.from)
		case !isTarget(e.to):
			bad("edge %s → %s: unknown node %q", e.from, e.to, e.to)
		case e.to == END:
		default:
			n := out.nodes[out.nodeIdx[e.from]]
			if c := branchCh(e.to); !slices.Contains(n.edges, c) {
				n.edges = append(n.edges, c)
			}
		}
	}
	for _, j := range g.joins {
		ok := true
		for _, f := range j.from {
			if !known[f] {
				bad("join %v → %s: unknown node %q", j.from, j.to, f)
				ok = false
			}
		}
		if !isTarget(j.to) || j.to == END {
			bad("join %v → %s: unknown node %q", j.from, j.to, j.to)
			ok = false
		}
		if !ok {
			continue
		}
		sorted := slices.Clone(j.from)
		slices.Sort(sorted)
		name := "join:" + strings.Join(sorted, "+") + ":" + j.to
		if _, dup := out.chanIdx[name]; dup {
			bad("join %v → %s added twice", j.from, j.to)
			continue
		}
		target := out.nodes[out.nodeIdx[j.to]]
		afterFinish := target.deferred
		c := addSpec(&chanSpec{name: name, kind: "named_barrier", codec: typedCodec[string]{},
			newCh: func() channel { return &namedBarrier{name: name, names: sorted, afterFinish: afterFinish} }})
		target.triggers = append(target.triggers, c)
		for _, f := range sorted {
			n := out.nodes[out.nodeIdx[f]]
			n.joins = append(n.joins, c)
		}
	}
	for _, b := range g.branches {
		if !known[b.from] {
			bad("conditional edge from %q: unknown node", b.from)
			continue
		}
		keys := make([]string, 0, len(b.pathMap))
		for k := range b.pathMap {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if !isTarget(b.pathMap[k]) {
				bad("conditional edge from %q: path map key %q names unknown node %q", b.from, k, b.pathMap[k])
			}
		}
		for _, t := range b.targets {
			if !isTarget(t) {
				bad("conditional edge from %q: target %q is not a node", b.from, t)
			}
		}
		for _, t := range b.sends {
			if !known[t] || t == START {
				bad("conditional edge from %q: Send target %q is not a node", b.from, t)
			}
		}
		n := out.nodes[out.nodeIdx[b.from]]
		n.branches = append(n.branches, b)
	}
	if len(errs) == 0 {
		errs = append(errs, out.checkReachable(g)...)
	}
	if len(errs) > 0 {
		return nil, &CompileError{Graph: g.name, Errs: errs}
	}

	out.trigToNodes = make([][]int, len(out.specs))
	for _, n := range out.nodes {
		slices.Sort(n.triggers)
		for _, t := range n.triggers {
			out.trigToNodes[t] = append(out.trigToNodes[t], n.idx)
		}
	}
	out.declared = append(out.declared, out.nodeIdx[START])
	for _, d := range g.nodes {
		out.declared = append(out.declared, out.nodeIdx[d.name])
	}
	out.topo = out.buildTopology(g)
	return out, nil
}

// checkReachable reports nodes no path from START reaches, counting static,
// join and conditional edges, Sends and declared Command destinations.
func (out *Graph) checkReachable(g *StateGraph) []error {
	adj := map[string][]string{}
	for _, e := range g.edges {
		adj[e.from] = append(adj[e.from], e.to)
	}
	for _, j := range g.joins {
		for _, f := range j.from {
			adj[f] = append(adj[f], j.to)
		}
	}
	for _, b := range g.branches {
		for _, t := range b.pathMap {
			adj[b.from] = append(adj[b.from], t)
		}
		adj[b.from] = append(adj[b.from], b.targets...)
		adj[b.from] = append(adj[b.from], b.sends...)
	}
	for _, d := range g.nodes {
		adj[d.name] = append(adj[d.name], d.destinations...)
	}
	if len(adj[START]) == 0 {
		return []error{fmt.Errorf("no entry point: add an edge from START (engine.START)")}
	}
	seen := map[string]bool{START: true}
	queue := []string{START}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, m := range adj[n] {
			if !seen[m] {
				seen[m] = true
				queue = append(queue, m)
			}
		}
	}
	var errs []error
	for _, n := range out.nodes {
		if !seen[n.name] {
			errs = append(errs, fmt.Errorf("node %q is unreachable from START (declare Command routes with engine.Destinations)", n.name))
		}
	}
	return errs
}

// Name returns the graph's name.
func (gr *Graph) Name() string { return gr.name }

// Topology returns the graph's shape for rendering. The result is shared:
// do not modify it.
func (gr *Graph) Topology() *Topology { return &gr.topo }

// Saver returns the saver given at Compile, or nil.
func (gr *Graph) Saver() checkpoint.Saver { return gr.saver }

// Channels returns the state schema, in declaration order.
func (gr *Graph) Channels() []ChannelInfo {
	out := make([]ChannelInfo, gr.nState)
	for i := range out {
		out[i] = gr.specs[i].info()
	}
	return out
}

// Nodes returns the names of the graph's nodes (without START and END),
// sorted.
func (gr *Graph) Nodes() []string {
	out := make([]string, 0, len(gr.nodes))
	for _, n := range gr.nodes {
		if !n.start {
			out = append(out, n.name)
		}
	}
	return out
}

func (gr *Graph) buildTopology(g *StateGraph) Topology {
	t := Topology{Name: g.name}
	t.Nodes = append(t.Nodes, TopoNode{Name: START, Kind: NodeStart})
	for _, n := range gr.nodes {
		if n.start {
			continue
		}
		tn := TopoNode{Name: n.name, Deferred: n.deferred, Retry: n.retry != nil && n.retry.MaxAttempts > 1}
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

// valuesCodec stores a Values map (the graph input, a Send argument) with
// each value encoded by its channel's codec, so types survive.
type valuesCodec struct{ g *Graph }

func (c valuesCodec) goType() reflect.Type { return reflect.TypeFor[Values]() }

func (c valuesCodec) check(v any) error {
	if _, ok := v.(Values); ok {
		return nil
	}
	return fmt.Errorf("value of type %T, want engine.Values", v)
}

func (c valuesCodec) encode(v any) ([]byte, error) {
	vals, ok := v.(Values)
	if !ok {
		return nil, c.check(v)
	}
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	// Written out directly rather than with json.Marshal of a map of
	// json.RawMessage, which re-scans every value to compact it (a wide
	// input is tens of kilobytes): codecs already produce compact JSON.
	// The bytes are the same.
	out := []byte{'{'}
	for n, k := range keys {
		i, ok := c.g.chanIdx[k]
		if !ok || i >= c.g.nState {
			return nil, fmt.Errorf("key %q is not a channel of graph %q", k, c.g.name)
		}
		b, err := c.g.specs[i].codec.encode(vals[k])
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", k, err)
		}
		if n > 0 {
			out = append(out, ',')
		}
		if plainJSONString(k) {
			out, _ = appendSimpleJSON(out, k)
		} else {
			q, err := json.Marshal(k)
			if err != nil {
				return nil, err
			}
			out = append(out, q...)
		}
		out = append(out, ':')
		out = append(out, b...)
	}
	return append(out, '}'), nil
}

func (c valuesCodec) decode(b []byte) (any, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	out := make(Values, len(raw))
	for k, r := range raw {
		i, ok := c.g.chanIdx[k]
		if !ok || i >= c.g.nState {
			return nil, fmt.Errorf("key %q is not a channel of graph %q", k, c.g.name)
		}
		v, err := c.g.specs[i].codec.decode(r)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", k, err)
		}
		out[k] = v
	}
	return out, nil
}

// sendForm is the stored form of a Send: a Values argument is stored by
// channel codecs, anything else with its registered type.
type sendForm struct {
	Node   string          `json:"node"`
	Values json.RawMessage `json:"values,omitempty"`
	Arg    json.RawMessage `json:"arg,omitempty"`
}

type sendsCodec struct{ g *Graph }

func (c sendsCodec) goType() reflect.Type { return reflect.TypeFor[[]Send]() }
func (c sendsCodec) check(v any) error {
	switch v.(type) {
	case Send, []Send:
		return nil
	}
	return fmt.Errorf("value of type %T, want engine.Send", v)
}

// argGraph returns the graph whose channels a Send to node takes as its
// argument's keys: a subgraph node's own graph, else the graph itself.
func (c sendsCodec) argGraph(node string) *Graph {
	if i, ok := c.g.nodeIdx[node]; ok && c.g.nodes[i].sub != nil {
		return c.g.nodes[i].sub
	}
	return c.g
}

func (c sendsCodec) encodeOne(s Send) (sendForm, error) {
	f := sendForm{Node: s.Node}
	var err error
	if vals, ok := s.Arg.(Values); ok {
		f.Values, err = valuesCodec{c.argGraph(s.Node)}.encode(vals)
	} else {
		f.Arg, err = encodeDynamic(s.Arg)
	}
	if err != nil {
		return f, fmt.Errorf("Send to %q: %w", s.Node, err)
	}
	return f, nil
}

func (c sendsCodec) decodeOne(f sendForm) (Send, error) {
	s := Send{Node: f.Node}
	var err error
	if f.Values != nil {
		s.Arg, err = valuesCodec{c.argGraph(f.Node)}.decode(f.Values)
	} else if f.Arg != nil {
		s.Arg, err = decodeDynamic(f.Arg)
	}
	if err != nil {
		return s, fmt.Errorf("Send to %q: %w", f.Node, err)
	}
	return s, nil
}

func (c sendsCodec) encode(v any) ([]byte, error) {
	switch x := v.(type) {
	case Send:
		f, err := c.encodeOne(x)
		if err != nil {
			return nil, err
		}
		return json.Marshal(f)
	case []Send:
		forms := make([]sendForm, len(x))
		for i, s := range x {
			f, err := c.encodeOne(s)
			if err != nil {
				return nil, err
			}
			forms[i] = f
		}
		return json.Marshal(forms)
	}
	return nil, c.check(v)
}

func (c sendsCodec) decode(b []byte) (any, error) {
	if len(b) > 0 && b[0] == '{' {
		var f sendForm
		if err := json.Unmarshal(b, &f); err != nil {
			return nil, err
		}
		return c.decodeOne(f)
	}
	var forms []sendForm
	if err := json.Unmarshal(b, &forms); err != nil {
		return nil, err
	}
	out := make([]Send, len(forms))
	for i, f := range forms {
		s, err := c.decodeOne(f)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

func tasksSpec(g *Graph) *chanSpec {
	codec := sendsCodec{g}
	return &chanSpec{name: checkpoint.Tasks, kind: "topic", codec: codec, newCh: func() channel {
		return &topic{name: checkpoint.Tasks, codec: codec,
			spread: func(v any) ([]any, bool) {
				l, ok := v.([]Send)
				if !ok {
					return nil, false
				}
				out := make([]any, len(l))
				for i, s := range l {
					out[i] = s
				}
				return out, true
			},
			build: func(vals []any) any {
				out := make([]Send, 0, len(vals))
				for _, v := range vals {
					if s, ok := v.(Send); ok {
						out = append(out, s)
					}
				}
				return out
			}}
	}}
}

// WithSaver returns a copy of the graph that stores its checkpoints in s,
// for tools such as the studio that open the user's compiled graphs on a
// store of their own. Subgraphs follow their parent's saver.
func (gr *Graph) WithSaver(s checkpoint.Saver) *Graph {
	c := *gr
	c.saver = s
	return &c
}

// DecodeValues parses a JSON object of channel values (an input form, an
// edited state) into Values with each value decoded into its channel's Go
// type. Unknown keys and values that do not fit are errors naming the key.
func (gr *Graph) DecodeValues(data []byte) (Values, error) {
	v, err := valuesCodec{gr}.decode(data)
	if err != nil {
		return nil, fmt.Errorf("graph %q input: %w", gr.name, err)
	}
	return v.(Values), nil
}

// DecodeValue parses the JSON of one channel's value into its Go type.
func (gr *Graph) DecodeValue(channel string, data []byte) (any, error) {
	i, ok := gr.chanIdx[channel]
	if !ok || i >= gr.nState {
		return nil, fmt.Errorf("graph %q has no channel %q", gr.name, channel)
	}
	v, err := gr.specs[i].codec.decode(data)
	if err != nil {
		return nil, fmt.Errorf("channel %q: %w", channel, err)
	}
	return v, nil
}

// Write returns a Write of v to the named channel after checking that the
// channel exists and accepts v, for tools that build updates from data.
func (gr *Graph) Write(channel string, v any) (Write, error) {
	i, ok := gr.chanIdx[channel]
	if !ok || i >= gr.nState {
		return Write{}, fmt.Errorf("graph %q has no channel %q", gr.name, channel)
	}
	if err := gr.specs[i].checkWrite(v); err != nil {
		return Write{}, fmt.Errorf("channel %q: %w", channel, err)
	}
	return Write{channel, v}, nil
}

// Replace returns a Write that sets the named channel to v outright: an
// Overwrite for reducer channels (so editing a list replaces it rather than
// appending), a plain write otherwise.
func (gr *Graph) Replace(channel string, v any) (Write, error) {
	w, err := gr.Write(channel, v)
	if err != nil {
		return w, err
	}
	if gr.specs[gr.chanIdx[channel]].kind == "reducer" {
		w.Value = Overwrite{v}
	}
	return w, nil
}

// Breakpoints returns the static breakpoints given at Compile (before and
// after nodes; "*" means every node), for tools that show them. nil means
// none.
func (gr *Graph) Breakpoints() (before, after []string) {
	return slices.Clone(gr.before), slices.Clone(gr.after)
}
