package engine

// This file lets a debugger step inside a super-step: a hook called at each
// of its phases (plan, each task, barrier, apply) that can pause the run,
// choose the order a parallel step's tasks run in and change the writes
// waiting at the barrier; and the same write edits applied to a past step
// without running anything (what-if).

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/weftstudio/weft/checkpoint"
)

// Phase is a point inside a super-step where a PhaseFunc is called.
type Phase int

// The phases of a super-step, in order. The zero Phase is none.
const (
	// PhasePlan: the step's tasks are planned; none has run. Pausing here
	// stops the run before the step, as a breakpoint before its nodes.
	PhasePlan Phase = iota + 1
	// PhaseTask: one task is about to run. With a hook, a parallel step
	// runs its tasks one at a time, the hook choosing which next.
	PhaseTask
	// PhaseBarrier: every task has finished; their writes wait, not yet
	// applied. The hook may drop or replace state writes.
	PhaseBarrier
	// PhaseApply: the writes are applied and the step's checkpoint stored.
	// Pausing here stops the run after the step.
	PhaseApply
)

// String names the phase ("plan", "task", "barrier", "apply").
func (p Phase) String() string {
	switch p {
	case PhasePlan:
		return "plan"
	case PhaseTask:
		return "task"
	case PhaseBarrier:
		return "barrier"
	case PhaseApply:
		return "apply"
	}
	return fmt.Sprintf("Phase(%d)", int(p))
}

// PhaseInfo is what a PhaseFunc sees of a super-step, and what it may
// change. Fields not named for a phase are zero.
type PhaseInfo struct {
	Phase Phase
	// NS is the namespace of the subgraph run the phase belongs to
	// ("node:<task id>", nested ones joined by "|"); "" for the graph the
	// run was started on. Phases inside subgraphs reach the hook only with
	// WithSubgraphPhases.
	NS string
	// Step is the super-step's number (the step its checkpoint will have).
	Step int
	// Ref is the checkpoint the step starts from; at PhaseApply, the one it
	// stored (zero without a saver).
	Ref checkpoint.Ref
	// Tasks are the step's tasks in task order. Those that have run (at
	// PhaseTask, the ones no longer Pending; at PhaseBarrier and PhaseApply,
	// all) are Finished, with their state writes in Result.
	Tasks []TaskState
	// Triggers names, per task id, the channels that triggered a pull task.
	Triggers map[string][]string
	// Values is the state: before the step (PhasePlan, PhaseTask,
	// PhaseBarrier) or after it (PhaseApply).
	Values Values
	// Pending lists, at PhaseTask, the ids of the tasks not yet run, in
	// task order; Next is the one about to run. The hook may set Next to
	// another pending id to run that one first.
	Pending []string
	Next    string
	// Edits, at PhaseBarrier, are set by the hook to drop or replace state
	// writes before they apply; the step's checkpoint is then a fork whose
	// metadata records them (the tasks' stored writes stay as they ran).
	Edits []StepEdit
	// Updated lists, at PhaseApply, the state channels the step changed.
	Updated []string
}

// PhaseFunc is called on the run's goroutine at each phase of each
// super-step (WithPhases); the run waits while it works, so a debugger may
// block in it until the user continues. Returning ErrPause at PhasePlan or
// PhaseApply stops the run cleanly there (Result.Breakpoint "phase"); any
// other error ends the run with it.
type PhaseFunc func(ctx context.Context, p *PhaseInfo) error

// ErrPause, returned by a PhaseFunc at PhasePlan or PhaseApply, stops the
// run at that step boundary; a later run with nil input continues.
var ErrPause = errors.New("engine: paused by a phase hook")

// WithPhases calls fn at every phase of every super-step of the run (not of
// its subgraphs), for stepping inside a step, breakpoints on data and
// edits at the barrier. Without it steps run as usual.
func WithPhases(fn PhaseFunc) RunOption { return func(c *runConfig) { c.phases = fn } }

// WithSubgraphPhases makes WithPhases' hook see the phases of the steps of
// the run's subgraphs too (PhaseInfo.NS names which), so a debugger can step
// into a subgraph node: its plan, its tasks, its barrier (edits there fork
// the subgraph's checkpoint) and its apply, all inside the parent's task,
// which waits meanwhile. A subgraph's phases carry its own state and tasks.
// ErrPause returned inside a subgraph stops it as one of its breakpoints
// does: the parent task pauses, and resuming the thread continues the
// subgraph. Without it (the default) a subgraph node is one task.
func WithSubgraphPhases() RunOption { return func(c *runConfig) { c.subPhases = true } }

// StepEdit changes one state write of a task before it applies: Drop it, or
// replace its value with Value. Write indexes the task's state writes, as
// TaskState.Result lists them.
type StepEdit struct {
	TaskID string
	Write  int
	Drop   bool
	Value  any
}

