package engine_test

// Building a scenario's graphs with the engine's public API: channels by
// type, nodes whose bodies evaluate the scenario's templates, edges, joins,
// conditional edges and subgraphs (DSL.md "GRAPH", "CHANNEL", "NODE").

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/weftstudio/weft/checkpoint/longterm"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/checkpoint/nodecache"
	"github.com/weftstudio/weft/engine"
)

// orcCalls counts node executions, per scenario, keyed "node" or
// "<subgraph>.<node>".
type orcCalls struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *orcCalls) inc(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[key]++
	return c.n[key]
}

func (c *orcCalls) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.n))
	for k, v := range c.n {
		out[k] = v
	}
	return out
}

// orcNodeError is what a scenario node throws ("fail"): an error with a
// class name, as LangGraph.js sets err.name. Its text starts with the class
// name, so the class survives being stored as a task's error text (as
// Python stores repr(exc)).
type orcNodeError struct{ class, msg string }

func (e *orcNodeError) Error() string { return e.class + ": " + e.msg }

// ErrorClass is the class's place among Python's exception classes, as
// runner.py raises the builtin exception of the scenario's name: what
// LangGraphPython's default retry-on sorts by.
func (e *orcNodeError) ErrorClass() engine.ErrorClass { return pythonClass(e.class) }

// pythonClass maps a Python builtin exception class name to the class an
// error declares; a name Python does not have (runner.py makes it a new
// Exception subclass) and "Error" (a plain Exception) are ClassUnstated.
func pythonClass(name string) engine.ErrorClass {
	switch name {
	case "ConnectionError", "ConnectionResetError", "ConnectionRefusedError", "ConnectionAbortedError", "BrokenPipeError":
		return engine.ClassConnection
	case "ValueError", "TypeError", "LookupError", "KeyError", "IndexError", "ArithmeticError", "ZeroDivisionError", "OverflowError", "UnicodeError":
		return engine.ClassInvalid
	case "RuntimeError", "NotImplementedError", "RecursionError", "NameError", "UnboundLocalError", "ImportError", "ModuleNotFoundError", "SyntaxError", "ReferenceError", "StopIteration", "StopAsyncIteration":
		return engine.ClassProgram
	case "OSError", "IOError", "FileNotFoundError", "PermissionError", "TimeoutError", "IsADirectoryError":
		return engine.ClassOS
	}
	return engine.ClassUnstated
}

// orcBuilder builds the graphs of one scenario.
type orcBuilder struct {
	graphs *omap // the scenario's "subgraphs"
	calls  *orcCalls
	ref    engine.Reference // every graph is compiled to follow it
	store  longterm.Store   // the scenario's long-term store; nil when it uses none
	// fatal records the first scenario bug met inside a node or path
	// function (the engine turns their panics into node errors).
	fatal func(error)
	// pythonOnly lists what the graphs use that only Python LangGraph has
	// ("<prefix><key> (<type>)" per managed value).
	pythonOnly []string
}

// orcGraph is one built graph with what its nodes need to know.
type orcGraph struct {
	chans   []string        // state channel names, in declaration order
	managed []orcManagedKey // managed values, in declaration order
	nodes   []string        // node names, in declaration order
	subs    map[string]bool // nodes that are subgraphs
	parent  *orcGraph
}

// orcManaged are the DSL's channel types that are managed values (Python
// LangGraph's RemainingSteps and IsLastStep): state keys a node and a
// route read but no channel holds.
var orcManaged = map[string]bool{"remainingSteps": true, "isLastStep": true}

// orcManagedKey is one managed value of a graph: its key and DSL type.
type orcManagedKey struct{ name, typ string }

// managedInput adds the graph's managed values to a node's or route's
// state input, as Python LangGraph adds them to the state it passes:
// computed for the task running with ctx from its Runtime.
func (g *orcGraph) managedInput(ctx context.Context, in map[string]any) {
	if len(g.managed) == 0 {
		return
	}
	rt, ok := engine.RuntimeOf(ctx)
	if !ok {
		panic(orcError{"a managed value read outside a running node"})
	}
	for _, m := range g.managed {
		switch m.typ {
		case "remainingSteps":
			in[m.name] = float64(rt.RemainingSteps)
		case "isLastStep":
			in[m.name] = rt.IsLastStep
		}
	}
}

