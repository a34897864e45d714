package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/weftstudio/weft/checkpoint"
)

// Snapshot is the state of a thread at one checkpoint (LangGraph's
// StateSnapshot).
type Snapshot struct {
	Values    Values
	Next      []string // names of the tasks that would run next; empty when done
	Ref       checkpoint.Ref
	Parent    *checkpoint.Ref
	Metadata  checkpoint.Metadata
	CreatedAt time.Time
	// Tasks are the next step's tasks with what is known of them: results of
	// tasks that already finished, errors, interrupts.
	Tasks      []TaskState
	Interrupts []PendingInterrupt
	// Versions are the channel versions (internal channels included).
	Versions map[string]int64
	// Updated lists the channels the step that produced this checkpoint
	// updated; nil when unknown.
	Updated []string
}

// TaskState is a planned task of a Snapshot.
type TaskState struct {
	ID         string
	Name       string
	Path       string
	Error      string             // the stored error of a failed attempt
	Interrupts []PendingInterrupt // questions the task is waiting on
	Result     []Write            // writes of a task that finished
	Input      any                // the Send argument of a push task
	// NS is the checkpoint namespace of a subgraph task's own checkpoints,
	// "" for other tasks.
	NS string
}

// GetState returns the thread's state at its latest checkpoint, or at the one
// named with WithCheckpoint. At the latest checkpoint, the writes of tasks
// that already finished in an unfinished step are included in Values.
func (gr *Graph) GetState(ctx context.Context, opts ...RunOption) (*Snapshot, error) {
	cfg := newRunConfig(opts)
	if gr.saver == nil {
		return nil, errors.New("GetState needs a graph compiled with engine.WithSaver")
	}
	if cfg.thread == "" {
		return nil, errors.New("GetState needs a thread: engine.WithThread")
	}
	tp, err := gr.saver.Get(ctx, checkpoint.Ref{ThreadID: cfg.thread, NS: cfg.ns, CheckpointID: cfg.checkpointID})
	if err != nil {
		return nil, fmt.Errorf("thread %q: %w", cfg.thread, err)
	}
	return gr.snapshotOf(ctx, cfg, tp, cfg.checkpointID == "", nil)
}

