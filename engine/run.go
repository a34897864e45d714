package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/weftstudio/weft/checkpoint"
)

// Result is the outcome of a run that did not fail.
type Result struct {
	// Values is the state as the run last reported it (its last values
	// event, as LangGraph's invoke returns its last values chunk): the state
	// at its end when a step changed any state channel or the run resumed a
	// thread, and empty when it did neither; following LangGraphPython, also
	// the state when the run stopped at interrupts. For a run stopped by
	// interrupts, the writes of the tasks that finished in its last step
	// count as applied.
	Values Values
	// Interrupts are the questions waiting for an answer; empty unless the
	// run stopped at Interrupt calls. nil then, except for a run stopped at
	// a breakpoint following LangGraphJS, where it is empty but set (its
	// "__interrupt__": []).
	Interrupts []PendingInterrupt
	// Next names the tasks that would run next; empty when the graph is done.
	Next []string
	// Done is true when the graph reached its end (no tasks left).
	Done bool
	// Breakpoint is "before" or "after" when the run stopped at a static
	// breakpoint, "step" when it stopped at WithStepLimit or WithStopCheck,
	// "phase" when a phase hook paused it (WithPhases), and "" otherwise.
	Breakpoint string
	// After names the nodes whose step the run stopped after (Breakpoint
	// "after"), sorted; nil for any other stop. Next says what runs next.
	After []string
	// Ref is the latest checkpoint of the run; zero without a saver.
	Ref checkpoint.Ref
	// Steps counts the super-steps this run executed.
	Steps int
	// Dropped counts observer events lost because the observer was slow.
	Dropped int
	// changed holds, for a subgraph run, the state channels its own nodes
	// wrote, with their final values: what the parent task writes back.
	changed []Write
}

// Invoke runs the graph to its end, an interrupt, a breakpoint or a step
// limit, and returns the state. input is Values (or an Update) to start a
// run, a Command to answer interrupts or steer, or nil to continue a thread.
func (gr *Graph) Invoke(ctx context.Context, input Input, opts ...RunOption) (*Result, error) {
	return gr.invoke(ctx, input, 0, nil, opts)
}

func (gr *Graph) invoke(ctx context.Context, input Input, modes StreamMode, sink func(Event), opts []RunOption) (*Result, error) {
	cfg := newWriteConfig(opts)
	var q *observerQueue
	if cfg.observer != nil {
		q = newObserverQueue(cfg.observerBuf, cfg.observer)
		obsModes := cfg.modes
		inner := sink
		innerModes := modes
		sink = func(ev Event) {
			if obsModes&ev.Mode != 0 {
				q.send(ev)
			}
			if inner != nil && innerModes&ev.Mode != 0 {
				inner(ev)
			}
		}
		modes |= obsModes
	}
	var em *emitter
	if sink != nil && modes != 0 {
		em = &emitter{modes: modes, sink: sink}
	}
	res, err := gr.execute(ctx, input, cfg, em)
	if q != nil {
		d := q.close()
		if res != nil {
			res.Dropped = d
		}
	}
	return res, err
}

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
	savedVer []int64 // versions at the last stored checkpoint
	updated  []int   // channels updated by the last apply; nil when unknown
	step     int
	stop     int

	cpID     string         // id of the checkpoint the current step starts from
	cpRef    checkpoint.Ref // the latest checkpoint (CheckpointID "" before the first)
	cpSource checkpoint.Source
	cpMeta   checkpoint.Metadata // the latest checkpoint's, for the checkpoints stream
	cpParent checkpoint.Ref      // zero for the thread's first checkpoint
	cpTime   time.Time
	pending  []checkpoint.PendingWrite // pending writes of the loaded checkpoint
	replay   bool                      // replaying an explicit checkpoint: ignore its pending writes

	nullMu     sync.Mutex
	nullResume any
	hasNull    bool
	resumeMap  map[string]any
	armed      bool // the run started with an answer (given or stored)
	// holding is set during a step whose tasks' writes are stored when it
	// ends (releaseHeld); held collects them.
	holding bool
	heldMu  sync.Mutex
	held    []heldWrites
	// valuesShown is set once the run reports the state (a values event,
	// streamed or not): its result is that state, as LangGraph's invoke
	// returns its last values chunk.
	valuesShown bool
	// stepExtra is added to the metadata of the next checkpoint only (the
	// edits a fork was made with); editDesc describes those edits.
	stepExtra map[string]any
	editDesc  []map[string]any

	extra     map[string]any    // metadata Extra of every checkpoint of the run
	parents   map[string]string // metadata Parents of every checkpoint of the run
	bg        *bgWriter
	exitWrite []func() error // durability exit: writes of the step in progress
	exitCP    *deferredPut   // durability exit: the checkpoint to store at the end
	scratch   *putScratch    // what put rebuilds for each checkpoint; nil before the first
	stepBufs
}

