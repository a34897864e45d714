package engine

// This file sequences super-steps: plan (algo.go), run (runner.go), apply
// (algo.go) and store (persist.go), with the stops between them —
// breakpoints, interrupts, step limits — and what a finished task records.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/weftstudio/weft/checkpoint"
)

// loop runs super-steps until the graph is done or stops, split where
// LangGraph's loop splits: tick plans the next step and stops before it,
// the runner (runStep) runs its tasks, afterTick applies and stores their
// writes and stops after it. Each returns a Result when the run stops there.
func (rt *runtime) loop() (*Result, error) {
	lp := &loopState{firstTick: true}
	for {
		tasks, res, err := rt.tick(lp)
		if err != nil || res != nil {
			return res, err
		}
		step := rt.step
		if rt.em.on(ModeLifecycle) { // checked here: the event would escape even when unused
			rt.emitStep(step, &Lifecycle{Kind: StepStart, Tasks: visibleTasks(tasks)})
		}
		out, err := rt.runStep(tasks)
		if err != nil {
			rt.emitStepEnd(step, err, nil)
			return nil, err
		}
		if out.failed != nil {
			rt.emitStepEnd(step, out.failed, nil)
			return nil, out.failed
		}
		if out.paused {
			rt.emitStepEnd(step, nil, out.ints)
			return rt.stopAtInterrupts(tasks, out.ints, lp.ran)
		}
		res, err = rt.afterTick(lp, tasks)
		rt.emitStepEnd(step, err, nil)
		if err != nil || res != nil {
			return res, err
		}
	}
}

// emitStep reports a step's lifecycle event; callers check that
// ModeLifecycle is on.
func (rt *runtime) emitStep(step int, l *Lifecycle) {
	rt.em.emit(Event{Mode: ModeLifecycle, Step: step, Lifecycle: l})
}

// emitStepEnd reports the end of step: failed with err, stopped at ints,
// or stored (the runtime's checkpoint is then the step's).
func (rt *runtime) emitStepEnd(step int, err error, ints []PendingInterrupt) {
	if !rt.em.on(ModeLifecycle) {
		return
	}
	l := &Lifecycle{Kind: StepEnd, Interrupts: ints}
	if err != nil {
		l.Error, l.ErrorKind = err.Error(), errorKind(err)
	} else if rt.saver != nil {
		l.Checkpoint = rt.cpID
	}
	rt.emitStep(step, l)
}

// visibleTasks counts the tasks that are reported: all but the hidden
// start task.
func visibleTasks(tasks []*task) int {
	n := 0
	for _, t := range tasks {
		if !t.node.start {
			n++
		}
	}
	return n
}

// loopState is what the loop carries from one step to the next.
type loopState struct {
	ran       int  // super-steps executed by this run
	firstTick bool // the next tick is the run's first: restore pending writes
}

// tick checks that the run may go on, plans the next step's tasks and stops
// before running them: done, a step limit or stop check, a static
// breakpoint before, or a phase hook pausing at the plan.
func (rt *runtime) tick(lp *loopState) ([]*task, *Result, error) {
	if err := rt.ctx.Err(); err != nil {
		return nil, nil, err
	}
	if rt.bg != nil {
		if err := rt.bg.failed(); err != nil {
			return nil, nil, fmt.Errorf("saving checkpoints: %w", err)
		}
	}
	if rt.step > rt.stop {
		return nil, nil, &RecursionLimitError{Limit: rt.cfg.limit}
	}
	tasks, err := rt.prepare()
	if err != nil {
		return nil, nil, err
	}
	if rt.saver != nil && rt.em.on(ModeCheckpoints|ModeDebug) {
		snap, err := rt.snapshot(tasks)
		if err != nil {
			return nil, nil, err
		}
		rt.em.emit(Event{Mode: ModeCheckpoints, Step: rt.step - 1, State: snap})
		rt.em.emit(Event{Mode: ModeDebug, Step: rt.step - 1, State: snap, Debug: "checkpoint"})
	}
	if len(tasks) == 0 {
		return nil, rt.result(nil, nil, StopNone, lp.ran, true), nil
	}
	if (rt.cfg.stepLimit > 0 && lp.ran >= rt.cfg.stepLimit) || (rt.cfg.stopCheck != nil && lp.ran > 0 && rt.cfg.stopCheck()) {
		return nil, rt.result(tasks, nil, StopStep, lp.ran, false), nil
	}
	if lp.firstTick && !rt.replay {
		if err := rt.restorePending(tasks); err != nil {
			return nil, nil, err
		}
	}
	lp.firstTick = false
	before := rt.g.before
	if rt.cfg.beforeSet {
		before = rt.cfg.before
	}
	if rt.shouldInterrupt(before, tasks) {
		rt.emitBreakpoint()
		return nil, rt.result(tasks, rt.breakpointInterrupts(), StopBefore, lp.ran, false), nil
	}
	if rt.cfg.stopCheck != nil && lp.ran == 0 && rt.cfg.stopCheck() {
		return nil, rt.result(tasks, nil, StopStep, lp.ran, false), nil
	}
	if rt.cfg.phases != nil {
		ts, trig := rt.phaseTasks(tasks)
		if err := rt.phase(&PhaseInfo{Phase: PhasePlan, Tasks: ts, Triggers: trig, Values: rt.values()}); errors.Is(err, ErrPause) {
			return nil, rt.result(tasks, nil, StopPhase, lp.ran, false), nil
		} else if err != nil {
			return nil, nil, err
		}
	}
	return tasks, nil, nil
}

