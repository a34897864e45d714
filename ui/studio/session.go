package studio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"fyne.io/fyne/v2"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/longterm"
	"github.com/weftstudio/weft/checkpoint/store"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/lgview"
)

// session is the studio's backend: the only code that calls the engine and
// the store. Every call runs on a goroutine of its own; results reach the
// UI through fyne.Do. A panic in anything user code could reach (node
// functions, path functions, custom savers) is recovered and reported as an
// error, so a user's graph never takes the studio down.
type session struct {
	mu    sync.Mutex
	saver checkpoint.Saver
	graph *engine.Graph // the selected graph, bound to saver

	// views is the LangGraph store's view shown, nil for none: closed
	// when another store is shown.
	views *lgview.Store

	pause   atomic.Bool
	running atomic.Bool
	// closed is set when the window closes: work finishing after that
	// applies nothing, since the widgets it would touch (and the dialogs
	// it would raise, e.g. a server gone meanwhile) belong to no window.
	closed atomic.Bool
	cancel context.CancelFunc

	// ops counts background work in flight; tests wait for it to reach 0.
	// (Not a WaitGroup: work may start while a test waits, when the
	// store's watcher asks for a refresh.)
	opsMu   sync.Mutex
	ops     int
	opsIdle *sync.Cond
}

// graphTag is the metadata key under which the engine records, in every
// checkpoint, the graph that wrote it: the thread list shows the threads of
// the selected graph, whoever ran them (studio, CLI, server, workers).
const graphTag = engine.MetaGraph

// goBG runs work on a goroutine, recovering panics, and then apply (if not
// nil) on the UI goroutine with the result, unless the window has closed
// meanwhile.
func goBG[T any](s *session, work func() (T, error), apply func(T, error)) {
	s.begin()
	go func() {
		defer s.end()
		v, err := safely(work)
		if apply != nil && !s.closed.Load() {
			uiDo(func() {
				if !s.closed.Load() {
					apply(v, err)
				}
			})
		}
	}()
}

// uiMu serialises the studio's UI callbacks. In an app fyne.Do already
// runs them one at a time on the UI goroutine; the test driver runs them on
// the calling goroutine, so without it two finishing jobs could touch the
// same widgets at once.
var uiMu sync.Mutex

// uiDo runs fn on the UI goroutine, one callback at a time.
func uiDo(fn func()) {
	fyne.Do(func() {
		uiMu.Lock()
		defer uiMu.Unlock()
		fn()
	})
}

// safely calls work, turning a panic into an error with its stack.
func safely[T any](work func() (T, error)) (v T, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error (recovered panic): %v\n%s", r, debug.Stack())
		}
	}()
	return work()
}

// waitIdle waits until no background work is in flight, for tests and
// benchmarks; work started by completing work is waited for too.
func (s *session) waitIdle() {
	s.opsMu.Lock()
	defer s.opsMu.Unlock()
	for s.ops > 0 {
		s.cond().Wait()
	}
}

func (s *session) cond() *sync.Cond {
	if s.opsIdle == nil {
		s.opsIdle = sync.NewCond(&s.opsMu)
	}
	return s.opsIdle
}

// begin and end count background work in flight.
func (s *session) begin() {
	s.opsMu.Lock()
	s.ops++
	s.opsMu.Unlock()
}

func (s *session) end() {
	s.opsMu.Lock()
	s.ops--
	if s.ops == 0 {
		s.cond().Broadcast()
	}
	s.opsMu.Unlock()
}

// bind selects graph g on the current saver, with lt as its long-term
// store when it was compiled without one (nil: none).
func (s *session) bind(g Graph, saver checkpoint.Saver, lt longterm.Store) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.saver = saver
	s.graph = g.Graph.WithSaver(saver)
	if lt != nil && s.graph.Store() == nil {
		s.graph = s.graph.WithStore(lt)
	}
	if c := store.NodeCache(saver); c != nil && s.graph.Cache() == nil {
		s.graph = s.graph.WithCache(c) // nodes with a cache policy keep their writes beside the checkpoints, as in the commands
	}
}

