package engine

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/weftstudio/weft/checkpoint"
)

// ViewFunc reads the snapshot of one checkpoint for a view graph (see
// NewView). ref names the thread, the namespace and the checkpoint (""
// for the namespace's newest); subgraphs asks for the state of subgraphs
// that are waiting, nested in their tasks (WithSubgraphs). saver is the
// view's saver (WithSaver), which the function may ignore.
type ViewFunc func(ctx context.Context, saver checkpoint.Saver, ref checkpoint.Ref, subgraphs bool) (*Snapshot, error)

// ErrView is wrapped by every call that would run or write a view graph:
// its threads were written by another program, which alone knows the
// graph's code.
var ErrView = errors.New("this graph is a view of threads another program wrote: it can be read, not run or written")

// NewView returns a graph that the studio and the commands can show but
// not run: threads written by another program (LangGraph's own stores,
// a LangGraph server), whose topology is drawn from topo and whose states
// are read through read. GetState and History answer through read;
// Topology and Nodes come from topo; Invoke, Stream, UpdateState,
// SubmitAnswer, Recompute, ForkEdited and Claim return an error wrapping
// ErrView that says why, followed by readOnly (what would run it, "" for
// nothing more), except that Invoke, Stream and UpdateState go to the
// view's runner when it has one (WithViewRunner). The view has no channels of its own (Channels is empty).
// A nil topo is a graph of no nodes; a nil read makes every read fail.
func NewView(topo *Topology, read ViewFunc, readOnly string) *Graph {
	g := &Graph{view: &viewOf{read: read, why: readOnly}}
	if topo != nil {
		g.topo = *topo
		g.name = topo.Name
	}
	return g
}

// viewOf is what a view graph has instead of nodes and channels.
type viewOf struct {
	read ViewFunc
	why  string
	run  ViewRunner // nil: the view cannot run
}

// ViewRunner runs the threads of a view graph where they live (a LangGraph
// server runs its own graphs): Invoke and Stream on a view given one
// (WithViewRunner) hand it the run instead of refusing. A runner that can
// also edit a thread's state implements ViewUpdater.
type ViewRunner interface {
	// RunView runs as run says and returns the thread's state where the
	// run stopped, as Invoke does. A run refused because the thread moved
	// away from run.Checkpoint wraps ErrViewMoved.
	RunView(ctx context.Context, run ViewRun) (*Result, error)
}

// ViewUpdater is a ViewRunner that can also write a thread's state as a
// node would (UpdateState on the view).
type ViewUpdater interface {
	// UpdateView applies values to the thread at upd.Checkpoint as
	// upd.AsNode, through the channels' reducers as LangGraph's
	// update_state does, and returns the new checkpoint.
	UpdateView(ctx context.Context, upd ViewUpdate) (checkpoint.Ref, error)
}

// ViewFollower is a ViewRunner that can also follow a run somebody else
// started on a thread (another client, a background run), as it goes,
// and cancel it: a view's thread may be running when the studio looks.
type ViewFollower interface {
	// FollowView feeds obs the events of the run in progress on thread
	// until that run ends (nil) or ctx does (ctx's error). With no run in
	// progress it returns ErrNoRun at once.
	FollowView(ctx context.Context, thread string, obs func(Event)) error
	// CancelView cancels the run in progress on thread where it runs;
	// ErrNoRun when there is none.
	CancelView(ctx context.Context, thread string) error
}

// ErrNoRun is returned by FollowView and CancelView on a thread with no
// run in progress.
var ErrNoRun = errors.New("no run in progress on the thread")

// ErrViewMoved is wrapped by a view's run or update refused because the
// thread's head is no longer the checkpoint it named: another client
// moved the thread, and acting anyway could answer or fork the wrong
// branch.
var ErrViewMoved = errors.New("the thread moved since its state was read")

// ViewRun is one run of a view graph, from the run options Invoke got.
type ViewRun struct {
	// Thread is the thread to run (WithThread).
	Thread string
	// Checkpoint is the checkpoint the run acts on (WithCheckpoint): ""
	// for the thread's head. With a Command (an answer) it must still be
	// the head, or the run is refused with ErrViewMoved; with nil input
	// it replays from there, or continues when it is the head; with
	// Values it branches from there.
	Checkpoint string
	// Input is Values to start or branch, a Command to answer interrupts,
	// nil to continue or replay.
	Input Input
	// Before and After are the breakpoints for this run (BreakBefore,
	// BreakAfter); nil for none.
	Before, After []string
	// OneStep asks for a single super-step (WithStepLimit(1)), which a
	// runner may only approximate (a LangGraph server stops after every
	// node of the first step: interrupt_after "*").
	OneStep bool
	// Observer, when set, gets the run's events as they arrive
	// (WithObserver), filtered to the modes asked for.
	Observer func(Event)
}

