package engine_test

// Building a scenario's entrypoint (DSL.md "ENTRYPOINT") with package
// functional, and rendering its runs as LangGraph renders a functional
// graph's: its values are the entrypoint's return value, its task results
// and updates {name: result}.

import (
	"context"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/checkpoint/nodecache"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/functional"
)

// orcEntrypoint is a scenario's compiled entrypoint.
type orcEntrypoint struct {
	name string
	wf   *functional.Workflow[any, any, any]
}

// buildEntrypoint compiles spec: its tasks, then a body that starts and
// awaits them in the order of its steps.
func (b *orcBuilder) buildEntrypoint(spec *omap) (*orcEntrypoint, error) {
	tasks := map[string]*functional.Task[any, any]{}
	cached := false // a task has a cache policy: the graph gets a cache
	if ts := spec.obj("tasks"); ts != nil {
		for _, tname := range ts.keys {
			tspec, _ := ts.m[tname].(*omap)
			b.calls.mu.Lock()
			b.calls.n[tname] = 0 // listed from the start, as the runners do
			b.calls.mu.Unlock()
			var opts []functional.TaskOption
			if r := tspec.obj("retry"); r != nil {
				n := 3.0
				if v, ok := r.get("maxAttempts"); ok {
					n = v.(float64)
				}
				opts = append(opts, functional.TaskRetry(engine.RetryPolicy{MaxAttempts: int(n)}))
			}
			if cs := tspec.obj("cache"); cs != nil {
				opts = append(opts, functional.TaskCache(orcTaskCachePolicy(cs)))
				cached = true
			}
			tasks[tname] = functional.NewTask(tname, func(ctx context.Context, in any) (out any, err error) {
				defer b.guard(&err)
				c := &evalCtx{input: plain(in), call: float64(b.calls.inc(tname)), node: tname, resumes: []any{}}
				if err := b.epFailAndInterrupts(ctx, tname, tspec, c); err != nil {
					return nil, err
				}
				return tmpl(tspec.m["result"], c), nil
			}, opts...)
		}
	}
	name := spec.str("name")
	if name == "" {
		name = "main"
	}
	b.calls.mu.Lock()
	b.calls.n[name] = 0
	b.calls.mu.Unlock()
	_, final := spec.get("save")
	copts := []engine.CompileOption{engine.WithReference(b.ref), engine.WithSaver(memory.New())}
	if cached {
		copts = append(copts, engine.WithCache(nodecache.NewMemory()))
	}
	wf, err := functional.EntrypointFinal(name, func(ctx context.Context, in any, prev *any) (f functional.Final[any, any], err error) {
		defer b.guard(&err)
		c := &evalCtx{input: plain(in), call: float64(b.calls.inc(name)), node: name, resumes: []any{}, vars: map[string]any{}}
		if prev != nil {
			c.previous = plain(*prev)
		}
		if err := b.epFailAndInterrupts(ctx, name, spec, c); err != nil {
			return f, err
		}
		futs := map[string]*functional.Future[any]{}
		for _, sv := range spec.list("body") {
			step, _ := sv.(*omap)
			switch {
			case step.has("call"):
				t := tasks[step.str("call")]
				if t == nil {
					dslFail("unknown task %q", step.str("call"))
				}
				as := step.str("as")
				if as == "" {
					as = step.str("call")
				}
				futs[as] = t.Call(ctx, tmpl(step.m["arg"], c))
			case step.has("await"):
				fut := futs[step.str("await")]
				if fut == nil {
					dslFail("await of %q, which no step started", step.str("await"))
				}
				v, err := fut.Get(ctx)
				if err != nil {
					return f, err
				}
				c.vars[step.str("await")] = plain(v)
			case step.has("interrupt"):
				v, err := engine.Interrupt(ctx, tmpl(step.m["interrupt"], c))
				if err != nil {
					return f, err
				}
				as := step.str("as")
				if as == "" {
					as = "resume"
				}
				c.resume, c.vars[as] = plain(v), plain(v)
			default:
				dslFail("unknown entrypoint step %v", unordered(step))
			}
		}
		f.Value = tmpl(spec.m["return"], c)
		f.Save = f.Value
		if final {
			f.Save = tmpl(spec.m["save"], c)
		}
		return f, nil
	}, functional.WithCompile(copts...))
	if err != nil {
		return nil, err
	}
	return &orcEntrypoint{name: name, wf: wf}, nil
}

// orcTaskCachePolicy is a task's "cache" (DSL.md "ENTRYPOINT"): the key
// template sees the task's argument as input, and its value as compact
// JSON is the key; ttl is in seconds.
func orcTaskCachePolicy(cs *omap) engine.CachePolicy {
	var p engine.CachePolicy
	if kt, ok := cs.get("key"); ok {
		p.Key = func(s engine.State) (string, error) {
			return compactJSON(tmpl(kt, &evalCtx{input: plain(s.Arg())})), nil
		}
	}
	if v, ok := cs.get("ttl"); ok {
		p.TTL = time.Duration(v.(float64) * float64(time.Second))
	}
	return p
}

