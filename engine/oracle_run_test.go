package engine_test

// Running a scenario's actions against the engine and writing down what it
// did as the oracle's document (testdata/oracle/README.md "Output
// document"), before normalization.

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/longterm"
	"github.com/weftstudio/weft/engine"
)

// chunkMeta is what the engine said about one recorded stream chunk: the
// super-step and namespace it belongs to and, for a task's completion event
// (updates, tasks result, debug task_result), the task. The comparison uses
// it to find the events LangGraph yields in completion order.
type chunkMeta struct {
	step   int
	ns     string
	taskID string // "" unless a completion event
	// parallel is set on completion events of a step that ran several
	// tasks.
	parallel bool
}

// orcRun is one scenario run: the graph, counters and the document.
type orcRun struct {
	name    string
	scen    *omap
	graph   *engine.Graph
	root    *orcGraph
	builder *orcBuilder
	calls   *orcCalls
	fatal   error
	// meta holds, per action index, one chunkMeta per recorded chunk.
	meta map[int][]chunkMeta
	ctx  context.Context
	ep   *orcEntrypoint // the scenario's entrypoint; nil for a graph's
}

// runScenario builds and runs one scenario and returns its raw document
// and checkpoint index (see orcCheckpointIndex).
func runScenario(ctx context.Context, name string, scen *omap, ref engine.Reference) (*orcRun, map[string]any, map[string]cpInfo, error) {
	r := &orcRun{name: name, scen: scen, calls: &orcCalls{n: map[string]int{}}, meta: map[int][]chunkMeta{}, ctx: ctx}
	var fatalMu sync.Mutex
	r.builder = &orcBuilder{graphs: scen.obj("subgraphs"), calls: r.calls, ref: ref, fatal: func(err error) {
		fatalMu.Lock() // node and path functions run on the engine's goroutines
		defer fatalMu.Unlock()
		if r.fatal == nil {
			r.fatal = err
		}
	}}
	if orcUsesStore(scen) {
		r.builder.store = longterm.NewMemory(longterm.Config{})
	}
	why, _ := scen.get("why")
	if why == nil {
		why = ""
	}
	doc := map[string]any{"name": name, "why": why}
	var g *engine.Graph
	var root *orcGraph
	var err error
	if es := scen.obj("entrypoint"); es != nil {
		if r.ep, err = r.builder.buildEntrypoint(es); err == nil {
			g, root = r.ep.wf.Graph(), &orcGraph{}
		}
	} else {
		g, root, err = r.builder.build(scen.obj("graph"), "", nil)
	}
	var oe orcError
	if errors.As(err, &oe) {
		return nil, nil, nil, err
	}
	if err != nil {
		doc["build"] = errInfo(err)
		return r, doc, map[string]cpInfo{}, nil
	}
	r.graph, r.root = g, root
	defThread := "1"
	if th, ok := scen.get("thread"); ok {
		defThread = orcThreadID(th)
	}
	threads := map[string]bool{}
	var actions []any
	for i, av := range scen.list("actions") {
		a, ok := av.(*omap)
		if !ok {
			return nil, nil, nil, orcError{fmt.Sprintf("action %d is not an object", i)}
		}
		thread := defThread
		if th, ok := a.get("thread"); ok {
			thread = orcThreadID(th)
		}
		threads[thread] = true
		before := r.calls.snapshot()
		rec, err := r.runAction(i, a, thread)
		if err != nil {
			return nil, nil, nil, err
		}
		fatalMu.Lock()
		fatal := r.fatal
		fatalMu.Unlock()
		if fatal != nil {
			return nil, nil, nil, fmt.Errorf("action %d: %w", i, fatal)
		}
		after := r.calls.snapshot()
		delta := map[string]any{}
		for k, v := range after {
			if d := v - before[k]; d != 0 {
				delta[k] = float64(d)
			}
		}
		rec["calls"] = delta
		actions = append(actions, rec)
	}
	doc["actions"] = orNonNil(actions)
	calls := map[string]any{}
	for k, v := range r.calls.snapshot() {
		calls[k] = float64(v)
	}
	doc["calls"] = calls
	ths := map[string]any{}
	names := make([]string, 0, len(threads))
	for th := range threads {
		names = append(names, th)
	}
	sort.Strings(names)
	for _, th := range names {
		var history any
		hist, herr := g.History(r.ctx, checkpoint.ListOptions{}, engine.WithThread(th))
		list := []any{}
		for _, s := range hist {
			list = append(list, r.snapshotDoc(s, th))
		}
		history = list
		if herr != nil {
			history = map[string]any{"error": errInfo(herr), "partial": list}
		}
		var final any
		if s, err := g.GetState(r.ctx, engine.WithThread(th)); err != nil {
			final = errInfo(err)
		} else {
			final = r.snapshotDoc(s, th)
		}
		ths[th] = map[string]any{"history": history, "final": final}
	}
	doc["threads"] = ths
	idx, err := orcCheckpointIndex(ctx, g.Saver(), names)
	if err != nil {
		return nil, nil, nil, err
	}
	return r, doc, idx, nil
}

