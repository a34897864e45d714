package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/weftstudio/weft/checkpoint"
)

// Result is the outcome of a run that did not fail.
type Result struct {
	// Values is the state at the end of the run (for an interrupted run, the
	// state the interrupted step started from).
	Values Values
	// Interrupts are the questions waiting for an answer; empty unless the
	// run stopped at Interrupt calls.
	Interrupts []PendingInterrupt
	// Next names the tasks that would run next; empty when the graph is done.
	Next []string
	// Done is true when the graph reached its end (no tasks left).
	Done bool
	// Breakpoint is "before" or "after" when the run stopped at a static
	// breakpoint, "step" when it stopped at WithStepLimit or WithStopCheck,
	// and "" otherwise.
	Breakpoint string
	// Ref is the latest checkpoint of the run; zero without a saver.
	Ref checkpoint.Ref
	// Steps counts the super-steps this run executed.
	Steps int
	// Dropped counts observer events lost because the observer was slow.
	Dropped int
}

// Invoke runs the graph to its end, an interrupt, a breakpoint or a step
// limit, and returns the state. input is Values (or an Update) to start a
// run, a Command to answer interrupts or steer, or nil to continue a thread.
func (gr *Graph) Invoke(ctx context.Context, input Input, opts ...RunOption) (*Result, error) {
	return gr.invoke(ctx, input, 0, nil, opts)
}

func (gr *Graph) invoke(ctx context.Context, input Input, modes StreamMode, sink func(Event), opts []RunOption) (*Result, error) {
	cfg := newRunConfig(opts)
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

	ch       []channel
	ver      []int64
	seen     map[string][]int64
	savedVer []int64 // versions at the last stored checkpoint
	updated  []int   // channels updated by the last apply; nil when unknown
	step     int
	stop     int

	cpID     string         // id of the checkpoint the current step starts from
	cpRef    checkpoint.Ref // the latest checkpoint (CheckpointID "" before the first)
	cpSource checkpoint.Source
	pending  []checkpoint.PendingWrite // pending writes of the loaded checkpoint
	replay   bool                      // replaying an explicit checkpoint: ignore its pending writes

	nullMu     sync.Mutex
	nullResume any
	hasNull    bool
	resumeMap  map[string]any
	armed      bool // the run started with an answer (given or stored)

	extra     map[string]any    // metadata Extra of every checkpoint of the run
	parents   map[string]string // metadata Parents of every checkpoint of the run
	bg        *bgWriter
	exitWrite []func() error // durability exit: writes of the step in progress
	exitCP    *deferredPut   // durability exit: the checkpoint to store at the end
	cands     []int          // buffers reused from step to step
	todo      []*task
	updBuf    [2][]int
	updFlip   int
	seenBlock []int64
	mask      []bool
	seenCache map[string]seenEntry
	taskBuf   []*task
	live      []*task // tasks handed out by prepare for the current step
	free      []*task
	buckets   [][]any
	touched   []int
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
	err      error
	ints     []PendingInterrupt
	resume   []any
	// resumeNew is set when the task consumed a new answer, so its resume
	// list must be stored.
	resumeNew bool
	// bump forces a step bump in apply even without triggers (manual
	// updates), so ephemeral triggers of pending tasks are cleared.
	bump bool
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
	rt.step = t.Metadata.Step + 1
	rt.pending = t.PendingWrites
	if cp.UpdatedChannels != nil {
		rt.updated = rt.updated[:0]
		for _, name := range cp.UpdatedChannels {
			if i, ok := g.chanIdx[name]; ok {
				rt.updated = append(rt.updated, i)
			}
		}
	}
	return nil
}

