package engine

// This file reads a thread's state: snapshots at a checkpoint, the history,
// and the subgraph states and planned tasks a snapshot describes.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
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
	// Input is, for a checkpoint an input made (Metadata.Source "input"),
	// that input: what a replay of the thread starts from. nil otherwise.
	Input Values
}

// OpenInterrupts returns the interrupts still waiting for an answer: those
// of tasks that have not finished. Interrupts lists every interrupt the
// checkpoint's tasks stored, as LangGraph's snapshot does, including one a
// task asked before it was answered and ran to its end (a run stopped
// before that step's checkpoint).
func (s *Snapshot) OpenInterrupts() []PendingInterrupt {
	var out []PendingInterrupt
	for _, t := range s.Tasks {
		if !t.Finished {
			out = append(out, t.Interrupts...)
		}
	}
	return out
}

// Done reports whether the thread has nothing left to run at this
// checkpoint: no task is planned at all. Next alone cannot say it: a task
// whose writes are stored (it finished before a crash, or is waiting with a
// stored answer) is not next, yet the thread is not done until its step is
// applied and what follows has run.
func (s *Snapshot) Done() bool { return len(s.Tasks) == 0 }

// TaskState is a planned task of a Snapshot.
type TaskState struct {
	ID         string
	Name       string
	Path       string
	Error      string             // the stored error of a failed attempt
	ErrorKind  ErrorKind          // what kind of failure Error is
	Interrupts []PendingInterrupt // questions the task is waiting on
	Result     []Write            // writes of a task that finished
	Input      any                // the Send argument of a push task
	// NS is the checkpoint namespace of a subgraph task's own checkpoints,
	// "" for other tasks.
	NS string
	// Finished is true when the task's writes are stored: it ran to its end
	// (they apply when its step completes). Its interrupts, if any, were
	// asked before and answered (see Snapshot.OpenInterrupts).
	Finished bool
	// State is a subgraph task's own latest snapshot (with its subgraphs'
	// states in turn) when the snapshot was asked for with WithSubgraphs
	// and the subgraph has started; nil otherwise.
	State *Snapshot
	// Calls are the model and tool calls the task recorded with RecordCall,
	// in order, across its attempts; CallsDropped counts those left out
	// to keep the record bounded.
	Calls        []CallRecord
	CallsDropped int
}

// WithValueLimit makes GetState and History leave out what a checkpoint
// stores larger than n bytes instead of decoding it: a state value shows in
// Snapshot.Values as Omitted, and so does a finished task's result
// (TaskState.Result), a Send argument (TaskState.Input) and an interrupt's
// payload (its Value); an input left out leaves Snapshot.Input nil. What
// runs next, which tasks finished, their errors and the interrupts' ids are
// the same as without it: planning needs the channels' versions and the
// Send packets' nodes, not the values (a 12 MB topic otherwise took as long
// to decode as to print, at each checkpoint carrying it). Such a snapshot
// shows a thread, it is not one to continue from. At the latest checkpoint
// GetState still decodes the writes of tasks that finished, to apply them.
// 0 (or less) leaves nothing out; runs ignore it.
func WithValueLimit(n int) RunOption { return func(c *runConfig) { c.valueLimit = n } }

// Omitted stands for a value WithValueLimit left out: Bytes is its stored
// size.
type Omitted struct{ Bytes int }

// GetState returns the thread's state at its latest checkpoint, or at the one
// named with WithCheckpoint. At the latest checkpoint, the writes of tasks
// that already finished in an unfinished step are included in Values.
func (gr *Graph) GetState(ctx context.Context, opts ...RunOption) (*Snapshot, error) {
	if gr.view != nil {
		return gr.viewState(ctx, newRunConfig(opts))
	}
	cfg := newRunConfig(opts)
	if gr.saver == nil {
		return nil, errors.New("GetState needs a graph compiled with engine.WithSaver")
	}
	if cfg.thread == "" {
		return nil, errors.New("GetState needs a thread: engine.WithThread")
	}
	g, err := gr.inNamespace(cfg.ns)
	if err != nil {
		return nil, err
	}
	tp, err := gr.saver.Get(ctx, checkpoint.Ref{ThreadID: cfg.thread, NS: cfg.ns, CheckpointID: cfg.checkpointID})
	if err != nil {
		return nil, fmt.Errorf("thread %q: %w", cfg.thread, err)
	}
	return g.snapshotOf(ctx, gr.saver, cfg, tp, cfg.checkpointID == "", nil)
}

