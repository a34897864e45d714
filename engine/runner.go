package engine

// This file runs a super-step's tasks: concurrently when there are several,
// each with its retry policy (retry.go), a node body turned into writes
// (output.go), and each task's end committed (loop.go).

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
)

// stepOutcome says how a step's tasks ended.
type stepOutcome struct {
	failed error // the first task failure; the step is not applied
	// paused is true when some task stopped at an interrupt (or its
	// subgraph at a breakpoint): the step is not applied, its finished
	// tasks' writes wait as pending writes.
	paused bool
	ints   []PendingInterrupt // the questions of the paused tasks
}

// runStep runs the tasks that have no writes yet, concurrently when there is
// more than one; a failure cancels the others. err is the run's own end
// (its context), not a task's.
func (rt *runtime) runStep(tasks []*task) (out stepOutcome, err error) {
	todo := rt.todo[:0]
	for _, t := range tasks {
		if !t.restored {
			todo = append(todo, t)
		}
	}
	rt.todo = todo
	rt.exitWrite = rt.exitWrite[:0]
	for _, t := range todo {
		rt.emitTaskStart(t)
	}
	if todo, err = rt.serveCached(todo); err != nil {
		out.failed = err
		return out, nil
	}
	rt.todo = todo
	// LangGraph.js drops the edges of a task whose sibling fails (B4):
	// its writes wait for the step's end before they are stored.
	rt.holding = rt.js() && len(todo) > 1 && rt.saver != nil
	var failed *task
	switch {
	case len(todo) > 0 && rt.cfg.phases != nil:
		if failed, err = rt.runInChosenOrder(todo); err != nil {
			return out, phaseErr(err, PhaseTask)
		}
	case len(todo) == 0:
	case len(todo) == 1: // on this goroutine: most steps run one task
		rt.solo = true
		rt.exec(rt.ctx, todo[0])
		rt.solo = false
		if e := todo[0].err; e != nil && !isInterrupt(e) {
			failed = todo[0]
		}
	default:
		failed = rt.execConcurrently(todo)
	}
	if rt.holding {
		rt.releaseHeld(failed != nil)
		for _, t := range todo {
			if failed == nil && t.err != nil && !isInterrupt(t.err) {
				failed = t // its writes could not be stored
			}
		}
	}
	if rt.ctx.Err() != nil {
		return out, rt.ctx.Err()
	}
	if failed != nil {
		out.failed = failed.err
		return out, nil
	}
	for _, t := range todo {
		if t.err == nil {
			continue // before the declaration below: it escapes, so costs an allocation
		}
		var ie *InterruptError
		if errors.As(t.err, &ie) {
			out.paused = true
			out.ints = append(out.ints, ie.Interrupts...)
		}
	}
	return out, nil
}

// execConcurrently runs tasks on goroutines of their own and returns the
// first that failed, whose failure cancels the others.
func (rt *runtime) execConcurrently(todo []*task) *task {
	var first struct {
		sync.Mutex
		t *task
	}
	ctx, cancel := context.WithCancel(rt.ctx)
	defer cancel()
	var wg sync.WaitGroup
	for _, t := range todo {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rt.exec(ctx, t)
			if e := t.err; e != nil && !isInterrupt(e) {
				first.Lock()
				if first.t == nil {
					first.t = t
					cancel()
				}
				first.Unlock()
			}
		}()
	}
	wg.Wait()
	return first.t
}

// emitTaskStart reports a task's start; the hidden start task is not
// reported, as in LangGraph.
func (rt *runtime) emitTaskStart(t *task) {
	if rt.em.on(ModeLifecycle) && !t.node.start {
		rt.em.emit(Event{Mode: ModeLifecycle, Step: rt.step, Lifecycle: &Lifecycle{Kind: TaskStart, TaskID: t.id, Node: t.name, Path: t.path}})
	}
	if !rt.em.on(ModeTasks|ModeDebug) || t.node.start {
		return
	}
	ev := &TaskEvent{ID: t.id, Name: t.name, Path: t.path, Input: t.arg}
	if !t.push {
		ev.Input = rt.values() // what a pull task reads
	}
	for _, c := range t.triggers {
		ev.Triggers = append(ev.Triggers, rt.g.specs[c].name)
	}
	rt.em.emit(Event{Mode: ModeTasks, Step: rt.step, Task: ev})
	rt.em.emit(Event{Mode: ModeDebug, Step: rt.step, Task: ev, Debug: "task"})
}

func isInterrupt(err error) bool {
	var ie *InterruptError
	return errors.As(err, &ie)
}

// exec runs one task with its retry policy, turns its output into writes and
// records them as pending writes.
func (rt *runtime) exec(ctx context.Context, t *task) {
	t.ran = true
	t.err = withRetry(ctx, t.node.retry, rt.reference(), func() error {
		t.writes = t.writes[:0]
		return rt.execOnce(ctx, t)
	})
	if t.err != nil && !isInterrupt(t.err) {
		var ne *NodeError
		if !errors.As(t.err, &ne) {
			t.err = &NodeError{Node: t.name, TaskID: t.id, NS: rt.ns, Err: t.err}
		}
	}
	if t.cacheKey != "" {
		rt.storeCached(t)
	}
	rt.commit(ctx, t)
}