func orcThreadID(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return jsNumber(x)
	}
	return fmt.Sprint(v)
}

func orNonNil(l []any) []any {
	if l == nil {
		return []any{}
	}
	return l
}

// cpInfo places a checkpoint id: its thread, namespace and creation index
// there.
type cpInfo struct {
	thread, ns string
	index      int
}

// orcCheckpointIndex numbers every checkpoint of the threads in creation
// order within its namespace (ids are UUIDv7: string order is creation
// order).
func orcCheckpointIndex(ctx context.Context, s checkpoint.Saver, threads []string) (map[string]cpInfo, error) {
	out := map[string]cpInfo{}
	for _, th := range threads {
		byNS := map[string][]string{}
		for tp, err := range s.List(ctx, checkpoint.ListOptions{ThreadID: th}) {
			if err != nil {
				return nil, err
			}
			byNS[tp.Ref.NS] = append(byNS[tp.Ref.NS], tp.Ref.CheckpointID)
		}
		for ns, ids := range byNS {
			sort.Strings(ids)
			for i, id := range ids {
				out[id] = cpInfo{th, ns, i}
			}
		}
	}
	return out, nil
}

// rootCheckpoints lists a thread's root checkpoint ids, oldest first.
func (r *orcRun) rootCheckpoints(thread string) ([]string, error) {
	root := ""
	var ids []string
	for tp, err := range r.graph.Saver().List(r.ctx, checkpoint.ListOptions{ThreadID: thread, NS: &root}) {
		if err != nil {
			return nil, err
		}
		ids = append(ids, tp.Ref.CheckpointID)
	}
	sort.Strings(ids)
	return ids, nil
}

// resolveAt turns a REF into a checkpoint id.
func (r *orcRun) resolveAt(ref *omap, thread string) (string, error) {
	ids, err := r.rootCheckpoints(thread)
	if err != nil {
		return "", err
	}
	if v, ok := ref.get("checkpoint"); ok {
		i := int(v.(float64))
		if i < 0 {
			i += len(ids)
		}
		if i < 0 || i >= len(ids) {
			return "", orcError{fmt.Sprintf("no checkpoint %v (have %d)", v, len(ids))}
		}
		return ids[i], nil
	}
	if v, ok := ref.get("history"); ok {
		i := int(v.(float64))
		if i >= len(ids) {
			return "", orcError{fmt.Sprintf("no history entry %v", v)}
		}
		return ids[len(ids)-1-i], nil
	}
	return "", orcError{fmt.Sprintf("bad \"at\" %v", unordered(ref))}
}

var orcActionKinds = []string{"invoke", "resume", "resumeMap", "updateState", "bulkUpdateState", "getState", "getStateHistory", "clearCache",
	"storePut", "storeGet", "storeDelete", "storeSearch", "storeListNamespaces"}

func (r *orcRun) runAction(i int, a *omap, thread string) (map[string]any, error) {
	kind := "unknown"
	for _, k := range orcActionKinds {
		if a.has(k) {
			kind = k
			break
		}
	}
	rec := map[string]any{"action": kind}
	opts := []engine.RunOption{engine.WithThread(thread)}
	if at := a.obj("at"); at != nil {
		id, err := r.resolveAt(at, thread)
		if err != nil {
			return nil, err
		}
		opts = append(opts, engine.WithCheckpoint(id))
	}
	err := r.doAction(i, kind, a, thread, opts, rec)
	var oe orcError
	if errors.As(err, &oe) {
		return nil, err
	}
	if err != nil {
		rec["error"] = errInfo(err)
	}
	return rec, nil
}