// stepBufs are buffers a runtime reuses from step to step (and History from
// snapshot to snapshot, see renewRuntime).
type stepBufs struct {
	pool taskPool
	algo algoBufs
	todo []*task
}

// reset empties the buffers for a new run, keeping their memory; tasks
// handed out become free.
func (b *stepBufs) reset() {
	b.pool.recycle()
	b.pool.buf, b.todo = b.pool.buf[:0], b.todo[:0]
	b.algo.reset()
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
	restored bool // writes came from pending writes: do not run
	ran      bool // the node ran in this step (err says how it ended)
	err      error
	resume   []any
	// resumeNew is set when the task consumed a new answer, so its resume
	// list must be stored.
	resumeNew bool
	// bump forces a step bump in apply even without triggers (manual
	// updates), so ephemeral triggers of pending tasks are cleared.
	bump  bool
	calls callLog // model and tool calls recorded by the task (RecordCall)
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
	for i, s := range gr.specs {
		rt.ch[i] = s.newCh()
	}
	vers := make([]int64, 2*n) // one allocation: snapshots build many runtimes
	rt.ver, rt.savedVer = vers[:n:n], vers[n:]
	rt.seen = make(map[string][]int64, len(gr.nodes)+2)
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
		chanState: chanState{ch: rt.ch, ver: rt.ver, seen: rt.seen, seenBlock: rt.seenBlock}, savedVer: rt.savedVer, stepBufs: bufs}
	for i, s := range gr.specs {
		rt.ch[i] = s.newCh()
	}
	clear(rt.ver)
	clear(rt.savedVer)
	clear(rt.seen)
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
		s := make([]int64, len(g.specs))
		for name, v := range m {
			if i, ok := g.chanIdx[name]; ok {
				s[i] = v
			}
		}
		rt.seen[node] = s
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

func (gr *Graph) execute(ctx context.Context, input Input, cfg *runConfig, em *emitter) (res *Result, err error) {
	ctx, endClaim, err := gr.claimRun(ctx, cfg) // one run per thread: see lease.go
	if err != nil {
		return nil, err
	}
	defer func() { err = endClaim(err) }()
	rt, err := gr.newRuntime(ctx, cfg, em)
	if err != nil {
		return nil, err
	}
	rt.step = -1
	if rt.saver != nil {
		// gerr, not err: the deferred check below must see the named result.
		saved, gerr := rt.saver.Get(ctx, checkpoint.Ref{ThreadID: cfg.thread, NS: cfg.ns, CheckpointID: cfg.checkpointID})
		switch {
		case errors.Is(gerr, checkpoint.ErrNotFound):
			if cfg.checkpointID != "" {
				return nil, fmt.Errorf("thread %q has no checkpoint %q", cfg.thread, cfg.checkpointID)
			}
		case gerr != nil:
			return nil, fmt.Errorf("loading thread %q: %w", cfg.thread, gerr)
		default:
			if err := rt.load(saved); err != nil {
				return nil, err
			}
			rt.replay = cfg.checkpointID != "" && cfg.parentRT == nil
		}
		ip, inProcess := rt.saver.(checkpoint.InProcess)
		if cfg.durability == DurabilityAsync && !(inProcess && ip.InProcess()) {
			rt.bg = newBGWriter(ctx, rt.saver)
			defer func() {
				if werr := rt.bg.close(); werr != nil && err == nil {
					res, err = nil, fmt.Errorf("saving checkpoints: %w", werr)
				}
			}()
		}
	}
	defer rt.releaseScratch()
	rt.stop = rt.step + cfg.limit + 1
	if err := rt.first(input); err != nil {
		return nil, err
	}
	res, err = rt.loop()
	if cfg.durability == DurabilityExit && rt.saver != nil {
		if werr := rt.flushExit(); werr != nil && err == nil {
			return nil, werr
		}
	}
	return res, err
}

