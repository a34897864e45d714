// Package lgview shows the threads of a LangGraph store in Weft's studio
// and commands: it groups the store's threads by the graph each ran
// (inferred from its checkpoints: checkpoint/langgraph's InferGraph), and
// makes each group a view graph (engine.NewView) whose drawing is that
// graph (lgtopo) and whose states are LangGraph's own view of the thread
// (checkpoint/langgraph's Thread.StateIn), as engine snapshots. Nothing
// is run or written: the view graphs refuse, saying what would do it.
//
// It is headless (no Fyne): the studio and the commands use it alike.
package lgview

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/langgraph"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/lgtopo"
)

// ReadOnly is what a view graph says when asked to run or write: why it
// cannot, and what would.
const ReadOnly = "the threads of a LangGraph store are read here, never run or written: run, resume, answer and fork them with the LangGraph program that wrote them, or through a LangGraph server (-store http://…)"

// DefaultSample is how many of a store's newest threads Open groups when
// Options.Sample is 0.
const DefaultSample = 1000

// Options configures Open. The zero value groups the newest DefaultSample
// threads.
type Options struct {
	// Sample bounds how many of the newest threads are read to group them
	// by graph: grouping reads each whole. Threads beyond it (and threads
	// written after Open) belong to no group: Store.Saver tags them with none,
	// so the studio lists them under every group, and they are still read
	// exactly. 0 means
	// DefaultSample; a negative value groups none.
	Sample int
}

// Group is the threads of a store that ran one graph.
type Group struct {
	// Name names the group in the studio's graph list and in the
	// metadata tag of its threads (engine.MetaGraph, see Store.Saver):
	// "LangGraph: " and its nodes, unique within the store.
	Name string
	// Graph is the view graph: its topology drawn from Inferred, its
	// states read from the store.
	Graph *engine.Graph
	// Inferred is the graph inferred from the group's threads.
	Inferred *langgraph.Graph
	// Threads are the ids of the group's threads, newest first.
	Threads []string
}

// Store is a LangGraph store opened for viewing. It is safe for
// concurrent use.
type Store struct {
	r      *langgraph.Reader
	js     bool
	groups []Group
	member map[string]string // thread id → group name

	readMu sync.Mutex // held while a cached thread is read (see State)

	mu    sync.Mutex
	cache []*langgraph.Thread // the threads read last, newest use first
	// uncached is set when the store cannot say it changed: then every
	// read reads the store.
	uncached bool
	gen      int // counts the store's changes: a read begun before one is not kept
	stop     context.CancelFunc
	// reading holds the thread reads in progress, by thread id: a second
	// caller waits for the read under way instead of reading again.
	reading map[string]*threadRead
	reads   atomic.Int64 // the thread reads made, all told
}

// threadRead is a read of one thread in progress; done is closed when t
// and err are set.
type threadRead struct {
	done chan struct{}
	t    *langgraph.Thread
	err  error
}

// cached bounds the decoded threads kept between reads: the studio reads a
// checkpoint and its parent, then the next one the user clicks.
const cached = 4

// Open reads the newest threads of r (Options.Sample), groups them by
// the graph they ran and returns the store's view. Threads that cannot
// be read are grouped on their own ("unreadable"), and read again when
// asked, to say why. The view follows the store: what a LangGraph
// process writes later is read when asked (the decoded threads it keeps
// are dropped whenever r reports a change). Close it to stop following.
func Open(ctx context.Context, r *langgraph.Reader, o Options) (*Store, error) {
	s := &Store{r: r, js: r.Kind().JS(), member: map[string]string{}}
	n := o.Sample
	if n == 0 {
		n = DefaultSample
	}
	if n > 0 {
		if err := s.group(ctx, n); err != nil {
			return nil, err
		}
	}
	wctx, stop := context.WithCancel(context.Background())
	s.stop = stop
	if ch, err := r.Watch(wctx); err == nil {
		go func() {
			for range ch {
				s.mu.Lock()
				s.cache = nil
				s.gen++
				s.mu.Unlock()
			}
		}()
	} else {
		// No change feed: keep nothing between reads rather than show a
		// stale thread.
		s.uncached = true
	}
	return s, nil
}