// write is a write of v to channel ch. A topic takes one value or a list of
// them, as LangGraph's Topic does.
func (g *orcGraph) write(ch string, v any) engine.Write {
	return engine.Write{Channel: ch, Value: v}
}

func (b *orcBuilder) build(spec *omap, prefix string, parent *orcGraph) (*engine.Graph, *orcGraph, error) {
	g := &orcGraph{subs: map[string]bool{}, parent: parent}
	var decls []engine.Decl
	chans := spec.obj("channels")
	if chans != nil {
		for _, name := range chans.keys {
			if typ := chans.obj(name).str("type"); orcManaged[typ] {
				// A managed value is no channel: the node and route
				// functions read it from their Runtime (managedInput).
				if chans.obj(name).has("default") {
					return nil, nil, orcError{fmt.Sprintf("managed value %q (%s) takes no default", name, typ)}
				}
				g.managed = append(g.managed, orcManagedKey{name, typ})
				b.pythonOnly = append(b.pythonOnly, fmt.Sprintf("%s%s (%s)", prefix, name, typ))
				continue
			}
			d, err := orcChannel(name, chans.obj(name))
			if err != nil {
				return nil, nil, err
			}
			decls = append(decls, d)
			g.chans = append(g.chans, name)
		}
	}
	sg := engine.NewGraph(strings.TrimSuffix(prefix, "."), decls...)
	nodes := spec.obj("nodes")
	if nodes != nil {
		g.nodes = nodes.keys
		for _, name := range nodes.keys {
			if nodes.obj(name).has("subgraph") {
				g.subs[name] = true
			}
		}
		for _, name := range nodes.keys {
			ns := nodes.obj(name)
			var opts []engine.NodeOption
			if v, _ := ns.get("defer"); v == true {
				opts = append(opts, engine.Defer())
			}
			if ends := ns.list("ends"); ends != nil {
				var to []string
				for _, e := range ends {
					s, _ := e.(string)
					to = append(to, s)
				}
				opts = append(opts, engine.Destinations(to...))
			}
			if r := ns.obj("retry"); r != nil {
				n := 3
				if v, ok := r.get("maxAttempts"); ok {
					n = int(v.(float64))
				}
				// No waiting and no jitter, as the reference runner's policy.
				opts = append(opts, engine.WithRetry(engine.RetryPolicy{MaxAttempts: n, BackoffFactor: 1}))
			}
			if cs := ns.obj("cache"); cs != nil {
				opts = append(opts, engine.WithCachePolicy(orcCachePolicy(g, cs)))
			}
			if sub := ns.str("subgraph"); sub != "" {
				sspec := b.graphs.obj(sub)
				if sspec == nil {
					return nil, nil, orcError{fmt.Sprintf("node %q: unknown subgraph %q", name, sub)}
				}
				child, _, err := b.build(sspec, sub+".", g)
				if err != nil {
					return nil, nil, err
				}
				sg.AddSubgraph(name, child, opts...)
				continue
			}
			key := prefix + name
			b.calls.n[key] = 0
			sg.AddNode(name, b.nodeFunc(g, name, key, ns), opts...)
		}
	}
	for _, e := range spec.list("edges") {
		pair, _ := e.([]any)
		if len(pair) != 2 {
			return nil, nil, orcError{fmt.Sprintf("bad edge %v", e)}
		}
		to, _ := pair[1].(string)
		switch from := pair[0].(type) {
		case string:
			sg.AddEdge(from, to)
		case []any:
			var names []string
			for _, f := range from {
				s, _ := f.(string)
				names = append(names, s)
			}
			sg.AddJoin(names, to)
		default:
			return nil, nil, orcError{fmt.Sprintf("bad edge %v", e)}
		}
	}
	for _, ce := range spec.list("conditionalEdges") {
		cs, _ := ce.(*omap)
		from := cs.str("from")
		var opts []engine.BranchOption
		switch pm := cs.m["pathMap"].(type) {
		case *omap:
			m := map[string]string{}
			for _, k := range pm.keys {
				m[k], _ = pm.m[k].(string)
			}
			opts = append(opts, engine.PathMap(m))
		case []any:
			m := map[string]string{}
			for _, v := range pm {
				s, _ := v.(string)
				m[s] = s
			}
			opts = append(opts, engine.PathMap(m))
		case nil:
			// Without a path map LangGraph lets the route reach any node.
			opts = append(opts, engine.Targets(append(slices.Clone(g.nodes), engine.END)...))
			sendable := slices.Clone(g.nodes)
			if len(sendable) > 0 {
				opts = append(opts, engine.SendsTo(sendable...))
			}
		}
		sg.AddConditionalEdges(from, b.pathFunc(g, from, cs.m["route"]), opts...)
	}
	copts := []engine.CompileOption{engine.WithReference(b.ref)}
	if l := spec.list("interruptBefore"); l != nil {
		copts = append(copts, engine.WithInterruptBefore(orcStrings(l)...))
	}
	if l := spec.list("interruptAfter"); l != nil {
		copts = append(copts, engine.WithInterruptAfter(orcStrings(l)...))
	}
	if parent == nil {
		copts = append(copts, engine.WithSaver(memory.New()))
		if orcUsesCache(spec, b.graphs) {
			copts = append(copts, engine.WithCache(nodecache.NewMemory()))
		}
		if b.store != nil {
			copts = append(copts, engine.WithStore(b.store))
		}
	}
	gr, err := sg.Compile(copts...)
	return gr, g, err
}

