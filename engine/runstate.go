package engine

// This file holds one run's state (runtime), its tasks, and loading a
// checkpoint into it; loop.go sequences the steps over it.

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weftstudio/weft/checkpoint"
)

// runtime is one run of a graph: its channels, versions and the bookkeeping
// of LangGraph's Pregel loop (semantics reference §2.5).
type runtime struct {
	g     *Graph
	ctx   context.Context
	cfg   *runConfig
	saver checkpoint.Saver
	em    *emitter
	ns    string

	chanState
	updated []int // channels updated by the last apply; nil when unknown
	step    int
	stop    int

	head        // the checkpoint the run stands on
	answers     // answers to interrupts the run was given or found stored
	forkEdit    // a what-if fork's edits, for the next checkpoint
	persistence // how the run stores checkpoints and writes
	// valuesShown is set once the run reports the state (a values event,
	// streamed or not): its result is that state, as LangGraph's invoke
	// returns its last values chunk.
	valuesShown bool

	extra   map[string]any    // metadata Extra of every checkpoint of the run
	parents map[string]string // metadata Parents of every checkpoint of the run
	// *stepBufs, not the buffers themselves: a pointer passes to and from
	// the graph's pool without copying them.
	*stepBufs
	// solo is set while a step's only task runs, on this goroutine and the
	// run's context; soloCtx is the context its attempts share (attemptCtx).
	solo    bool
	soloCtx *taskCtx
	callState
}

// head is the checkpoint a run stands on: the one its current step starts
// from. The zero head stands on nothing (a thread's first run).
type head struct {
	cpID     string         // id of the checkpoint the current step starts from
	cpRef    checkpoint.Ref // the latest checkpoint (CheckpointID "" before the first)
	cpSource checkpoint.Source
	cpMeta   checkpoint.Metadata // the latest checkpoint's, for the checkpoints stream
	cpParent checkpoint.Ref      // zero for the thread's first checkpoint
	cpTime   time.Time
	pending  []checkpoint.PendingWrite // pending writes of the loaded checkpoint
	replay   bool                      // replaying an explicit checkpoint: ignore its pending writes
	// headID is the thread's newest checkpoint when the run stands on an
	// older one (a replay, a fork, an update at a checkpoint): new ids are
	// minted after it too, so the run's checkpoints become the head even
	// when this host's clock is behind the one that wrote it.
	headID string
}

// answers are the answers to interrupts a run holds: one for whichever
// interrupt asks first (a plain resume, taken once) and answers by
// interrupt id. The zero answers hold none.
type answers struct {
	nullMu     sync.Mutex // tasks of one step take the plain resume concurrently
	nullResume any
	hasNull    bool
	resumeMap  map[string]any
	armed      bool // the run started with an answer (given or stored)
}

// takeNull takes the plain resume, if there is one left.
func (a *answers) takeNull() (any, bool) {
	a.nullMu.Lock()
	defer a.nullMu.Unlock()
	if !a.hasNull {
		return nil, false
	}
	v := a.nullResume
	a.nullResume, a.hasNull = nil, false
	return v, true
}

// forkEdit is what a what-if fork (ForkEdited, phase edits) adds to the
// next checkpoint's metadata. The zero forkEdit adds nothing.
type forkEdit struct {
	stepExtra map[string]any   // added to the next checkpoint's metadata only
	editDesc  []map[string]any // the edits, as stored under MetaEdits
}

// takeExtra returns the metadata to add to the checkpoint being stored,
// once.
func (f *forkEdit) takeExtra() map[string]any {
	m := f.stepExtra
	f.stepExtra = nil
	return m
}