func (r *orcRun) doAction(i int, kind string, a *omap, thread string, opts []engine.RunOption, rec map[string]any) error {
	switch kind {
	case "invoke", "resume", "resumeMap":
		input, err := r.actionInput(kind, a, opts)
		if err != nil {
			return err
		}
		if cfg := a.obj("config"); cfg != nil {
			for _, k := range cfg.keys {
				switch v := cfg.m[k]; k {
				case "recursionLimit":
					opts = append(opts, engine.WithRecursionLimit(int(v.(float64))))
				case "durability":
					switch v {
					case "exit":
						opts = append(opts, engine.WithDurability(engine.DurabilityExit))
					case "sync":
						opts = append(opts, engine.WithDurability(engine.DurabilitySync))
					case "async":
						opts = append(opts, engine.WithDurability(engine.DurabilityAsync))
					default:
						return orcError{fmt.Sprintf("unknown durability %v", v)}
					}
				case "interruptBefore":
					l, _ := v.([]any)
					opts = append(opts, engine.BreakBefore(orcStrings(l)...))
				case "interruptAfter":
					l, _ := v.([]any)
					opts = append(opts, engine.BreakAfter(orcStrings(l)...))
				default:
					return orcError{fmt.Sprintf("unknown config key %q", k)}
				}
			}
		}
		if sm, ok := a.get("stream"); ok {
			return r.stream(i, input, sm, a.m["subgraphs"] == true, opts, rec)
		}
		res, err := r.graph.Invoke(r.ctx, input, opts...)
		if err != nil {
			return err
		}
		if r.ep != nil {
			rec["result"] = epResult(res, r.builder.ref)
			return nil
		}
		out := plain(res.Values).(map[string]any)
		if res.Interrupts != nil { // empty at a breakpoint, with LangGraphJS

			out["__interrupt__"] = interruptsDoc(res.Interrupts)
		}
		rec["result"] = out
	case "updateState":
		var ref checkpoint.Ref
		var err error
		if r.ep != nil {
			ref, err = r.ep.epUpdate(r.ctx, a.m["updateState"], a.str("asNode"), opts)
		} else {
			ref, err = r.graph.UpdateState(r.ctx, r.root.stateValues(a.m["updateState"]), a.str("asNode"), opts...)
		}
		if err != nil {
			return err
		}
		rec["result"] = refDoc(ref)
	case "bulkUpdateState":
		var steps [][]engine.StateUpdate
		for _, sv := range a.list("bulkUpdateState") {
			l, _ := sv.([]any)
			step := []engine.StateUpdate{}
			for _, uv := range l {
				u, _ := uv.(*omap)
				step = append(step, engine.StateUpdate{Values: r.root.stateValues(u.m["values"]), AsNode: u.str("asNode")})
			}
			steps = append(steps, step)
		}
		ref, err := r.graph.BulkUpdateState(r.ctx, steps, opts...)
		if err != nil {
			return err
		}
		rec["result"] = refDoc(ref)
	case "getState":
		if a.m["subgraphs"] == true {
			opts = append(opts, engine.WithSubgraphs())
		}
		s, err := r.graph.GetState(r.ctx, opts...)
		if err != nil {
			return err
		}
		rec["result"] = r.snapshotFull(s, thread)
	case "getStateHistory":
		o := a.obj("getStateHistory")
		var sel checkpoint.ListOptions
		if v, ok := o.get("limit"); ok {
			sel.Limit = int(v.(float64))
		}
		if f := o.obj("filter"); f != nil {
			sel.Filter = unordered(f).(map[string]any)
		}
		if b := o.obj("before"); b != nil {
			id, err := r.resolveAt(b, thread)
			if err != nil {
				return err
			}
			sel.Before = id
		}
		hist, err := r.graph.History(r.ctx, sel, opts...)
		if err != nil {
			return err
		}
		list := []any{}
		for _, s := range hist {
			list = append(list, r.snapshotFull(s, thread))
		}
		rec["result"] = list
	case "clearCache":
		if nodes := a.list("clearCache"); len(nodes) > 0 {
			return orcError{"LangGraph.js clears the whole cache; clearCache takes no nodes"}
		}
		if err := r.graph.ClearCache(r.ctx); err != nil {
			return err
		}
		rec["result"] = nil
	case "storePut", "storeGet", "storeDelete", "storeSearch", "storeListNamespaces":
		return r.storeAction(kind, a.obj(kind), rec)
	default:
		return orcError{fmt.Sprintf("unknown action %v", unordered(a))}
	}
	return nil
}