// orcCachePolicy is a NODE's "cache": the key template over the input made
// a string as compact JSON, the TTL in seconds.
func orcCachePolicy(g *orcGraph, cs *omap) engine.CachePolicy {
	var p engine.CachePolicy
	if kt, ok := cs.get("key"); ok {
		p.Key = func(s engine.State) (string, error) {
			var input any
			if arg := s.Arg(); arg != nil {
				input = plain(arg)
			} else {
				input = stateInput(s, g.chans)
			}
			return compactJSON(tmpl(kt, &evalCtx{input: input})), nil
		}
	}
	if v, ok := cs.get("ttl"); ok {
		p.TTL = time.Duration(v.(float64) * float64(time.Second))
	}
	return p
}

// orcUsesCache reports whether a node of the root graph or of a subgraph
// has a cache policy: the root graph then gets an in-memory cache.
func orcUsesCache(root, graphs *omap) bool {
	specs := []*omap{root}
	if graphs != nil {
		for _, k := range graphs.keys {
			specs = append(specs, graphs.obj(k))
		}
	}
	for _, s := range specs {
		nodes := s.obj("nodes")
		if nodes == nil {
			continue
		}
		for _, n := range nodes.keys {
			if nodes.obj(n).has("cache") {
				return true
			}
		}
	}
	return false
}

func orcStrings(l []any) []string {
	out := make([]string, 0, len(l))
	for _, v := range l {
		s, _ := v.(string)
		out = append(out, s)
	}
	return out
}

// orcChannel declares a channel of the DSL's types over `any` values.
func orcChannel(name string, spec *omap) (engine.Decl, error) {
	typ := spec.str("type")
	if typ == "" {
		typ = "lastvalue"
	}
	dv, hasDefault := spec.get("default")
	dflt := func() any { return unordered(dv) } // a fresh copy each time
	switch typ {
	case "lastvalue":
		k := engine.LastValue[any](name)
		if hasDefault {
			k = k.WithDefault(dflt)
		}
		return k, nil
	case "append", "concat", "sum":
		var op func(a, b any) any
		switch typ {
		case "append":
			op = jsAppend
		case "concat":
			sep := spec.str("sep")
			op = func(a, b any) any {
				if truthy(a) {
					return jsToString(a) + sep + jsToString(b)
				}
				return b
			}
		case "sum":
			op = jsAdd
		}
		k := engine.Reducer[any](name, typ, op)
		if hasDefault {
			k = k.WithDefault(dflt)
		}
		return k, nil
	case "topic":
		acc, _ := spec.get("accumulate")
		return engine.Topic[any](name, acc == true), nil
	}
	return nil, orcError{fmt.Sprintf("channel %q: unknown type %q", name, typ)}
}