// MetaEdits is the metadata Extra key under which a checkpoint made from
// edited writes records the edits (a list of maps with the task, node,
// write index, channel, and "dropped" or the replacement "value").
const MetaEdits = "edits"

// phaseErr reports ErrPause returned where a run cannot pause.
func phaseErr(err error, at Phase) error {
	if errors.Is(err, ErrPause) {
		return fmt.Errorf("a phase hook can pause at plan or apply, not at %s: %w", at, err)
	}
	return err
}

// phase calls the run's hook, if any.
func (rt *runtime) phase(p *PhaseInfo) error {
	if rt.cfg.phases == nil {
		return nil
	}
	p.Step, p.Ref, p.NS = rt.step, rt.cpRef, rt.ns
	if p.Phase == PhaseApply {
		p.Step-- // the step's checkpoint is stored: rt.step counts the next one
	}
	return rt.cfg.phases(rt.ctx, p)
}

// phaseTasks describes tasks for a hook: planned, with results once run.
func (rt *runtime) phaseTasks(tasks []*task) ([]TaskState, map[string][]string) {
	out := make([]TaskState, len(tasks))
	trig := make(map[string][]string, len(tasks))
	for i, t := range tasks {
		ts := TaskState{ID: t.id, Name: t.name, Path: t.path, Input: t.arg, Result: rt.publicWrites(t), Finished: t.done()}
		if t.node.sub != nil {
			ts.NS = t.ns(rt)
		}
		if t.err != nil && !isInterrupt(t.err) {
			ts.Error, ts.ErrorKind = t.err.Error(), errorKind(t.err)
		}
		out[i] = ts
		for _, c := range t.triggers {
			trig[t.id] = append(trig[t.id], rt.g.specs[c].name)
		}
	}
	return out, trig
}

// runInChosenOrder runs tasks one at a time, asking the hook before each
// which pending task runs next. It returns the first that failed; the
// others are not run then.
func (rt *runtime) runInChosenOrder(todo []*task) (*task, error) {
	pending := slices.Clone(todo)
	for len(pending) > 0 {
		ids := make([]string, len(pending))
		for i, t := range pending {
			ids[i] = t.id
		}
		tasks, trig := rt.phaseTasks(todo)
		p := &PhaseInfo{Phase: PhaseTask, Tasks: tasks, Triggers: trig, Values: rt.values(), Pending: ids, Next: ids[0]}
		if err := rt.phase(p); err != nil {
			return nil, err
		}
		i := slices.Index(ids, p.Next)
		if i < 0 {
			return nil, fmt.Errorf("phase hook chose task %q, which is not pending (pending: %v)", p.Next, ids)
		}
		t := pending[i]
		pending = slices.Delete(pending, i, i+1)
		rt.exec(rt.ctx, t)
		if e := t.err; e != nil && !isInterrupt(e) {
			return t, nil
		}
	}
	return nil, nil
}

// barrier shows the hook the step's writes before they apply and applies
// its edits to them. It returns the edits made, for the checkpoint's
// metadata.
func (rt *runtime) barrier(tasks []*task) ([]map[string]any, error) {
	if rt.cfg.phases == nil {
		return nil, nil
	}
	states, trig := rt.phaseTasks(tasks)
	p := &PhaseInfo{Phase: PhaseBarrier, Tasks: states, Triggers: trig, Values: rt.values()}
	if err := rt.phase(p); err != nil {
		return nil, err
	}
	return rt.applyEdits(tasks, p.Edits)
}

// applyEdits drops or replaces state writes of tasks, checking each edit,
// and describes what it did for a checkpoint's metadata.
func (rt *runtime) applyEdits(tasks []*task, edits []StepEdit) ([]map[string]any, error) {
	if len(edits) == 0 {
		return nil, nil
	}
	drop := map[*task][]int{}
	var desc []map[string]any
	for _, e := range edits {
		i := slices.IndexFunc(tasks, func(t *task) bool { return t.id == e.TaskID })
		if i < 0 {
			return nil, fmt.Errorf("edit of task %q: no such task in step %d", e.TaskID, rt.step)
		}
		t := tasks[i]
		wi := stateWriteIndex(rt.g, t, e.Write)
		if wi < 0 {
			return nil, fmt.Errorf("edit of task %s (%s): it has no state write %d", t.id, t.name, e.Write)
		}
		w := &t.writes[wi]
		d := map[string]any{"task": t.id, "node": t.name, "write": e.Write, "channel": rt.g.specs[w.ch].name}
		if e.Drop {
			drop[t] = append(drop[t], wi)
			d["dropped"] = true
		} else {
			if err := rt.g.specs[w.ch].checkWrite(e.Value); err != nil {
				return nil, fmt.Errorf("edit of task %s (%s), channel %q: %w", t.id, t.name, d["channel"], err)
			}
			w.v = e.Value
			d["value"] = e.Value
		}
		desc = append(desc, d)
	}
	for t, idx := range drop {
		slices.Sort(idx)
		for k := len(idx) - 1; k >= 0; k-- {
			t.writes = slices.Delete(t.writes, idx[k], idx[k]+1)
		}
	}
	return desc, nil
}