// setViews keeps v as the view shown, closing the one before.
func (s *session) setViews(v *lgview.Store) {
	s.mu.Lock()
	old := s.views
	s.views = v
	s.mu.Unlock()
	if old != nil && old != v {
		_ = old.Close()
	}
}

func (s *session) current() (*engine.Graph, checkpoint.Saver) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.graph, s.saver
}

// threadRow is one line of the thread list.
type threadRow struct {
	ID      string
	Step    int
	Source  checkpoint.Source
	Updated time.Time
	Count   int
	Status  string // engine.StatusOf: "running", "waiting", "failed", "paused", "done"; statusUnreadable; "" while unknown
	Latest  string // the latest checkpoint's id, which the status was read at
	// Holder says who runs the thread now (its lease's owner and since
	// when, or the server), "" when nobody does.
	Holder string
	// Busy is the store's word that a run is in progress on the thread
	// (checkpoint.ThreadInfo.Busy).
	Busy bool
}

// sameRows reports whether two thread lists read the same.
func sameRows(a, b []threadRow) bool { return slices.Equal(a, b) }

// statusUnreadable is the status of a thread whose latest checkpoint could
// not be read (a damaged row, a value over the store's limit): the row says
// so at once, and choosing it shows the error in full.
const statusUnreadable = "unreadable"

// maxStatus bounds how many threads get a status read (one GetState each)
// in one pass: the list shows after the first pass, and the rest of the
// page's statuses follow a pass at a time (fillStatuses).
const maxStatus = 40

// statuses fills in the status of rows: "running" with its holder when a
// live lease holds the thread or the store says a run is in progress
// (ThreadInfo.Busy); otherwise from known when the thread's
// latest checkpoint is the one known's status was read at, or from the
// latest checkpoint (for the first maxStatus rows).
func (s *session) statuses(ctx context.Context, rows []threadRow, known map[string]threadRow) {
	g, saver := s.current()
	leases := map[string]*checkpoint.Lease{}
	if l, ok := saver.(checkpoint.Leaser); ok {
		if ls, err := l.Leases(ctx); err == nil {
			for i := range ls {
				leases[ls[i].ThreadID] = &ls[i]
			}
		}
	}
	read := 0
	for i := range rows {
		r := &rows[i]
		r.Holder = ""
		if l := leases[r.ID]; l != nil && !l.Expired {
			r.Status, r.Holder = string(engine.StatusRunning), l.Owner+" since "+l.Since.Local().Format("15:04")
			continue
		}
		if r.Busy { // the store says so; its head is where the run began
			r.Status, r.Holder = string(engine.StatusRunning), "on the server"
			continue
		}
		if k, ok := known[r.ID]; ok && k.Status != "" && k.Status != string(engine.StatusRunning) && k.Latest == r.Latest && r.Latest != "" {
			r.Status = k.Status
			continue
		}
		if read >= maxStatus {
			continue
		}
		read++
		snap, err := g.GetState(ctx, engine.WithThread(r.ID))
		if err != nil {
			r.Status = statusUnreadable
			continue
		}
		r.Status = string(engine.StatusOf(snap, leases[r.ID]))
		if r.Latest == "" {
			r.Latest = snap.Ref.CheckpointID
		}
	}
}

// threadPage is how many threads the list asks the store for at first;
// "More threads" asks for as many again. A store of 10,000 threads opens
// on its newest hundred.
const threadPage = 100

// threadQuery is what the thread list asks the store for.
type threadQuery struct {
	// Search keeps threads whose id contains it, ignoring case; "" keeps
	// every thread.
	Search string
	// Limit is the most rows; 0 (or less) is threadPage.
	Limit int
}

func (q threadQuery) limit() int {
	if q.Limit <= 0 {
		return threadPage
	}
	return q.Limit
}