// jsAppend is the runner's append reducer: (a ?? []).concat(b is a list ?
// b : [b]).
func jsAppend(a, b any) any {
	add, ok := b.([]any)
	if !ok {
		add = []any{b}
	}
	switch x := a.(type) {
	case nil:
		return append([]any{}, add...)
	case []any:
		out := make([]any, 0, len(x)+len(add))
		return append(append(out, x...), add...)
	case string: // String.prototype.concat: the list's string form follows
		return x + jsToString(add)
	}
	return append([]any{a}, add...)
}

// jsAdd is JavaScript's + as the sum reducer uses it: (a ?? 0) + b.
func jsAdd(a, b any) any {
	if a == nil {
		a = 0.0
	}
	x, ok1 := a.(float64)
	y, ok2 := b.(float64)
	if ok1 && ok2 {
		return x + y
	}
	return jsToString(a) + jsToString(b)
}

// jsToString is JavaScript's String(v).
func jsToString(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case float64:
		return jsNumber(x)
	case bool:
		if x {
			return "true"
		}
		return "false"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			if e != nil {
				parts[i] = jsToString(e)
			}
		}
		return strings.Join(parts, ",")
	}
	return "[object Object]"
}

// stateInput reads the graph's state channels that have a value.
func stateInput(s engine.State, chans []string) map[string]any {
	m := make(map[string]any, len(chans))
	for _, n := range chans {
		if v, ok := s.Get(n); ok {
			m[n] = plain(v)
		}
	}
	return m
}

// guard turns a scenario bug raised inside a node or path function into a
// recorded fatal error (the engine would report the panic as a node error).
func (b *orcBuilder) guard(err *error) {
	if p := recover(); p != nil {
		if oe, ok := p.(orcError); ok {
			b.fatal(oe)
			*err = oe
			return
		}
		panic(p)
	}
}

func (b *orcBuilder) nodeFunc(g *orcGraph, name, key string, spec *omap) engine.NodeFunc {
	return func(ctx context.Context, s engine.State) (out engine.Output, err error) {
		defer b.guard(&err)
		call := b.calls.inc(key)
		var input any
		if arg := s.Arg(); arg != nil {
			input = plain(arg)
		} else {
			in := stateInput(s, g.chans)
			g.managedInput(ctx, in)
			input = in
		}
		c := &evalCtx{input: input, call: float64(call), node: name, resumes: []any{}, vars: map[string]any{}}
		if err := nodeFail(name, spec, c); err != nil {
			return nil, err
		}
		for i, iv := range spec.list("interrupts") {
			is, _ := iv.(*omap)
			setResume := func(v any) {
				c.resume = v
				for len(c.resumes) <= i {
					c.resumes = append(c.resumes, nil)
				}
				c.resumes[i] = v
			}
			v, err := engine.Interrupt(ctx, tmpl(is.m["value"], c))
			if err != nil {
				return nil, err
			}
			setResume(plain(v))
			if until, ok := is.get("until"); ok {
				for !cond(until, c) {
					retry := is.m["value"]
					if rv, ok := is.get("retryValue"); ok {
						retry = rv
					}
					v, err := engine.Interrupt(ctx, tmpl(retry, c))
					if err != nil {
						return nil, err
					}
					setResume(plain(v))
				}
			}
		}
		if ops := spec.list("store"); len(ops) > 0 {
			if err := orcStoreOps(ctx, ops, c); err != nil {
				return nil, err
			}
		}
		return b.buildReturn(g, spec, c)
	}
}