// inNamespace returns the graph that runs in checkpoint namespace ns: gr
// itself for "", else the subgraph its path of "node:task" segments names.
func (gr *Graph) inNamespace(ns string) (*Graph, error) {
	g := gr
	if ns == "" {
		return g, nil
	}
	for _, seg := range strings.Split(ns, "|") {
		node, _, ok := strings.Cut(seg, ":")
		i, known := g.nodeIdx[node]
		if !ok || !known || g.nodes[i].sub == nil {
			return nil, fmt.Errorf("namespace %q: %q is not a subgraph node of graph %q", ns, node, g.name)
		}
		g = g.nodes[i].sub
	}
	return g, nil
}

// History lists the thread's checkpoints as snapshots, newest first. opts
// selects like Saver.List: Filter, Before and Limit apply; ThreadID is set
// from WithThread. It holds the whole list in memory; HistorySeq streams it.
func (gr *Graph) History(ctx context.Context, sel checkpoint.ListOptions, opts ...RunOption) ([]*Snapshot, error) {
	var out []*Snapshot
	for s, err := range gr.HistorySeq(ctx, sel, opts...) {
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// HistorySeq yields the thread's checkpoints as snapshots, newest first, as
// they are read, so a long thread's first page shows at once and memory
// stays flat; stop ranging to stop reading. An error ends the sequence.
// Selection is as for History.
func (gr *Graph) HistorySeq(ctx context.Context, sel checkpoint.ListOptions, opts ...RunOption) iter.Seq2[*Snapshot, error] {
	return func(yield func(*Snapshot, error) bool) {
		cfg := newRunConfig(opts)
		if gr.saver == nil {
			yield(nil, errors.New("History needs a graph compiled with engine.WithSaver"))
			return
		}
		if cfg.thread == "" {
			yield(nil, errors.New("History needs a thread: engine.WithThread"))
			return
		}
		if gr.view != nil {
			for snap, err := range gr.viewHistory(ctx, sel, cfg) {
				if !yield(snap, err) || err != nil {
					return
				}
			}
			return
		}
		g, err := gr.inNamespace(cfg.ns)
		if err != nil {
			yield(nil, err)
			return
		}
		sel.ThreadID = cfg.thread
		ns := cfg.ns
		sel.NS = &ns
		// Read from the saver on one goroutine while snapshots are rebuilt
		// on this one: the two halves of the work take about as long each.
		// Tuples cross in batches: one hand-over per tuple cost a goroutine
		// wake-up each whenever the rebuilding side caught up. The first
		// batch is small, so the first snapshots come quickly.
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
			batch := 8
			send := func() bool {
				select {
				case items <- buf:
					buf, batch = nil, 64
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
		var rt *runtime // one runtime serves every snapshot in turn
		defer func() {
			if rt != nil {
				rt.releaseBufs()
			}
		}()
		for b := range items {
			for _, it := range b {
				if it.err != nil {
					yield(nil, fmt.Errorf("history of thread %q: %w", cfg.thread, it.err))
					return
				}
				s, err := g.snapshotOf(ctx, gr.saver, cfg, it.tp, false, &rt)
				if err != nil {
					yield(nil, err)
					return
				}
				if !yield(s, nil) {
					return
				}
			}
		}
		if err := ctx.Err(); err != nil {
			yield(nil, err)
		}
	}
}

// snapshotOf rebuilds the channels of a checkpoint read from saver and plans
// its next step to say what would run. With reuse non-nil it rebuilds in
// *reuse's runtime when there is one (see renewRuntime) and leaves its
// runtime there.
func (gr *Graph) snapshotOf(ctx context.Context, saver checkpoint.Saver, cfg *runConfig, tp *checkpoint.Tuple, applyPending bool, reuse **runtime) (*Snapshot, error) {
	var rt *runtime
	var err error
	if reuse != nil && *reuse != nil {
		rt = gr.renewRuntime(ctx, cfg, *reuse)
	} else if rt, err = gr.newRuntime(ctx, cfg, nil); err != nil {
		return nil, err
	}
	if reuse != nil {
		*reuse = rt
	} else {
		defer rt.releaseBufs()
	}
	loaded, left := gr.leaveOut(tp, cfg.valueLimit)
	if err := rt.load(loaded); err != nil {
		return nil, err
	}
	if err := rt.loadLeftOut(tp, left, cfg.valueLimit); err != nil {
		return nil, err
	}
	rt.saver = saver // task ids need it even inside GetState
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
	// As LangGraph's get_state, the tasks are those the checkpoint plans; a
	// stored Command's writes (update, goto) change the values shown, not
	// the tasks: they take effect when a run resumes from here.
	tasks, err := rt.prepare()
	if err != nil {
		return nil, err
	}
	if err := rt.applyNull(null); err != nil {
		return nil, err
	}
	snap := &Snapshot{Ref: tp.Ref, Parent: tp.Parent, Metadata: tp.Metadata, CreatedAt: tp.Checkpoint.TS,
		Versions: tp.Checkpoint.ChannelVersions, Updated: tp.Checkpoint.UpdatedChannels}
	if tp.Metadata.Source == checkpoint.SourceInput {
		if v, ok := rt.ch[gr.startCh].get(); ok {
			snap.Input, _ = v.(Values)
		}
	}
	doneSet, err := rt.describeTasksUpTo(snap, tasks, tp.PendingWrites, applyPending, cfg.valueLimit)
	if err != nil {
		return nil, err
	}
	var done []*task
	for i, t := range tasks {
		if doneSet[i] && applyPending {
			done = append(done, t)
		} else {
			snap.Next = append(snap.Next, t.name)
		}
	}
	if applyPending && len(done) > 0 {
		if _, err := rt.apply(done); err != nil {
			return nil, err
		}
	}
	snap.Values = rt.values()
	for name, n := range left {
		if i := gr.chanIdx[name]; i < gr.nState {
			snap.Values[name] = Omitted{n}
		}
	}
	if cfg.subgraphs {
		for i, t := range tasks {
			if t.node.sub == nil {
				continue
			}
			st, err := t.node.sub.subgraphState(ctx, saver, cfg, snap.Tasks[i].NS)
			if err != nil {
				return nil, fmt.Errorf("task %s (%s): %w", t.id, t.name, err)
			}
			snap.Tasks[i].State = st
		}
	}
	return snap, nil
}

// subgraphState returns the latest snapshot of the subgraph run in
// namespace ns, with its own subgraphs' states, or nil when that run has
// not stored a checkpoint (it has not started).
func (gr *Graph) subgraphState(ctx context.Context, saver checkpoint.Saver, parent *runConfig, ns string) (*Snapshot, error) {
	tp, err := saver.Get(ctx, checkpoint.Ref{ThreadID: parent.thread, NS: ns})
	if errors.Is(err, checkpoint.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	cfg := &runConfig{thread: parent.thread, ns: ns, subgraphs: true, limit: parent.limit, valueLimit: parent.valueLimit}
	return gr.snapshotOf(ctx, saver, cfg, tp, true, nil)
}

// describeTasks fills snap.Tasks with the planned tasks and what the
// checkpoint's pending writes say of them: results, errors, interrupts
// (also gathered in snap.Interrupts). It reports, by index in tasks, those
// that have finished writes (a stored answer counts, as in LangGraph: a
// task that got one and asked again is waiting, not next), valid until the
// runtime describes tasks again; with collect their decoded writes are
// added to the tasks, for applying.
func (rt *runtime) describeTasks(snap *Snapshot, tasks []*task, pending []checkpoint.PendingWrite, collect bool) ([]bool, error) {
	return rt.describeTasksUpTo(snap, tasks, pending, collect, 0)
}

// describeTasksUpTo is describeTasks leaving out (see WithValueLimit) the
// results and interrupt payloads stored larger than limit, unless they are
// collected; a limit of 0 leaves nothing out.
func (rt *runtime) describeTasksUpTo(snap *Snapshot, tasks []*task, pending []checkpoint.PendingWrite, collect bool, limit int) ([]bool, error) {
	base := len(snap.Tasks)
	for _, t := range tasks {
		ts := TaskState{ID: t.id, Name: t.name, Path: t.path, Input: t.arg}
		if t.node.sub != nil {
			ts.NS = t.ns(rt)
		}
		snap.Tasks = append(snap.Tasks, ts)
	}
	// Tasks are found by id with a map only when there are many: History
	// describes a thousand checkpoints of a task or two each.
	var byID map[string]int
	if len(tasks) > 8 {
		byID = make(map[string]int, len(tasks))
		for i, t := range tasks {
			byID[t.id] = i
		}
	}
	find := func(id string) (int, bool) {
		if byID != nil {
			i, ok := byID[id]
			return i, ok
		}
		for i, t := range tasks {
			if t.id == id {
				return i, true
			}
		}
		return 0, false
	}
	doneSet := append(rt.doneBuf[:0], make([]bool, len(tasks))...)
	rt.doneBuf = doneSet
	for _, pw := range pending {
		i, ok := find(pw.TaskID)
		if !ok {
			continue
		}
		ts := &snap.Tasks[base+i]
		switch pw.Channel {
		case checkpoint.Error:
			e, err := decodeTaskError(pw.Value)
			if err != nil {
				return nil, fmt.Errorf("checkpoint %s: stored error of task %s: %w", rt.cpID, pw.TaskID, err)
			}
			ts.Error, ts.ErrorKind = e.Message, e.Kind
		case checkpoint.Interrupt:
			var ints []PendingInterrupt
			var err error
			if limit > 0 && len(pw.Value) > limit {
				ints, err = decodeInterruptsUpTo(pw.Value, limit)
			} else {
				ints, err = decodeInterrupts(pw.Value)
			}
			if err != nil {
				return nil, fmt.Errorf("checkpoint %s: stored interrupt of task %s: %w", rt.cpID, pw.TaskID, err)
			}
			ts.Interrupts = append(ts.Interrupts, ints...)
			snap.Interrupts = append(snap.Interrupts, ints...)
		case checkpoint.Calls:
			var err error
			if ts.Calls, ts.CallsDropped, err = decodeCalls(pw.Value); err != nil {
				return nil, fmt.Errorf("checkpoint %s: stored calls of task %s: %w", rt.cpID, pw.TaskID, err)
			}
		case checkpoint.Scheduled:
		case checkpoint.Resume:
			doneSet[i] = true
		case checkpoint.NoWrites:
			// Finished: it wrote, or had nothing to write.
			doneSet[i], ts.Finished = true, true
		default:
			if limit > 0 && !collect && len(pw.Value) > limit {
				// Finished all the same; what it wrote is left out.
				ch, ok := rt.g.chanIdx[pw.Channel]
				if !ok {
					return nil, fmt.Errorf("checkpoint %s: pending write of task %s to channel %q, which graph %q does not declare", rt.cpID, pw.TaskID, pw.Channel, rt.g.name)
				}
				doneSet[i], ts.Finished = true, true
				if ch < rt.g.nState {
					ts.Result = append(ts.Result, Write{pw.Channel, Omitted{len(pw.Value)}})
				}
				continue
			}
			w, err := rt.decodePending(pw)
			if err != nil {
				return nil, err
			}
			doneSet[i], ts.Finished = true, true
			if w.ch < rt.g.nState {
				ts.Result = append(ts.Result, Write{pw.Channel, w.v})
			}
			if collect {
				tasks[i].writes = append(tasks[i].writes, w)
			}
		}
	}
	return doneSet, nil
}

// snapshot describes the runtime's current checkpoint, before its tasks
// run, for the checkpoints stream: what GetState would return for it.
func (rt *runtime) snapshot(tasks []*task) (*Snapshot, error) {
	s := &Snapshot{Values: rt.values(), Ref: rt.cpRef, Metadata: rt.cpMeta, CreatedAt: rt.cpTime,
		Versions: rt.versionMap()}
	if rt.cpParent.CheckpointID != "" {
		p := rt.cpParent
		s.Parent = &p
	}
	if _, err := rt.describeTasks(s, tasks, rt.pending, false); err != nil {
		return nil, err
	}
	for _, t := range s.Tasks {
		s.Next = append(s.Next, t.Name)
	}
	return s, nil
}

// versionMap returns the channel versions by name (internal channels
// included), as a checkpoint stores them.
func (rt *runtime) versionMap() map[string]int64 {
	out := make(map[string]int64, len(rt.ver))
	for i, v := range rt.ver {
		if v != 0 {
			out[rt.g.specs[i].name] = v
		}
	}
	return out
}

// leaveOut returns tp without the channel values WithValueLimit leaves out
// (a copy when there are any), and their stored sizes by channel: state
// values, the input and the Send packets; loadLeftOut stands in for them.
// Other internal channels (triggers, join barriers) hold a few bytes and
// are decoded as usual.
func (gr *Graph) leaveOut(tp *checkpoint.Tuple, limit int) (*checkpoint.Tuple, map[string]int) {
	if limit <= 0 {
		return tp, nil
	}
	var left map[string]int
	for name, b := range tp.Checkpoint.ChannelValues {
		i, ok := gr.chanIdx[name]
		if len(b) <= limit || !ok || i >= gr.nState && i != gr.startCh && i != gr.tasksCh {
			continue // an unknown channel is rt.load's to refuse
		}
		if left == nil {
			left = map[string]int{}
		}
		left[name] = len(b)
	}
	if left == nil {
		return tp, nil
	}
	cp := *tp
	cp.Checkpoint.ChannelValues = make(map[string][]byte, len(tp.Checkpoint.ChannelValues)-len(left))
	for name, b := range tp.Checkpoint.ChannelValues {
		if _, out := left[name]; !out {
			cp.Checkpoint.ChannelValues[name] = b
		}
	}
	return &cp, left
}

// loadLeftOut fills the channels leaveOut left out of tp enough to plan:
// the input channel holds an Omitted (it triggers the start task), the
// Send packets hold their nodes with large arguments Omitted; state
// channels stay empty (Values shows them as Omitted).
func (rt *runtime) loadLeftOut(tp *checkpoint.Tuple, left map[string]int, limit int) error {
	g := rt.g
	for name, n := range left {
		i := g.chanIdx[name]
		var v any
		switch i {
		case g.startCh:
			v = Omitted{n}
		case g.tasksCh:
			sends, err := decodeSendsUpTo(sendsCodec{g}, tp.Checkpoint.ChannelValues[name], limit)
			if err != nil {
				return fmt.Errorf("checkpoint %s, channel %q: cannot decode stored value: %w", tp.Checkpoint.ID, name, err)
			}
			v = sends
		default:
			continue
		}
		if _, err := rt.ch[i].update([]any{v}); err != nil {
			return fmt.Errorf("checkpoint %s, channel %q: %w", tp.Checkpoint.ID, name, err)
		}
	}
	return nil
}

// decodeSendsUpTo decodes stored Send packets (a list, or one packet) as
// sendsCodec does, each argument stored larger than limit left out
// (Omitted) without reading it.
func decodeSendsUpTo(c sendsCodec, b []byte, limit int) ([]Send, error) {
	var out []Send
	err := eachElement(b, func(elem []byte) error {
		var f sendForm
		err := eachMember(elem, func(key string, raw []byte) error {
			switch key {
			case "node":
				return json.Unmarshal(raw, &f.Node)
			case "values":
				f.Values = raw
			case "arg":
				f.Arg = raw
			}
			return nil
		})
		if err != nil {
			return err
		}
		if raw := firstNonNil(f.Values, f.Arg); len(raw) > limit {
			out = append(out, Send{Node: f.Node, Arg: Omitted{len(raw)}})
			return nil
		}
		s, err := c.decodeOne(f)
		out = append(out, s)
		return err
	})
	return out, err
}

// firstNonNil returns the first of a and b that is not nil.
func firstNonNil(a, b []byte) []byte {
	if a != nil {
		return a
	}
	return b
}

// decodeInterruptsUpTo decodes stored interrupts as decodeInterrupts does,
// each payload stored larger than limit left out (Omitted) without
// reading it.
func decodeInterruptsUpTo(b []byte, limit int) ([]PendingInterrupt, error) {
	var out []PendingInterrupt
	err := eachElement(b, func(elem []byte) error {
		var in PendingInterrupt
		var payload []byte
		err := eachMember(elem, func(key string, raw []byte) error {
			switch key {
			case "id":
				return json.Unmarshal(raw, &in.ID)
			case "node":
				return json.Unmarshal(raw, &in.Node)
			case "task_id":
				return json.Unmarshal(raw, &in.TaskID)
			case "ns":
				return json.Unmarshal(raw, &in.NS)
			case "value":
				payload = raw
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(payload) > limit {
			in.Value = Omitted{len(payload)}
		} else if in.Value, err = decodeLoose(payload); err != nil {
			return err
		}
		out = append(out, in)
		return nil
	})
	return out, err
}

// The functions below find the parts of a stored JSON document without
// decoding what they skip: a value left out is stepped over at the speed
// of a byte search (encoding/json scans a 12 MB string at tens of MB/s).
// They check the document's structure, not the contents they skip.

// eachElement calls fn with each element of the JSON array b, or with b
// itself when it is an object.
func eachElement(b []byte, fn func(elem []byte) error) error {
	i := skipSpace(b, 0)
	if i < len(b) && b[i] == '{' {
		return fn(b)
	}
	if i >= len(b) || b[i] != '[' {
		return errors.New("not a JSON array or object")
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return endOfJSON(b, i+1)
	}
	for {
		end, err := skipJSON(b, i)
		if err != nil {
			return err
		}
		if err := fn(b[i:end]); err != nil {
			return err
		}
		i = skipSpace(b, end)
		if i >= len(b) {
			return errors.New("unexpected end of JSON array")
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case ']':
			return endOfJSON(b, i+1)
		default:
			return fmt.Errorf("invalid character %q after array element at offset %d", b[i], i)
		}
	}
}

// eachMember calls fn with each key of the JSON object b and its raw value.
func eachMember(b []byte, fn func(key string, raw []byte) error) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return errors.New("not a JSON object")
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return endOfJSON(b, i+1)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return fmt.Errorf("object key expected at offset %d", i)
		}
		end, err := skipString(b, i)
		if err != nil {
			return err
		}
		var key string
		if err := json.Unmarshal(b[i:end], &key); err != nil {
			return err
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return fmt.Errorf("':' expected after object key at offset %d", i)
		}
		i = skipSpace(b, i+1)
		if end, err = skipJSON(b, i); err != nil {
			return err
		}
		if err := fn(key, b[i:end]); err != nil {
			return err
		}
		i = skipSpace(b, end)
		if i >= len(b) {
			return errors.New("unexpected end of JSON object")
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return endOfJSON(b, i+1)
		default:
			return fmt.Errorf("invalid character %q after object member at offset %d", b[i], i)
		}
	}
}

// endOfJSON checks that only white space follows offset i.
func endOfJSON(b []byte, i int) error {
	if i = skipSpace(b, i); i < len(b) {
		return fmt.Errorf("invalid character %q after top-level value at offset %d", b[i], i)
	}
	return nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the offset just past the JSON string starting at
// b[i] (a '"').
func skipString(b []byte, i int) (int, error) {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, fmt.Errorf("unterminated JSON string at offset %d", i)
		}
		q := j + k
		n := 0 // backslashes before the quote: an odd number escapes it
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1, nil
		}
		j = q + 1
	}
}

// skipJSON returns the offset just past the JSON value starting at b[i],
// its brackets balanced and its strings closed.
func skipJSON(b []byte, i int) (int, error) {
	start := i
	var open []byte // the closing bracket each open one expects
	for {
		i = skipSpace(b, i)
		if i >= len(b) {
			return 0, fmt.Errorf("unexpected end of JSON value starting at offset %d", start)
		}
		switch c := b[i]; c {
		case '"':
			end, err := skipString(b, i)
			if err != nil {
				return 0, err
			}
			i = end
		case '{':
			open, i = append(open, '}'), i+1
			continue
		case '[':
			open, i = append(open, ']'), i+1
			continue
		case '}', ']':
			if len(open) == 0 || open[len(open)-1] != c {
				return 0, fmt.Errorf("unexpected %q at offset %d", c, i)
			}
			open, i = open[:len(open)-1], i+1
		case ',', ':':
			if len(open) == 0 {
				return 0, fmt.Errorf("unexpected %q at offset %d", c, i)
			}
			i++
			continue
		default: // a number or literal: up to the next delimiter
			j := i
			for j < len(b) && !isDelim(b[j]) {
				j++
			}
			if j == i {
				return 0, fmt.Errorf("invalid character %q at offset %d", c, i)
			}
			i = j
		}
		if len(open) == 0 {
			return i, nil
		}
	}
}

// isDelim reports whether c ends a JSON number or literal.
func isDelim(c byte) bool {
	switch c {
	case ',', ':', '[', ']', '{', '}', '"', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}