// listThreads returns the newest q.limit() threads of the store tagged
// with the graph's name (threads with no tag, written by other programs,
// are listed too) whose ids match q.Search, newest first, with their
// status, and whether the store holds more; known rows lend their status
// to threads that have not moved.
func (s *session) listThreads(ctx context.Context, q threadQuery, known map[string]threadRow) ([]threadRow, bool, error) {
	g, saver := s.current()
	if saver == nil || g == nil {
		return nil, false, nil
	}
	var infos []checkpoint.ThreadInfo
	var more bool
	var err error
	if ts, ok := saver.(checkpoint.ThreadSearcher); ok {
		infos, more, err = graphThreads(ctx, ts, g.Name(), q.Search, q.limit())
	} else {
		infos, more, err = s.listThreadsSlow(ctx, saver, g.Name(), q.Search, q.limit())
	}
	if err != nil {
		return nil, false, err
	}
	out := make([]threadRow, len(infos))
	for i, in := range infos {
		out[i] = threadRow{ID: in.ThreadID, Step: in.LatestMeta.Step, Source: in.LatestMeta.Source,
			Updated: in.UpdatedAt, Count: in.Checkpoints, Latest: in.Latest.CheckpointID, Busy: in.Busy}
	}
	s.statuses(ctx, out, known)
	return out, more, nil
}

// graphThreads asks ts for the newest limit threads of graph (tagged with
// its name, or with no tag) whose ids contain search. One unfiltered page
// serves when every thread on it is the graph's, as in a store of one
// graph; otherwise two filtered pages are merged in the store's order.
// (Each query walks every thread's head, so the usual store pays for one.)
func graphThreads(ctx context.Context, ts checkpoint.ThreadSearcher, graph, search string, limit int) ([]checkpoint.ThreadInfo, bool, error) {
	p, err := ts.SearchThreads(ctx, checkpoint.ThreadQuery{Limit: limit, Search: search})
	if err != nil {
		return nil, false, err
	}
	if !slices.ContainsFunc(p.Threads, func(in checkpoint.ThreadInfo) bool { return !ofGraph(in.LatestMeta, graph) }) {
		return p.Threads, p.More, nil
	}
	var pages [2]checkpoint.ThreadPage
	for i, tag := range []any{graph, nil} {
		p, err := ts.SearchThreads(ctx, checkpoint.ThreadQuery{Limit: limit, Search: search, Filter: map[string]any{graphTag: tag}})
		if err != nil {
			return nil, false, err
		}
		pages[i] = p
	}
	all := append(pages[0].Threads, pages[1].Threads...)
	slices.SortFunc(all, newestThreadFirst)
	more := pages[0].More || pages[1].More || len(all) > limit
	return all[:min(len(all), limit)], more, nil
}

// ofGraph reports whether a thread whose latest root checkpoint has
// metadata md is listed under graph: tagged with its name, or not tagged
// (the two filters graphThreads asks the store for).
func ofGraph(md checkpoint.Metadata, graph string) bool {
	tag, ok := md.Extra[graphTag]
	return !ok || tag == nil || tag == graph
}

// newestThreadFirst orders threads as checkpoint.ThreadLister does: newest
// latest root checkpoint first (ids are UUIDv7), ties by thread id.
func newestThreadFirst(a, b checkpoint.ThreadInfo) int {
	if c := strings.Compare(b.Latest.CheckpointID, a.Latest.CheckpointID); c != 0 {
		return c
	}
	return strings.Compare(a.ThreadID, b.ThreadID)
}

// listThreadsSlow lists the threads of a saver that cannot page them:
// ListThreads when it can, else every root checkpoint read; the graph and
// the search are applied here.
func (s *session) listThreadsSlow(ctx context.Context, saver checkpoint.Saver, graph, search string, limit int) ([]checkpoint.ThreadInfo, bool, error) {
	var infos []checkpoint.ThreadInfo
	if tl, ok := saver.(checkpoint.ThreadLister); ok {
		var err error
		if infos, err = tl.ListThreads(ctx, 0); err != nil {
			return nil, false, err
		}
	} else {
		root := ""
		seen := map[string]int{}
		for tp, err := range saver.List(ctx, checkpoint.ListOptions{NS: &root}) {
			if err != nil {
				return nil, false, err
			}
			if i, ok := seen[tp.Ref.ThreadID]; ok {
				infos[i].Checkpoints++
				continue
			}
			seen[tp.Ref.ThreadID] = len(infos)
			infos = append(infos, checkpoint.ThreadInfo{ThreadID: tp.Ref.ThreadID, Latest: tp.Ref, LatestMeta: tp.Metadata, UpdatedAt: tp.Checkpoint.TS, Checkpoints: 1})
		}
		slices.SortFunc(infos, newestThreadFirst)
	}
	search = strings.ToLower(search)
	out := infos[:0]
	for _, in := range infos {
		if !ofGraph(in.LatestMeta, graph) {
			continue
		}
		if search != "" && !strings.Contains(strings.ToLower(in.ThreadID), search) {
			continue
		}
		out = append(out, in)
	}
	return out[:min(len(out), limit)], len(out) > limit, nil
}

