// The threads command: the store's threads with their status and lease.

package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/langgraph"
	"github.com/weftstudio/weft/engine"
)

// ThreadJSON is one thread as the threads command prints it.
type ThreadJSON struct {
	ThreadID    string    `json:"thread_id"`
	Graph       string    `json:"graph"`
	Checkpoints int       `json:"checkpoints"`
	Step        int       `json:"step"`
	Source      string    `json:"source"`
	UpdatedAt   time.Time `json:"updated_at"`
	// Status is engine.StatusOf the thread: running, waiting, failed,
	// paused or done; "unreadable" when its latest checkpoint could not be
	// read (Error says why); "" when this binary does not have its graph.
	Status string `json:"status,omitempty"`
	// Error is why the thread's latest checkpoint could not be read; ""
	// when it could.
	Error string `json:"error,omitempty"`
	// Lease is who runs the thread now, or whose run died holding it
	// (Expired); absent when nobody holds it.
	Lease *LeaseJSON `json:"lease,omitempty"`
}

// LeaseJSON is a thread's lease as the threads command prints it.
type LeaseJSON struct {
	Owner   string    `json:"owner"`
	Since   time.Time `json:"since"`
	Expires time.Time `json:"expires"`
	Expired bool      `json:"expired,omitempty"` // its run died: the thread may be continued
	// Ended says how the run is known to have died before its lease
	// lapsed: "the run by pid N on this host ended without finishing".
	Ended string `json:"ended,omitempty"`
}

func cmdThreads(ctx context.Context, s checkpoint.Saver, graphs []*engine.Graph, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("threads", flag.ContinueOnError)
	graph := fs.String("graph", "", "only threads of this graph")
	limit := fs.Int("limit", 0, "at most this many threads")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if *graph != "" {
		known := graphNames(graphs)
		if !slices.Contains(known, *graph) {
			return usagef("unknown graph %q: this binary has %s", *graph, quoteList(known))
		}
	}
	tl, ok := s.(checkpoint.ThreadLister)
	if !ok {
		return errors.New("this store cannot list threads")
	}
	infos, err := tl.ListThreads(ctx, 0)
	if err != nil {
		return err
	}
	leases, err := leasesByThread(ctx, s)
	if err != nil {
		return err
	}
	byName := graphsByName(graphs)
	out := []ThreadJSON{}
	unreadable := 0
	for _, ti := range infos {
		g, _ := ti.LatestMeta.Extra[engine.MetaGraph].(string)
		// A thread whose listing row is damaged may be of any graph: it
		// is listed whatever -graph says, never hidden.
		if *graph != "" && g != *graph && ti.Err == nil {
			continue
		}
		tj := ThreadJSON{ThreadID: ti.ThreadID, Graph: g, Checkpoints: ti.Checkpoints, Step: ti.LatestMeta.Step,
			Source: string(ti.LatestMeta.Source), UpdatedAt: ti.UpdatedAt}
		lease := leases[ti.ThreadID]
		if lease != nil {
			tj.Lease = &LeaseJSON{Owner: lease.Owner, Since: lease.Since, Expires: lease.Expires, Expired: lease.Expired, Ended: lease.Ended}
		}
		if ti.Err != nil { // its metadata or timestamp is damaged
			tj.Status, tj.Error = "unreadable", ti.Err.Error()
			unreadable++
		} else if lg, ok := s.(*langgraph.Reader); ok {
			if tj.Status, tj.Error = lgStatus(ctx, lg, ti.ThreadID); tj.Error != "" {
				unreadable++
			}
		} else if gr := byName[g]; gr != nil {
			snap, err := gr.GetState(ctx, engine.WithThread(ti.ThreadID))
			if err != nil {
				// One damaged thread must not hide the others: it is
				// listed as such, and the exit status says so.
				tj.Status, tj.Error = "unreadable", err.Error()
				unreadable++
			} else {
				tj.Status = string(engine.StatusOf(snap, lease))
			}
		}
		out = append(out, tj)
		if *limit > 0 && len(out) == *limit {
			break
		}
	}
	if err := printJSON(w, out); err != nil {
		return err
	}
	switch unreadable {
	case 0:
		return nil
	case 1:
		return errors.New(`1 thread could not be read: it is listed with status "unreadable" and its error`)
	}
	return fmt.Errorf(`%d threads could not be read: they are listed with status "unreadable" and their errors`, unreadable)
}

func graphsByName(graphs []*engine.Graph) map[string]*engine.Graph {
	m := make(map[string]*engine.Graph, len(graphs))
	for _, g := range graphs {
		m[g.Name()] = g
	}
	return m
}