// first handles the input: a new input checkpoint, or the start of a resume.
func (rt *runtime) first(input Input) error {
	g := rt.g
	hasState := rt.hasVersions()
	var nullWrites []cwrite
	var toStore []checkpoint.Write
	cmd, isCmd := input.(Command)
	if isCmd {
		if !hasState {
			return fmt.Errorf("thread %q has no checkpoint to resume: %w", rt.cfg.thread, ErrEmptyInput)
		}
		var err error
		if nullWrites, toStore, err = rt.commandWrites(cmd); err != nil {
			return err
		}
	}
	// NULL-task writes stored earlier (a previous Command on this checkpoint)
	// apply again, then the new ones are stored.
	var stored []cwrite
	if !rt.replay {
		for _, pw := range rt.pending {
			if pw.TaskID != checkpoint.NullTaskID {
				continue
			}
			if pw.Channel == checkpoint.Resume {
				if !rt.hasNull && rt.resumeMap == nil && !isCmd {
					v, err := decodeLoose(pw.Value)
					if err != nil {
						return fmt.Errorf("checkpoint %s: stored answer: %w", rt.cpID, err)
					}
					switch x := v.(type) {
					case answerUsed:
					case resumeMap:
						rt.resumeMap = x
					default:
						rt.nullResume, rt.hasNull = v, true
					}
				}
				continue
			}
			w, err := rt.decodePending(pw)
			if err != nil {
				return err
			}
			if w.ch >= 0 {
				stored = append(stored, w)
			}
		}
	}
	// LangGraph.js takes a Command without an answer as new input (B5):
	// its writes make an input checkpoint, and what was due stays due.
	asInput := isCmd && cmd.Resume == nil && cmd.ResumeByID == nil && rt.js()
	if len(toStore) > 0 && rt.saver != nil && !asInput {
		if err := rt.saver.PutWrites(rt.ctx, rt.cpRef, toStore, checkpoint.NullTaskID, ""); err != nil {
			return fmt.Errorf("saving the command: %w", err)
		}
	}
	rt.armed = rt.hasNull || rt.resumeMap != nil
	if asInput {
		if err := rt.applyNull(stored); err != nil {
			return err
		}
		return rt.commandInput(nullWrites)
	}
	if err := rt.applyNull(append(stored, nullWrites...)); err != nil {
		return err
	}

	resuming := hasState && (input == nil || isCmd)
	switch {
	case resuming:
		rt.seen["__interrupt__"] = slices.Clone(rt.ver)
		rt.emitValues()
		if rt.replay {
			return rt.startReplay()
		}
		return nil
	case input == nil:
		return fmt.Errorf("thread %q: %w", rt.cfg.thread, ErrEmptyInput)
	default:
		vals, err := rt.inputValues(input)
		if err != nil {
			return err
		}
		tasks, err := rt.prepare()
		if err != nil {
			return err
		}
		for _, t := range tasks {
			t.writes = nil
		}
		tasks = append(tasks, &task{name: "__input__", writes: []cwrite{{g.startCh, vals}}})
		rt.seen["__input__"] = rt.seenFor("__input__")
		if _, err := rt.apply(tasks); err != nil {
			return err
		}
		if err := rt.put(checkpoint.SourceInput, nil); err != nil {
			return err
		}
		return nil
	}
}