// threadExists reports whether the store holds a checkpoint of thread;
// false when it cannot be read.
func (s *session) threadExists(ctx context.Context, thread string) bool {
	hs, err := s.headers(ctx, thread, "", 1)
	return err == nil && len(hs) > 0
}

// headers returns the root checkpoints of a thread older than before (""
// for all), newest first, without values when the saver can
// (HeaderLister). limit 0 reads them all.
func (s *session) headers(ctx context.Context, thread, before string, limit int) ([]checkpoint.Header, error) {
	root := ""
	return s.listHeaders(ctx, checkpoint.ListOptions{ThreadID: thread, NS: &root, Limit: limit, Before: before})
}

// nsHeaders returns up to limit headers of namespace ns of thread, newest
// first.
func (s *session) nsHeaders(ctx context.Context, thread, ns string, limit int) ([]checkpoint.Header, error) {
	return s.listHeaders(ctx, checkpoint.ListOptions{ThreadID: thread, NS: &ns, Limit: limit})
}

// listHeaders lists headers without values when the saver can
// (HeaderLister), else from full checkpoints.
func (s *session) listHeaders(ctx context.Context, opts checkpoint.ListOptions) ([]checkpoint.Header, error) {
	_, saver := s.current()
	if hl, ok := saver.(checkpoint.HeaderLister); ok {
		return hl.ListHeaders(ctx, opts)
	}
	var out []checkpoint.Header
	for tp, err := range saver.List(ctx, opts) {
		if err != nil {
			return nil, err
		}
		out = append(out, checkpoint.Header{Ref: tp.Ref, Parent: tp.Parent, TS: tp.Checkpoint.TS, Metadata: tp.Metadata})
	}
	return out, nil
}

// view is what the inspector and the graph show for one checkpoint.
type view struct {
	Snap   *engine.Snapshot
	Parent *engine.Snapshot // nil for the first checkpoint
	Latest bool
	// Answered says the interrupts of the thread's latest checkpoint have
	// an answer stored for a worker (Leave for workers) that no run has
	// used yet.
	Answered bool
	// NS is the namespace of a subgraph checkpoint's view ("" for the
	// graph's own); Chans are then the subgraph's channels.
	NS    string
	Chans []engine.ChannelInfo
}

// failed reports whether a task of the view's step failed.
func (v *view) failed() bool {
	return slices.ContainsFunc(v.Snap.Tasks, func(t engine.TaskState) bool { return t.Error != "" })
}

// viewSig sums up what of a view another process can change without
// adding a checkpoint (answers, errors and results stored as pending
// writes), to tell whether a view read again differs.
func viewSig(v *view) string {
	var b strings.Builder
	b.WriteString(v.Snap.Ref.CheckpointID)
	fmt.Fprintf(&b, "|%d|%d|%t", len(v.Snap.Interrupts), len(v.Snap.Next), v.Answered)
	for _, it := range v.Snap.Interrupts {
		b.WriteString("|" + it.ID)
	}
	for _, t := range v.Snap.Tasks {
		fmt.Fprintf(&b, "|%s:%d:%d:%t", t.ID, len(t.Result), len(t.Interrupts), t.Error != "")
	}
	return b.String()
}