// persistence is how a run stores what it writes: in the background, at
// the end (durability exit) or at once. The zero persistence stores at
// once and has stored nothing yet.
type persistence struct {
	savedVer  []int64   // versions at the last stored checkpoint
	bg        *bgWriter // background writer (durability async); nil otherwise
	exitMu    sync.Mutex
	exitWrite []func() error // durability exit: writes of the step in progress
	exitCP    *deferredPut   // durability exit: the checkpoint to store at the end
	scratch   *putScratch    // what put rebuilds for each checkpoint; nil before the first
	// holding is set during a step whose tasks' writes are stored when it
	// ends (releaseHeld, following LangGraphJS); held collects them.
	holding bool
	heldMu  sync.Mutex
	held    []heldWrites
}

// hold keeps a finished task's encoded writes for the end of its step;
// tasks of one step call it concurrently.
func (p *persistence) hold(t *task, ws []checkpoint.Write) {
	p.heldMu.Lock()
	p.held = append(p.held, heldWrites{t, ws})
	p.heldMu.Unlock()
}

// deferWrite keeps a task's write for the end of the run (durability
// exit); tasks of one step call it concurrently.
func (p *persistence) deferWrite(put func() error) {
	p.exitMu.Lock()
	p.exitWrite = append(p.exitWrite, put)
	p.exitMu.Unlock()
}

// stepBufs are buffers a runtime reuses from step to step (and History from
// snapshot to snapshot, see renewRuntime).
type stepBufs struct {
	pool    taskPool
	algo    algoBufs
	todo    []*task
	doneBuf []bool // describeTasks' result, reused
	startUp Update // the START node's update, built here (execBody)
	// spareSeen is a finished run's seenVersions, emptied, kept for the
	// next run's (see takeBufs).
	spareSeen seenVersions
}

// reset empties the buffers for a new run, keeping their memory; tasks
// handed out become free.
func (b *stepBufs) reset() {
	b.pool.recycle()
	b.pool.buf, b.todo = b.pool.buf[:0], b.todo[:0]
	b.algo.reset()
}

// takeBufs gives the run step buffers: those a finished run of the graph
// left in its pool (releaseBufs), or new ones.
func (rt *runtime) takeBufs() {
	b, _ := rt.g.bufs.Get().(*stepBufs)
	if b == nil {
		b = new(stepBufs)
	}
	rt.stepBufs = b
	if b.spareSeen.g != nil { // another copy of the graph (WithSaver) may have left it
		rt.seen, b.spareSeen = b.spareSeen, seenVersions{}
		rt.seen.g = rt.g
	}
}

// releaseBufs hands the step buffers to the graph's pool once the run is
// over: nothing reads its tasks any more. The tasks drop what they held,
// so a pooled buffer keeps no value of the run alive.
func (rt *runtime) releaseBufs() {
	b := rt.stepBufs
	b.reset()
	for _, t := range b.pool.free {
		clear(t.writes)
		*t = task{writes: t.writes[:0]}
	}
	clear(b.todo[:cap(b.todo)])
	clear(b.pool.buf[:cap(b.pool.buf)])
	rt.seen.reset()
	b.spareSeen, rt.seen = rt.seen, seenVersions{}
	rt.stepBufs = nil
	rt.g.bufs.Put(b)
}

type cwrite struct {
	ch int
	v  any
}

type task struct {
	node     *node
	name     string
	push     bool
	idx      int
	triggers []int
	arg      any
	id       string
	path     string
	writes   []cwrite
	restored bool   // writes came from pending writes or the node cache: do not run
	cached   bool   // writes came from the node cache (restored is set too)
	cacheKey string // the node cache's key of its input; "" when not cached
	ran      bool   // the node ran in this step (err says how it ended)
	err      error
	resume   []any
	// resumeNew is set when the task consumed a new answer, so its resume
	// list must be stored.
	resumeNew bool
	// bump forces a step bump in apply even without triggers (manual
	// updates), so ephemeral triggers of pending tasks are cleared.
	bump  bool
	calls callLog // model and tool calls recorded by the task (RecordCall)
	// callResult is a call task's result (Call); nil for a node's task.
	callResult any
	// callFailed is set when a call task the node started failed:
	// LangGraph.js then stores the node's error as an abort (B11).
	callFailed atomic.Bool
}

