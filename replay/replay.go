// Package replay re-runs a recorded thread against a graph's current code
// and reports the first checkpoint where the new run departs from the
// recording, the way a workflow engine detects non-determinism: which
// checkpoint, what differs (the tasks planned next, the writes of which
// task, which channels of the state) and the recorded and replayed values.
// A thread that once went wrong becomes a regression test (see package
// replaytest for Go tests, and weft replay on the command line).
//
// # What a replay does
//
// Run takes the thread's lineage in the recorded store: its head (or the
// checkpoint given with To) and its ancestors back to the first input,
// following parent links, so only the branch that led there counts. It
// re-creates each checkpoint of the lineage in order on a scratch store
// (the recorded store is only read), the way the recorded one was made:
//
//   - an input checkpoint from the recorded input;
//   - a loop checkpoint by running one super-step of the graph's current
//     code; interrupts are answered with the recorded answers (a task gets
//     the answers the recorded task with the same path — node and Send
//     index — got, one per question, in order, at the same step); a
//     Command's update and goto stored on the recorded checkpoint are
//     stored on the replayed one;
//   - an update checkpoint by re-applying the recorded update as the same
//     nodes: the channels it changed are set to their recorded values
//     (engine.Graph.Replace, so reducers take the value as it is);
//   - a fork by re-creating it: a re-run from an earlier checkpoint, a
//     copy of a sibling (as-node engine.AsCopy; the sibling is re-created
//     first), or a step's writes edited at the barrier (the recorded
//     edits are applied again).
//
// Model calls made through model.Model and tool calls made by tool.Node
// are served from the calls the recorded task recorded (see below); the
// others go to the real model or tool, or, with Strict, fail the replay
// (a Difference of kind KindCall naming the node, the call and what
// differed). After each checkpoint is re-created it is
// compared with the recorded one: source and step, the writes of each task
// of the step that made it, the state, and the tasks planned next. When
// the recorded head waits for an answer or failed part-way through a
// step, that step is run too and its outcome compared (which tasks
// finished with which writes, which wait for an answer, which failed).
//
// Message ids generated afresh in each run (messages added without one, a
// model reply not served from the recording) are paired between the two
// runs rather than compared: the first time a message shows in both, its
// two ids are paired, and the pairing must then hold both ways. A
// message is a JSON object with a string "role" and a string "id"
// (engine.Message).
//
// # Which calls are served
//
// A call may be served from the calls recorded by the same task of the
// same step. Each replayed super-step starts from a checkpoint paired with
// a recorded one; its tasks are paired with the recorded tasks of that
// checkpoint by task path ("pull:<node>", or "push:<i>:<node>" for a
// Send): the node and, for Sends, their order. Inside a subgraph, tasks
// are matched by node: the calls of every recorded task of the same node
// at the same step of the paired subgraph run are candidates. A run of a task starts serving from its first recorded
// call again: a task that ran again after an interrupt made its calls
// again, and the recording keeps those of its last run.
//
// A model call matches the first recorded model call of the task, in
// recorded order and not yet served in this run of the task, whose
// request is equal: the same number of messages, each with the same role,
// content, name, tool call id and tool calls (id, name, arguments), and
// the same tools offered (name, description, parameter schema), in the
// same order. Message ids are not compared (a provider never sees them).
// Options the record does not keep (temperature, token limit, the model
// asked for) are not compared. A record keeps each text up to
// engine.MaxCallText bytes and, of a long conversation, the first message
// and the newest that fit engine.MaxCallRequest: a request matches when
// what was kept is equal and the full lengths of the texts cut are too.
//
// A tool call (made by tool.Node) matches the first recorded tool call of
// the task not yet served in this run with the same tool name and
// arguments, preferring one with the same tool call id.
//
// A matching call is served only when its record holds the whole reply
// (or tool result): a text cut to the record's bounds, or a call whose
// reader left the stream early, cannot stand for the real one. A recorded
// call that failed is served as its error. Calls a node makes and records
// by itself (engine.RecordCall) are the node's own code: the replay runs
// them, strict or not.
package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/model"
)