// marks reads the stored writes of checkpoints ids of thread: whether
// their step asked a question or failed.
func (s *session) marks(ctx context.Context, thread string, ids []string) (map[string]mark, error) {
	_, saver := s.current()
	wk, kinds := saver.(checkpoint.WriteKindsReader) // no values read
	out := make(map[string]mark, len(ids))
	for _, id := range ids {
		ref := checkpoint.Ref{ThreadID: thread, CheckpointID: id}
		var ws []checkpoint.PendingWrite
		var err error
		if kinds {
			ws, err = wk.WriteKinds(ctx, ref)
		} else {
			var tp *checkpoint.Tuple
			if tp, err = saver.Get(ctx, ref); err == nil {
				ws = tp.PendingWrites
			}
		}
		if err != nil {
			if errors.Is(err, checkpoint.ErrNotFound) {
				continue
			}
			return out, err
		}
		out[id] = markOf(ws)
	}
	return out, nil
}

// markOf is what a checkpoint's pending writes say about its step: an
// error of a task that has not finished since, or a question.
func markOf(ws []checkpoint.PendingWrite) mark {
	errs, ints, done := map[string]bool{}, false, map[string]bool{}
	for _, w := range ws {
		switch w.Channel {
		case checkpoint.Error:
			errs[w.TaskID] = true
		case checkpoint.Interrupt:
			ints = true
		default:
			if !strings.HasPrefix(w.Channel, "__") || w.Channel == checkpoint.NoWrites {
				done[w.TaskID] = true
			}
		}
	}
	for id := range errs {
		if !done[id] {
			return markError
		}
	}
	if ints {
		return markInterrupt
	}
	return markNone
}

// load reads the snapshot of a checkpoint ("" for the latest) and its
// parent's, for the diff.
func (s *session) load(ctx context.Context, thread, id string, latest bool) (*view, error) {
	g, _ := s.current()
	opts := []engine.RunOption{engine.WithThread(thread)}
	if id != "" && !latest {
		opts = append(opts, engine.WithCheckpoint(id))
	}
	if hasSubgraphs(g.Topology()) {
		// Subgraph tasks with their own state, for the inspector and
		// the nodes inside expanded subgraphs.
		opts = append(opts, engine.WithSubgraphs())
	}
	snap, err := g.GetState(ctx, opts...)
	if err != nil {
		return nil, err
	}
	v := &view{Snap: snap, Latest: latest}
	if latest && len(snap.OpenInterrupts()) > 0 {
		v.Answered, _ = g.AnswerWaiting(ctx, engine.WithThread(thread))
	}
	if snap.Parent != nil && snap.Parent.CheckpointID != "" {
		p, err := g.GetState(ctx, engine.WithThread(thread), engine.WithCheckpoint(snap.Parent.CheckpointID))
		if err == nil {
			v.Parent = p
		}
	}
	return v, nil
}

// runRequest describes one run of the engine.
type runRequest struct {
	Thread     string
	Input      engine.Input // nil continues the thread
	Checkpoint string       // replay or branch from this checkpoint; "" for the latest
	StepLimit  int          // 1 for Step; 0 runs to the next stop
	Before     []string     // breakpoints
	After      []string
	Observer   func(engine.Event)
	Phases     engine.PhaseFunc // the debugger's phase hook; nil for none
	SubPhases  bool             // Phases also sees the phases inside subgraph nodes
}

// runOutcome is the result of a run with its wall time.
type runOutcome struct {
	Res     *engine.Result
	Elapsed time.Duration
}

// errBusy is returned when a run is asked for while one is going.
var errBusy = errors.New("a run is already going: pause or cancel it first")

