package engine

// This file writes state without running nodes: UpdateState and
// BulkUpdateState, as LangGraph's update_state (semantics reference §6).

import (
	"context"
	"errors"
	"fmt"

	"github.com/weftstudio/weft/checkpoint"
)

// Special as-nodes of UpdateState (semantics reference §6).
const (
	// AsInput applies the values as a new graph input (source "input").
	AsInput = "__input__"
	// AsCopy copies the checkpoint as a sibling (source "fork").
	AsCopy = "__copy__"
	// AsEnd, with nil values, applies the pending writes and marks every
	// pending task done, so nothing runs next.
	AsEnd = END
)

// StateUpdate is one manual update: values written as if node AsNode
// returned them. AsNode "" lets the engine infer the node.
type StateUpdate struct {
	Values Update
	AsNode string
}

// UpdateState writes values into the thread as if node asNode had returned
// them, creating a child checkpoint (source "update") of the latest
// checkpoint or of the one named with WithCheckpoint — a fork when that is
// not the latest. The node's edges and conditional edges run, so the next
// step is what would follow that node. asNode "" is inferred: the only node,
// START before anything ran, else the node that ran last; it is an error
// when that is ambiguous. Continue from the returned checkpoint with
// Invoke(nil, WithThread, WithCheckpoint(ref.CheckpointID)).
func (gr *Graph) UpdateState(ctx context.Context, values Update, asNode string, opts ...RunOption) (checkpoint.Ref, error) {
	return gr.BulkUpdateState(ctx, [][]StateUpdate{{{Values: values, AsNode: asNode}}}, opts...)
}

// BulkUpdateState applies several super-steps of updates, each a list of
// updates applied together, one checkpoint per super-step.
func (gr *Graph) BulkUpdateState(ctx context.Context, steps [][]StateUpdate, opts ...RunOption) (checkpoint.Ref, error) {
	if gr.view != nil {
		if gr.view.run == nil {
			return checkpoint.Ref{}, gr.viewErr()
		}
		return gr.viewUpdate(ctx, steps, newWriteConfig(opts))
	}
	cfg := newWriteConfig(opts)
	if gr.saver == nil {
		return checkpoint.Ref{}, errors.New("UpdateState needs a graph compiled with engine.WithSaver")
	}
	if cfg.thread == "" {
		return checkpoint.Ref{}, errors.New("UpdateState needs a thread: engine.WithThread")
	}
	if len(steps) == 0 {
		return checkpoint.Ref{}, errors.New("UpdateState: no updates")
	}
	cfg.durability = DurabilitySync
	rt, err := gr.newRuntime(ctx, cfg, nil)
	if err != nil {
		return checkpoint.Ref{}, err
	}
	tp, err := gr.saver.Get(ctx, checkpoint.Ref{ThreadID: cfg.thread, NS: cfg.ns, CheckpointID: cfg.checkpointID})
	switch {
	case errors.Is(err, checkpoint.ErrNotFound) && cfg.checkpointID == "":
		// As in LangGraph, a node update is one step after what it updates:
		// on an empty thread (nothing at step -1) it is step 0. An input is
		// the exception (updateStep): it is the thread's step -1, as a run's.
		tp = nil
		rt.step = 0
	case err != nil:
		return checkpoint.Ref{}, fmt.Errorf("thread %q: %w", cfg.thread, err)
	default:
		if err := rt.load(tp); err != nil {
			return checkpoint.Ref{}, err
		}
		if err := rt.noteHead(); err != nil {
			return checkpoint.Ref{}, err
		}
	}
	for si, ups := range steps {
		if len(ups) == 0 {
			return checkpoint.Ref{}, fmt.Errorf("UpdateState: super-step %d has no updates", si)
		}
		if err := rt.updateStep(ctx, tp, ups); err != nil {
			return checkpoint.Ref{}, err
		}
		tp = nil
	}
	return rt.cpRef, nil
}