// storeAction runs a store action (DSL.md "Long-term store") on the
// scenario's store; items are recorded without their times.
func (r *orcRun) storeAction(kind string, o *omap, rec map[string]any) error {
	st := r.builder.store
	ns := func(k string) longterm.Namespace {
		l, _ := o.m[k].([]any)
		return longterm.Namespace(orcStrings(l))
	}
	item := func(it longterm.Item) map[string]any {
		return map[string]any{"namespace": orcAnyList(it.Namespace), "key": it.Key, "value": it.Value}
	}
	num := func(k string, def int) int {
		if v, ok := o.get(k); ok {
			return int(v.(float64))
		}
		return def
	}
	ctx := r.ctx
	switch kind {
	case "storePut":
		v, _ := unordered(o.m["value"]).(map[string]any)
		rec["result"] = nil
		return st.Put(ctx, ns("namespace"), o.str("key"), v)
	case "storeDelete":
		rec["result"] = nil
		return st.Delete(ctx, ns("namespace"), o.str("key"))
	case "storeGet":
		it, err := st.Get(ctx, ns("namespace"), o.str("key"))
		if err != nil {
			return err
		}
		rec["result"] = nil
		if it != nil {
			rec["result"] = item(*it)
		}
	case "storeSearch":
		q := longterm.SearchQuery{Prefix: ns("prefix"), Limit: num("limit", 10), Offset: num("offset", 0)}
		if f := o.obj("filter"); f != nil {
			q.Filter = longterm.Filter(unordered(f).(map[string]any))
		}
		items, err := st.Search(ctx, q)
		if err != nil {
			return err
		}
		out := []any{}
		for _, it := range items {
			out = append(out, item(it))
		}
		rec["result"] = out
	case "storeListNamespaces":
		spaces, err := st.ListNamespaces(ctx, longterm.NamespaceQuery{Prefix: ns("prefix"), Suffix: ns("suffix"),
			MaxDepth: num("maxDepth", 0), Limit: num("limit", 100), Offset: num("offset", 0)})
		if err != nil {
			return err
		}
		out := []any{}
		for _, n := range spaces {
			out = append(out, orcAnyList(n))
		}
		rec["result"] = out
	}
	return nil
}