// Option configures Run.
type Option func(*config)

type config struct {
	strict  bool
	to      string
	ignore  map[string]bool
	runOpts []engine.RunOption
}

// Strict makes every model or tool call the recording does not serve fail
// the replay (a Difference of kind KindCall) instead of going to the real
// model or tool: a strict replay is offline and free, or it fails.
func Strict() Option { return func(c *config) { c.strict = true } }

// To replays the lineage of the checkpoint with this id instead of the
// thread's head; "" means the head.
func To(checkpointID string) Option { return func(c *config) { c.to = checkpointID } }

// IgnoreChannels leaves the named channels out of every comparison of
// state and writes: channels that hold what cannot repeat (timestamps,
// random ids) and do not steer the graph.
func IgnoreChannels(names ...string) Option {
	return func(c *config) {
		if c.ignore == nil {
			c.ignore = map[string]bool{}
		}
		for _, n := range names {
			c.ignore[n] = true
		}
	}
}

// WithRunOptions adds options to every run of the replay, before its own
// (which set the thread, clear breakpoints and limit steps): for example
// engine.WithRunContext with what the graph's nodes expect.
func WithRunOptions(opts ...engine.RunOption) Option {
	return func(c *config) { c.runOpts = append(c.runOpts, opts...) }
}

// maxRounds bounds the runs one step may take (one per answer given).
const maxRounds = 1000

// recCP is a recorded checkpoint: its stored tuple and its snapshot as the
// current graph reads it.
type recCP struct {
	tp   *checkpoint.Tuple
	snap *engine.Snapshot
}

func (c *recCP) id() string                { return c.tp.Ref.CheckpointID }
func (c *recCP) step() int                 { return c.tp.Metadata.Step }
func (c *recCP) source() checkpoint.Source { return c.tp.Metadata.Source }

type replayer struct {
	cfg      config
	g        *engine.Graph
	rec      *engine.Graph // g on the recorded store
	rep      *engine.Graph // g on the scratch store
	recSaver checkpoint.Saver
	repSaver checkpoint.Saver
	thread   string
	lineage  []*recCP
	got      []string // replayed checkpoint ids, by lineage index
	ids      *idMap
	book     *book

	mu       sync.Mutex
	spaces   map[string][]*checkpoint.Tuple // recorded subgraph namespaces, oldest first; nil until loaded
	root     []*checkpoint.Tuple            // every recorded root checkpoint, oldest first; nil until loaded
	stepRuns map[string][]string            // see runsOf; nil until loaded
}

// Run replays thread of the recorded store against g's current code (see
// the package doc) and reports whether it matched. g's own saver is not
// used: the replay runs on a scratch in-memory store and only reads
// recorded. An error means the replay could not be made at all (no such
// thread or checkpoint, a recorded checkpoint the graph cannot read, a
// store failure); a replay that differs is a Report without Match.
func Run(ctx context.Context, g *engine.Graph, recorded checkpoint.Saver, thread string, opts ...Option) (*Report, error) {
	if g == nil {
		return nil, errors.New("replay: nil graph")
	}
	if recorded == nil {
		return nil, errors.New("replay: nil recorded store")
	}
	if thread == "" {
		return nil, fmt.Errorf("replay: %w", checkpoint.ErrNoThread)
	}
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	scratch := memory.New()
	r := &replayer{cfg: cfg, g: g, rec: g.WithSaver(recorded), rep: g.WithSaver(scratch), recSaver: recorded,
		repSaver: scratch, thread: thread, ids: newIDMap()}
	if err := r.loadLineage(ctx); err != nil {
		return nil, err
	}
	r.got = make([]string, len(r.lineage))
	r.book = newBook(r, cfg.strict)
	d, err := r.replay(model.WithCallReplayer(ctx, r.book))
	if err != nil {
		return nil, fmt.Errorf("replay of thread %q: %w", thread, err)
	}
	rep := &Report{Thread: thread, Graph: g.Name(), Strict: cfg.strict, Checkpoints: len(r.lineage)}
	r.book.mu.Lock()
	rep.Served, rep.Live = r.book.served, r.book.live
	r.book.mu.Unlock()
	if d == nil {
		rep.Match, rep.Matched = true, len(r.lineage)
	} else {
		rep.Difference, rep.Matched = d, d.Index
	}
	return rep, nil
}