func (gr *Graph) execute(ctx context.Context, input Input, cfg *runConfig, em *emitter) (res *Result, err error) {
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
	hasState := slices.ContainsFunc(rt.ver, func(v int64) bool { return v != 0 })
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
	if len(toStore) > 0 && rt.saver != nil {
		if err := rt.saver.PutWrites(rt.ctx, rt.cpRef, toStore, checkpoint.NullTaskID, ""); err != nil {
			return fmt.Errorf("saving the command: %w", err)
		}
	}
	rt.armed = rt.hasNull || rt.resumeMap != nil
	if all := append(stored, nullWrites...); len(all) > 0 {
		if _, err := rt.apply([]*task{{name: "__null__", writes: all}}); err != nil {
			return err
		}
		rt.updated = nil
	}

	resuming := hasState && (input == nil || isCmd)
	switch {
	case resuming:
		rt.seen["__interrupt__"] = slices.Clone(rt.ver)
		rt.emitValues()
		if rt.replay {
			if rt.cpSource != checkpoint.SourceUpdate && rt.cpSource != checkpoint.SourceFork {
				return rt.put(checkpoint.SourceFork, nil)
			}
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
		if n := len(rt.pendingInterruptIDs()); n > 1 {
			return nil, nil, fmt.Errorf("there are %d pending interrupts: answer each by id with Command.ResumeByID", n)
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
	g := rt.g
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
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		i, ok := g.chanIdx[k]
		if !ok || i >= g.nState {
			return nil, fmt.Errorf("input key %q is not a channel of graph %q", k, g.name)
		}
		if err := g.specs[i].checkWrite(vals[k]); err != nil {
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

func (rt *runtime) seenFor(name string) []int64 {
	s, ok := rt.seen[name]
	if !ok {
		n := len(rt.ch)
		if len(rt.seenBlock) < n {
			rt.seenBlock = make([]int64, n*(len(rt.g.nodes)+2))
		}
		s, rt.seenBlock = rt.seenBlock[:n:n], rt.seenBlock[n:]
		rt.seen[name] = s
	}
	return s
}

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

// prepare plans the next super-step: pull tasks for nodes whose triggers
// changed since they last ran, then push tasks for pending Sends.
func (rt *runtime) prepare() ([]*task, error) {
	g := rt.g
	// Tasks of the previous step are done with: reuse them and their write
	// buffers.
	rt.free = append(rt.free, rt.live...)
	rt.live = rt.live[:0]
	tasks := rt.taskBuf[:0]
	defer func() { rt.taskBuf = tasks[:0] }()
	cands := rt.cands[:0]
	if rt.updated != nil {
		for _, c := range rt.updated {
			cands = append(cands, g.trigToNodes[c]...)
		}
		slices.Sort(cands)
		cands = slices.Compact(cands)
	} else {
		for i := range g.nodes {
			cands = append(cands, i)
		}
	}
	rt.cands = cands
	for _, ni := range cands {
		n := g.nodes[ni]
		seen := rt.seen[n.name]
		run := false
		for _, t := range n.triggers {
			var sv int64
			if seen != nil {
				sv = seen[t]
			}
			if rt.ch[t].available() && rt.ver[t] > sv {
				run = true
				break
			}
		}
		if run {
			t := rt.newTask()
			t.node, t.name, t.triggers, t.path = n, n.name, n.triggers, n.pullPath
			tasks = append(tasks, t)
		}
	}
	if v, ok := rt.ch[g.tasksCh].get(); ok {
		for i, s := range v.([]Send) {
			ni, ok := g.nodeIdx[s.Node]
			if !ok || s.Node == START {
				return nil, fmt.Errorf("Send to unknown node %q", s.Node)
			}
			t := rt.newTask()
			t.node, t.name, t.push, t.idx, t.arg, t.path = g.nodes[ni], s.Node, true, i, s.Arg, "push:"+strconv.Itoa(i)+":"+s.Node
			tasks = append(tasks, t)
		}
	}
	if rt.needIDs() {
		for _, t := range tasks {
			trig := ""
			if !t.push {
				names := make([]string, len(t.triggers))
				for i, c := range t.triggers {
					names[i] = g.specs[c].name
				}
				trig = strings.Join(names, ",")
			}
			id := hashID(rt.cpID, rt.ns, strconv.Itoa(rt.step), t.path, trig)
			t.id = id[0:8] + "-" + id[8:12] + "-" + id[12:16] + "-" + id[16:20] + "-" + id[20:32]
		}
	}
	return tasks, nil
}

// newTask returns a cleared task, reusing one from an earlier step.
func (rt *runtime) newTask() *task {
	var t *task
	if n := len(rt.free); n > 0 {
		t = rt.free[n-1]
		rt.free = rt.free[:n-1]
		*t = task{writes: t.writes[:0]}
	} else {
		t = &task{}
	}
	rt.live = append(rt.live, t)
	return t
}

func (rt *runtime) needIDs() bool { return rt.saver != nil || rt.em != nil }

// apply commits a super-step's writes (semantics reference §2.4) and returns
// the channels it updated.
func (rt *runtime) apply(tasks []*task) ([]int, error) {
	g := rt.g
	bump := false
	for _, t := range tasks {
		if len(t.triggers) > 0 || t.bump || t.push {
			bump = true
		}
	}
	var maxv int64
	for _, v := range rt.ver {
		maxv = max(maxv, v)
	}
	next := nextVersion(maxv)
	for _, t := range tasks {
		if len(t.triggers) == 0 {
			continue
		}
		seen := rt.seenFor(t.name)
		for _, c := range t.triggers {
			seen[c] = rt.ver[c]
		}
	}
	for _, t := range tasks {
		for _, c := range t.triggers {
			if rt.ch[c].consume() {
				rt.ver[c] = next
			}
		}
	}
	rt.touched = rt.touched[:0]
	if rt.buckets == nil {
		rt.buckets = make([][]any, len(rt.ch))
	}
	for _, t := range tasks {
		for _, w := range t.writes {
			if w.ch < 0 {
				continue
			}
			if len(rt.buckets[w.ch]) == 0 {
				rt.touched = append(rt.touched, w.ch)
			}
			rt.buckets[w.ch] = append(rt.buckets[w.ch], w.v)
		}
	}
	slices.Sort(rt.touched)
	// Two buffers in turn: rt.updated (the previous step's) stays valid
	// while this one is built.
	rt.updFlip ^= 1
	updated := rt.updBuf[rt.updFlip][:0]
	if len(rt.mask) < len(rt.ch) {
		rt.mask = make([]bool, len(rt.ch))
	}
	mask := rt.mask
	clear(mask)
	var err error
	for _, c := range rt.touched {
		vals := rt.buckets[c]
		rt.buckets[c] = vals[:0]
		if err != nil {
			continue
		}
		changed, uerr := rt.ch[c].update(vals)
		clear(vals)
		if uerr != nil {
			err = uerr
			continue
		}
		if changed {
			rt.ver[c] = next
			if rt.ch[c].available() {
				updated = append(updated, c)
				mask[c] = true
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if bump {
		n := len(updated)
		for c, ch := range rt.ch {
			if mask[c] || !ch.available() {
				continue
			}
			if changed, _ := ch.update(nil); changed {
				rt.ver[c] = next
				if ch.available() {
					updated = append(updated, c)
				}
			}
		}
		for _, c := range updated[n:] {
			mask[c] = true
		}
		slices.Sort(updated)
		triggers := false
		for _, c := range updated {
			if len(g.trigToNodes[c]) > 0 {
				triggers = true
				break
			}
		}
		if !triggers {
			for c, ch := range rt.ch {
				if ch.finish() {
					rt.ver[c] = next
					if ch.available() && !mask[c] {
						updated = append(updated, c)
						mask[c] = true
					}
				}
			}
			slices.Sort(updated)
		}
	}
	rt.updBuf[rt.updFlip] = updated
	rt.updated = updated
	return updated, nil
}

// MetaGraph is the metadata Extra key under which every checkpoint records
// the name of the graph that wrote it, so tools can tell which graph a
// thread belongs to.
const MetaGraph = "graph"

// nextVersion returns a channel version greater than v. The high 31 bits
// count steps; the low 32 bits are random, as LangGraph's savers add a random
// fraction: two branches forked from one checkpoint then never give the same
// version to different values, so a saver can key stored values by
// (channel, version) across the whole thread.
func nextVersion(v int64) int64 {
	return ((v>>versionShift)+1)<<versionShift | int64(rand.Uint32())
}

const versionShift = 32

// VersionStep returns the step-counter part of a channel version, for
// display: versions compare as whole numbers, but their low bits are random
// (see checkpoint.VersionStep).
func VersionStep(v int64) int64 { return checkpoint.VersionStep(v) }

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
			names = make([]string, 0, len(tasks))
			for _, t := range tasks {
				names = append(names, t.name)
			}
			slices.Sort(names)
			names = slices.Compact(names)
		}
		if err := rt.put(checkpoint.SourceLoop, names); err != nil {
			return nil, err
		}
		after := rt.g.after
		if rt.cfg.afterSet {
			after = rt.cfg.after
		}
		if rt.shouldInterrupt(after, tasks) {
			next, err := rt.prepare()
			if err != nil {
				return nil, err
			}
			return rt.result(next, nil, "after", ran, len(next) == 0), nil
		}
	}
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
		case checkpoint.Error, checkpoint.Interrupt, checkpoint.Scheduled:
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

// encodeWrites serializes writes for PutWrites, channel by channel.
func (rt *runtime) encodeWrites(ws []cwrite) ([]checkpoint.Write, error) {
	out := make([]checkpoint.Write, 0, len(ws))
	for _, w := range ws {
		s := rt.g.specs[w.ch]
		if s.kind == "untracked" {
			continue
		}
		b, err := encodeWrite(s, w.v)
		if err != nil {
			return nil, fmt.Errorf("channel %q: %w", s.name, err)
		}
		out = append(out, checkpoint.Write{Channel: s.name, Value: b})
	}
	return out, nil
}

type overwriteForm struct {
	Overwrite json.RawMessage `json:"__overwrite__"`
}

func encodeWrite(s *chanSpec, v any) ([]byte, error) {
	if ow, ok := v.(Overwrite); ok {
		b, err := s.codec.encode(ow.Value)
		if err != nil {
			return nil, err
		}
		return json.Marshal(overwriteForm{b})
	}
	return s.codec.encode(v)
}

func decodeWrite(s *chanSpec, b []byte) (any, error) {
	if s.kind == "reducer" && len(b) > 16 && string(b[:16]) == `{"__overwrite__"` {
		var f overwriteForm
		if err := json.Unmarshal(b, &f); err == nil && f.Overwrite != nil {
			v, err := s.codec.decode(f.Overwrite)
			return Overwrite{v}, err
		}
	}
	return s.codec.decode(b)
}

func (rt *runtime) decodePending(pw checkpoint.PendingWrite) (cwrite, error) {
	i, ok := rt.g.chanIdx[pw.Channel]
	if !ok {
		return cwrite{ch: -1}, fmt.Errorf("checkpoint %s: pending write of task %s to channel %q, which graph %q does not declare", rt.cpID, pw.TaskID, pw.Channel, rt.g.name)
	}
	v, err := decodeWrite(rt.g.specs[i], pw.Value)
	if err != nil {
		return cwrite{ch: -1}, fmt.Errorf("checkpoint %s: pending write of task %s to %q: %w", rt.cpID, pw.TaskID, pw.Channel, err)
	}
	return cwrite{i, v}, nil
}

// seenMap returns the versions-seen map of a node for a checkpoint. Most
// nodes did not run in a given step, so the map of the previous checkpoint
// is shared: checkpoints never modify these maps once built, and savers
// copy what they keep.
func (rt *runtime) seenMap(node string, s []int64) map[string]int64 {
	if c, ok := rt.seenCache[node]; ok && slices.Equal(c.snap, s) {
		return c.m
	}
	m := make(map[string]int64)
	for i, v := range s {
		if v != 0 {
			m[rt.g.specs[i].name] = v
		}
	}
	if rt.seenCache == nil {
		rt.seenCache = map[string]seenEntry{}
	}
	rt.seenCache[node] = seenEntry{slices.Clone(s), m}
	return m
}

type seenEntry struct {
	snap []int64
	m    map[string]int64
}

// put stores a checkpoint of the current channels (per durability).
func (rt *runtime) put(source checkpoint.Source, tasks []string) error {
	if rt.saver == nil {
		rt.step++
		return nil
	}
	g := rt.g
	cp := checkpoint.Checkpoint{V: checkpoint.FormatVersion, ID: checkpoint.NewID(), TS: time.Now().UTC(),
		ChannelVersions: make(map[string]int64, len(rt.ver)), VersionsSeen: make(map[string]map[string]int64, len(rt.seen))}
	for i, v := range rt.ver {
		if v != 0 {
			cp.ChannelVersions[g.specs[i].name] = v
		}
	}
	for node, s := range rt.seen {
		cp.VersionsSeen[node] = rt.seenMap(node, s)
	}
	if rt.updated != nil {
		cp.UpdatedChannels = make([]string, 0, len(rt.updated))
		for _, c := range rt.updated {
			cp.UpdatedChannels = append(cp.UpdatedChannels, g.specs[c].name)
		}
		sort.Strings(cp.UpdatedChannels)
	}
	if rt.extra == nil {
		rt.extra = make(map[string]any, len(rt.cfg.metadata)+1)
		for k, v := range rt.cfg.metadata {
			rt.extra[k] = v
		}
		rt.extra[MetaGraph] = g.name
		rt.parents = rt.cfg.parents
		if rt.parents == nil {
			rt.parents = map[string]string{} // shared by the run's checkpoints; never modified
		}
	}
	md := checkpoint.Metadata{Source: source, Step: rt.step, Parents: rt.parents, RunID: rt.cfg.runID, Tasks: tasks, Extra: rt.extra}
	parent := rt.cpRef
	rt.cpID = cp.ID
	rt.cpRef = checkpoint.Ref{ThreadID: rt.cfg.thread, NS: rt.ns, CheckpointID: cp.ID}
	rt.step++
	rt.pending = nil
	if rt.cfg.durability == DurabilityExit {
		if rt.exitCP != nil {
			parent = rt.exitCP.parent
		}
		rt.exitCP = &deferredPut{parent, cp, md}
		return nil
	}
	return rt.store(parent, cp, md)
}

func (rt *runtime) store(parent checkpoint.Ref, cp checkpoint.Checkpoint, md checkpoint.Metadata) error {
	g := rt.g
	n := 0
	for i, v := range rt.ver {
		if v != rt.savedVer[i] {
			n++
		}
	}
	newVersions := make(map[string]int64, n)
	cp.ChannelValues = make(map[string][]byte, n)
	for i, v := range rt.ver {
		if v == rt.savedVer[i] {
			continue
		}
		name := g.specs[i].name
		newVersions[name] = v
		b, ok, err := rt.ch[i].save()
		if err != nil {
			return fmt.Errorf("checkpoint of graph %q, channel %q: %w", g.name, name, err)
		}
		if ok {
			cp.ChannelValues[name] = b
		}
	}
	copy(rt.savedVer, rt.ver)
	// Nothing in cp is modified after this point (seen maps are shared but
	// immutable), so a saver that can keep them without copying may.
	put := rt.saver.Put
	if op, ok := rt.saver.(checkpoint.OwnedPutter); ok {
		put = op.PutOwned
	}
	if rt.bg != nil {
		rt.bg.op(&checkpoint.Op{Ref: parent, Checkpoint: &cp, Metadata: md, NewVersions: newVersions})
		return nil
	}
	if _, err := put(rt.ctx, parent, cp, md, newVersions); err != nil {
		return fmt.Errorf("saving checkpoint of thread %q: %w", rt.cfg.thread, err)
	}
	return nil
}

// flushExit stores the final checkpoint and the writes of the step in
// progress (durability exit).
func (rt *runtime) flushExit() error {
	if p := rt.exitCP; p != nil {
		if err := rt.store(p.parent, p.cp, p.md); err != nil {
			return err
		}
	}
	for _, w := range rt.exitWrite {
		if err := w(); err != nil {
			return fmt.Errorf("saving pending writes: %w", err)
		}
	}
	return nil
}

type deferredPut struct {
	parent checkpoint.Ref
	cp     checkpoint.Checkpoint
	md     checkpoint.Metadata
}

// bgWriter performs saver calls in order on a goroutine of its own
// (durability async). What piles up while it is busy goes to the saver in
// one WriteBatch when the saver offers it (one transaction instead of one
// per call); after the first error every later write is skipped.
type bgWriter struct {
	ch    chan bgItem
	done  chan struct{}
	ctx   context.Context
	saver checkpoint.Saver
	mu    sync.Mutex
	err   error
}

// bgItem is a Put or PutWrites (op), or a marker that runs once everything
// before it is written.
type bgItem struct {
	op     *checkpoint.Op
	marker func()
}

func newBGWriter(ctx context.Context, saver checkpoint.Saver) *bgWriter {
	w := &bgWriter{ch: make(chan bgItem, 32), done: make(chan struct{}), ctx: ctx, saver: saver}
	go w.run()
	return w
}

func (w *bgWriter) run() {
	defer close(w.done)
	var batch []checkpoint.Op
	for it := range w.ch {
		items := []bgItem{it}
	drain:
		for {
			select {
			case more, ok := <-w.ch:
				if !ok {
					break drain
				}
				items = append(items, more)
			default:
				break drain
			}
		}
		for _, it := range items {
			if it.op != nil {
				batch = append(batch, *it.op)
				continue
			}
			w.write(batch)
			batch = batch[:0]
			it.marker()
		}
		w.write(batch)
		batch = batch[:0]
	}
}

func (w *bgWriter) write(ops []checkpoint.Op) {
	if len(ops) == 0 || w.failed() != nil {
		return
	}
	var err error
	if bw, ok := w.saver.(checkpoint.BatchWriter); ok && len(ops) > 1 {
		err = bw.WriteBatch(w.ctx, ops)
	} else {
		put := w.saver.Put
		if op, ok := w.saver.(checkpoint.OwnedPutter); ok {
			put = op.PutOwned
		}
		for _, op := range ops {
			if op.Checkpoint != nil {
				_, err = put(w.ctx, op.Ref, *op.Checkpoint, op.Metadata, op.NewVersions)
			} else {
				err = w.saver.PutWrites(w.ctx, op.Ref, op.Writes, op.TaskID, op.TaskPath)
			}
			if err != nil {
				break
			}
		}
	}
	if err != nil {
		w.mu.Lock()
		w.err = err
		w.mu.Unlock()
	}
}

func (w *bgWriter) op(op *checkpoint.Op) { w.ch <- bgItem{op: op} }

// flush waits until every queued write is done and returns the first error.
func (w *bgWriter) flush() error {
	done := make(chan struct{})
	w.ch <- bgItem{marker: func() { close(done) }}
	<-done
	return w.failed()
}

func (w *bgWriter) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *bgWriter) close() error {
	close(w.ch)
	<-w.done
	return w.failed()
}