// History lists the thread's checkpoints as snapshots, newest first. opts
// selects like Saver.List: Filter, Before and Limit apply; ThreadID is set
// from WithThread.
func (gr *Graph) History(ctx context.Context, sel checkpoint.ListOptions, opts ...RunOption) ([]*Snapshot, error) {
	cfg := newRunConfig(opts)
	if gr.saver == nil {
		return nil, errors.New("History needs a graph compiled with engine.WithSaver")
	}
	if cfg.thread == "" {
		return nil, errors.New("History needs a thread: engine.WithThread")
	}
	sel.ThreadID = cfg.thread
	ns := cfg.ns
	sel.NS = &ns
	// Read from the saver on one goroutine while snapshots are rebuilt on
	// this one: the two halves of the work take about as long each. Tuples
	// cross in batches: one hand-over per tuple cost a goroutine wake-up
	// each whenever the rebuilding side caught up.
	const batch = 64
	type item struct {
		tp  *checkpoint.Tuple
		err error
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	items := make(chan []item, 8)
	go func() {
		defer close(items)
		var buf []item
		send := func() bool {
			select {
			case items <- buf:
				buf = nil
				return true
			case <-ctx.Done():
				return false
			}
		}
		for tp, err := range gr.saver.List(ctx, sel) {
			buf = append(buf, item{tp, err})
			if err != nil {
				send()
				return
			}
			if len(buf) == batch && !send() {
				return
			}
		}
		if len(buf) > 0 {
			send()
		}
	}()
	defer func() {
		cancel()
		for range items {
		}
	}()
	var out []*Snapshot
	var rt *runtime // one runtime serves every snapshot in turn
	for b := range items {
		for _, it := range b {
			if it.err != nil {
				return nil, fmt.Errorf("history of thread %q: %w", cfg.thread, it.err)
			}
			s, err := gr.snapshotOf(ctx, cfg, it.tp, false, &rt)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// snapshotOf rebuilds the channels of a stored checkpoint and plans its next
// step to say what would run. With reuse non-nil it rebuilds in *reuse's
// runtime when there is one (see renewRuntime) and leaves its runtime there.
func (gr *Graph) snapshotOf(ctx context.Context, cfg *runConfig, tp *checkpoint.Tuple, applyPending bool, reuse **runtime) (*Snapshot, error) {
	var rt *runtime
	var err error
	if reuse != nil && *reuse != nil {
		rt = gr.renewRuntime(ctx, cfg, *reuse)
	} else if rt, err = gr.newRuntime(ctx, cfg, nil); err != nil {
		return nil, err
	}
	if reuse != nil {
		*reuse = rt
	}
	if err := rt.load(tp); err != nil {
		return nil, err
	}
	rt.saver = gr.saver // task ids need it even inside GetState
	var null []cwrite
	for _, pw := range tp.PendingWrites {
		if pw.TaskID == checkpoint.NullTaskID && pw.Channel != checkpoint.Resume {
			w, err := rt.decodePending(pw)
			if err != nil {
				return nil, err
			}
			null = append(null, w)
		}
	}
	if len(null) > 0 {
		if _, err := rt.apply([]*task{{name: "__null__", writes: null}}); err != nil {
			return nil, err
		}
	}
	tasks, err := rt.prepare()
	if err != nil {
		return nil, err
	}
	snap := &Snapshot{Ref: tp.Ref, Parent: tp.Parent, Metadata: tp.Metadata, CreatedAt: tp.Checkpoint.TS,
		Versions: tp.Checkpoint.ChannelVersions, Updated: tp.Checkpoint.UpdatedChannels}
	byID := map[string]int{}
	for _, t := range tasks {
		ts := TaskState{ID: t.id, Name: t.name, Path: t.path, Input: t.arg}
		if t.node.sub != nil {
			ts.NS = t.ns(rt)
		}
		byID[t.id] = len(snap.Tasks)
		snap.Tasks = append(snap.Tasks, ts)
	}
	var done []*task
	doneSet := map[string]bool{}
	for _, pw := range tp.PendingWrites {
		i, ok := byID[pw.TaskID]
		if !ok {
			continue
		}
		ts := &snap.Tasks[i]
		switch pw.Channel {
		case checkpoint.Error:
			var msg string
			_ = json.Unmarshal(pw.Value, &msg)
			ts.Error = msg
		case checkpoint.Interrupt:
			ints, err := decodeInterrupts(pw.Value)
			if err != nil {
				return nil, fmt.Errorf("checkpoint %s: stored interrupt of task %s: %w", tp.Ref.CheckpointID, pw.TaskID, err)
			}
			ts.Interrupts = append(ts.Interrupts, ints...)
			snap.Interrupts = append(snap.Interrupts, ints...)
		case checkpoint.Resume, checkpoint.Scheduled:
		case checkpoint.NoWrites:
			doneSet[pw.TaskID] = true
		default:
			w, err := rt.decodePending(pw)
			if err != nil {
				return nil, err
			}
			doneSet[pw.TaskID] = true
			if w.ch < gr.nState {
				ts.Result = append(ts.Result, Write{pw.Channel, w.v})
			}
			t := tasks[i]
			t.writes = append(t.writes, w)
		}
	}
	// A task whose writes are stored finished after its interrupt was
	// answered (a run stopped before the step's checkpoint): the interrupt
	// write it left is history, not a question.
	if len(doneSet) > 0 && len(snap.Interrupts) > 0 {
		snap.Interrupts = slices.DeleteFunc(snap.Interrupts, func(p PendingInterrupt) bool { return doneSet[p.TaskID] })
		for i := range snap.Tasks {
			if doneSet[snap.Tasks[i].ID] {
				snap.Tasks[i].Interrupts = nil
			}
		}
	}
	for _, t := range tasks {
		if doneSet[t.id] && applyPending {
			done = append(done, t)
		} else if !slices.Contains(snap.Next, t.name) {
			snap.Next = append(snap.Next, t.name)
		}
	}
	if applyPending && len(done) > 0 {
		if _, err := rt.apply(done); err != nil {
			return nil, err
		}
	}
	snap.Values = rt.values()
	return snap, nil
}

// snapshot describes the runtime's current checkpoint for the checkpoints
// stream.
func (rt *runtime) snapshot(tasks []*task) (*Snapshot, error) {
	s := &Snapshot{Values: rt.values(), Ref: rt.cpRef, Metadata: checkpoint.Metadata{Step: rt.step - 1}}
	for _, t := range tasks {
		s.Tasks = append(s.Tasks, TaskState{ID: t.id, Name: t.name, Path: t.path, Input: t.arg})
		if !slices.Contains(s.Next, t.name) {
			s.Next = append(s.Next, t.name)
		}
	}
	return s, nil
}

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
	cfg := newRunConfig(opts)
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
		tp = nil
		rt.step = -1
	case err != nil:
		return checkpoint.Ref{}, fmt.Errorf("thread %q: %w", cfg.thread, err)
	default:
		if err := rt.load(tp); err != nil {
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
				return errors.New("UpdateState: several updates in one super-step each need an as-node")
			}
			if special(u.AsNode) {
				return fmt.Errorf("UpdateState: %q cannot be combined with other updates", u.AsNode)
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
		rt.seen["__input__"] = rt.seenFor("__input__")
		if _, err := rt.apply(tasks); err != nil {
			return err
		}
		return rt.put(checkpoint.SourceInput, nil)
	case AsEnd:
		if len(u.Values) > 0 {
			return errors.New("UpdateState: as-node END takes no values")
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
				if !ok || pw.Channel == checkpoint.Error || pw.Channel == checkpoint.Interrupt || pw.Channel == checkpoint.Resume || pw.Channel == checkpoint.NoWrites {
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
			return fmt.Errorf("UpdateState: as-node %q is not a node of graph %q", as, g.name)
		}
		n := g.nodes[ni]
		t := &task{node: n, name: as, path: "pull:" + as, bump: true}
		tc := &taskCtx{rt: rt, t: t, step: rt.step}
		if err := rt.output(contextWith(ctx, tc), t, u.Values); err != nil {
			return fmt.Errorf("UpdateState as %q: %w", as, err)
		}
		tasks = append(tasks, t)
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

// inferAsNode picks the node an update is attributed to, as LangGraph does.
func (rt *runtime) inferAsNode() (string, error) {
	g := rt.g
	if names := g.Nodes(); len(names) == 1 {
		return names[0], nil
	}
	best, bestV, tie := "", int64(0), false
	for _, n := range g.nodes {
		s, ok := rt.seen[n.name]
		if !ok {
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

// SubmitAnswer stores cmd (answers to pending interrupts, and optionally an
// update and goto) on the thread's latest checkpoint without running
// anything: the next Invoke(nil, WithThread(…)) on that thread — in this
// process or in a worker process sharing the store — resumes with it. It is
// how a reviewer answers in the studio while workers do the running. It
// checks the answers against the pending interrupts like Invoke does.
func (gr *Graph) SubmitAnswer(ctx context.Context, cmd Command, opts ...RunOption) (checkpoint.Ref, error) {
	cfg := newRunConfig(opts)
	if gr.saver == nil {
		return checkpoint.Ref{}, errors.New("SubmitAnswer needs a graph compiled with engine.WithSaver")
	}
	rt, err := gr.newRuntime(ctx, cfg, nil)
	if err != nil {
		return checkpoint.Ref{}, err
	}
	tp, err := gr.saver.Get(ctx, checkpoint.Ref{ThreadID: cfg.thread, NS: cfg.ns})
	if err != nil {
		return checkpoint.Ref{}, fmt.Errorf("thread %q: %w", cfg.thread, err)
	}
	if err := rt.load(tp); err != nil {
		return checkpoint.Ref{}, err
	}
	if len(rt.pendingInterruptIDs()) == 0 && (cmd.Resume != nil || cmd.ResumeByID != nil) {
		return checkpoint.Ref{}, fmt.Errorf("thread %q has no pending interrupt to answer", cfg.thread)
	}
	_, ws, err := rt.commandWrites(cmd)
	if err != nil {
		return checkpoint.Ref{}, err
	}
	if err := gr.saver.PutWrites(ctx, tp.Ref, ws, checkpoint.NullTaskID, ""); err != nil {
		return checkpoint.Ref{}, fmt.Errorf("thread %q: saving the answer: %w", cfg.thread, err)
	}
	return tp.Ref, nil
}

// AnswerWaiting reports whether the thread's latest checkpoint holds an
// answer stored by SubmitAnswer that no run has used yet: work for a
// worker.
func (gr *Graph) AnswerWaiting(ctx context.Context, opts ...RunOption) (bool, error) {
	cfg := newRunConfig(opts)
	if gr.saver == nil {
		return false, nil
	}
	tp, err := gr.saver.Get(ctx, checkpoint.Ref{ThreadID: cfg.thread, NS: cfg.ns})
	if err != nil {
		return false, err
	}
	answered, interrupted := false, false
	for _, pw := range tp.PendingWrites {
		switch {
		case pw.TaskID == checkpoint.NullTaskID && pw.Channel == checkpoint.Resume:
			v, err := decodeLoose(pw.Value)
			if err != nil {
				return false, fmt.Errorf("thread %q: stored answer: %w", cfg.thread, err)
			}
			_, used := v.(answerUsed)
			answered = !used
		case pw.Channel == checkpoint.Interrupt:
			interrupted = true
		}
	}
	return answered && interrupted, nil
}