// ViewUpdate is one state edit of a view's thread (UpdateState).
type ViewUpdate struct {
	Thread string
	// Checkpoint is the checkpoint edited: "" for the head. The edit is
	// a new checkpoint after it, a branch when it is not the head.
	Checkpoint string
	// Values are the channels written and their values.
	Values Values
	// AsNode is the node the edit is made as ("" lets the runner infer
	// it, as LangGraph does).
	AsNode string
}

// WithViewRunner returns a copy of the view graph whose runs go to r; on
// a graph that is not a view it is the graph unchanged.
func (gr *Graph) WithViewRunner(r ViewRunner) *Graph {
	if gr.view == nil {
		return gr
	}
	c := *gr
	v := *gr.view
	v.run = r
	c.view = &v
	return &c
}

// ViewRuns reports whether the graph is a view whose threads it can run
// (WithViewRunner).
func (gr *Graph) ViewRuns() bool { return gr.view != nil && gr.view.run != nil }

// ViewUpdates reports whether the graph is a view whose threads' state it
// can edit (a ViewRunner that is a ViewUpdater).
func (gr *Graph) ViewUpdates() bool {
	if !gr.ViewRuns() {
		return false
	}
	_, ok := gr.view.run.(ViewUpdater)
	return ok
}

// ViewFollows reports whether the graph is a view that can follow runs
// started elsewhere (a runner that is a ViewFollower).
func (gr *Graph) ViewFollows() bool {
	if !gr.ViewRuns() {
		return false
	}
	_, ok := gr.view.run.(ViewFollower)
	return ok
}

// FollowView feeds obs the events of the run in progress on thread, one
// started elsewhere, until it ends or ctx does; obs gets them on a
// goroutine of its own, as a run's observer does, so a slow one never
// holds up the stream, and dropped says how many events it could not
// take in time (Result.Dropped for a run). A thread with no run in
// progress is ErrNoRun; a graph that cannot follow (ViewFollows false)
// is ErrView.
func (gr *Graph) FollowView(ctx context.Context, thread string, obs func(Event)) (dropped int, err error) {
	f, ok := gr.followerOf()
	if !ok {
		return 0, ErrView
	}
	q := newObserverQueue(defaultObserverBuf, obs)
	err = f.FollowView(ctx, thread, q.send)
	dropped = q.close()
	if err != nil {
		return dropped, fmt.Errorf("thread %q: %w", thread, err)
	}
	return dropped, nil
}

// CancelView cancels the run in progress on thread, one started
// elsewhere; ErrNoRun when there is none, ErrView when the graph cannot
// follow runs (ViewFollows false).
func (gr *Graph) CancelView(ctx context.Context, thread string) error {
	f, ok := gr.followerOf()
	if !ok {
		return ErrView
	}
	if err := f.CancelView(ctx, thread); err != nil {
		return fmt.Errorf("thread %q: %w", thread, err)
	}
	return nil
}

func (gr *Graph) followerOf() (ViewFollower, bool) {
	if gr.view == nil {
		return nil, false
	}
	f, ok := gr.view.run.(ViewFollower)
	return f, ok
}

// viewInvoke is Invoke on a view with a runner.
func (gr *Graph) viewInvoke(ctx context.Context, input Input, cfg *runConfig, modes StreamMode, sink func(Event)) (*Result, error) {
	if cfg.thread == "" {
		return nil, errors.New("a view's run needs a thread: engine.WithThread")
	}
	run := ViewRun{Thread: cfg.thread, Checkpoint: cfg.checkpointID, Input: input,
		Before: cfg.before, After: cfg.after, OneStep: cfg.stepLimit == 1}
	// The observer gets its events on a goroutine of its own, as from a
	// run of the engine's: a slow one never holds up the stream.
	var q *observerQueue
	if cfg.observer != nil {
		q = newObserverQueue(cfg.observerBuf, cfg.observer)
	}
	obsModes := cfg.modes
	if q != nil || sink != nil {
		run.Observer = func(ev Event) {
			if q != nil && obsModes&ev.Mode != 0 {
				q.send(ev)
			}
			if sink != nil && modes&ev.Mode != 0 {
				sink(ev)
			}
		}
	}
	res, err := gr.view.run.RunView(ctx, run)
	if q != nil {
		if d := q.close(); res != nil {
			res.Dropped = d
		}
	}
	if err != nil {
		return res, fmt.Errorf("thread %q: %w", cfg.thread, err)
	}
	return res, nil
}

