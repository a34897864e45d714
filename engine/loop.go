package engine

// This file runs super-steps: the loop, tasks with their retries, node
// output turned into writes, and what a finished task records.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/weftstudio/weft/checkpoint"
)

// loop runs super-steps until the graph is done or stops.
func (rt *runtime) loop() (*Result, error) {
	g := rt.g
	ran := 0
	firstTick := true
	for {
		if err := rt.ctx.Err(); err != nil {
			return nil, err
		}
		if rt.bg != nil {
			if err := rt.bg.failed(); err != nil {
				return nil, fmt.Errorf("saving checkpoints: %w", err)
			}
		}
		if rt.step > rt.stop {
			return nil, &RecursionLimitError{Limit: rt.cfg.limit}
		}
		tasks, err := rt.prepare()
		if err != nil {
			return nil, err
		}
		if rt.saver != nil && rt.em.on(ModeCheckpoints|ModeDebug) {
			if snap, err := rt.snapshot(tasks); err == nil {
				rt.em.emit(Event{Mode: ModeCheckpoints, Step: rt.step - 1, State: snap})
				rt.em.emit(Event{Mode: ModeDebug, Step: rt.step - 1, State: snap, Debug: "checkpoint"})
			}
		}
		if len(tasks) == 0 {
			return rt.result(nil, nil, "", ran, true), nil
		}
		if (rt.cfg.stepLimit > 0 && ran >= rt.cfg.stepLimit) || (rt.cfg.stopCheck != nil && ran > 0 && rt.cfg.stopCheck()) {
			return rt.result(tasks, nil, "step", ran, false), nil
		}
		if firstTick && !rt.replay {
			if err := rt.restorePending(tasks); err != nil {
				return nil, err
			}
		}
		firstTick = false
		before := rt.g.before
		if rt.cfg.beforeSet {
			before = rt.cfg.before
		}
		if rt.shouldInterrupt(before, tasks) {
			return rt.result(tasks, nil, "before", ran, false), nil
		}
		if rt.cfg.stopCheck != nil && ran == 0 && rt.cfg.stopCheck() {
			return rt.result(tasks, nil, "step", ran, false), nil
		}
		failed, ints, err := rt.runStep(tasks)
		if err != nil {
			return nil, err
		}
		if failed != nil {
			return nil, failed
		}
		if len(ints) > 0 {
			if rt.bg != nil {
				if err := rt.bg.flush(); err != nil {
					return nil, fmt.Errorf("saving checkpoints: %w", err)
				}
			}
			if err := rt.markAnswerUsed(); err != nil {
				return nil, fmt.Errorf("saving checkpoints: %w", err)
			}
			vals := rt.values()
			rt.em.emit(Event{Mode: ModeValues, Step: rt.step, Values: vals})
			if rt.cfg.parentRT != nil {
				return nil, &InterruptError{Interrupts: ints}
			}
			return rt.result(tasks, ints, "", ran, false), nil
		}
		updated, err := rt.apply(tasks)
		if err != nil {
			return nil, err
		}
		ran++
		for _, c := range updated {
			if c < g.nState {
				rt.emitValues()
				break
			}
		}
		var names []string
		if rt.saver != nil {
			names = taskNames(tasks)
		}
		if err := rt.put(checkpoint.SourceLoop, names); err != nil {
			return nil, err
		}
		after := rt.g.after
		if rt.cfg.afterSet {
			after = rt.cfg.after
		}
		if rt.shouldInterrupt(after, tasks) {
			stopped := names
			if stopped == nil { // no saver: not needed until now
				stopped = taskNames(tasks)
			}
			next, err := rt.prepare()
			if err != nil {
				return nil, err
			}
			r := rt.result(next, nil, "after", ran, len(next) == 0)
			r.After = stopped
			return r, nil
		}
	}
}

