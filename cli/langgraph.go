package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/langgraph"
	"github.com/weftstudio/weft/checkpoint/store"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/lgview"
)

// A LangGraph store (checkpoint/langgraph) holds no Weft graph: history and
// state print LangGraph's own view of its threads (next tasks, pending
// writes applied, interrupts) in Weft's JSON shapes, computed from the
// store by the reader.

func init() {
	builtins["graph"] = Command{
		Summary:  "a LangGraph store's graph, inferred from what its threads did (the store keeps none), or read from a file LangGraph saved: graph [-dot] [THREAD…] | graph -file graph.json [-dot]",
		Run:      cmdGraph,
		ReadOnly: true,
	}
}

// cmdGraph prints the graph of a LangGraph store's threads, inferred from
// their checkpoints, as JSON (langgraph.Graph, "inferred": true) or DOT
// named as inferred; or the graph of a file saved with LangGraph's
// get_graph().to_json() / getGraph().toJSON().
func cmdGraph(ctx context.Context, s checkpoint.Saver, _ []*engine.Graph, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("graph", flag.ContinueOnError)
	dot := fs.Bool("dot", false, "print Graphviz DOT instead of JSON")
	file := fs.String("file", "", "read this graph file LangGraph saved (to_json / toJSON) instead of inferring the graph")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	var g *langgraph.Graph
	switch {
	case *file != "":
		if len(pos) > 0 {
			return usagef("graph -file reads the file's graph; it takes no thread (%q)", pos[0])
		}
		b, err := os.ReadFile(*file)
		if err != nil {
			return err
		}
		if g, err = langgraph.ParseGraphJSON(b); err != nil {
			return fmt.Errorf("%s: %w", *file, err)
		}
		g.Source = *file
	default:
		lg, ok := s.(*langgraph.Reader)
		if !ok {
			return errors.New("graph infers the graph of a LangGraph store, and this is a Weft store: its threads run your graphs, whose topology your program (and the studio) has")
		}
		if g, err = lg.InferGraph(ctx, pos...); err != nil {
			return err
		}
	}
	if *dot {
		_, err := w.Write(g.DOT())
		return err
	}
	return printJSON(w, g)
}

// errLangGraphNoGraph is what the commands that need the thread's graph say
// on a LangGraph store.
var errLangGraphNoGraph = errors.New("this command needs the Weft graph that wrote the thread, and a LangGraph store holds none (threads, history, state, compare, watch and export read it)")

// readGraphOf is the graph to read thread through, for the commands that
// only read (compare, watch): the Weft graph that wrote it (graphOf), or,
// on a LangGraph store, a view of the thread with its inferred graph
// (lgview). done releases what it opened.
func readGraphOf(ctx context.Context, s checkpoint.Saver, graphs []*engine.Graph, thread string) (g *engine.Graph, done func(), err error) {
	r, ok := s.(*langgraph.Reader)
	if !ok {
		g, err := graphOf(ctx, s, graphs, thread)
		return g, func() {}, err
	}
	v, err := lgview.Open(ctx, r, lgview.Options{Sample: -1})
	if err != nil {
		return nil, nil, err
	}
	if g, err = v.ThreadGraph(ctx, thread); err != nil {
		v.Close()
		if errors.Is(err, checkpoint.ErrNotFound) {
			err = fmt.Errorf("thread %q not found in this store", thread)
		}
		return nil, nil, err
	}
	return g, func() { v.Close() }, nil
}

// noteStoreKind tells on standard error which kind of store a command
// reads when it is not Weft's own, so a LangGraph store is named as such.
func noteStoreKind(w io.Writer, s store.Store) {
	if _, ok := s.(store.Describer); ok {
		fmt.Fprintf(w, "weft: reading a %s (read-only)\n", store.Kind(s))
	}
}

// lgThread reads a thread of a LangGraph store.
func lgThread(ctx context.Context, r *langgraph.Reader, thread string) (*langgraph.Thread, error) {
	th, err := r.ReadThread(ctx, thread)
	if errors.Is(err, checkpoint.ErrNotFound) {
		return nil, fmt.Errorf("thread %q not found in this store", thread)
	}
	return th, err
}

// lgHistory prints the root namespace of a LangGraph thread, newest first.
func lgHistory(ctx context.Context, r *langgraph.Reader, thread string, limit int, w io.Writer) error {
	th, err := lgThread(ctx, r, thread)
	if err != nil {
		return err
	}
	out := []SnapshotJSON{}
	for _, sn := range th.History(r.Kind().JS()) {
		if limit > 0 && len(out) == limit {
			break
		}
		out = append(out, lgSnapshotJSON(sn))
	}
	return printJSON(w, out)
}