// commandInput is the start of a run whose input is a Command without an
// answer, following LangGraphJS (B5): the Command's writes are applied as
// the writes of an input step, stored as an input checkpoint (no values
// event, as for any input), and the run goes on from there past the
// breakpoint it stopped at.
func (rt *runtime) commandInput(ws []cwrite) error {
	rt.seen["__input__"] = rt.seenFor("__input__")
	if _, err := rt.apply([]*task{{name: "__input__", writes: ws}}); err != nil {
		return err
	}
	rt.updated = nil // the tasks that were due before stay candidates
	rt.seen["__interrupt__"] = slices.Clone(rt.ver)
	return rt.put(checkpoint.SourceInput, nil)
}

// startReplay begins a run from an explicit checkpoint (time travel, B6).
// Following LangGraphJS, the run first writes a fork copy of a loop or
// input checkpoint and goes on from the copy; following Python, it
// continues any checkpoint as it is, its next checkpoint a child of the
// old one. Both LangGraphs continue an update or fork checkpoint as it is.
//
// Off the thread's head, Weft writes the fork copy first under both
// references (a deliberate difference from Python, see the package
// documentation's Writes off the head): the replayed step's
// task writes belong to a checkpoint whose step was finished before, which
// the stores shared between processes refuse as a late writer's
// (checkpoint.ErrConflict), and without them neither a resume nor a replay
// check could tell what that step did. WithNewBranch asks for the copy
// whatever the checkpoint is.
func (rt *runtime) startReplay() error {
	loop := rt.cpSource != checkpoint.SourceUpdate && rt.cpSource != checkpoint.SourceFork
	if rt.cfg.newBranch || (loop && rt.js()) {
		return rt.put(checkpoint.SourceFork, nil)
	}
	latest, err := rt.saver.Get(rt.ctx, checkpoint.Ref{ThreadID: rt.cfg.thread, NS: rt.ns})
	if err != nil {
		return fmt.Errorf("thread %q: %w", rt.cfg.thread, err)
	}
	if latest.Ref.CheckpointID != rt.cpID {
		return rt.put(checkpoint.SourceFork, nil)
	}
	return nil
}

// resumeMap is how answers by interrupt id are stored as a NULL-task write.
type resumeMap map[string]any

// answerUsed replaces a stored answer once a run has given it to the tasks
// it was for, so a later run does not hand it out again.
type answerUsed struct{}

func init() {
	RegisterType[resumeMap]("resume_map")
	RegisterType[answerUsed]("answer_used")
}

// markAnswerUsed records that the stored answer was consumed by a step that
// then stopped at an interrupt again (the interrupted tasks keep their
// answers in their own writes).
func (rt *runtime) markAnswerUsed() error {
	if rt.saver == nil || (!rt.armed || rt.hasNull) {
		return nil
	}
	b, err := encodeDynamic(answerUsed{})
	if err != nil {
		return err
	}
	return rt.saver.PutWrites(rt.ctx, rt.cpRef, []checkpoint.Write{{Channel: checkpoint.Resume, Value: b}}, checkpoint.NullTaskID, "")
}

