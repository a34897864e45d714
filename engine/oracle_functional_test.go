package engine_test

// Building a scenario's entrypoint (DSL.md "ENTRYPOINT") with package
// functional, and rendering its runs as LangGraph renders a functional
// graph's: its values are the entrypoint's return value, its task results
// and updates {name: result}.

import (
	"context"

	"github.com/weftstudio/weft/checkpoint/memory"
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
	}, functional.WithCompile(engine.WithReference(b.ref), engine.WithSaver(memory.New())))
	if err != nil {
		return nil, err
	}
	return &orcEntrypoint{name: name, wf: wf}, nil
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

// epResult is an invoke's result: the return value, or the interrupts.
func epResult(res *engine.Result) any {
	if res.Interrupts != nil {
		return map[string]any{"__interrupt__": interruptsDoc(res.Interrupts)}
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