// epUpdate is an updateState action on the entrypoint's graph (DSL.md
// "ENTRYPOINT"): as the entrypoint (named or inferred) through
// Workflow.UpdateState, or UpdateFinal for a {"$final": {value, save}};
// any other as-node goes to the graph's own UpdateState with the value as
// the entrypoint's input.
func (e *orcEntrypoint) epUpdate(ctx context.Context, v any, asNode string, opts []engine.RunOption) (checkpoint.Ref, error) {
	v = unordered(v)
	if asNode == "" || asNode == e.name {
		if m, ok := v.(map[string]any); ok {
			if f, ok := m["$final"].(map[string]any); ok && len(m) == 1 {
				return e.wf.UpdateFinal(ctx, functional.Final[any, any]{Value: f["value"], Save: f["save"]}, opts...)
			}
		}
		return e.wf.UpdateState(ctx, v, opts...)
	}
	return e.wf.Graph().UpdateState(ctx, engine.Updates(engine.Write{Channel: functional.InputKey, Value: v}), asNode, opts...)
}

// epTaskDoc renders a tasks-stream event of a functional graph as each
// LangGraph does: the entrypoint's task gets the run's input and
// returns {"__end__": value}; a call task's input is its arguments
// (LangGraph.js: [arg]; Python: [[arg], {}]) and its result hides the
// return value (LangGraph.js: {}; Python: {"__return__": value}).
func (e *orcEntrypoint) epTaskDoc(t *engine.TaskEvent, ref engine.Reference) map[string]any {
	out := taskEventDoc(t)
	call := t.Name != e.name
	if id := t.ID; call && len(id) == 32 {
		// A call task's id is 32 hex digits where a node task's, and
		// both LangGraphs' task ids, are in UUID form: the same label.
		out["id"] = id[0:8] + "-" + id[8:12] + "-" + id[12:16] + "-" + id[16:20] + "-" + id[20:32]
	}
	switch {
	case !t.Done && call:
		if ref == engine.LangGraphJS {
			out["input"] = []any{plain(t.Input)}
		} else {
			out["input"] = []any{[]any{plain(t.Input)}, map[string]any{}}
		}
	case !t.Done:
		if vals, ok := t.Input.(engine.Values); ok {
			out["input"] = plain(vals[functional.InputKey])
		}
	case call:
		res := map[string]any{}
		if t.Returned && ref != engine.LangGraphJS {
			res["__return__"] = plain(t.Return)
		}
		out["result"] = res
	default:
		res := map[string]any{}
		if v, ok := epWrites(t.Result); ok {
			res["__end__"] = v
		}
		out["result"] = res
	}
	return out
}

// epFailAndInterrupts is NODE's "fail" and "interrupts" for an entrypoint
// or a task.
func (b *orcBuilder) epFailAndInterrupts(ctx context.Context, name string, spec *omap, c *evalCtx) error {
	if err := nodeFail(name, spec, c); err != nil {
		return err
	}
	for i, iv := range spec.list("interrupts") {
		is, _ := iv.(*omap)
		v, err := engine.Interrupt(ctx, tmpl(is.m["value"], c))
		if err != nil {
			return err
		}
		c.resume = plain(v)
		for len(c.resumes) <= i {
			c.resumes = append(c.resumes, nil)
		}
		c.resumes[i] = c.resume
	}
	return nil
}

// epInput is an invoke's input to the entrypoint: the JSON value as is.
func (e *orcEntrypoint) epInput(v any) engine.Input {
	if v == nil {
		return nil
	}
	return e.wf.Input(unordered(v))
}

// epValues is a functional graph's values as LangGraph shows them: the
// return value (null before the first return).
func epValues(vals engine.Values) any {
	return plain(vals[functional.ReturnKey])
}

// epResult is an invoke's result: the return value, or the interrupts;
// following Python (B2: the result holds the state at an interrupt) with
// the return value's keys when it is an object, as Python merges them.
func epResult(res *engine.Result, ref engine.Reference) any {
	if res.Interrupts != nil {
		out := map[string]any{}
		if m, ok := epValues(res.Values).(map[string]any); ok && ref != engine.LangGraphJS {
			out = m
		}
		out["__interrupt__"] = interruptsDoc(res.Interrupts)
		return out
	}
	return epValues(res.Values)
}

// epWrites is a task's result in a snapshot or an update: the value its
// node wrote to the return channel.
func epWrites(ws []engine.Write) (any, bool) {
	for _, w := range ws {
		if w.Channel == functional.ReturnKey {
			return plain(w.Value), true
		}
	}
	return nil, false
}