// execOnce runs one attempt of the node, under its time limit if it has one.
func (rt *runtime) execOnce(ctx context.Context, t *task) error {
	if t.node.timeout > 0 {
		return rt.execTimed(ctx, t)
	}
	return rt.execBody(ctx, t)
}

// execTimed is execOnce under the node's time limit. It is apart from
// execBody because its deferred call takes &err, which moves err to the
// heap: nodes without a limit do not pay for it.
func (rt *runtime) execTimed(ctx context.Context, t *task) (err error) {
	ctx, done := withNodeTimeout(ctx, t)
	defer done(&err)
	return rt.execBody(ctx, t)
}

// execBody runs the node body once, recovering a panic into a NodeError.
func (rt *runtime) execBody(ctx context.Context, t *task) (err error) {
	n := t.node
	tc := rt.attemptCtx(ctx, t)
	ctx = tc
	defer func() {
		if p := recover(); p != nil {
			err = panicError(t, rt.ns, p)
			tc.endCalls(err) // its call tasks end with it
		}
	}()
	var out Output
	switch {
	case n.start:
		// The input's values in key order are the START node's update,
		// built in a reused buffer and written to the task directly (the
		// edges follow, out staying nil): an Update returned as an Output
		// cost two allocations per run.
		v, _ := rt.ch[rt.g.startCh].get()
		vals, _ := v.(Values)
		up := rt.startUp[:0]
		for k, x := range vals {
			up = append(up, Write{k, x})
		}
		slices.SortFunc(up, func(a, b Write) int { return strings.Compare(a.Channel, b.Channel) })
		ws, werr := rt.appendStateWrites(t.writes, t.name, up)
		clear(up) // holds no value past this run
		rt.startUp = up[:0]
		if werr != nil {
			return werr
		}
		t.writes = ws
	case n.sub != nil:
		out, err = rt.execSubgraph(ctx, t)
	default:
		state := State{r: committedReader{rt}}
		if n.onInput {
			state = State{r: inputReader{rt}}
		}
		if t.push {
			state = State{arg: t.arg}
			if vals, ok := t.arg.(Values); ok {
				state.r = valuesReader(vals)
			}
		}
		out, err = n.fn(ctx, state)
		tc.endCalls(err) // its call tasks end with it
	}
	if err != nil {
		var pc *parentCommandError
		if errors.As(err, &pc) && rt.cfg.parentRT == nil {
			return routeError("node %q returned a Command for the parent graph, but graph %q has no parent", t.name, rt.g.name)
		}
		return err
	}
	return rt.output(ctx, t, out)
}

// attemptCtx returns the context of one attempt of t's node. Saver
// drivers may still watch an earlier attempt's Done channel after the call
// that used it returned, so a context's parent is never rewritten: an
// attempt gets a new context, except one run on the run's own context
// (rt.solo, no time limit), which reuses the run's spare, whose parent is
// that same context (one per attempt was a tenth of a short run's
// allocations).
func (rt *runtime) attemptCtx(ctx context.Context, t *task) *taskCtx {
	if !rt.solo || t.node.timeout > 0 {
		return &taskCtx{Context: ctx, rt: rt, t: t, step: rt.step}
	}
	tc := rt.soloCtx
	if tc == nil {
		tc = &taskCtx{Context: ctx, rt: rt}
		rt.soloCtx = tc
	}
	// The rest as a new one's: the last attempt's calls have ended.
	tc.t, tc.step, tc.counter, tc.calls, tc.callCtx, tc.callCancel = t, rt.step, 0, 0, nil, nil
	return tc
}

// committedReader reads the state channels as of the start of the step.
type committedReader struct{ rt *runtime }

func (r committedReader) read(name string) (any, bool) {
	i, ok := r.rt.g.chanIdx[name]
	if !ok || i >= r.rt.g.nState {
		return nil, false
	}
	return r.rt.ch[i].get()
}

// inputReader reads the run's input (the START channel's values) and the
// committed state for the rest: what an OnInput node sees.
type inputReader struct{ rt *runtime }

func (r inputReader) read(name string) (any, bool) {
	if v, ok := r.rt.ch[r.rt.g.startCh].get(); ok {
		if vals, ok := v.(Values); ok {
			if x, ok := vals[name]; ok {
				return x, true
			}
		}
	}
	return committedReader(r).read(name)
}

// freshReader reads the committed state with one task's own writes applied:
// what a conditional edge sees.
type freshReader struct {
	rt *runtime
	t  *task
}

func (r freshReader) read(name string) (any, bool) {
	i, ok := r.rt.g.chanIdx[name]
	if !ok || i >= r.rt.g.nState {
		return nil, false
	}
	var vals []any
	for _, w := range r.t.writes {
		if w.ch == i {
			vals = append(vals, w.v)
		}
	}
	if len(vals) == 0 {
		return r.rt.ch[i].get()
	}
	c := r.rt.ch[i].copy()
	if _, err := c.update(vals); err != nil {
		return nil, false
	}
	return c.get()
}

// panicError is the NodeError of task t (in namespace ns) whose function
// panicked with p, with the stack where it did; for nodes and call tasks.
func panicError(t *task, ns string, p any) *NodeError {
	perr, ok := p.(error)
	if !ok {
		perr = fmt.Errorf("%v", p)
	}
	return &NodeError{Node: t.name, TaskID: t.id, NS: ns, Err: perr, Panic: true, Stack: string(debug.Stack())}
}