// orcStoreOps runs a NODE's store ops (DSL.md "Long-term store"), in
// order, on the store the node's runtime holds.
func orcStoreOps(ctx context.Context, ops []any, c *evalCtx) error {
	rt, _ := engine.RuntimeOf(ctx)
	if rt.Store == nil {
		dslFail("a node has store ops, but the graph has no store")
	}
	nsKey := func(o *omap) (longterm.Namespace, string) {
		l, _ := tmpl(o.m["namespace"], c).([]any)
		k, _ := tmpl(o.m["key"], c).(string)
		return longterm.Namespace(orcStrings(l)), k
	}
	for _, ov := range ops {
		op, _ := ov.(*omap)
		switch {
		case op.has("put"):
			o := op.obj("put")
			ns, k := nsKey(o)
			v, _ := tmpl(o.m["value"], c).(map[string]any)
			if err := rt.Store.Put(ctx, ns, k, v); err != nil {
				return err
			}
		case op.has("delete"):
			ns, k := nsKey(op.obj("delete"))
			if err := rt.Store.Delete(ctx, ns, k); err != nil {
				return err
			}
		case op.has("get"):
			ns, k := nsKey(op.obj("get"))
			it, err := rt.Store.Get(ctx, ns, k)
			if err != nil {
				return err
			}
			as := op.str("as")
			if as == "" {
				as = "stored"
			}
			c.vars[as] = nil
			if it != nil {
				c.vars[as] = it.Value
			}
		default:
			dslFail("unknown store op %v", unordered(op))
		}
	}
	return nil
}

// orcUsesStore reports whether a scenario uses the long-term store: a node
// with store ops, or a store action. It then gets an in-memory store.
func orcUsesStore(scen *omap) bool {
	specs := []*omap{scen.obj("graph")}
	if graphs := scen.obj("subgraphs"); graphs != nil {
		for _, k := range graphs.keys {
			specs = append(specs, graphs.obj(k))
		}
	}
	for _, s := range specs {
		if s == nil || s.obj("nodes") == nil {
			continue
		}
		nodes := s.obj("nodes")
		for _, n := range nodes.keys {
			if len(nodes.obj(n).list("store")) > 0 {
				return true
			}
		}
	}
	for _, av := range scen.list("actions") {
		a, _ := av.(*omap)
		for _, k := range a.keys {
			if strings.HasPrefix(k, "store") {
				return true
			}
		}
	}
	return false
}

func (b *orcBuilder) buildReturn(g *orcGraph, spec *omap, c *evalCtx) (engine.Output, error) {
	switch {
	case spec.has("command"):
		return b.buildCommand(g, spec.obj("command"), c)
	case spec.has("update"):
		return buildUpdate(g, spec.m["update"], c)
	case spec.has("returns"):
		var cmds engine.Commands
		for _, rv := range spec.list("returns") {
			r, _ := rv.(*omap)
			o, err := b.buildReturn(g, r, c)
			if err != nil {
				return nil, err
			}
			switch x := o.(type) {
			case engine.Command:
				cmds = append(cmds, x)
			case engine.Update:
				cmds = append(cmds, engine.Command{Update: x})
			case engine.Commands:
				cmds = append(cmds, x...)
			}
		}
		return cmds, nil
	}
	return nil, nil
}