// loadLineage reads the recorded checkpoints from the first input to the
// head (or the To checkpoint), oldest first.
func (r *replayer) loadLineage(ctx context.Context) error {
	tp, err := r.recSaver.Get(ctx, checkpoint.Ref{ThreadID: r.thread, CheckpointID: r.cfg.to})
	switch {
	case errors.Is(err, checkpoint.ErrNotFound) && r.cfg.to != "":
		return fmt.Errorf("replay: thread %q has no checkpoint %q", r.thread, r.cfg.to)
	case errors.Is(err, checkpoint.ErrNotFound):
		return fmt.Errorf("replay: thread %q is not in the store", r.thread)
	case err != nil:
		return fmt.Errorf("replay: thread %q: %w", r.thread, err)
	}
	if name, _ := tp.Metadata.Extra[engine.MetaGraph].(string); name != "" && name != r.g.Name() {
		return fmt.Errorf("replay: thread %q was recorded by graph %q, not %q", r.thread, name, r.g.Name())
	}
	var chain []*checkpoint.Tuple
	seen := map[string]bool{}
	for {
		if seen[tp.Ref.CheckpointID] {
			return fmt.Errorf("replay: thread %q: checkpoint %s is its own ancestor", r.thread, tp.Ref.CheckpointID)
		}
		seen[tp.Ref.CheckpointID] = true
		chain = append(chain, tp)
		if tp.Parent == nil || tp.Parent.CheckpointID == "" {
			break
		}
		if tp, err = r.recSaver.Get(ctx, checkpoint.Ref{ThreadID: r.thread, CheckpointID: tp.Parent.CheckpointID}); err != nil {
			return fmt.Errorf("replay: thread %q: parent %s: %w", r.thread, chain[len(chain)-1].Parent.CheckpointID, err)
		}
	}
	slices.Reverse(chain)
	switch first := chain[0]; first.Metadata.Source {
	case checkpoint.SourceInput, checkpoint.SourceUpdate:
	default:
		return fmt.Errorf("replay: thread %q starts at checkpoint %s (source %q, step %d), not at an input: "+
			"a thread recorded with durability exit keeps only each run's last checkpoint, and cannot be replayed",
			r.thread, first.Ref.CheckpointID, first.Metadata.Source, first.Metadata.Step)
	}
	for i, tp := range chain {
		c, err := r.recorded(ctx, tp)
		if err != nil {
			return fmt.Errorf("replay: recorded checkpoint %d (%s): %w", i, tp.Ref.CheckpointID, err)
		}
		r.lineage = append(r.lineage, c)
	}
	return nil
}

// recorded reads a recorded checkpoint's snapshot.
func (r *replayer) recorded(ctx context.Context, tp *checkpoint.Tuple) (*recCP, error) {
	s, err := r.rec.GetState(ctx, engine.WithThread(r.thread), engine.WithCheckpoint(tp.Ref.CheckpointID))
	if err != nil {
		return nil, err
	}
	return &recCP{tp: tp, snap: s}, nil
}

// runOpts are the options of every replay run, then extra.
func (r *replayer) runOpts(extra ...engine.RunOption) []engine.RunOption {
	out := slices.Clone(r.cfg.runOpts)
	out = append(out, engine.WithThread(r.thread), engine.BreakBefore(), engine.BreakAfter())
	return append(out, extra...)
}