// stopAtInterrupts ends a run whose step stopped at interrupts (ints;
// none when a subgraph stopped at a breakpoint): the answers it used are
// marked, and a subgraph's stop handed to its parent (each interrupted
// task was reported as it stopped, emitInterruptValues). The step's
// finished tasks keep their writes as pending writes of the checkpoint; as
// in LangGraph, the last values event and the result show them applied, on
// copies: the checkpoint stays as it is. Following Python the result
// always holds the state, as its interrupt's values chunk did (B2).
func (rt *runtime) stopAtInterrupts(tasks []*task, ints []PendingInterrupt, ran int) (*Result, error) {
	if rt.bg != nil {
		if err := rt.bg.flush(); err != nil {
			return nil, fmt.Errorf("saving checkpoints: %w", err)
		}
	}
	if err := rt.markAnswerUsed(); err != nil {
		return nil, fmt.Errorf("saving checkpoints: %w", err)
	}
	if rt.cfg.parentRT != nil {
		return nil, &InterruptError{Interrupts: ints}
	}
	vals, changed, err := rt.valuesWith(tasks)
	if err != nil {
		return nil, err
	}
	if changed && rt.em.on(ModeValues) {
		rt.em.emit(Event{Mode: ModeValues, Step: rt.step, Values: vals})
	}
	if len(ints) == 0 {
		ints = rt.breakpointInterrupts()
		rt.emitBreakpointValues()
	}
	r := rt.result(tasks, ints, StopNone, ran, false)
	if changed || (len(ints) > 0 && !rt.js()) {
		r.Values = vals
	}
	return r, nil
}

