package agentview

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"
	"sync"
	"time"

	"github.com/weftstudio/weft/agentclient"
	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/store"
	"github.com/weftstudio/weft/engine"
)

// ErrReadOnly is returned by the Saver's writes. It wraps
// checkpoint.ErrReadOnly.
var ErrReadOnly = fmt.Errorf("a LangGraph server's threads are written by the server alone (its runs, update_state): %w", checkpoint.ErrReadOnly)

// Saver returns the server as a read-only checkpoint saver: Get and List
// read states and history, SearchThreads pages the server's threads
// (newest first) with the graph tag set from their graph_id, and every
// write fails with ErrReadOnly. A listed thread's Checkpoints is -1: the
// server says it only by reading the thread's whole history.
func (s *Server) Saver() checkpoint.Saver { return &saver{s: s} }

// saver is the Server as a checkpoint.Saver.
type saver struct{ s *Server }

// ServerOf returns the Server behind a saver from Server.Saver, or nil.
func ServerOf(sv checkpoint.Saver) *Server {
	if v, ok := sv.(*saver); ok {
		return v.s
	}
	return nil
}

// StoreKind names the server, as store.Describer asks.
func (v *saver) StoreKind() string { return v.s.Describe() }

// Get reads one checkpoint (the namespace's newest when ref.CheckpointID
// is empty) with its tasks' outcomes as pending writes: a result as the
// task's writes, an error as checkpoint.Error, interrupts as
// checkpoint.Interrupt.
func (v *saver) Get(ctx context.Context, ref checkpoint.Ref) (*checkpoint.Tuple, error) {
	if ref.ThreadID == "" {
		return nil, checkpoint.ErrNoThread
	}
	st, err := v.s.c.GetState(ctx, ref.ThreadID, agentclient.StateQuery{CheckpointID: ref.CheckpointID, CheckpointNS: ref.NS})
	if err != nil {
		return nil, notFound(ref, err)
	}
	if st.Checkpoint.CheckpointID == "" {
		return nil, fmt.Errorf("thread %q has no checkpoint yet: %w", ref.ThreadID, checkpoint.ErrNotFound)
	}
	return tupleOf(st)
}

// historyPage is how many snapshots one history request asks for.
const historyPage = 100

// List yields a thread's checkpoints of one namespace (opts.NS; nil is the
// root graph: the server lists one namespace at a time), newest first,
// paging the server's history. It needs opts.ThreadID: the server lists
// no checkpoints across threads. Filter goes to the server's metadata
// filter (the graph tag as graph_id).
func (v *saver) List(ctx context.Context, opts checkpoint.ListOptions) iter.Seq2[*checkpoint.Tuple, error] {
	return func(yield func(*checkpoint.Tuple, error) bool) {
		if opts.ThreadID == "" {
			yield(nil, fmt.Errorf("a LangGraph server lists checkpoints one thread at a time: name the thread"))
			return
		}
		q := agentclient.HistoryQuery{Before: opts.Before}
		if opts.NS != nil {
			q.CheckpointNS = *opts.NS
		}
		if len(opts.Filter) > 0 {
			q.Metadata = map[string]any{}
			for k, val := range opts.Filter {
				if k == engine.MetaGraph {
					k = "graph_id"
				}
				q.Metadata[k] = val
			}
		}
		n := 0
		for {
			q.Limit = historyPage
			if opts.Limit > 0 {
				q.Limit = min(historyPage, opts.Limit-n)
			}
			page, err := v.s.c.History(ctx, opts.ThreadID, q)
			if err != nil {
				yield(nil, notFound(checkpoint.Ref{ThreadID: opts.ThreadID}, err))
				return
			}
			for i := range page {
				tp, err := tupleOf(&page[i])
				if !yield(tp, err) || err != nil {
					return
				}
				n++
			}
			if len(page) < q.Limit || opts.Limit > 0 && n >= opts.Limit {
				return
			}
			q.Before = page[len(page)-1].Checkpoint.CheckpointID
		}
	}
}

