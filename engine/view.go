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
// nothing more). The view has no channels of its own (Channels is empty).
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
	if gr.view.why == "" {
		return ErrView
	}
	return fmt.Errorf("%w; %s", ErrView, gr.view.why)
}

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