// afterTick finishes a step whose tasks all ran: the barrier phase, the
// writes applied, the checkpoint stored; then it stops after the step when
// a phase hook pauses at the apply or a static breakpoint after matches.
func (rt *runtime) afterTick(lp *loopState, tasks []*task) (*Result, error) {
	g := rt.g
	edits, err := rt.barrier(tasks)
	if err != nil {
		return nil, phaseErr(err, PhaseBarrier)
	}
	source := checkpoint.SourceLoop
	if edits != nil {
		// What runs next follows edited writes: the step's checkpoint
		// is a fork that says so; the tasks' stored writes stay true.
		source, rt.stepExtra = checkpoint.SourceFork, map[string]any{MetaEdits: edits}
	}
	updated, err := rt.apply(tasks)
	if err != nil {
		return nil, err
	}
	// The step is applied: with durability exit its writes live in the
	// final checkpoint; only an unfinished step's writes are stored.
	rt.exitWrite = rt.exitWrite[:0]
	lp.ran++
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
	if err := rt.put(source, names); err != nil {
		return nil, err
	}
	if rt.cfg.phases != nil {
		ts, trig := rt.phaseTasks(tasks)
		p := &PhaseInfo{Phase: PhaseApply, Tasks: ts, Triggers: trig, Values: rt.values()}
		for _, c := range updated {
			if c < g.nState {
				p.Updated = append(p.Updated, g.specs[c].name)
			}
		}
		if err := rt.phase(p); errors.Is(err, ErrPause) {
			next, err := rt.prepare()
			if err != nil {
				return nil, err
			}
			return rt.result(next, nil, StopPhase, lp.ran, len(next) == 0), nil
		} else if err != nil {
			return nil, err
		}
	}
	after := rt.g.after
	if rt.cfg.afterSet {
		after = rt.cfg.after
	}
	if !rt.shouldInterrupt(after, tasks) {
		return nil, nil
	}
	stopped := names
	if stopped == nil { // no saver: not needed until now
		stopped = taskNames(tasks)
	}
	next, err := rt.prepare()
	if err != nil {
		return nil, err
	}
	rt.emitBreakpoint()
	r := rt.result(next, rt.breakpointInterrupts(), StopAfter, lp.ran, len(next) == 0)
	r.After = stopped
	return r, nil
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
	seen := rt.seen.get("__interrupt__")
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
			rt.seen.set("__interrupt__", slices.Clone(rt.ver))
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

// commit records a finished task: its writes (or its error or interrupt) as
// pending writes of the checkpoint the step started from, and its update
// event.
func (rt *runtime) commit(ctx context.Context, t *task) {
	if t.err == nil || isInterrupt(t.err) {
		rt.emitUpdate(t, false)
		rt.emitInterruptValues(t)
	}
	if rt.em.on(ModeLifecycle) && !t.node.start {
		l := &Lifecycle{Kind: TaskEnd, TaskID: t.id, Node: t.name, Path: t.path}
		if t.err != nil {
			var ie *InterruptError
			if errors.As(t.err, &ie) {
				l.Interrupts = ie.Interrupts
			} else {
				l.Error, l.ErrorKind = t.err.Error(), errorKind(t.err)
			}
		}
		rt.em.emit(Event{Mode: ModeLifecycle, Step: rt.step, Lifecycle: l})
	}
	if rt.em.on(ModeTasks|ModeDebug) && !t.node.start {
		ev := &TaskEvent{ID: t.id, Name: t.name, Path: t.path, Done: true, Result: rt.publicWrites(t)}
		if t.err != nil {
			var ie *InterruptError
			if errors.As(t.err, &ie) {
				ev.Interrupts = ie.Interrupts
			} else {
				ev.Error, ev.ErrorKind = t.err.Error(), errorKind(t.err)
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
		// The writes made before the error are stored with it, as in
		// LangGraph (PregelRunner.commit): the task counts as done, so a
		// resume applies them and does not run it again.
		ws, err = rt.encodeWrites(t.writes)
		stored := t.err
		if rt.js() && t.callFailed.Load() {
			// LangGraph.js aborts a node whose call failed, and stores
			// the abort as its error (B11).
			stored = &NodeError{Node: t.name, TaskID: t.id, NS: rt.ns, Err: ErrAborted}
		}
		ws = append(ws, checkpoint.Write{Channel: checkpoint.Error, Value: encodeTaskError(stored)})
	}
	if err != nil {
		serr := fmt.Errorf("cannot store its writes: %w", err)
		if t.err != nil {
			serr = errors.Join(t.err, serr) // keep why the task failed
		}
		t.err = &NodeError{Node: t.name, TaskID: t.id, NS: rt.ns, Err: serr}
		ws = []checkpoint.Write{{Channel: checkpoint.Error, Value: encodeTaskError(t.err)}}
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
	if rt.holding {
		// Stored when the step ends, once it is known whether a sibling
		// failed (releaseHeld).
		rt.hold(t, ws)
		return
	}
	rt.storeTaskWrites(t, ws)
}

// heldWrites are a finished task's encoded writes, waiting for the end of
// its step (runtime.holding).
type heldWrites struct {
	t  *task
	ws []checkpoint.Write
}

// releaseHeld stores the writes held during a step. When a task of the
// step failed, each sibling that finished stores, following LangGraphJS
// (B4), only its state writes and an aborted error: LangGraph.js aborts
// it before its edges, joins and routes write, so what it would have
// triggered does not run on a resume either.
func (rt *runtime) releaseHeld(failed bool) {
	held := rt.held
	rt.held, rt.holding = nil, false
	for _, h := range held {
		ws := h.ws
		if failed && h.t.err == nil {
			ws = rt.abortedWrites(h.t)
		}
		rt.storeTaskWrites(h.t, ws)
	}
}

// abortedWrites are the writes a finished task keeps when a sibling fails,
// following LangGraphJS: its state writes, its calls and an aborted error.
func (rt *runtime) abortedWrites(t *task) []checkpoint.Write {
	var state []cwrite
	for _, w := range t.writes {
		if w.ch >= 0 && w.ch < rt.g.nState {
			state = append(state, w)
		}
	}
	ws, err := rt.encodeWrites(state)
	if err != nil {
		ws = nil // they were encoded once already: cannot happen
	}
	aborted := &NodeError{Node: t.name, TaskID: t.id, NS: rt.ns, Err: ErrAborted}
	ws = append(ws, checkpoint.Write{Channel: checkpoint.Error, Value: encodeTaskError(aborted)})
	return t.calls.appendTo(ws)
}

// storeTaskWrites stores a finished task's encoded writes as the durability
// says.
func (rt *runtime) storeTaskWrites(t *task, ws []checkpoint.Write) {
	ref, id, path := rt.cpRef, t.id, t.path // the task is reused next step: capture now
	put := func() error { return rt.saver.PutWrites(rt.ctx, ref, ws, id, path) }
	switch {
	case rt.cfg.durability == DurabilityExit:
		rt.deferWrite(put)
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
	rt.em.emit(Event{Mode: ModeUpdates, Step: rt.step, Update: &NodeUpdate{Node: t.name, TaskID: t.id, Writes: rt.publicWrites(t), Cached: cached, CacheHit: t.cached}})
}

// emitBreakpoint reports a stop at a static breakpoint as LangGraph does:
// an updates event for "__interrupt__" with no interrupts and, following
// LangGraphJS, a values event with none (B1).
func (rt *runtime) emitBreakpoint() {
	if rt.cfg.parentRT != nil {
		return // a subgraph's stop is reported by its parent task, at the root
	}
	rt.em.emit(Event{Mode: ModeUpdates, Step: rt.step, Update: &NodeUpdate{Node: "__interrupt__"}})
	rt.emitBreakpointValues()
}

// emitBreakpointValues is LangGraph.js's {"__interrupt__": []} values
// chunk of a run stopped by a breakpoint; Python has none (B1).
func (rt *runtime) emitBreakpointValues() {
	if rt.js() && rt.em.on(ModeValues) {
		rt.em.emit(Event{Mode: ModeValues, Step: rt.step, Interrupts: []PendingInterrupt{}})
	}
}

// breakpointInterrupts is a breakpoint's Result.Interrupts: empty but set
// following LangGraphJS (its invoke returns "__interrupt__": []), nil
// following Python (B1).
func (rt *runtime) breakpointInterrupts() []PendingInterrupt {
	if rt.js() {
		return []PendingInterrupt{}
	}
	return nil
}

// emitInterruptValues reports a task that stopped at interrupts as both
// LangGraphs do when the task ends: a values event with its interrupts,
// and, following Python, the state as of the step's start (B2).
func (rt *runtime) emitInterruptValues(t *task) {
	if !rt.em.on(ModeValues) || t.err == nil {
		return
	}
	var ie *InterruptError // escapes to errors.As: declared past the common return
	if !errors.As(t.err, &ie) || len(ie.Interrupts) == 0 {
		return // a subgraph's breakpoint has no question: its parent reports the stop
	}
	ev := Event{Mode: ModeValues, Step: rt.step, Interrupts: ie.Interrupts}
	if !rt.js() {
		ev.Values = rt.values()
	}
	rt.em.emit(ev)
}

// emitValues reports the state after something changed it (a step that
// updated a state channel, or the start of a resume); the run's result
// holds the state of its last such event.
func (rt *runtime) emitValues() {
	rt.valuesShown = true
	if rt.em.on(ModeValues) {
		rt.em.emit(Event{Mode: ModeValues, Step: rt.step, Values: rt.values()})
	}
}

// valuesWith returns the state with tasks' writes applied to copies of the
// runtime's channels, which stay as they are.
// changed reports whether a state channel changed; when none did, the
// values are the runtime's own.
func (rt *runtime) valuesWith(tasks []*task) (vals Values, changed bool, err error) {
	if !slices.ContainsFunc(tasks, func(t *task) bool { return len(t.writes) > 0 }) {
		return rt.values(), false, nil
	}
	st := chanState{ch: make([]channel, len(rt.ch)), ver: slices.Clone(rt.ver), seen: newSeen(rt.g)}
	for i, c := range rt.ch {
		st.ch[i] = c.copy()
	}
	updated, err := applyWrites(rt.g, &st, tasks, &algoBufs{})
	if err != nil {
		return nil, false, err
	}
	changed = slices.ContainsFunc(updated, func(c int) bool { return c < rt.g.nState })
	return stateValues(rt.g, st.ch), changed, nil
}

// values returns the state channels that have a value.
func (rt *runtime) values() Values { return stateValues(rt.g, rt.ch) }

// stateValues returns the values of g's state channels in ch that have one.
func stateValues(g *Graph, ch []channel) Values {
	out := make(Values, g.nState)
	for i := 0; i < g.nState; i++ {
		if v, ok := ch[i].get(); ok {
			out[g.specs[i].name] = v
		}
	}
	return out
}

func (rt *runtime) result(next []*task, ints []PendingInterrupt, bp Stop, ran int, done bool) *Result {
	r := &Result{Interrupts: ints, Breakpoint: bp, Steps: ran, Done: done}
	if rt.valuesShown {
		r.Values = rt.values()
	} else {
		r.Values = Values{}
	}
	if rt.cfg.parentRT != nil {
		r.changed = rt.changedByNodes()
	}
	if rt.saver != nil {
		r.Ref = rt.cpRef
	}
	for _, t := range next {
		if !t.done() {
			r.Next = append(r.Next, t.name) // one entry per task, as LangGraph's next
		}
	}
	return r
}