// tupleOf is a server snapshot as a stored checkpoint.
func tupleOf(st *agentclient.StateSnapshot) (*checkpoint.Tuple, error) {
	ref := checkpoint.Ref{ThreadID: st.Checkpoint.ThreadID, NS: st.Checkpoint.CheckpointNS, CheckpointID: st.Checkpoint.CheckpointID}
	tp := &checkpoint.Tuple{Ref: ref, Metadata: metadataOf(st.Metadata), PendingWrites: []checkpoint.PendingWrite{}}
	tp.Checkpoint = checkpoint.Checkpoint{V: checkpoint.FormatVersion, ID: ref.CheckpointID, TS: st.CreatedAt, ChannelValues: map[string][]byte{}}
	if p := st.ParentCheckpoint; p != nil && p.CheckpointID != "" {
		tp.Parent = &checkpoint.Ref{ThreadID: ref.ThreadID, NS: ref.NS, CheckpointID: p.CheckpointID}
	}
	var vals map[string]json.RawMessage
	if len(st.Values) > 0 && string(st.Values) != "null" {
		if err := json.Unmarshal(st.Values, &vals); err != nil {
			return nil, fmt.Errorf("thread %q checkpoint %s: its values are not a JSON object: %v", ref.ThreadID, ref.CheckpointID, err)
		}
	}
	for k, raw := range vals {
		tp.Checkpoint.ChannelValues[k] = raw
	}
	for _, t := range st.Tasks {
		path := taskPath(t.Path)
		if len(t.Error) > 0 && string(t.Error) != "null" {
			tp.PendingWrites = append(tp.PendingWrites, checkpoint.PendingWrite{TaskID: t.ID, Channel: checkpoint.Error, Value: t.Error, TaskPath: path})
		}
		if len(t.Interrupts) > 0 {
			b, _ := json.Marshal(t.Interrupts)
			tp.PendingWrites = append(tp.PendingWrites, checkpoint.PendingWrite{TaskID: t.ID, Channel: checkpoint.Interrupt, Value: b, TaskPath: path})
		}
		var res map[string]json.RawMessage
		if len(t.Result) > 0 && json.Unmarshal(t.Result, &res) == nil && res != nil {
			if len(res) == 0 {
				tp.PendingWrites = append(tp.PendingWrites, checkpoint.PendingWrite{TaskID: t.ID, Channel: checkpoint.NoWrites, TaskPath: path})
			}
			for _, k := range sortedKeys(res) {
				tp.PendingWrites = append(tp.PendingWrites, checkpoint.PendingWrite{TaskID: t.ID, Channel: k, Value: res[k], TaskPath: path})
			}
		}
	}
	return tp, nil
}

// Put refuses: the server writes its threads.
func (v *saver) Put(context.Context, checkpoint.Ref, checkpoint.Checkpoint, checkpoint.Metadata, map[string]int64) (checkpoint.Ref, error) {
	return checkpoint.Ref{}, ErrReadOnly
}

// PutWrites refuses: the server writes its threads.
func (v *saver) PutWrites(context.Context, checkpoint.Ref, []checkpoint.Write, string, string) error {
	return ErrReadOnly
}

// DeleteThread refuses: deleting a server's thread is not a viewer's to do.
func (v *saver) DeleteThread(context.Context, string) error { return ErrReadOnly }

// threadsPage is how many thread records one search asks for.
const threadsPage = 100

// heads bounds the head states read at once for a page of threads.
const heads = 8

// SearchThreads lists a page of the server's threads, newest update first:
// q.Search and a graph tag filter (engine.MetaGraph: the thread's
// graph_id; nil keeps threads that never ran) are applied as the server
// pages, After continues after that thread. Each listed thread's head is
// read for its Latest, LatestMeta and UpdatedAt; a head that cannot be
// read sets the thread's Err.
func (v *saver) SearchThreads(ctx context.Context, q checkpoint.ThreadQuery) (checkpoint.ThreadPage, error) {
	sq := agentclient.ThreadSearch{SortBy: "updated_at", SortOrder: "desc", Limit: threadsPage,
		Select: []string{"thread_id", "updated_at", "metadata", "status"}}
	want, byGraph := q.Filter[engine.MetaGraph]
	if g, ok := want.(string); byGraph && ok {
		sq.Metadata = map[string]any{"graph_id": g}
	}
	for k := range q.Filter {
		if k != engine.MetaGraph {
			return checkpoint.ThreadPage{}, fmt.Errorf("a LangGraph server's thread list filters on the graph alone, not on %q", k)
		}
	}
	search := strings.ToLower(q.Search)
	passed := q.After == nil
	var picked []agentclient.Thread
	more := false
	for !more {
		page, err := v.s.c.SearchThreads(ctx, sq)
		if err != nil {
			return checkpoint.ThreadPage{}, err
		}
		for _, th := range page {
			if !passed {
				passed = th.ThreadID == q.After.ThreadID
				continue
			}
			if search != "" && !strings.Contains(strings.ToLower(th.ThreadID), search) {
				continue
			}
			if g, _ := th.Metadata["graph_id"].(string); byGraph && want == nil && g != "" {
				continue
			}
			if q.Limit > 0 && len(picked) == q.Limit {
				more = true
				break
			}
			picked = append(picked, th)
		}
		if len(page) < sq.Limit {
			break
		}
		sq.Offset += len(page)
	}
	out := checkpoint.ThreadPage{Threads: make([]checkpoint.ThreadInfo, len(picked)), More: more}
	var wg sync.WaitGroup
	sem := make(chan struct{}, heads)
	for i, th := range picked {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out.Threads[i] = v.threadInfo(ctx, th)
		}()
	}
	wg.Wait()
	return out, ctx.Err()
}