// run runs the graph per req. Pause stops it cleanly before the next
// super-step; cancel aborts it.
func (s *session) run(req runRequest) (*runOutcome, error) {
	if !s.running.CompareAndSwap(false, true) {
		return nil, errBusy
	}
	defer s.running.Store(false)
	g, _ := s.current()
	ctx, cancel := context.WithCancel(context.Background())
	s.mu.Lock()
	s.cancel = cancel
	s.mu.Unlock()
	defer func() {
		cancel()
		s.mu.Lock()
		s.cancel = nil
		s.mu.Unlock()
	}()
	s.pause.Store(false)
	opts := []engine.RunOption{
		engine.WithThread(req.Thread),
		engine.WithStopCheck(s.pause.Load),
	}
	// The studio's breakpoints (seeded from the compiled ones, see
	// seedBreakpoints) replace the compiled ones: what the graph shows is
	// what stops a run, none included.
	opts = append(opts, engine.BreakBefore(req.Before...), engine.BreakAfter(req.After...))
	if req.StepLimit > 0 {
		opts = append(opts, engine.WithStepLimit(req.StepLimit))
	}
	if req.Phases != nil {
		opts = append(opts, engine.WithPhases(req.Phases))
		if req.SubPhases {
			opts = append(opts, engine.WithSubgraphPhases())
		}
	}
	if req.Checkpoint != "" {
		opts = append(opts, engine.WithCheckpoint(req.Checkpoint))
	}
	if req.Observer != nil {
		obs := req.Observer
		opts = append(opts, engine.WithObserver(engine.ModeAll, func(ev engine.Event) {
			defer func() { _ = recover() }() // a value's String method is user code
			obs(ev)
		}))
	}
	start := time.Now()
	res, err := g.Invoke(ctx, req.Input, opts...)
	out := &runOutcome{Res: res, Elapsed: time.Since(start)}
	if err != nil {
		return out, err
	}
	return out, nil
}

// requestPause asks the run to stop before its next super-step.
func (s *session) requestPause() { s.pause.Store(true) }

// cancelRun aborts the run in progress, if any.
func (s *session) cancelRun() {
	s.mu.Lock()
	c := s.cancel
	s.mu.Unlock()
	if c != nil {
		c()
	}
}

// fork writes value (JSON) to channel at checkpoint id as node asNode ("" to
// infer) and returns the new checkpoint, a branch of the thread.
func (s *session) fork(ctx context.Context, thread, id, channel string, value []byte, asNode string) (checkpoint.Ref, error) {
	g, _ := s.current()
	w, err := s.replaceWrite(channel, value)
	if err != nil {
		return checkpoint.Ref{}, err
	}
	return g.UpdateState(ctx, engine.Updates(w), asNode, engine.WithThread(thread), engine.WithCheckpoint(id))
}

// submit stores answers on the thread's latest checkpoint without running
// anything: a worker process sharing the store (weft worker) resumes it.
func (s *session) submit(ctx context.Context, thread string, cmd engine.Command) (checkpoint.Ref, error) {
	g, _ := s.current()
	return g.SubmitAnswer(ctx, cmd, engine.WithThread(thread))
}

// replaceWrite decodes JSON into the channel's Go type and returns the write
// that sets the channel outright (skipping its reducer).
func (s *session) replaceWrite(channel string, value []byte) (engine.Write, error) {
	g, _ := s.current()
	if g.IsView() {
		// A server's graph: the server decodes and reduces the value.
		var v any
		if err := json.Unmarshal(value, &v); err != nil {
			return engine.Write{}, fmt.Errorf("%s: not JSON: %v", channel, err)
		}
		return engine.Write{Channel: channel, Value: v}, nil
	}
	v, err := g.DecodeValue(channel, value)
	if err != nil {
		return engine.Write{}, err
	}
	return g.Replace(channel, v)
}

// decodeInput parses a new thread's input.
func (s *session) decodeInput(data []byte) (engine.Values, error) {
	g, _ := s.current()
	if g.IsView() {
		// A server's graph: the server checks the input against its schema.
		var v engine.Values
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, fmt.Errorf("the input must be a JSON object of the graph's input: %v", err)
		}
		if v == nil {
			return nil, errors.New("the input must be a JSON object of the graph's input, not null")
		}
		return v, nil
	}
	return g.DecodeValues(data)
}

// describeErr turns an engine error into what the Errors tab shows.
func describeErr(err error) (node, msg string) {
	var ne *engine.NodeError
	if errors.As(err, &ne) {
		msg = ne.Err.Error()
		if ne.Panic {
			msg = "panic: " + msg
		}
		return ne.Node, msg
	}
	return "", strings.TrimSpace(err.Error())
}