// done reports whether the task finished with writes in the current step
// (it ran, or its writes were restored): it no longer counts as next.
func (t *task) done() bool {
	return (t.restored || t.ran) && t.err == nil
}

func (t *task) ns(rt *runtime) string {
	if rt.ns == "" {
		return t.name + ":" + t.id
	}
	return rt.ns + "|" + t.name + ":" + t.id
}

func (t *task) interruptID() string { return hashID("interrupt", t.path, t.id) }

func (gr *Graph) newRuntime(ctx context.Context, cfg *runConfig, em *emitter) (*runtime, error) {
	rt := &runtime{g: gr, ctx: ctx, cfg: cfg, saver: gr.saver, em: em, ns: cfg.ns}
	if cfg.parentRT != nil {
		rt.saver = cfg.parentRT.saver
		rt.resumeMap = cfg.parentRT.resumeMap
	}
	if rt.saver != nil && cfg.thread == "" {
		return nil, fmt.Errorf("graph %q has a saver: give the run a thread with engine.WithThread", gr.name)
	}
	n := len(gr.specs)
	rt.ch = make([]channel, n)
	newChannels(rt.ch, gr.specs, gr.triggers)
	vers := make([]int64, 2*n) // one allocation: snapshots build many runtimes
	rt.ver, rt.savedVer = vers[:n:n], vers[n:]
	rt.seen = newSeen(gr)
	rt.takeBufs()
	rt.cpRef = checkpoint.Ref{ThreadID: cfg.thread, NS: cfg.ns}
	return rt, nil
}

// renewRuntime resets rt, a runtime newRuntime made for gr and cfg's
// thread, for another checkpoint, keeping its buffers: History rebuilds a
// thousand snapshots in a row, and a fresh runtime each time was most of
// what that allocated. Nothing may hold on to rt's tasks or channels.
func (gr *Graph) renewRuntime(ctx context.Context, cfg *runConfig, rt *runtime) *runtime {
	bufs := rt.stepBufs
	bufs.reset()
	*rt = runtime{g: gr, ctx: ctx, cfg: cfg, saver: rt.saver, em: rt.em, ns: cfg.ns,
		chanState:   chanState{ch: rt.ch, ver: rt.ver, seen: rt.seen},
		persistence: persistence{savedVer: rt.savedVer}, stepBufs: bufs}
	for i, s := range gr.specs {
		if s.dflt != nil { // its channel starts holding a new default
			rt.ch[i] = s.newCh()
		} else {
			rt.ch[i].reset()
		}
	}
	clear(rt.ver)
	clear(rt.savedVer)
	rt.seen.reset()
	rt.cpRef = checkpoint.Ref{ThreadID: cfg.thread, NS: cfg.ns}
	return rt
}

// prepare plans the next super-step from the runtime's channels; the
// previous step's tasks are recycled.
func (rt *runtime) prepare() ([]*task, error) {
	rt.pool.recycle()
	return planTasks(rt.g, &rt.chanState, rt.updated, rt.stepIDs(), &rt.pool, &rt.algo)
}

// apply commits tasks' writes to the runtime's channels and remembers which
// channels changed, for the next prepare.
func (rt *runtime) apply(tasks []*task) ([]int, error) {
	updated, err := applyWrites(rt.g, &rt.chanState, tasks, &rt.algo)
	if err != nil {
		return nil, err
	}
	rt.updated = updated
	return updated, nil
}

// applyNull applies writes of the NULL task (a Command given as input) to
// the loaded checkpoint. They add to what was planned there: afterwards
// every node is a planning candidate again, not only those they trigger.
func (rt *runtime) applyNull(ws []cwrite) error {
	if len(ws) == 0 {
		return nil
	}
	if _, err := rt.apply([]*task{{name: "__null__", writes: ws}}); err != nil {
		return err
	}
	rt.updated = nil
	return nil
}