// lgState prints LangGraph's state of a thread's head, or of checkpoint id.
func lgState(ctx context.Context, r *langgraph.Reader, thread, id string, w io.Writer) error {
	th, err := lgThread(ctx, r, thread)
	if err != nil {
		return err
	}
	sn, err := th.StateAt(id, r.Kind().JS())
	if errors.Is(err, checkpoint.ErrNotFound) {
		return fmt.Errorf("thread %q has no checkpoint %q", thread, id)
	}
	if err != nil {
		return err
	}
	return printJSON(w, lgSnapshotJSON(sn))
}

func lgSnapshotJSON(sn *langgraph.Snapshot) SnapshotJSON {
	out := SnapshotJSON{CheckpointID: sn.CheckpointID, ParentID: sn.ParentID, Ran: sn.Ran, Next: sn.Next, Values: engine.Values(sn.Values), GuessedReducers: sn.Guessed}
	if f, ok := sn.Metadata["step"].(float64); ok {
		out.Step = int(f)
	}
	out.Source, _ = sn.Metadata["source"].(string)
	out.CreatedAt, _ = time.Parse(time.RFC3339Nano, sn.CreatedAt)
	// A subgraph's interrupt shows on its parent's task too (LangGraph
	// writes it there): each is listed once, by id, with the innermost
	// node that asked.
	seen := map[string]int{}
	var walk func(s *langgraph.Snapshot)
	walk = func(s *langgraph.Snapshot) {
		for _, t := range s.Tasks {
			for _, it := range t.Interrupts {
				m, _ := it.(map[string]any)
				id, _ := m["id"].(string)
				if i, dup := seen[id]; dup && id != "" {
					out.Interrupts[i] = engine.PendingInterrupt{ID: id, Value: m["value"], Node: t.Name, TaskID: t.ID, NS: s.NS}
					continue
				}
				seen[id] = len(out.Interrupts)
				out.Interrupts = append(out.Interrupts, engine.PendingInterrupt{ID: id, Value: m["value"], Node: t.Name, TaskID: t.ID, NS: s.NS})
			}
			if t.Error != nil {
				if out.Errors == nil {
					out.Errors = map[string]string{}
				}
				out.Errors[t.Name] = langgraph.ErrorText(t.Error)
			}
			if t.State != nil {
				walk(t.State)
			}
		}
	}
	walk(sn)
	return out
}

// lgStatus is engine.StatusOf for a LangGraph thread, from LangGraph's
// view of its head: waiting (an interrupt is pending), failed (a task
// failed), done (nothing next) or paused. A LangGraph store holds no
// leases, so "running" is never known.
func lgStatus(ctx context.Context, r *langgraph.Reader, thread string) (status, errText string) {
	th, err := lgThread(ctx, r, thread)
	if err != nil {
		return "unreadable", err.Error()
	}
	sn, err := th.State(r.Kind().JS())
	if err != nil {
		return "unreadable", err.Error()
	}
	sj := lgSnapshotJSON(sn)
	switch {
	case len(sj.Interrupts) > 0:
		return string(engine.StatusWaiting), ""
	case len(sj.Errors) > 0:
		return string(engine.StatusFailed), ""
	case len(sj.Next) == 0:
		return string(engine.StatusDone), ""
	}
	return string(engine.StatusPaused), ""
}

// lgStorage prints a LangGraph store's storage report: Weft's, with what
// only a LangGraph store has (the state its rows duplicate).
func lgStorage(ctx context.Context, r *langgraph.Reader, thread string, opts checkpoint.StorageOptions, w io.Writer) error {
	if thread != "" {
		ts, err := r.ThreadStorageReport(ctx, thread, opts)
		if errors.Is(err, checkpoint.ErrNotFound) {
			return fmt.Errorf("thread %q not found in this store", thread)
		}
		if err != nil {
			return err
		}
		return printJSON(w, ts)
	}
	sum, err := r.StorageReport(ctx, opts)
	if err != nil {
		return err
	}
	return printJSON(w, sum)
}

// lgRefuse is what a command that would delete from a LangGraph store
// says: Weft reads such a store, and LangGraph owns its rows.
func lgRefuse(r *langgraph.Reader, command string) error {
	return fmt.Errorf("%s: this is a %s, which Weft only reads; it prunes, deletes and vacuums nothing there. Remove threads with LangGraph itself (its checkpointer's delete_thread, or a LangGraph server); weft storage shows where the bytes go", command, r.Kind())
}