// taskNames returns the sorted names of tasks, each once (a new slice).
func taskNames(tasks []*task) []string {
	names := make([]string, 0, len(tasks))
	for _, t := range tasks {
		names = append(names, t.name)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

func (rt *runtime) shouldInterrupt(names []string, tasks []*task) bool {
	if len(names) == 0 {
		return false
	}
	seen := rt.seen["__interrupt__"]
	changed := false
	for c, v := range rt.ver {
		var s int64
		if seen != nil {
			s = seen[c]
		}
		if v > s {
			changed = true
			break
		}
	}
	if !changed {
		return false
	}
	all := slices.Contains(names, "*")
	for _, t := range tasks {
		if t.node.start {
			continue
		}
		if all || slices.Contains(names, t.name) {
			rt.seen["__interrupt__"] = slices.Clone(rt.ver)
			return true
		}
	}
	return false
}

// restorePending gives tasks that already finished before a crash or an
// interrupt their stored writes, so they are not run again, and gives
// interrupted tasks the answers they already got.
func (rt *runtime) restorePending(tasks []*task) error {
	if len(rt.pending) == 0 && rt.resumeMap == nil {
		return nil
	}
	byID := make(map[string]*task, len(tasks))
	for _, t := range tasks {
		byID[t.id] = t
	}
	for _, pw := range rt.pending {
		t, ok := byID[pw.TaskID]
		if !ok {
			continue
		}
		switch pw.Channel {
		case checkpoint.Error, checkpoint.Interrupt, checkpoint.Scheduled, checkpoint.Calls:
		case checkpoint.Resume:
			var vals []json.RawMessage
			if err := json.Unmarshal(pw.Value, &vals); err != nil {
				return fmt.Errorf("checkpoint %s: stored answers of task %s: %w", rt.cpID, pw.TaskID, err)
			}
			t.resume = t.resume[:0]
			for _, raw := range vals {
				v, err := decodeLoose(raw)
				if err != nil {
					return fmt.Errorf("checkpoint %s: stored answer of task %s: %w", rt.cpID, pw.TaskID, err)
				}
				t.resume = append(t.resume, v)
			}
		case checkpoint.NoWrites:
			t.restored = true
		default:
			w, err := rt.decodePending(pw)
			if err != nil {
				return err
			}
			t.restored = true
			t.writes = append(t.writes, w)
		}
	}
	if rt.resumeMap != nil {
		for _, t := range tasks {
			if v, ok := rt.resumeMap[t.interruptID()]; ok {
				t.resume = append(t.resume, v)
				t.resumeNew = true
			}
		}
	}
	for _, t := range tasks {
		if t.restored {
			t.resume = nil
			rt.emitUpdate(t, true)
		}
	}
	return nil
}

// runStep runs the tasks that have no writes yet, concurrently when there is
// more than one. failed is the first node failure; ints the interrupts.
func (rt *runtime) runStep(tasks []*task) (failed error, ints []PendingInterrupt, err error) {
	todo := rt.todo[:0]
	for _, t := range tasks {
		if !t.restored {
			todo = append(todo, t)
		}
	}
	rt.todo = todo
	rt.exitWrite = rt.exitWrite[:0]
	for _, t := range todo {
		if rt.em.on(ModeTasks | ModeDebug) {
			ev := &TaskEvent{ID: t.id, Name: t.name, Path: t.path, Input: t.arg}
			for _, c := range t.triggers {
				ev.Triggers = append(ev.Triggers, rt.g.specs[c].name)
			}
			rt.em.emit(Event{Mode: ModeTasks, Step: rt.step, Task: ev})
			rt.em.emit(Event{Mode: ModeDebug, Step: rt.step, Task: ev, Debug: "task"})
		}
	}
	if len(todo) == 1 {
		t := todo[0]
		rt.exec(rt.ctx, t)
		if rt.ctx.Err() != nil {
			return nil, nil, rt.ctx.Err()
		}
		if t.err != nil {
			var ie *InterruptError
			if errors.As(t.err, &ie) {
				return nil, ie.Interrupts, nil
			}
			return t.err, nil, nil
		}
		return nil, nil, nil
	}
	var first struct {
		sync.Mutex
		t *task
	}
	if len(todo) > 1 {
		ctx, cancel := context.WithCancel(rt.ctx)
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
		cancel()
	}
	if rt.ctx.Err() != nil {
		return nil, nil, rt.ctx.Err()
	}
	for _, t := range todo {
		if t.err == nil {
			continue
		}
		var ie *InterruptError
		if errors.As(t.err, &ie) {
			ints = append(ints, ie.Interrupts...)
		}
	}
	if first.t != nil {
		return first.t.err, nil, nil
	}
	return nil, ints, nil
}

func isInterrupt(err error) bool {
	var ie *InterruptError
	return errors.As(err, &ie)
}

// exec runs one task with its retry policy, turns its output into writes and
// records them as pending writes.
func (rt *runtime) exec(ctx context.Context, t *task) {
	policy := t.node.retry
	attempt := 0
	for {
		attempt++
		t.writes = t.writes[:0]
		t.err = rt.execOnce(ctx, t)
		if t.err == nil || isInterrupt(t.err) || policy == nil || attempt >= policy.MaxAttempts || !retryable(policy, t.err) || ctx.Err() != nil {
			break
		}
		wait := backoff(policy, attempt)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	if t.err != nil && !isInterrupt(t.err) {
		var ne *NodeError
		if !errors.As(t.err, &ne) {
			t.err = &NodeError{Node: t.name, TaskID: t.id, NS: rt.ns, Err: t.err}
		}
	}
	rt.commit(ctx, t)
}

func retryable(p *RetryPolicy, err error) bool {
	var ne *NodeError
	if errors.As(err, &ne) && ne.Panic {
		return p.RetryOn != nil && p.RetryOn(err)
	}
	if p.RetryOn != nil {
		return p.RetryOn(err)
	}
	var pe *permanentError
	var iu *InvalidUpdateError
	return !errors.As(err, &pe) && !errors.As(err, &iu) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

func backoff(p *RetryPolicy, attempt int) time.Duration {
	f := p.BackoffFactor
	if f == 0 {
		f = 2
	}
	d := float64(p.InitialInterval)
	for i := 1; i < attempt; i++ {
		d *= f
	}
	if p.MaxInterval > 0 && d > float64(p.MaxInterval) {
		d = float64(p.MaxInterval)
	}
	if p.Jitter && p.InitialInterval > 0 {
		d += rand.Float64() * float64(p.InitialInterval)
	}
	return time.Duration(d)
}

// execOnce runs the node body once, recovering a panic into a NodeError.
func (rt *runtime) execOnce(ctx context.Context, t *task) (err error) {
	n := t.node
	ctx, timeoutDone := withNodeTimeout(ctx, t)
	defer timeoutDone(&err)
	// A fresh context per attempt: saver drivers may still watch a previous
	// one's Done channel after the call that used it returned.
	tc := &taskCtx{Context: ctx, rt: rt, t: t, step: rt.step}
	ctx = tc
	defer func() {
		if p := recover(); p != nil {
			perr, ok := p.(error)
			if !ok {
				perr = fmt.Errorf("%v", p)
			}
			err = &NodeError{Node: t.name, TaskID: t.id, NS: rt.ns, Err: perr, Panic: true, Stack: string(debug.Stack())}
		}
	}()
	var out Output
	switch {
	case n.start:
		v, _ := rt.ch[rt.g.startCh].get()
		vals, _ := v.(Values)
		keys := make([]string, 0, len(vals))
		for k := range vals {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		up := make(Update, 0, len(keys))
		for _, k := range keys {
			up = append(up, Write{k, vals[k]})
		}
		out = up
	case n.sub != nil:
		out, err = rt.execSubgraph(ctx, t)
	default:
		state := State{r: committedReader{rt}}
		if t.push {
			state = State{arg: t.arg}
			if vals, ok := t.arg.(Values); ok {
				state.r = valuesReader(vals)
			}
		}
		out, err = n.fn(ctx, state)
	}
	if err != nil {
		var pc *parentCommandError
		if errors.As(err, &pc) && rt.cfg.parentRT == nil {
			return &InvalidUpdateError{Msg: fmt.Sprintf("node %q returned a Command for the parent graph, but graph %q has no parent", t.name, rt.g.name)}
		}
		return err
	}
	return rt.output(ctx, t, out)
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

type parentCommandError struct{ cmd Command }

func (e *parentCommandError) Error() string { return "command for the parent graph" }

// output turns a node's Output into the task's writes, then runs its edges,
// conditional edges and joins (LangGraph's writers, in that order).
func (rt *runtime) output(ctx context.Context, t *task, out Output) error {
	g := rt.g
	n := t.node
	addCmd := func(c Command) error {
		if c.Graph == ParentGraph {
			return &parentCommandError{c}
		}
		if c.Resume != nil || c.ResumeByID != nil {
			return fmt.Errorf("a node's Command cannot carry Resume; resume by giving the Command as the graph's input")
		}
		var err error
		if t.writes, err = rt.appendStateWrites(t.writes, t.name, c.Update); err != nil {
			return err
		}
		for _, to := range c.Goto {
			if to == END {
				continue
			}
			i, ok := g.chanIdx["branch:to:"+to]
			if !ok {
				return fmt.Errorf("Command.Goto: unknown node %q", to)
			}
			t.writes = append(t.writes, cwrite{i, nil})
		}
		for _, s := range c.Sends {
			if err := rt.checkSend(s); err != nil {
				return err
			}
			t.writes = append(t.writes, cwrite{g.tasksCh, s})
		}
		return nil
	}
	switch o := out.(type) {
	case nil:
	case Update:
		var err error
		if t.writes, err = rt.appendStateWrites(t.writes, t.name, o); err != nil {
			return err
		}
	case Command:
		if err := addCmd(o); err != nil {
			return err
		}
	case Commands:
		for _, c := range o {
			if err := addCmd(c); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("unsupported output type %T", out)
	}
	for _, c := range n.edges {
		t.writes = append(t.writes, cwrite{c, nil})
	}
	for _, b := range n.branches {
		route, err := b.fn(ctx, State{r: freshReader{rt, t}})
		if err != nil {
			return fmt.Errorf("conditional edge from %q: %w", n.name, err)
		}
		for _, k := range route.Keys {
			to := k
			if b.pathMap != nil {
				var ok bool
				if to, ok = b.pathMap[k]; !ok {
					return fmt.Errorf("conditional edge from %q: path key %q is not in its path map", n.name, k)
				}
			}
			if to == END {
				continue
			}
			if to == START || to == "" {
				return fmt.Errorf("conditional edge from %q: cannot route to %q", n.name, k)
			}
			i, ok := g.chanIdx["branch:to:"+to]
			if !ok {
				return fmt.Errorf("conditional edge from %q: unknown node %q", n.name, to)
			}
			t.writes = append(t.writes, cwrite{i, nil})
		}
		for _, s := range route.Sends {
			if err := rt.checkSend(s); err != nil {
				return fmt.Errorf("conditional edge from %q: %w", n.name, err)
			}
			t.writes = append(t.writes, cwrite{g.tasksCh, s})
		}
	}
	for _, c := range n.joins {
		t.writes = append(t.writes, cwrite{c, n.name})
	}
	return nil
}

func (rt *runtime) checkSend(s Send) error {
	if s.Node == END {
		return &InvalidUpdateError{Msg: "cannot Send to END"}
	}
	if _, ok := rt.g.nodeIdx[s.Node]; !ok || s.Node == START {
		return fmt.Errorf("Send to unknown node %q", s.Node)
	}
	return nil
}

// stateWrites resolves and type-checks a node's writes to state channels.
func (rt *runtime) stateWrites(node string, up Update) ([]cwrite, error) {
	return rt.appendStateWrites(nil, node, up)
}

// appendStateWrites resolves and type-checks writes onto dst.
func (rt *runtime) appendStateWrites(dst []cwrite, node string, up Update) ([]cwrite, error) {
	if len(up) == 0 {
		return dst, nil
	}
	g := rt.g
	out := dst
	for _, w := range up {
		i, ok := g.chanIdx[w.Channel]
		if !ok || i >= g.nState {
			return nil, &InvalidUpdateError{Key: w.Channel, Msg: fmt.Sprintf("node %q wrote to %q, which is not a channel of graph %q", node, w.Channel, g.name)}
		}
		if err := g.specs[i].checkWrite(w.Value); err != nil {
			return nil, &InvalidUpdateError{Key: w.Channel, Msg: fmt.Sprintf("node %q wrote to %q: %v", node, w.Channel, err)}
		}
		out = append(out, cwrite{i, w.Value})
	}
	return out, nil
}

// commit records a finished task: its writes (or its error or interrupt) as
// pending writes of the checkpoint the step started from, and its update
// event.
func (rt *runtime) commit(ctx context.Context, t *task) {
	if t.err == nil || isInterrupt(t.err) {
		rt.emitUpdate(t, false)
	}
	if rt.em.on(ModeTasks | ModeDebug) {
		ev := &TaskEvent{ID: t.id, Name: t.name, Path: t.path, Done: true, Result: rt.publicWrites(t)}
		if t.err != nil {
			var ie *InterruptError
			if errors.As(t.err, &ie) {
				ev.Interrupts = ie.Interrupts
			} else {
				ev.Error = t.err.Error()
			}
		}
		rt.em.emit(Event{Mode: ModeTasks, Step: rt.step, Task: ev})
		rt.em.emit(Event{Mode: ModeDebug, Step: rt.step, Task: ev, Debug: "task_result"})
	}
	if rt.saver == nil {
		return
	}
	var ws []checkpoint.Write
	var err error
	switch {
	case t.err == nil:
		ws, err = rt.encodeWrites(t.writes)
		if err == nil && len(ws) == 0 {
			ws = []checkpoint.Write{{Channel: checkpoint.NoWrites, Value: []byte("null")}}
		}
	case isInterrupt(t.err):
		var ie *InterruptError
		errors.As(t.err, &ie)
		var b []byte
		b, err = encodeInterrupts(ie.Interrupts)
		ws = []checkpoint.Write{{Channel: checkpoint.Interrupt, Value: b}}
	case ctx.Err() != nil && errors.Is(t.err, context.Canceled):
		// A sibling failed and this task was cancelled: it will run again.
		return
	default:
		b, _ := json.Marshal(t.err.Error())
		ws = []checkpoint.Write{{Channel: checkpoint.Error, Value: b}}
	}
	if err != nil {
		t.err = &NodeError{Node: t.name, TaskID: t.id, NS: rt.ns, Err: fmt.Errorf("cannot store its writes: %w", err)}
		b, _ := json.Marshal(t.err.Error())
		ws = []checkpoint.Write{{Channel: checkpoint.Error, Value: b}}
	}
	if len(t.resume) > 0 && (t.resumeNew || isInterrupt(t.err)) {
		raws := make([]json.RawMessage, len(t.resume))
		for i, v := range t.resume {
			b, err := encodeLoose(v)
			if err != nil {
				t.err = &NodeError{Node: t.name, TaskID: t.id, NS: rt.ns, Err: fmt.Errorf("cannot store its answers: %w", err)}
				return
			}
			raws[i] = b
		}
		b, _ := json.Marshal(raws)
		ws = append(ws, checkpoint.Write{Channel: checkpoint.Resume, Value: b})
	}
	ws = t.calls.appendTo(ws)
	ref, id, path := rt.cpRef, t.id, t.path // the task is reused next step: capture now
	put := func() error { return rt.saver.PutWrites(rt.ctx, ref, ws, id, path) }
	switch {
	case rt.cfg.durability == DurabilityExit:
		rt.nullMu.Lock()
		rt.exitWrite = append(rt.exitWrite, put)
		rt.nullMu.Unlock()
	case rt.bg != nil:
		rt.bg.op(&checkpoint.Op{Ref: ref, Writes: ws, TaskID: id, TaskPath: path})
	default:
		if err := put(); err != nil && t.err == nil {
			t.err = &NodeError{Node: t.name, TaskID: t.id, NS: rt.ns, Err: fmt.Errorf("cannot store its writes: %w", err)}
		}
	}
}

func (rt *runtime) publicWrites(t *task) []Write {
	var out []Write
	for _, w := range t.writes {
		if w.ch >= 0 && w.ch < rt.g.nState {
			out = append(out, Write{rt.g.specs[w.ch].name, w.v})
		}
	}
	return out
}

func (rt *runtime) emitUpdate(t *task, cached bool) {
	if !rt.em.on(ModeUpdates) || t.node.start {
		return
	}
	if t.err != nil {
		var ie *InterruptError
		if errors.As(t.err, &ie) {
			rt.em.emit(Event{Mode: ModeUpdates, Step: rt.step, Update: &NodeUpdate{Node: "__interrupt__", TaskID: t.id, Interrupts: ie.Interrupts}})
		}
		return
	}
	rt.em.emit(Event{Mode: ModeUpdates, Step: rt.step, Update: &NodeUpdate{Node: t.name, TaskID: t.id, Writes: rt.publicWrites(t), Cached: cached}})
}

func (rt *runtime) emitValues() {
	if rt.em.on(ModeValues) {
		rt.em.emit(Event{Mode: ModeValues, Step: rt.step, Values: rt.values()})
	}
}

// values returns the state channels that have a value.
func (rt *runtime) values() Values {
	out := make(Values, rt.g.nState)
	for i := 0; i < rt.g.nState; i++ {
		if v, ok := rt.ch[i].get(); ok {
			out[rt.g.specs[i].name] = v
		}
	}
	return out
}

func (rt *runtime) result(next []*task, ints []PendingInterrupt, bp string, ran int, done bool) *Result {
	r := &Result{Values: rt.values(), Interrupts: ints, Breakpoint: bp, Steps: ran, Done: done}
	if rt.saver != nil {
		r.Ref = rt.cpRef
	}
	for _, t := range next {
		if !slices.Contains(r.Next, t.name) {
			r.Next = append(r.Next, t.name)
		}
	}
	return r
}