// buildUpdate evaluates an update: an object (writes in key order) or a
// list of [key, value] pairs.
func buildUpdate(g *orcGraph, u any, c *evalCtx) (engine.Update, error) {
	switch x := u.(type) {
	case nil:
		return nil, nil
	case *omap:
		if len(x.keys) == 1 && (x.keys[0] == "$overwrite" || x.keys[0] == "$literal") {
			break
		}
		up := make(engine.Update, 0, len(x.keys))
		for _, k := range x.keys {
			up = append(up, g.write(k, tmpl(x.m[k], c)))
		}
		return up, nil
	case []any:
		var up engine.Update
		for _, p := range x {
			pair, ok := p.([]any)
			if !ok || len(pair) != 2 {
				return nil, orcError{fmt.Sprintf("bad update pair %v", p)}
			}
			k, _ := tmpl(pair[0], c).(string)
			up = append(up, g.write(k, tmpl(pair[1], c)))
		}
		return up, nil
	}
	// A template yielding an object: keys in sorted order.
	m, ok := tmpl(u, c).(map[string]any)
	if !ok {
		return nil, fmt.Errorf("update %v is not an object", u)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var up engine.Update
	for _, k := range keys {
		up = append(up, g.write(k, m[k]))
	}
	return up, nil
}

// buildCommand evaluates a COMMAND for graph g (Sends to a subgraph node
// carry their argument as the child's input Values).
func (b *orcBuilder) buildCommand(g *orcGraph, spec *omap, c *evalCtx) (engine.Command, error) {
	var cmd engine.Command
	if spec.has("update") {
		up, err := buildUpdate(g, spec.m["update"], c)
		if err != nil {
			return cmd, err
		}
		cmd.Update = up
	}
	target := g
	if spec.str("graph") == "PARENT" {
		cmd.Graph = engine.ParentGraph
		if g != nil && g.parent != nil {
			target = g.parent
		}
	}
	if spec.has("goto") {
		if err := addGoto(&cmd, target, evalGoto(spec.m["goto"], c)); err != nil {
			return cmd, err
		}
	}
	if spec.has("resume") {
		cmd.Resume = tmpl(spec.m["resume"], c)
	}
	return cmd, nil
}

// addGoto adds an evaluated GOTO to cmd: node names to Goto, Sends (to
// nodes of graph g) to Sends.
func addGoto(cmd *engine.Command, g *orcGraph, ds dests) error {
	for _, d := range ds {
		switch x := d.(type) {
		case string:
			cmd.Goto = append(cmd.Goto, x)
		case engine.Send:
			cmd.Sends = append(cmd.Sends, orcSend(g, x))
		default:
			return fmt.Errorf("goto destination %v is not a node name", d)
		}
	}
	return nil
}

// orcSend makes a Send's argument what the engine takes: the child's input
// Values for a subgraph node, the plain value otherwise.
func orcSend(g *orcGraph, s engine.Send) engine.Send {
	if g != nil && g.subs[s.Node] {
		if m, ok := s.Arg.(map[string]any); ok {
			s.Arg = engine.Values(m)
		}
	}
	return s
}

func (b *orcBuilder) pathFunc(g *orcGraph, from string, route any) engine.PathFunc {
	return func(ctx context.Context, s engine.State) (r engine.Route, err error) {
		defer b.guard(&err)
		in := stateInput(s, g.chans)
		g.managedInput(ctx, in)
		c := &evalCtx{input: in, node: from}
		for _, d := range evalRoute(route, c) {
			switch x := d.(type) {
			case string:
				r.Keys = append(r.Keys, x)
			case float64:
				r.Keys = append(r.Keys, jsNumber(x))
			case engine.Send:
				r.Sends = append(r.Sends, orcSend(g, x))
			default:
				return r, errors.New("Branch condition returned unknown or null destination")
			}
		}
		return r, nil
	}
}

// nodeFail is NODE's "fail" (DSL.md) for a node, an entrypoint or a task:
// the error it raises on this call, or nil.
func nodeFail(name string, spec *omap, c *evalCtx) error {
	f := spec.obj("fail")
	if f == nil {
		return nil
	}
	var fail bool
	if cv, ok := f.get("if"); ok {
		fail = cond(cv, c)
	} else {
		times := 1.0
		if v, ok := f.get("times"); ok {
			times = v.(float64)
		}
		fail = c.call.(float64) <= times
	}
	if !fail {
		return nil
	}
	msg := name + " failed"
	if mv, ok := f.get("message"); ok {
		msg = jsString(tmpl(mv, c))
	}
	class := f.str("name")
	if class == "" {
		class = "Error"
	}
	return &orcNodeError{class: class, msg: msg}
}