func (rt *runtime) stepIDs() stepIDs {
	return stepIDs{needed: rt.saver != nil || rt.em != nil, cpID: rt.cpID, ns: rt.ns, step: rt.step}
}

// load restores the checkpoint tuple into the runtime's channels.
func (rt *runtime) load(t *checkpoint.Tuple) error {
	g := rt.g
	cp := t.Checkpoint
	for name, v := range cp.ChannelVersions {
		i, ok := g.chanIdx[name]
		if !ok {
			return fmt.Errorf("checkpoint %s has channel %q, which graph %q does not declare", cp.ID, name, g.name)
		}
		rt.ver[i] = v
	}
	for name, b := range cp.ChannelValues {
		i, ok := g.chanIdx[name]
		if !ok {
			return fmt.Errorf("checkpoint %s has channel %q, which graph %q does not declare", cp.ID, name, g.name)
		}
		if err := rt.ch[i].load(b); err != nil {
			return fmt.Errorf("checkpoint %s, channel %q: cannot decode stored value: %w", cp.ID, name, err)
		}
	}
	for node, m := range cp.VersionsSeen {
		s := rt.seen.ensure(node)
		for name, v := range m {
			if i, ok := g.chanIdx[name]; ok {
				s[i] = v
			}
		}
	}
	copy(rt.savedVer, rt.ver)
	rt.cpID = cp.ID
	rt.cpRef = t.Ref
	rt.cpSource = t.Metadata.Source
	rt.cpMeta, rt.cpTime, rt.cpParent = t.Metadata, cp.TS, checkpoint.Ref{}
	if t.Parent != nil {
		rt.cpParent = *t.Parent
	}
	rt.step = t.Metadata.Step + 1
	rt.pending = t.PendingWrites
	// Which channels changed is not taken from the checkpoint: a manual
	// update may complete nothing new yet leave a node due (a join whose
	// barrier was already full), so after loading every node is a candidate,
	// as in LangGraph's _first.
	rt.updated = nil
	return nil
}

// continuesAddressedHead reports whether a run addressed to an explicit
// checkpoint continues it as a run without one would, pending writes and
// all, rather than replaying it. LangGraph.js does so when the checkpoint
// is the thread's newest and either the input answers an interrupt or the
// checkpoint is neither an update nor a fork (its loop's "resume at
// head"): a client that names the head it resumes, as a careful one does,
// resumes. Python replays any addressed checkpoint (B6).
func (rt *runtime) continuesAddressedHead(input Input, source checkpoint.Source) bool {
	if !rt.js() || rt.cfg.checkpointID == "" || rt.headID != rt.cfg.checkpointID {
		return false
	}
	if cmd, ok := input.(Command); ok && (cmd.Resume != nil || cmd.ResumeByID != nil) {
		return true
	}
	return source != checkpoint.SourceUpdate && source != checkpoint.SourceFork
}

// noteHead reads the id of the thread's newest checkpoint when the run was
// asked to stand on an explicit, maybe older one (see head.headID).
func (rt *runtime) noteHead() error {
	if rt.cfg.checkpointID == "" || rt.saver == nil {
		return nil
	}
	ns := rt.cfg.ns
	if hl, ok := rt.saver.(checkpoint.HeaderLister); ok {
		hs, err := hl.ListHeaders(rt.ctx, checkpoint.ListOptions{ThreadID: rt.cfg.thread, NS: &ns, Limit: 1})
		if err != nil {
			return fmt.Errorf("thread %q: reading its newest checkpoint: %w", rt.cfg.thread, err)
		}
		if len(hs) > 0 {
			rt.headID = hs[0].Ref.CheckpointID
		}
		return nil
	}
	tp, err := rt.saver.Get(rt.ctx, checkpoint.Ref{ThreadID: rt.cfg.thread, NS: ns})
	if err != nil {
		return fmt.Errorf("thread %q: reading its newest checkpoint: %w", rt.cfg.thread, err)
	}
	rt.headID = tp.Ref.CheckpointID
	return nil
}