// commandWrites checks a Command given as input against the loaded
// checkpoint and returns its writes, in memory and encoded for storing as
// NULL-task writes; it also arms the answers it carries.
func (rt *runtime) commandWrites(cmd Command) ([]cwrite, []checkpoint.Write, error) {
	g := rt.g
	if cmd.Graph == ParentGraph {
		return nil, nil, &InvalidUpdateError{Msg: "There is no parent graph: a Command with Graph ParentGraph cannot be a graph's input"}
	}
	if cmd.Resume == nil && cmd.ResumeByID == nil && len(cmd.Update) == 0 && len(cmd.Goto) == 0 && len(cmd.Sends) == 0 {
		return nil, nil, ErrEmptyInput
	}
	if (cmd.Resume != nil || cmd.ResumeByID != nil) && rt.saver == nil {
		return nil, nil, errors.New("resuming with a Command needs a graph compiled with engine.WithSaver")
	}
	ws, err := rt.stateWrites(START, cmd.Update)
	if err != nil {
		return nil, nil, err
	}
	for _, to := range cmd.Goto {
		if to == END {
			continue
		}
		i, ok := g.chanIdx["branch:to:"+to]
		if !ok {
			return nil, nil, fmt.Errorf("Command.Goto: unknown node %q", to)
		}
		ws = append(ws, cwrite{i, START})
	}
	for _, s := range cmd.Sends {
		if _, ok := g.nodeIdx[s.Node]; !ok || s.Node == START {
			return nil, nil, fmt.Errorf("Command.Sends: unknown node %q", s.Node)
		}
		ws = append(ws, cwrite{g.tasksCh, s})
	}
	var answer any
	switch {
	case cmd.ResumeByID != nil:
		pending := rt.pendingInterruptIDs()
		for id := range cmd.ResumeByID {
			if !slices.Contains(pending, id) {
				return nil, nil, fmt.Errorf("thread %q has no pending interrupt %q (pending: %s)", rt.cfg.thread, id, strings.Join(pending, ", "))
			}
		}
		rt.resumeMap = cmd.ResumeByID
		answer = resumeMap(cmd.ResumeByID)
	case cmd.Resume != nil:
		if ids := rt.pendingInterruptIDs(); len(ids) > 1 {
			if !rt.js() {
				return nil, nil, fmt.Errorf("there are %d pending interrupts: answer each by id with Command.ResumeByID", len(ids))
			}
			// LangGraph.js gives the one answer to every pending interrupt (B3).
			m := make(map[string]any, len(ids))
			for _, id := range ids {
				m[id] = cmd.Resume
			}
			rt.resumeMap = m
			answer = resumeMap(m)
			break
		}
		rt.nullResume, rt.hasNull = cmd.Resume, true
		answer = cmd.Resume
	}
	if rt.saver == nil {
		return ws, nil, nil
	}
	enc, err := rt.encodeWrites(ws)
	if err != nil {
		return nil, nil, err
	}
	if answer != nil {
		b, err := encodeLoose(answer)
		if err != nil {
			return nil, nil, fmt.Errorf("resume value: %w", err)
		}
		enc = append(enc, checkpoint.Write{Channel: checkpoint.Resume, Value: b})
	}
	return ws, enc, nil
}

func (rt *runtime) inputValues(input Input) (Values, error) {
	var vals Values
	switch in := input.(type) {
	case Values:
		vals = in
	case Update:
		vals = make(Values, len(in))
		for _, w := range in {
			vals[w.Channel] = w.Value
		}
	default:
		return nil, fmt.Errorf("unsupported input type %T", input)
	}
	return rt.g.checkValues(vals)
}

// checkValues checks that every key of vals is a state channel of gr and
// that its value fits, naming the first key that does not (in key order).
func (gr *Graph) checkValues(vals Values) (Values, error) {
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		i, ok := gr.chanIdx[k]
		if !ok || i >= gr.nState {
			return nil, fmt.Errorf("input key %q is not a channel of graph %q", k, gr.name)
		}
		if err := gr.specs[i].checkWrite(vals[k]); err != nil {
			return nil, fmt.Errorf("input key %q: %w", k, err)
		}
	}
	return vals, nil
}

func (s *chanSpec) checkWrite(v any) error {
	if ow, ok := v.(Overwrite); ok {
		if s.kind != "reducer" {
			return fmt.Errorf("Overwrite is only for reducer channels, %q is %s", s.name, s.kind)
		}
		v = ow.Value
	}
	return s.codec.check(v)
}

func (rt *runtime) seenFor(name string) []int64 { return rt.chanState.seenFor(name, len(rt.g.nodes)) }

func (rt *runtime) pendingInterruptIDs() []string {
	var ids []string
	for _, pw := range rt.pending {
		if pw.Channel != checkpoint.Interrupt {
			continue
		}
		ints, err := decodeInterrupts(pw.Value)
		if err != nil {
			continue
		}
		for _, it := range ints {
			if !slices.Contains(ids, it.ID) {
				ids = append(ids, it.ID)
			}
		}
	}
	return ids
}

func (rt *runtime) takeNullResume() (any, bool) {
	if p := rt.cfg.parentRT; p != nil {
		return p.takeNullResume()
	}
	rt.nullMu.Lock()
	defer rt.nullMu.Unlock()
	if !rt.hasNull {
		return nil, false
	}
	v := rt.nullResume
	rt.nullResume, rt.hasNull = nil, false
	return v, true
}
