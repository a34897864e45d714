package engine

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

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

	out := &Graph{name: g.name, chanIdx: map[string]int{}, nodeIdx: map[string]int{}, saver: cc.saver, store: cc.store, scratch: &sync.Pool{}, bufs: &sync.Pool{},
		before: cc.interruptBefore, after: cc.interruptAfter, reference: cc.reference, cache: cc.cache, memo: &hitMemo{}}
	addSpec := func(s *chanSpec) int {
		out.chanIdx[s.name] = len(out.specs)
		out.specs = append(out.specs, s)
		if s.trigger {
			out.triggers++
		}
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
	var onInput *nodeDef // the node the input triggers itself (OnInput)
	for _, d := range g.nodes {
		if d.onInput {
			if onInput != nil {
				bad("nodes %q and %q are both OnInput: one node at most runs on the input", onInput.name, d.name)
			}
			onInput = d
		}
	}
	if onInput != nil {
		for _, e := range g.edges {
			if e.from == START && e.to != onInput.name {
				bad("edge %s → %s: node %q is OnInput, so START may only lead to it", e.from, e.to, onInput.name)
			}
		}
	} else {
		defs = append(defs, &nodeDef{name: START})
	}
	sort.Slice(defs, func(i, j int) bool { return defs[i].name < defs[j].name })
	known := map[string]bool{}
	for _, d := range defs {
		known[d.name] = true
	}
	known[START] = true
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
		n := &node{name: d.name, idx: i, fn: d.fn, sub: d.sub, deferred: d.deferred, retry: d.retry, cache: d.cache, timeout: d.timeout, start: d.name == START, pullPath: "pull:" + d.name}
		if n.retry == nil {
			n.retry = cc.retry
		}
		n.onInput = d.onInput
		if n.start || n.onInput {
			n.triggers = []int{out.startCh}
		} else {
			name := "branch:to:" + d.name
			var s *chanSpec
			if d.deferred {
				s = &chanSpec{name: name, kind: "ephemeral", codec: typedCodec[any]{},
					newCh: func() channel { return &lastValueAfterFinish{name: name} }}
			} else {
				s = &chanSpec{name: name, kind: "ephemeral", codec: typedCodec[any]{}, trigger: true,
					newCh: func() channel { return newTrigger(name) }}
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
		case e.from == START && onInput != nil: // the input triggers it
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
		names := make([]string, len(n.triggers))
		for i, t := range n.triggers {
			out.trigToNodes[t] = append(out.trigToNodes[t], n.idx)
			names[i] = out.specs[t].name
		}
		n.trigNames = strings.Join(names, ",")
	}
	if i, ok := out.nodeIdx[START]; ok {
		out.declared = append(out.declared, i)
	}
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