// threadInfo summarises a listed thread from its head.
func (v *saver) threadInfo(ctx context.Context, th agentclient.Thread) checkpoint.ThreadInfo {
	in := checkpoint.ThreadInfo{ThreadID: th.ThreadID, Checkpoints: -1, UpdatedAt: th.UpdatedAt, LatestMeta: metadataOf(th.Metadata),
		Busy: th.Status == "busy"}
	st, err := v.s.c.GetState(ctx, th.ThreadID, agentclient.StateQuery{})
	switch {
	case err != nil:
		in.Err = err
	case st.Checkpoint.CheckpointID != "":
		in.Latest = checkpoint.Ref{ThreadID: th.ThreadID, CheckpointID: st.Checkpoint.CheckpointID}
		md := metadataOf(st.Metadata)
		if md.Extra == nil {
			md.Extra = in.LatestMeta.Extra
		}
		in.LatestMeta = md
		in.UpdatedAt = st.CreatedAt
	}
	return in
}

func init() {
	store.Register("http", openStore)
	store.Register("https", openStore)
}

// openStore is store.Open for a server's address, with the API key from
// the environment (agentclient.WithAPIKeyFromEnv).
func openStore(_ context.Context, spec string, _ []byte) (store.Store, error) {
	return Connect(spec, agentclient.WithAPIKeyFromEnv())
}

// Connect is the saver (Server.Saver) of the LangGraph server at addr, an
// http:// or https:// address, made with opts (an API key, timeouts). The
// server is not asked anything yet: the studio loads its graphs in the
// background (Server.Load on ServerOf's result). An address that cannot
// be a server's is an error.
func Connect(addr string, opts ...agentclient.Option) (store.Store, error) {
	c, err := agentclient.New(addr, opts...)
	if err != nil {
		return nil, err
	}
	return &saver{s: New(c)}, nil
}

// Close closes nothing: the client holds no connection between calls
// that the HTTP transport does not reuse or drop on its own.
func (v *saver) Close() error { return nil }

// pollEvery is how often Watch asks the server what changed: the Agent
// Server API has no change feed for threads.
const pollEvery = time.Second

// Watch reports changes on the server by polling its newest threads every
// pollEvery: a value when one of them was updated, added or changed
// status, and every poll while one is busy (a run's steps add
// checkpoints without touching the thread's record). A poll that fails
// sends a value too, so the reader reads and says why, but only when the
// failure is new: a server that stays down is reported once, not every
// second (each value costs the studio a read and an error dialog), and
// again when it answers. The watch goes on until ctx ends.
func (v *saver) Watch(ctx context.Context) (<-chan struct{}, error) {
	ch := make(chan struct{}, 1)
	go func() {
		defer close(ch)
		t := time.NewTicker(pollEvery)
		defer t.Stop()
		last := ""
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			sig, busy, err := v.newest(ctx)
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				sig = "failed: " + err.Error()
			}
			if sig == last && !busy {
				continue
			}
			last = sig
			select {
			case ch <- struct{}{}:
			default: // a value is already waiting: they coalesce
			}
		}
	}()
	return ch, nil
}

// newest sums up the server's newest threads for Watch.
func (v *saver) newest(ctx context.Context) (sig string, busy bool, err error) {
	page, err := v.s.c.SearchThreads(ctx, agentclient.ThreadSearch{SortBy: "updated_at", SortOrder: "desc", Limit: 20,
		Select: []string{"thread_id", "updated_at", "status"}})
	if err != nil {
		return "", false, err
	}
	var b strings.Builder
	for _, th := range page {
		fmt.Fprintf(&b, "%s@%s:%s;", th.ThreadID, th.UpdatedAt.Format(time.RFC3339Nano), th.Status)
		busy = busy || th.Status == "busy"
	}
	return b.String(), busy, nil
}