// replayed returns the snapshot of a replayed checkpoint.
func (r *replayer) replayed(ctx context.Context, id string) (*engine.Snapshot, error) {
	return r.rep.GetState(ctx, engine.WithThread(r.thread), engine.WithCheckpoint(id))
}

// replayedTuple returns a replayed checkpoint (or the latest of ns with id
// "").
func (r *replayer) replayedTuple(ctx context.Context, ns, id string) (*checkpoint.Tuple, error) {
	return r.repSaver.Get(ctx, checkpoint.Ref{ThreadID: r.thread, NS: ns, CheckpointID: id})
}

// latest returns the id of the replay's latest root checkpoint ("" before
// the first).
func (r *replayer) latest(ctx context.Context) (string, error) {
	tp, err := r.replayedTuple(ctx, "", "")
	if errors.Is(err, checkpoint.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return tp.Ref.CheckpointID, nil
}

// replay re-creates and compares the lineage, and returns the first
// difference (nil when none).
func (r *replayer) replay(ctx context.Context) (*Difference, error) {
	for i := range r.lineage {
		ref, d, err := r.produce(ctx, i)
		if err != nil || d != nil {
			return r.caveat(ctx, d), err
		}
		r.got[i] = ref
		if err := r.copyNull(ctx, i); err != nil {
			return nil, err
		}
		if d, err := r.compare(ctx, i); err != nil || d != nil {
			return r.caveat(ctx, d), err
		}
	}
	last := len(r.lineage) - 1
	if unfinished(r.lineage[last]) {
		return r.unfinishedStep(ctx, last)
	}
	return nil, nil
}

// diffAt starts a Difference at lineage index i.
func (r *replayer) diffAt(i int, kind Kind) *Difference {
	c := r.lineage[i]
	return &Difference{Index: i, Step: c.step(), Recorded: c.id(), Replayed: r.got[i], Kind: kind}
}

// produce re-creates lineage checkpoint i on the replay and returns its id.
func (r *replayer) produce(ctx context.Context, i int) (string, *Difference, error) {
	c := r.lineage[i]
	if i == 0 {
		if c.source() == checkpoint.SourceInput {
			return r.input(ctx, i, c)
		}
		return r.update(ctx, i, -1, c)
	}
	if c.source() != checkpoint.SourceLoop && !isEditFork(c) && unfinished(r.lineage[i-1]) {
		// The recorded run stopped inside this step (an interrupt, a
		// failure) before the thread went on another way: stop there too.
		if d, err := r.unfinishedStep(ctx, i-1); err != nil || d != nil {
			return "", d, err
		}
	}
	return r.act(ctx, i-1, i, c)
}

// act re-creates target, a recorded child of lineage checkpoint from, as a
// child of the replay's checkpoint at from; differences are reported at
// lineage index at.
func (r *replayer) act(ctx context.Context, from, at int, target *recCP) (string, *Difference, error) {
	switch target.source() {
	case checkpoint.SourceInput:
		return r.input(ctx, at, target)
	case checkpoint.SourceLoop:
		return r.loopStep(ctx, from, at, target, nil)
	case checkpoint.SourceUpdate:
		return r.update(ctx, at, from, target)
	case checkpoint.SourceFork:
		return r.fork(ctx, from, at, target)
	}
	return "", nil, fmt.Errorf("recorded checkpoint %s has source %q, which a replay does not know", target.id(), target.source())
}

// input re-creates an input checkpoint from its recorded input.
func (r *replayer) input(ctx context.Context, at int, target *recCP) (string, *Difference, error) {
	if target.snap.Input == nil {
		return "", nil, fmt.Errorf("recorded input checkpoint %s has no stored input", target.id())
	}
	before, err := r.latest(ctx)
	if err != nil {
		return "", nil, err
	}
	res, err := r.rep.Invoke(ctx, target.snap.Input, r.runOpts(engine.WithStopCheck(func() bool { return true }))...)
	if err != nil {
		d := r.diffAt(at, KindError)
		d.ReplayedValue = err.Error()
		d.Summary = "the recorded input is refused by the graph: " + err.Error()
		return "", d, nil
	}
	if res.Ref.CheckpointID == before {
		return "", nil, fmt.Errorf("the input of checkpoint %d made no checkpoint", at)
	}
	return res.Ref.CheckpointID, nil, nil
}

// update re-applies a recorded manual update (from is -1 on an empty
// thread).
func (r *replayer) update(ctx context.Context, at, from int, target *recCP) (string, *Difference, error) {
	var prev *recCP
	if from >= 0 {
		prev = r.lineage[from]
	}
	as := target.tp.Metadata.Tasks
	var steps [][]engine.StateUpdate
	if len(as) == 0 {
		if prev == nil {
			return "", nil, fmt.Errorf("recorded checkpoint %s: an update as END on an empty thread", target.id())
		}
		steps = [][]engine.StateUpdate{{{AsNode: engine.AsEnd}}}
	} else {
		var up engine.Update
		for _, ch := range r.g.Channels() {
			name := ch.Name
			v, has := target.tp.Checkpoint.ChannelVersions[name]
			var pv int64
			if prev != nil {
				pv = prev.tp.Checkpoint.ChannelVersions[name]
			}
			if !has || v == pv {
				continue
			}
			val, ok := target.snap.Values[name]
			if !ok {
				return "", nil, fmt.Errorf("recorded update %s cleared channel %q, which cannot be re-applied", target.id(), name)
			}
			w, err := r.replaceWrite(name, val)
			if err != nil {
				return "", nil, fmt.Errorf("recorded update %s: %w", target.id(), err)
			}
			up = append(up, w)
		}
		ups := []engine.StateUpdate{{Values: up, AsNode: as[0]}}
		for _, n := range as[1:] {
			ups = append(ups, engine.StateUpdate{AsNode: n})
		}
		steps = [][]engine.StateUpdate{ups}
	}
	ref, err := r.rep.BulkUpdateState(ctx, steps, r.runOpts()...)
	if err != nil {
		d := r.diffAt(at, KindError)
		d.ReplayedValue = err.Error()
		d.Summary = fmt.Sprintf("the recorded update as %v cannot be re-applied: %v", as, err)
		return "", d, nil
	}
	return ref.CheckpointID, nil, nil
}

// replaceWrite is a write setting channel to a recorded value, with the
// message ids it holds translated to the replay's.
func (r *replayer) replaceWrite(channel string, v any) (engine.Write, error) {
	val, err := r.translate(channel, v)
	if err != nil {
		return engine.Write{}, err
	}
	return r.g.Replace(channel, val)
}

// translate returns recorded value v of channel with the message ids the
// replay gave the same messages.
func (r *replayer) translate(channel string, v any) (any, error) {
	t, err := toTree(v)
	if err != nil {
		return nil, fmt.Errorf("channel %q: %w", channel, err)
	}
	b, err := json.Marshal(rewrite(t, r.ids.fwd))
	if err != nil {
		return nil, fmt.Errorf("channel %q: %w", channel, err)
	}
	return r.g.DecodeValue(channel, b)
}

// isEditFork reports whether c is a step whose writes were edited at the
// barrier (engine.MetaEdits).
func isEditFork(c *recCP) bool {
	_, ok := c.tp.Metadata.Extra[engine.MetaEdits]
	return c.source() == checkpoint.SourceFork && ok
}

// fork re-creates a recorded fork.
func (r *replayer) fork(ctx context.Context, from, at int, target *recCP) (string, *Difference, error) {
	prev := r.lineage[from]
	if isEditFork(target) {
		hook, err := r.editHook(from, target)
		if err != nil {
			return "", nil, err
		}
		return r.loopStep(ctx, from, at, target, hook)
	}
	if maps.Equal(target.tp.Checkpoint.ChannelVersions, prev.tp.Checkpoint.ChannelVersions) {
		// A re-run from an earlier checkpoint: its first act is a fork
		// child with the same state (from an update or fork too, when it
		// was no longer the thread's newest: WithNewBranch makes it so
		// here, where it is).
		res, err := r.rep.Invoke(ctx, nil, r.runOpts(engine.WithCheckpoint(r.got[from]), engine.WithNewBranch(), engine.WithStopCheck(func() bool { return true }))...)
		if err != nil {
			return "", nil, fmt.Errorf("re-running from replayed checkpoint %d: %w", from, err)
		}
		return res.Ref.CheckpointID, nil, nil
	}
	// A copy (as-node AsCopy) of a sibling: re-create the sibling, then
	// copy it.
	sib, err := r.copiedSibling(ctx, prev, target)
	if err != nil {
		return "", nil, err
	}
	ref, d, err := r.act(ctx, from, at, sib)
	if err != nil || d != nil {
		return "", d, err
	}
	cp, err := r.rep.UpdateState(ctx, nil, engine.AsCopy, r.runOpts(engine.WithCheckpoint(ref))...)
	if err != nil {
		return "", nil, fmt.Errorf("copying replayed checkpoint %s: %w", ref, err)
	}
	return cp.CheckpointID, nil, nil
}

// copiedSibling finds the recorded checkpoint fork target copies: a child
// of prev made before it with the same channel versions.
func (r *replayer) copiedSibling(ctx context.Context, prev, target *recCP) (*recCP, error) {
	all, err := r.rootTuples(ctx)
	if err != nil {
		return nil, err
	}
	var best *checkpoint.Tuple
	for _, tp := range all {
		if tp.Parent == nil || tp.Parent.CheckpointID != prev.id() || tp.Ref.CheckpointID >= target.id() {
			continue
		}
		if maps.Equal(tp.Checkpoint.ChannelVersions, target.tp.Checkpoint.ChannelVersions) {
			best = tp
		}
	}
	if best == nil {
		return nil, fmt.Errorf("recorded fork %s: cannot tell which checkpoint it copies (no earlier child of %s has its channel versions)", target.id(), prev.id())
	}
	return r.recorded(ctx, best)
}

// editHook returns a phase hook applying the recorded edits of target to
// the step's writes at the barrier, with the replay's task ids.
func (r *replayer) editHook(from int, target *recCP) (engine.PhaseFunc, error) {
	list, _ := target.tp.Metadata.Extra[engine.MetaEdits].([]any)
	type edit struct {
		path, channel string
		write         int
		drop          bool
		value         any
	}
	pathOf := map[string]string{}
	for _, t := range r.lineage[from].snap.Tasks {
		pathOf[t.ID] = t.Path
	}
	var edits []edit
	for k, x := range list {
		m, _ := x.(map[string]any)
		task, _ := m["task"].(string)
		ch, _ := m["channel"].(string)
		n, _ := m["write"].(float64)
		e := edit{path: pathOf[task], channel: ch, write: int(n)}
		if e.path == "" {
			return nil, fmt.Errorf("recorded fork %s: edit %d names task %q, which is not a task of its step", target.id(), k, task)
		}
		if d, _ := m["dropped"].(bool); d {
			e.drop = true
		} else {
			v, err := r.translateJSON(ch, m["value"])
			if err != nil {
				return nil, fmt.Errorf("recorded fork %s: edit %d: %w", target.id(), k, err)
			}
			e.value = v
		}
		edits = append(edits, e)
	}
	return func(_ context.Context, p *engine.PhaseInfo) error {
		if p.Phase != engine.PhaseBarrier {
			return nil
		}
		for _, e := range edits {
			id := ""
			for _, t := range p.Tasks {
				if t.Path == e.path {
					id = t.ID
				}
			}
			if id == "" {
				return fmt.Errorf("the recorded edit of task %s (write %d of %q) has no such task in the replayed step", e.path, e.write, e.channel)
			}
			p.Edits = append(p.Edits, engine.StepEdit{TaskID: id, Write: e.write, Drop: e.drop, Value: e.value})
		}
		return nil
	}, nil
}

// translateJSON decodes a recorded value held as JSON data (metadata) into
// channel's type, with the replay's message ids.
func (r *replayer) translateJSON(channel string, v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	t, err := parseTree(b)
	if err != nil {
		return nil, err
	}
	if b, err = json.Marshal(rewrite(t, r.ids.fwd)); err != nil {
		return nil, err
	}
	return r.g.DecodeValue(channel, b)
}

// runsOf returns the ids of the recorded root checkpoints made by running
// the step from checkpoint id (loop children, and forks of edited writes),
// oldest first. A step run again from a checkpoint (a re-run from an
// update or a fork, which makes no fork of its own) stores its writes on
// the same checkpoint under the same task ids: the writes kept are those
// of its first run, the answers and calls those of its last.
func (r *replayer) runsOf(ctx context.Context, id string) ([]string, error) {
	r.mu.Lock()
	runs := r.stepRuns
	r.mu.Unlock()
	if runs != nil {
		return runs[id], nil
	}
	runs = map[string][]string{}
	add := func(parent *checkpoint.Ref, self string, md checkpoint.Metadata) {
		_, edits := md.Extra[engine.MetaEdits]
		if parent != nil && (md.Source == checkpoint.SourceLoop || md.Source == checkpoint.SourceFork && edits) {
			runs[parent.CheckpointID] = append(runs[parent.CheckpointID], self)
		}
	}
	if hl, ok := r.recSaver.(checkpoint.HeaderLister); ok {
		root := ""
		hs, err := hl.ListHeaders(ctx, checkpoint.ListOptions{ThreadID: r.thread, NS: &root})
		if err != nil {
			return nil, err
		}
		for _, h := range hs {
			add(h.Parent, h.Ref.CheckpointID, h.Metadata)
		}
	} else {
		all, err := r.rootTuples(ctx)
		if err != nil {
			return nil, err
		}
		for _, tp := range all {
			add(tp.Parent, tp.Ref.CheckpointID, tp.Metadata)
		}
	}
	for _, ids := range runs {
		slices.Sort(ids)
	}
	r.mu.Lock()
	r.stepRuns = runs
	r.mu.Unlock()
	return runs[id], nil
}

// caveat notes on a difference at a checkpoint made by a step that was
// run more than once from the same recorded checkpoint, and not last,
// that the answers and calls the replay used are those of the last run.
func (r *replayer) caveat(ctx context.Context, d *Difference) *Difference {
	if d == nil || d.Index == 0 {
		return d
	}
	runs, err := r.runsOf(ctx, r.lineage[d.Index-1].id())
	if err != nil || len(runs) < 2 || runs[len(runs)-1] == d.Recorded {
		return d
	}
	d.Summary += fmt.Sprintf(" (note: the recorded step from checkpoint %d was run %d times; the answers and calls kept are those of its last run, which is not on this lineage)", d.Index-1, len(runs))
	return d
}

// rootTuples returns every recorded root checkpoint of the thread, oldest
// first.
func (r *replayer) rootTuples(ctx context.Context) ([]*checkpoint.Tuple, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.root != nil {
		return r.root, nil
	}
	root := ""
	var out []*checkpoint.Tuple
	for tp, err := range r.recSaver.List(ctx, checkpoint.ListOptions{ThreadID: r.thread, NS: &root}) {
		if err != nil {
			return nil, err
		}
		out = append(out, tp)
	}
	slices.Reverse(out)
	r.root = out
	return out, nil
}