func (rt *runtime) updateStep(ctx context.Context, tp *checkpoint.Tuple, ups []StateUpdate) error {
	g := rt.g
	special := func(n string) bool { return n == AsInput || n == AsCopy || n == AsEnd }
	if len(ups) > 1 {
		for _, u := range ups {
			if u.AsNode == "" {
				return &InvalidUpdateError{Msg: "UpdateState: several updates in one super-step each need an as-node"}
			}
			if special(u.AsNode) {
				return &InvalidUpdateError{Msg: fmt.Sprintf("UpdateState: %q cannot be combined with other updates", u.AsNode)}
			}
		}
	}
	u := ups[0]
	switch u.AsNode {
	case AsCopy:
		if tp == nil {
			return errors.New("UpdateState: nothing to copy, the thread has no checkpoint")
		}
		if tp.Parent != nil {
			rt.cpRef = *tp.Parent
		} else {
			rt.cpRef = checkpoint.Ref{ThreadID: rt.cfg.thread, NS: rt.ns}
		}
		rt.step = tp.Metadata.Step
		copy(rt.savedVer, make([]int64, len(rt.savedVer))) // store every value: a sibling may not share blobs with its parent's versions
		return rt.put(checkpoint.SourceFork, nil)
	case AsInput:
		vals, err := rt.inputValues(u.Values)
		if err != nil {
			return err
		}
		tasks, err := rt.prepare()
		if err != nil {
			return err
		}
		tasks = append(tasks, &task{name: "__input__", writes: []cwrite{{g.startCh, vals}}})
		rt.seen.ensure("__input__")
		if _, err := rt.apply(tasks); err != nil {
			return err
		}
		if rt.cpRef.CheckpointID == "" {
			// The thread's first checkpoint is an input: step -1, as
			// LangGraph's bulk_update_state and a run's input. Step 0
			// would put every later checkpoint one step too high.
			rt.step = -1
		}
		return rt.put(checkpoint.SourceInput, nil)
	case AsEnd:
		if len(u.Values) > 0 {
			return &InvalidUpdateError{Msg: "UpdateState: as-node END takes no values"}
		}
		tasks, err := rt.prepare()
		if err != nil {
			return err
		}
		if tp != nil {
			byID := map[string]*task{}
			for _, t := range tasks {
				byID[t.id] = t
			}
			for _, pw := range tp.PendingWrites {
				t, ok := byID[pw.TaskID]
				if !ok || pw.Channel == checkpoint.Error || pw.Channel == checkpoint.Interrupt || pw.Channel == checkpoint.Resume || pw.Channel == checkpoint.NoWrites || pw.Channel == checkpoint.Calls {
					continue
				}
				w, err := rt.decodePending(pw)
				if err != nil {
					return err
				}
				t.writes = append(t.writes, w)
			}
		}
		if _, err := rt.apply(tasks); err != nil {
			return err
		}
		return rt.put(checkpoint.SourceUpdate, nil)
	}
	var tasks []*task
	for _, u := range ups {
		as := u.AsNode
		if as == "" {
			var err error
			if as, err = rt.inferAsNode(); err != nil {
				return err
			}
		}
		ni, ok := g.nodeIdx[as]
		if !ok {
			return &InvalidUpdateError{Msg: fmt.Sprintf("UpdateState: as-node %q is not a node of graph %q", as, g.name)}
		}
		n := g.nodes[ni]
		t := &task{node: n, name: as, path: "pull:" + as, bump: true}
		tc := &taskCtx{rt: rt, t: t, step: rt.step}
		if err := rt.output(contextWith(ctx, tc), t, u.Values); err != nil {
			return fmt.Errorf("UpdateState as %q: %w", as, err)
		}
		tasks = append(tasks, t)
	}
	if !rt.js() {
		if err := rt.storeUpdateWrites(tasks); err != nil {
			return fmt.Errorf("UpdateState: %w", err)
		}
	}
	if _, err := rt.apply(tasks); err != nil {
		return fmt.Errorf("UpdateState: %w", err)
	}
	names := make([]string, 0, len(tasks))
	for _, t := range tasks {
		names = append(names, t.name)
	}
	return rt.put(checkpoint.SourceUpdate, names)
}

// storeUpdateWrites saves the writes of updates (tasks) as the writes of
// the tasks due at the checkpoint they are applied to, as Python's
// update_state does (B7): the update is what those nodes did, so that
// checkpoint's snapshot shows their result. Each update takes the next due
// task of its node; one whose node is not due stores nothing. Sends are
// not stored: Python keeps them for the new checkpoint only. Nor is
// anything stored on a checkpoint that is not the thread's newest (an
// update that forks the past): the stores shared between processes refuse
// task writes there as a late writer's (checkpoint.ErrConflict).
func (rt *runtime) storeUpdateWrites(updates []*task) error {
	if rt.cpRef.CheckpointID == "" {
		return nil
	}
	latest, err := rt.saver.Get(rt.ctx, checkpoint.Ref{ThreadID: rt.cfg.thread, NS: rt.ns})
	if err != nil {
		return err
	}
	if latest.Ref.CheckpointID != rt.cpID {
		return nil
	}
	due, err := rt.prepare()
	if err != nil {
		return err
	}
	taken := make([]bool, len(due))
	for _, u := range updates {
		i := 0
		for i < len(due) && (taken[i] || due[i].name != u.name) {
			i++
		}
		if i == len(due) {
			continue
		}
		taken[i] = true
		var ws []cwrite
		for _, w := range u.writes {
			if w.ch != rt.g.tasksCh {
				ws = append(ws, w)
			}
		}
		if len(ws) == 0 {
			continue
		}
		enc, err := rt.encodeWrites(ws)
		if err != nil {
			return err
		}
		if err := rt.saver.PutWrites(rt.ctx, rt.cpRef, enc, due[i].id, due[i].path); err != nil {
			return err
		}
	}
	return nil
}

// inferAsNode picks the node an update is attributed to, as LangGraph does.
func (rt *runtime) inferAsNode() (string, error) {
	g := rt.g
	if names := g.Nodes(); len(names) == 1 {
		return names[0], nil
	}
	best, bestV, tie := "", int64(0), false
	for _, n := range g.nodes {
		s := rt.seen.peek(n.idx)
		if s == nil {
			continue
		}
		var m int64
		for _, v := range s {
			m = max(m, v)
		}
		switch {
		case m > bestV:
			best, bestV, tie = n.name, m, false
		case m == bestV && m > 0:
			tie = true
		}
	}
	if best == "" {
		return START, nil
	}
	if tie {
		return "", &InvalidUpdateError{Msg: "Ambiguous update, specify as_node"}
	}
	return best, nil
}