func orcAnyList(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// stateValues turns plain JSON values of a state update into writes; the
// Overwrite wire form {"__overwrite__": v} becomes an engine.Overwrite.
func (g *orcGraph) stateValues(v any) engine.Update {
	o, ok := v.(*omap)
	if !ok {
		return nil
	}
	up := engine.Update{}
	for _, k := range o.keys {
		val := unordered(o.m[k])
		if m, ok := val.(map[string]any); ok && len(m) == 1 {
			if ow, ok := m["__overwrite__"]; ok {
				val = engine.Overwrite{Value: ow}
			}
		}
		up = append(up, g.write(k, val))
	}
	return up
}

func (r *orcRun) actionInput(kind string, a *omap, opts []engine.RunOption) (engine.Input, error) {
	noInput := &evalCtx{}
	switch kind {
	case "invoke":
		if r.ep != nil {
			return r.ep.epInput(a.m["invoke"]), nil
		}
		switch x := a.m["invoke"].(type) {
		case nil:
			return nil, nil
		case *omap:
			if cs := x.obj("$command"); cs != nil && len(x.keys) == 1 {
				return r.builder.buildCommand(r.root, cs, noInput)
			}
			vals := engine.Values{}
			for _, w := range r.root.stateValues(x) {
				vals[w.Channel] = w.Value
			}
			return vals, nil
		}
		return nil, orcError{fmt.Sprintf("invoke input %v cannot be given to the engine (it takes Values, a Command or nil)", a.m["invoke"])}
	}
	var cmd engine.Command
	if kind == "resume" {
		cmd.Resume = unordered(a.m["resume"])
	} else {
		s, err := r.graph.GetState(r.ctx, opts...)
		if err != nil {
			return nil, err
		}
		rm := a.obj("resumeMap")
		cmd.ResumeByID = map[string]any{}
		for _, key := range rm.keys {
			name, nth, _ := strings.Cut(key, "#")
			n := 0
			if nth != "" {
				n, _ = strconv.Atoi(nth)
			}
			var found *engine.TaskState
			k := 0
			for ti := range s.Tasks {
				if s.Tasks[ti].Name != name {
					continue
				}
				if k == n {
					found = &s.Tasks[ti]
					break
				}
				k++
			}
			if found == nil || len(found.Interrupts) == 0 {
				return nil, orcError{fmt.Sprintf("no interrupt for %q", key)}
			}
			cmd.ResumeByID[found.Interrupts[0].ID] = unordered(rm.m[key])
		}
	}
	if a.has("update") {
		// Plain JSON, as the runner passes it: an object or [key, value] pairs.
		if pairs, ok := a.m["update"].([]any); ok {
			for _, p := range pairs {
				kv, ok := p.([]any)
				if !ok || len(kv) != 2 {
					return nil, orcError{fmt.Sprintf("bad update pair %v", p)}
				}
				k, _ := kv[0].(string)
				cmd.Update = append(cmd.Update, r.root.stateValues(&omap{keys: []string{k}, m: map[string]any{k: kv[1]}})...)
			}
		} else {
			cmd.Update = r.root.stateValues(a.m["update"])
		}
	}
	if a.has("goto") {
		if err := addGoto(&cmd, r.root, evalGoto(a.m["goto"], noInput)); err != nil {
			return nil, err
		}
	}
	return cmd, nil
}

// orcModes maps the DSL's stream mode names to the engine's.
var orcModes = map[string]engine.StreamMode{
	"values": engine.ModeValues, "updates": engine.ModeUpdates, "tasks": engine.ModeTasks,
	"checkpoints": engine.ModeCheckpoints, "debug": engine.ModeDebug,
	"custom": engine.ModeCustom, "messages": engine.ModeMessages,
}

func modeName(m engine.StreamMode) string {
	for n, v := range orcModes {
		if v == m {
			return n
		}
	}
	return m.String()
}

func (r *orcRun) stream(i int, input engine.Input, sm any, subgraphs bool, opts []engine.RunOption, rec map[string]any) error {
	var modes engine.StreamMode
	name, isSingle := sm.(string)
	if isSingle {
		modes = orcModes[name]
		if modes == 0 {
			return orcError{fmt.Sprintf("unknown stream mode %q", name)}
		}
	} else {
		l, _ := sm.([]any)
		for _, m := range orcStrings(l) {
			if orcModes[m] == 0 {
				return orcError{fmt.Sprintf("unknown stream mode %q", m)}
			}
			modes |= orcModes[m]
		}
	}
	chunks := []any{}
	var meta []chunkMeta
	defer func() {
		rec["chunks"] = chunks
		r.meta[i] = meta
	}()
	defer func() { markParallel(meta) }()
	for ev, err := range r.graph.Stream(r.ctx, input, modes, opts...) {
		if err != nil {
			return err
		}
		if ev.NS != "" && !subgraphs {
			continue // the engine streams subgraph events always; LangGraph only with subgraphs
		}
		payload, cm := r.eventPayload(ev)
		var chunk any
		switch {
		case subgraphs && !isSingle:
			chunk = []any{nsList(ev.NS), modeName(ev.Mode), payload}
		case subgraphs:
			chunk = []any{nsList(ev.NS), payload}
		case !isSingle:
			chunk = []any{modeName(ev.Mode), payload}
		default:
			chunk = payload
		}
		chunks = append(chunks, chunk)
		meta = append(meta, cm)
	}
	return nil
}

func nsList(ns string) []any {
	out := []any{}
	if ns == "" {
		return out
	}
	for _, p := range strings.Split(ns, "|") {
		out = append(out, p)
	}
	return out
}

// eventPayload renders one engine event as LangGraph's payload of its mode.
func (r *orcRun) eventPayload(ev engine.Event) (any, chunkMeta) {
	cm := chunkMeta{step: ev.Step, ns: ev.NS}
	switch ev.Mode {
	case engine.ModeValues:
		if r.ep != nil && ev.Interrupts == nil {
			return epValues(ev.Values), cm
		}
		if ev.Interrupts == nil {
			return plain(ev.Values), cm
		}
		// A stop: LangGraph.js's chunk holds only the interrupts; Python's
		// the state too (ev.Values set).
		out := map[string]any{}
		if ev.Values != nil && r.ep == nil { // a functional graph's values are no object to merge into
			out = plain(ev.Values).(map[string]any)
		}
		out["__interrupt__"] = interruptsDoc(ev.Interrupts)
		if len(ev.Interrupts) > 0 {
			// One task's interrupts, yielded as that task completes.
			cm.taskID = ev.Interrupts[0].TaskID
		}
		return out, cm
	case engine.ModeUpdates:
		u := ev.Update
		if u.Node == "__interrupt__" {
			cm.taskID = u.TaskID
			return map[string]any{"__interrupt__": interruptsDoc(u.Interrupts)}, cm
		}
		out := map[string]any{u.Node: updateDoc(u.Writes)}
		if u.Returned {
			out[u.Node] = plain(u.Return)
		} else if v, ok := epWrites(u.Writes); ok && r.ep != nil {
			out[u.Node] = v
		}
		if u.Cached {
			out["__metadata__"] = map[string]any{"cached": true}
		} else {
			cm.taskID = u.TaskID
		}
		return out, cm
	case engine.ModeTasks:
		if ev.Task.Done {
			cm.taskID = ev.Task.ID
		}
		if r.ep != nil {
			return r.ep.epTaskDoc(ev.Task, r.builder.ref), cm
		}
		return taskEventDoc(ev.Task), cm
	case engine.ModeCheckpoints:
		return r.checkpointDoc(ev.State), cm
	case engine.ModeDebug:
		out := map[string]any{"step": float64(ev.Step), "type": ev.Debug}
		switch ev.Debug {
		case "checkpoint":
			out["payload"] = r.checkpointDoc(ev.State)
		default:
			if ev.Debug == "task_result" {
				cm.taskID = ev.Task.ID
			}
			out["payload"] = taskEventDoc(ev.Task)
		}
		return out, cm
	}
	return map[string]any{"unexpected event": ev.Mode.String()}, cm
}

// updateDoc is an updates payload of one task: {key: value}, or a list of
// single-key objects when the task wrote one key several times.
func updateDoc(ws []engine.Write) any {
	seen := map[string]bool{}
	repeated := false
	for _, w := range ws {
		if seen[w.Channel] {
			repeated = true
		}
		seen[w.Channel] = true
	}
	if repeated {
		out := []any{}
		for _, w := range ws {
			out = append(out, map[string]any{w.Channel: plain(w.Value)})
		}
		return out
	}
	out := map[string]any{}
	for _, w := range ws {
		out[w.Channel] = plain(w.Value)
	}
	return out
}

// resultDoc is a task's recorded writes: {key: value}, several writes to one
// key as {"$writes": [...]}. stored renders Overwrites in their checkpoint
// wire form.
func resultDoc(ws []engine.Write, stored bool) map[string]any {
	out := map[string]any{}
	var order []string
	multi := map[string][]any{}
	for _, w := range ws {
		v := plain(w.Value)
		if ow, ok := w.Value.(engine.Overwrite); ok && stored {
			v = map[string]any{"__overwrite__": plain(ow.Value)}
		}
		if _, ok := multi[w.Channel]; !ok {
			order = append(order, w.Channel)
		}
		multi[w.Channel] = append(multi[w.Channel], v)
	}
	for _, k := range order {
		if vs := multi[k]; len(vs) == 1 {
			out[k] = vs[0]
		} else {
			out[k] = map[string]any{"$writes": vs}
		}
	}
	return out
}

func interruptsDoc(ints []engine.PendingInterrupt) []any {
	out := []any{}
	for _, it := range ints {
		out = append(out, map[string]any{"value": plain(it.Value)})
	}
	return out
}

func taskEventDoc(t *engine.TaskEvent) map[string]any {
	out := map[string]any{"id": t.ID, "name": t.Name, "interrupts": interruptsDoc(t.Interrupts)}
	if !t.Done {
		out["input"] = plain(t.Input)
		trig := []any{}
		for _, s := range t.Triggers {
			trig = append(trig, s)
		}
		out["triggers"] = trig
		return out
	}
	out["result"] = resultDoc(t.Result, false)
	if t.Error != "" {
		out["error"] = storedErr(t.Error, t.ErrorKind)
	} else {
		out["error"] = nil
	}
	return out
}

func refDoc(ref checkpoint.Ref) map[string]any {
	out := map[string]any{"thread_id": ref.ThreadID, "checkpoint_ns": ref.NS}
	if ref.CheckpointID != "" {
		out["checkpoint_id"] = ref.CheckpointID
	}
	return out
}

func refPtrDoc(ref *checkpoint.Ref) any {
	if ref == nil {
		return nil
	}
	return refDoc(*ref)
}

// checkpointDoc is a checkpoints payload.
func (r *orcRun) checkpointDoc(s *engine.Snapshot) map[string]any {
	var source any
	if s.Metadata.Source != "" {
		source = string(s.Metadata.Source)
	}
	parents := map[string]any{}
	for k, v := range s.Metadata.Parents {
		parents[k] = v
	}
	return map[string]any{
		"config":       refDoc(s.Ref),
		"parentConfig": refPtrDoc(s.Parent),
		"values":       plain(s.Values),
		"metadata":     map[string]any{"source": source, "step": float64(s.Metadata.Step), "parents": parents},
		"next":         stringsDoc(s.Next),
		"tasks":        r.tasksDoc(s.Tasks, s.Ref.ThreadID),
	}
}

func stringsDoc(l []string) []any {
	out := []any{}
	for _, s := range l {
		out = append(out, s)
	}
	return out
}

// snapshotFull is a SNAP (action results).
func (r *orcRun) snapshotFull(s *engine.Snapshot, thread string) map[string]any {
	var parent any
	if s.Parent != nil {
		parent = s.Parent.CheckpointID
	}
	var source any
	if s.Metadata.Source != "" {
		source = string(s.Metadata.Source)
	}
	values := plain(s.Values)
	if r.ep != nil {
		values = epValues(s.Values)
	}
	return map[string]any{
		"checkpoint": s.Ref.CheckpointID,
		"parent":     parent,
		"values":     values,
		"next":       stringsDoc(s.Next),
		"step":       float64(s.Metadata.Step),
		"source":     source,
		"tasks":      r.tasksDoc(s.Tasks, thread),
	}
}

// snapshotDoc is a SNAP that finalize turns into an HSNAP or FSNAP.
func (r *orcRun) snapshotDoc(s *engine.Snapshot, thread string) map[string]any {
	return r.snapshotFull(s, thread)
}

func (r *orcRun) tasksDoc(ts []engine.TaskState, thread string) []any {
	out := []any{}
	for _, t := range ts {
		d := map[string]any{"id": t.ID, "name": t.Name, "path": pathDoc(t.Path), "interrupts": interruptsDoc(t.Interrupts)}
		if t.Error != "" {
			d["error"] = storedErr(t.Error, t.ErrorKind)
		}
		if v, ok := epWrites(t.Result); ok && r.ep != nil {
			d["result"] = v
		} else if len(t.Result) > 0 {
			d["result"] = resultDoc(t.Result, true)
		}
		switch {
		case t.State != nil:
			d["state"] = r.snapshotFull(t.State, thread)
		case t.NS != "":
			d["state"] = map[string]any{"thread_id": thread, "checkpoint_ns": t.NS}
		}
		out = append(out, d)
	}
	return out
}

// pathDoc renders the engine's task path ("pull:a", "push:0:worker") in
// LangGraph's form.
func pathDoc(p string) any {
	kind, rest, _ := strings.Cut(p, ":")
	switch kind {
	case "pull":
		return []any{"__pregel_pull", rest}
	case "push":
		idx, _, _ := strings.Cut(rest, ":")
		n, err := strconv.Atoi(idx)
		if err == nil {
			return []any{"__pregel_push", float64(n), false}
		}
	}
	return p
}

var reStoredErr = regexp.MustCompile(`^node "[^"]*": (?s:(.*))$`)
var reClass = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*): (?s:(.*))$`)

// storedErr reads a task's error text back: a scenario node's error text
// starts with its class name (see orcNodeError).
func storedErr(text string, kind engine.ErrorKind) map[string]any {
	switch kind {
	case engine.ErrorKindInvalidUpdate:
		return map[string]any{"error": "InvalidUpdateError", "message": text}
	case engine.ErrorKindAborted:
		return map[string]any{"error": "AbortError", "message": "This operation was aborted"}
	}
	msg := text
	if m := reStoredErr.FindStringSubmatch(text); m != nil {
		msg = m[1]
		if c := reClass.FindStringSubmatch(msg); c != nil {
			return map[string]any{"error": c[1], "message": c[2]}
		}
	}
	return map[string]any{"error": "Error", "message": msg}
}

// errInfo is an ERROR: LangGraph's error class for what the engine
// returned, and the message.
func errInfo(err error) map[string]any {
	var ne *orcNodeError
	var iu *engine.InvalidUpdateError
	var rl *engine.RecursionLimitError
	switch {
	case errors.As(err, &ne):
		return map[string]any{"error": ne.class, "message": ne.msg}
	case errors.As(err, &rl):
		return map[string]any{"error": "GraphRecursionError", "message": err.Error()}
	case errors.As(err, &iu):
		return map[string]any{"error": "InvalidUpdateError", "message": err.Error()}
	case errors.Is(err, engine.ErrEmptyInput):
		return map[string]any{"error": "EmptyInputError", "message": err.Error()}
	}
	return map[string]any{"error": "Error", "message": err.Error()}
}

// plain deep-converts a value into JSON data, writing the engine's live
// objects as the oracle does: {"$send"}, {"$command"}, {"$overwrite"}.
func plain(v any) any {
	switch x := v.(type) {
	case nil, string, bool, float64:
		return x
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case engine.Values:
		return plain(map[string]any(x))
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = plain(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plain(e)
		}
		return out
	case []string:
		return stringsDoc(x)
	case engine.Overwrite:
		return map[string]any{"$overwrite": plain(x.Value)}
	case engine.Send:
		return map[string]any{"$send": map[string]any{"node": x.Node, "arg": plain(x.Arg)}}
	case []engine.Send:
		out := []any{}
		for _, s := range x {
			out = append(out, plain(s))
		}
		return out
	case engine.Command:
		o := map[string]any{}
		if len(x.Update) > 0 {
			o["update"] = updateDoc(x.Update)
		}
		var gotos []any
		for _, g := range x.Goto {
			gotos = append(gotos, g)
		}
		for _, s := range x.Sends {
			gotos = append(gotos, plain(s))
		}
		if gotos != nil {
			o["goto"] = gotos
		}
		if x.Resume != nil {
			o["resume"] = plain(x.Resume)
		}
		if x.Graph != "" {
			o["graph"] = x.Graph
		}
		return map[string]any{"$command": o}
	}
	return map[string]any{"$go": fmt.Sprintf("%T %v", v, v)}
}

// markParallel flags the completion events of steps with several tasks.
func markParallel(meta []chunkMeta) {
	type stepKey struct {
		step int
		ns   string
	}
	tasks := map[stepKey]map[string]bool{}
	for _, m := range meta {
		if m.taskID == "" {
			continue
		}
		k := stepKey{m.step, m.ns}
		if tasks[k] == nil {
			tasks[k] = map[string]bool{}
		}
		tasks[k][m.taskID] = true
	}
	for i, m := range meta {
		if m.taskID != "" && len(tasks[stepKey{m.step, m.ns}]) > 1 {
			meta[i].parallel = true
		}
	}
}