// Close stops following the store. It does not close the Reader.
func (s *Store) Close() error {
	s.stop()
	return nil
}

// Groups returns the store's groups, the most threads first.
func (s *Store) Groups() []Group { return slices.Clone(s.groups) }

// GroupOf returns the name of the group thread belongs to, "" for none.
func (s *Store) GroupOf(thread string) string { return s.member[thread] }

// Kind is the store's layout.
func (s *Store) Kind() langgraph.Kind { return s.r.Kind() }

// group reads the newest n threads and groups them by inferred graph.
func (s *Store) group(ctx context.Context, n int) error {
	infos, err := s.r.ListThreads(ctx, n)
	if err != nil {
		return err
	}
	type bucket struct {
		threads []*langgraph.Thread
		ids     []string
	}
	byShape := map[string]*bucket{}
	var order []string
	for _, in := range infos {
		t, err := s.r.ReadThread(ctx, in.ThreadID)
		key := "unreadable"
		if err == nil {
			key = shape(langgraph.InferGraph(s.js, t))
		}
		b := byShape[key]
		if b == nil {
			b = &bucket{}
			byShape[key] = b
			order = append(order, key)
		}
		b.ids = append(b.ids, in.ThreadID)
		if t != nil {
			b.threads = append(b.threads, t)
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return len(byShape[order[i]].ids) > len(byShape[order[j]].ids) })
	used := map[string]int{}
	for _, key := range order {
		b := byShape[key]
		var g *langgraph.Graph
		if key == "unreadable" {
			g = &langgraph.Graph{Inferred: true, Source: "threads that could not be read"}
		} else {
			g = langgraph.InferGraph(s.js, b.threads...)
		}
		name := "LangGraph: " + nodeList(g)
		if key == "unreadable" {
			name = "LangGraph: unreadable threads"
		}
		if used[name]++; used[name] > 1 {
			name += " (" + strconv.Itoa(used[name]) + ")"
		}
		g.Source = fmt.Sprintf("%d thread%s of %s", len(b.ids), plural(len(b.ids)), s.r.Kind())
		topo := lgtopo.Topology(g)
		topo.Name = name
		gr := engine.NewView(topo, s.read, ReadOnly)
		s.groups = append(s.groups, Group{Name: name, Graph: gr, Inferred: g, Threads: b.ids})
		for _, id := range b.ids {
			s.member[id] = name
		}
	}
	return nil
}

// shape is what two threads share when they ran the same graph: the
// inferred graph's nodes and edges, without how often each was taken.
func shape(g *langgraph.Graph) string {
	var b strings.Builder
	var walk func(g *langgraph.Graph)
	walk = func(g *langgraph.Graph) {
		for _, n := range g.Nodes {
			b.WriteString(n.ID)
			if n.Subgraph != nil {
				b.WriteString("{")
				walk(n.Subgraph)
				b.WriteString("}")
			}
			b.WriteString(";")
		}
		for _, e := range g.Edges {
			fmt.Fprintf(&b, "%s>%s:%s;", e.Source, e.Target, e.Kind)
		}
	}
	walk(g)
	return b.String()
}