// viewUpdate is UpdateState on a view: one update of state writes, given
// to the runner if it edits state.
func (gr *Graph) viewUpdate(ctx context.Context, steps [][]StateUpdate, cfg *runConfig) (checkpoint.Ref, error) {
	up, ok := gr.view.run.(ViewUpdater)
	if !ok {
		return checkpoint.Ref{}, gr.viewErr()
	}
	if cfg.thread == "" {
		return checkpoint.Ref{}, errors.New("UpdateState needs a thread: engine.WithThread")
	}
	if len(steps) != 1 || len(steps[0]) != 1 {
		return checkpoint.Ref{}, errors.New("a view's thread takes one update at a time")
	}
	su := steps[0][0]
	vals := Values{}
	for _, w := range su.Values {
		vals[w.Channel] = w.Value
	}
	ref, err := up.UpdateView(ctx, ViewUpdate{Thread: cfg.thread, Checkpoint: cfg.checkpointID, Values: vals, AsNode: su.AsNode})
	if err != nil {
		return checkpoint.Ref{}, fmt.Errorf("thread %q: %w", cfg.thread, err)
	}
	return ref, nil
}

// IsView reports whether the graph is a view (NewView).
func (gr *Graph) IsView() bool { return gr.view != nil }

// ViewReadOnly says why a view graph cannot be run or written, and what
// would do it; "" for a graph that runs.
func (gr *Graph) ViewReadOnly() string {
	if gr.view == nil {
		return ""
	}
	return gr.viewErr().Error()
}

func (gr *Graph) viewErr() error {
	switch {
	case gr.view.run != nil && gr.view.why != "":
		// It runs: what it cannot do is all there is to say.
		return viewRefusal(gr.view.why)
	case gr.view.why == "":
		return ErrView
	}
	return fmt.Errorf("%w; %s", ErrView, gr.view.why)
}

// viewRefusal is what a view with a runner cannot do, in its own words;
// it is ErrView to errors.Is.
type viewRefusal string

func (e viewRefusal) Error() string { return string(e) }
func (e viewRefusal) Unwrap() error { return ErrView }

// viewState is GetState for a view graph.
func (gr *Graph) viewState(ctx context.Context, cfg *runConfig) (*Snapshot, error) {
	if gr.view.read == nil {
		return nil, fmt.Errorf("graph %q is a view with nothing to read its states", gr.name)
	}
	ref := checkpoint.Ref{ThreadID: cfg.thread, NS: cfg.ns, CheckpointID: cfg.checkpointID}
	snap, err := gr.view.read(ctx, gr.saver, ref, cfg.subgraphs)
	if err != nil {
		return nil, fmt.Errorf("thread %q: %w", cfg.thread, err)
	}
	return snap, nil
}

// viewHistory is HistorySeq for a view graph: the saver's checkpoints of
// the thread's namespace, newest first, each read through the view.
func (gr *Graph) viewHistory(ctx context.Context, sel checkpoint.ListOptions, cfg *runConfig) iter.Seq2[*Snapshot, error] {
	return func(yield func(*Snapshot, error) bool) {
		sel.ThreadID = cfg.thread
		ns := cfg.ns
		sel.NS = &ns
		for tp, err := range gr.saver.List(ctx, sel) {
			if err != nil {
				yield(nil, err)
				return
			}
			c := *cfg
			c.checkpointID = tp.Ref.CheckpointID
			if !yield(gr.viewState(ctx, &c)) {
				return
			}
		}
	}
}

// viewNodes is Nodes for a view graph: its topology's nodes but START and
// END.
func (gr *Graph) viewNodes() []string {
	var out []string
	for _, n := range gr.topo.Nodes {
		if n.Kind == NodeNormal {
			out = append(out, n.Name)
		}
	}
	return out
}