// stateWriteIndex returns the index in t.writes of its n-th state write
// (as publicWrites lists them), or -1.
func stateWriteIndex(g *Graph, t *task, n int) int {
	for i, w := range t.writes {
		if w.ch >= 0 && w.ch < g.nState {
			if n == 0 {
				return i
			}
			n--
		}
	}
	return -1
}

// Recompute returns the state the step that ran from a checkpoint (the
// latest, or the one WithCheckpoint names) leads to with edits applied to
// its tasks' writes, recomputed through the channels' reducers without
// running any node: the snapshot the step's child would be. Every task of
// that step must have finished there. Nothing is stored.
func (gr *Graph) Recompute(ctx context.Context, edits []StepEdit, opts ...RunOption) (*Snapshot, error) {
	rt, _, err := gr.editedStep(ctx, edits, opts)
	if err != nil {
		return nil, err
	}
	parent := rt.cpRef
	next, err := rt.prepare()
	if err != nil {
		return nil, err
	}
	snap := &Snapshot{Values: rt.values(), Parent: &parent, Versions: rt.versionMap(),
		Metadata: checkpoint.Metadata{Source: checkpoint.SourceFork, Step: rt.step, Extra: map[string]any{MetaEdits: rt.editDesc}}}
	if _, err := rt.describeTasks(snap, next, nil, false); err != nil {
		return nil, err
	}
	for _, t := range snap.Tasks {
		snap.Next = append(snap.Next, t.Name)
	}
	return snap, nil
}

// ForkEdited stores what Recompute returns as a fork: a child checkpoint of
// the step's checkpoint, source "fork", whose metadata lists the edits
// (MetaEdits). Continue from it with Invoke(nil, WithCheckpoint(ref)).
func (gr *Graph) ForkEdited(ctx context.Context, edits []StepEdit, opts ...RunOption) (checkpoint.Ref, error) {
	rt, tasks, err := gr.editedStep(ctx, edits, opts)
	if err != nil {
		return checkpoint.Ref{}, err
	}
	rt.stepExtra = map[string]any{MetaEdits: rt.editDesc}
	if err := rt.put(checkpoint.SourceFork, taskNames(tasks)); err != nil {
		return checkpoint.Ref{}, err
	}
	return rt.cpRef, nil
}

// editedStep loads the checkpoint, restores its step's writes from the
// stored pending writes, edits them and applies them.
func (gr *Graph) editedStep(ctx context.Context, edits []StepEdit, opts []RunOption) (*runtime, []*task, error) {
	if gr.view != nil {
		return nil, nil, gr.viewErr()
	}
	cfg := newWriteConfig(opts)
	if gr.saver == nil {
		return nil, nil, errors.New("editing a step needs a graph compiled with engine.WithSaver")
	}
	if cfg.thread == "" {
		return nil, nil, errors.New("editing a step needs a thread: engine.WithThread")
	}
	cfg.durability = DurabilitySync
	rt, err := gr.newRuntime(ctx, cfg, nil)
	if err != nil {
		return nil, nil, err
	}
	tp, err := gr.saver.Get(ctx, checkpoint.Ref{ThreadID: cfg.thread, NS: cfg.ns, CheckpointID: cfg.checkpointID})
	if err != nil {
		return nil, nil, fmt.Errorf("thread %q: %w", cfg.thread, err)
	}
	if err := rt.load(tp); err != nil {
		return nil, nil, err
	}
	if err := rt.noteHead(); err != nil {
		return nil, nil, err
	}
	tasks, err := rt.prepare()
	if err != nil {
		return nil, nil, err
	}
	if len(tasks) == 0 {
		return nil, nil, fmt.Errorf("checkpoint %s plans no step to edit", tp.Ref.CheckpointID)
	}
	if err := rt.restorePending(tasks); err != nil {
		return nil, nil, err
	}
	for _, t := range tasks {
		if !t.restored {
			return nil, nil, fmt.Errorf("task %s (%s) has not finished from checkpoint %s: only a step whose tasks all finished can be edited", t.id, t.name, tp.Ref.CheckpointID)
		}
	}
	if rt.editDesc, err = rt.applyEdits(tasks, edits); err != nil {
		return nil, nil, err
	}
	if _, err := rt.apply(tasks); err != nil {
		return nil, nil, err
	}
	return rt, tasks, nil
}