// nodeList names a graph by its nodes, START and END left out, shortened.
func nodeList(g *langgraph.Graph) string {
	var names []string
	for _, n := range g.Nodes {
		if n.ID != langgraph.StartNode && n.ID != langgraph.EndNode {
			names = append(names, n.ID)
		}
	}
	if len(names) == 0 {
		return "no nodes"
	}
	s := strings.Join(names, ", ")
	if r := []rune(s); len(r) > 48 {
		s = string(r[:47]) + "…"
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// thread returns a thread decoded, from the cache when the store has not
// changed since it was read.
//
// Callers asking for a thread being read wait for that read: the studio
// asks for a thread's status, headers, state and marks at once when it
// opens it, and a thread of big values read three times over at once held
// three times the memory.
func (s *Store) thread(ctx context.Context, id string) (*langgraph.Thread, error) {
	s.mu.Lock()
	for i, t := range s.cache {
		if t.ID == id {
			copy(s.cache[1:i+1], s.cache[:i])
			s.cache[0] = t
			s.mu.Unlock()
			return t, nil
		}
	}
	if rd, ok := s.reading[id]; ok {
		s.mu.Unlock()
		select {
		case <-rd.done:
			if ctx.Err() == nil && (errors.Is(rd.err, context.Canceled) || errors.Is(rd.err, context.DeadlineExceeded)) {
				return s.thread(ctx, id) // its reader gave up; this one has not
			}
			return rd.t, rd.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	rd := &threadRead{done: make(chan struct{})}
	if s.reading == nil {
		s.reading = map[string]*threadRead{}
	}
	s.reading[id] = rd
	gen := s.gen
	s.mu.Unlock()
	s.reads.Add(1)
	t, err := s.r.ReadThread(ctx, id)
	s.mu.Lock()
	delete(s.reading, id)
	rd.t, rd.err = t, err
	close(rd.done)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	if s.uncached || gen != s.gen {
		s.mu.Unlock()
		return t, nil
	}
	s.cache = append([]*langgraph.Thread{t}, s.cache...)
	if len(s.cache) > cached {
		s.cache = s.cache[:cached]
	}
	s.mu.Unlock()
	return t, nil
}

// State returns LangGraph's view of a checkpoint of thread as an engine
// snapshot: ref.NS "" is the root namespace, ref.CheckpointID "" the
// namespace's newest checkpoint. Pending writes are applied as LangGraph's
// get_state applies them; with subgraphs, a task running a subgraph that
// has started carries that subgraph's state. A checkpoint that could not
// be decoded returns the error saying why, with what could be read.
func (s *Store) State(ctx context.Context, ref checkpoint.Ref, subgraphs bool) (*engine.Snapshot, error) {
	t, err := s.thread(ctx, ref.ThreadID)
	if err != nil {
		return nil, err
	}
	// A decoded thread builds its lookups lazily and is shared through
	// the cache, so reads of it take turns.
	s.readMu.Lock()
	defer s.readMu.Unlock()
	sn, err := t.StateIn(ref.NS, ref.CheckpointID, s.js)
	if sn == nil {
		return nil, err
	}
	out := convert(t, sn, subgraphs)
	return out, err
}

// ThreadGraph is a view graph of thread alone, its graph inferred from
// that thread, bound to the store's Saver: what a command that reads one
// thread through a graph (compare, watch) needs, without grouping the
// store's threads first.
func (s *Store) ThreadGraph(ctx context.Context, thread string) (*engine.Graph, error) {
	t, err := s.thread(ctx, thread)
	if err != nil {
		return nil, err
	}
	g := langgraph.InferGraph(s.js, t)
	topo := lgtopo.Topology(g)
	topo.Name = "LangGraph: " + nodeList(g)
	return engine.NewView(topo, s.read, ReadOnly).WithSaver(s.Saver()), nil
}

// read is the view graphs' engine.ViewFunc.
func (s *Store) read(ctx context.Context, _ checkpoint.Saver, ref checkpoint.Ref, subgraphs bool) (*engine.Snapshot, error) {
	return s.State(ctx, ref, subgraphs)
}

// convert turns LangGraph's snapshot into the engine's.
func convert(t *langgraph.Thread, sn *langgraph.Snapshot, subgraphs bool) *engine.Snapshot {
	out := &engine.Snapshot{
		Values: engine.Values(sn.Values),
		Next:   append([]string{}, sn.Next...),
		Ref:    checkpoint.Ref{ThreadID: t.ID, NS: sn.NS, CheckpointID: sn.CheckpointID},
	}
	if sn.ParentID != "" {
		out.Parent = &checkpoint.Ref{ThreadID: t.ID, NS: sn.NS, CheckpointID: sn.ParentID}
	}
	if c := t.Checkpoint(sn.NS, sn.CheckpointID); c != nil {
		// The header, not the tuple: a tuple encodes every value, which
		// the snapshot already holds decoded (hundreds of megabytes, for
		// a thread of big values, encoded to be thrown away).
		if h, err := c.Header(t.ID); err == nil {
			out.Metadata = h.Metadata
			out.CreatedAt = h.TS
		}
		out.Versions = c.Versions
		out.Updated = append([]string(nil), c.Updated...)
	}
	if sn.Guessed != nil {
		// Said with the checkpoint's metadata, as shared blobs are: the
		// studio's inspector and the commands show it.
		extra := make(map[string]any, len(out.Metadata.Extra)+1)
		for k, v := range out.Metadata.Extra {
			extra[k] = v
		}
		guessed := make([]any, len(sn.Guessed))
		for i, ch := range sn.Guessed {
			guessed[i] = ch
		}
		extra[langgraph.GuessedReducersKey] = guessed
		out.Metadata.Extra = extra
	}
	if out.CreatedAt.IsZero() {
		out.CreatedAt, _ = time.Parse(time.RFC3339Nano, sn.CreatedAt)
	}
	for _, lt := range sn.Tasks {
		ts := engine.TaskState{ID: lt.ID, Name: lt.Name, Path: langgraph.TaskPath(lt.Path), NS: lt.SubgraphNS}
		if lt.Error != nil {
			ts.Error = langgraph.ErrorText(lt.Error)
		}
		for _, ch := range sortedKeys(lt.Result) {
			ts.Result = append(ts.Result, engine.Write{Channel: ch, Value: lt.Result[ch]})
		}
		ts.Finished = lt.Result != nil
		if lt.State != nil {
			if ts.NS == "" {
				ts.NS = lt.State.NS
			}
			if subgraphs {
				ts.State = convert(t, lt.State, true)
			}
		}
		ns := sn.NS
		for _, raw := range lt.Interrupts {
			pi := engine.PendingInterrupt{Node: lt.Name, TaskID: lt.ID, NS: ns}
			if m, ok := raw.(map[string]any); ok {
				pi.ID, _ = m["id"].(string)
				pi.Value = m["value"]
			} else {
				pi.Value = raw
			}
			ts.Interrupts = append(ts.Interrupts, pi)
			out.Interrupts = append(out.Interrupts, pi)
		}
		out.Tasks = append(out.Tasks, ts)
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Saver returns the store as a checkpoint saver whose thread listings tag
// each thread with its group (metadata Extra engine.MetaGraph, as Weft's
// engine tags its own threads), so a list of one group's threads (a
// ThreadQuery filtering on that key) finds them, and one for threads
// with no tag finds those of no group. Everything else is the Reader's
// (read-only: writes fail with langgraph.ErrReadOnly).
func (s *Store) Saver() checkpoint.Saver { return &tagged{Reader: s.r, s: s} }

// tagged is the Reader with its thread listings tagged by group.
type tagged struct {
	*langgraph.Reader
	s *Store
}

// SearchThreads lists a page of threads, tagged, filtering on the group
// tag itself.
func (t *tagged) SearchThreads(ctx context.Context, q checkpoint.ThreadQuery) (checkpoint.ThreadPage, error) {
	inner := q
	inner.Filter, inner.Limit, inner.After = nil, 0, nil
	want, filtered := q.Filter[engine.MetaGraph]
	rest := map[string]any{}
	for k, v := range q.Filter {
		if k != engine.MetaGraph {
			rest[k] = v
		}
	}
	if len(rest) > 0 {
		inner.Filter = rest
	}
	all, err := t.Reader.SearchThreads(ctx, inner)
	if err != nil {
		return checkpoint.ThreadPage{}, err
	}
	for i := range all.Threads {
		t.tag(&all.Threads[i])
	}
	outer := q
	outer.Filter = nil
	if filtered {
		outer.Filter = map[string]any{engine.MetaGraph: want}
	}
	return checkpoint.PageThreads(all.Threads, outer, func(md *checkpoint.Metadata) bool {
		got, ok := md.Extra[engine.MetaGraph]
		if want == nil {
			return !ok
		}
		return ok && got == want
	}), nil
}

// ListHeaders lists a thread's headers from the decoded thread the view
// keeps (the Store's cache), so the studio's timeline, read a page at a
// time, and the state it shows next share one read of the thread: each
// page read the whole thread again before. Listings across threads are
// the Reader's.
func (t *tagged) ListHeaders(ctx context.Context, opts checkpoint.ListOptions) ([]checkpoint.Header, error) {
	if opts.ThreadID == "" {
		return t.Reader.ListHeaders(ctx, opts)
	}
	th, err := t.s.thread(ctx, opts.ThreadID)
	if errors.Is(err, checkpoint.ErrNotFound) {
		return []checkpoint.Header{}, nil // as the Reader lists a missing thread
	}
	if err != nil {
		return nil, err
	}
	return th.Headers(opts)
}

// WriteKinds lists a checkpoint's pending writes without their values,
// from the decoded thread the view keeps (checkpoint.WriteKindsReader):
// the studio's timeline marks read them for every checkpoint shown, and
// Get would encode each checkpoint's values to be thrown away.
func (t *tagged) WriteKinds(ctx context.Context, ref checkpoint.Ref) ([]checkpoint.PendingWrite, error) {
	th, err := t.s.thread(ctx, ref.ThreadID)
	if err != nil {
		return nil, err
	}
	c := th.Checkpoint(ref.NS, ref.CheckpointID)
	if c == nil {
		return nil, fmt.Errorf("checkpoint %s of thread %q (namespace %q): %w", ref.CheckpointID, ref.ThreadID, ref.NS, checkpoint.ErrNotFound)
	}
	if c.Err != nil {
		return nil, c.Err
	}
	out := make([]checkpoint.PendingWrite, 0, len(c.Writes))
	for _, w := range c.Writes {
		out = append(out, checkpoint.PendingWrite{TaskID: w.TaskID, Channel: w.Channel, TaskPath: w.Path})
	}
	return out, nil
}

// ListThreads lists threads newest first, tagged.
func (t *tagged) ListThreads(ctx context.Context, limit int) ([]checkpoint.ThreadInfo, error) {
	infos, err := t.Reader.ListThreads(ctx, limit)
	for i := range infos {
		t.tag(&infos[i])
	}
	return infos, err
}

func (t *tagged) tag(in *checkpoint.ThreadInfo) {
	g := t.s.member[in.ThreadID]
	if g == "" {
		return
	}
	extra := make(map[string]any, len(in.LatestMeta.Extra)+1)
	for k, v := range in.LatestMeta.Extra {
		extra[k] = v
	}
	extra[engine.MetaGraph] = g
	in.LatestMeta.Extra = extra
}

// Unwrap returns the Reader, for code that asks what kind of store this is.
func (t *tagged) Unwrap() *langgraph.Reader { return t.Reader }

// ErrNotLangGraph is returned by Reader when a saver is not a LangGraph
// store's.
var ErrNotLangGraph = errors.New("not a LangGraph store")

// Reader returns the LangGraph reader behind saver (a Reader or a Store's
// Saver), or ErrNotLangGraph.
func Reader(saver checkpoint.Saver) (*langgraph.Reader, error) {
	switch v := saver.(type) {
	case *langgraph.Reader:
		return v, nil
	case *tagged:
		return v.Reader, nil
	}
	return nil, ErrNotLangGraph
}
