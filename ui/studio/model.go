package studio

import (
	"slices"
	"strings"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
)

// part is a set of parts of the model. A listener is told the union of
// the parts one update changed, once, after the update is done.
type part uint32

const (
	chStore       part = 1 << iota // another store is open
	chGraph                        // another graph is selected
	chThreads                      // the thread list
	chThread                       // another thread (or none) is current: a new scope
	chTimeline                     // headers were added or marks found
	chSelection                    // another checkpoint is selected (its view may still load)
	chView                         // the selected checkpoint's view arrived
	chRun                          // a run started, showed as busy, or ended
	chLive                         // the tasks of the run in progress moved
	chBreakpoints                  // breakpoints were set or cleared
	chErrors                       // the thread's errors
	chEvents                       // the thread's event log
	chNote                         // the status bar's short note
	chInterrupts                   // the questions pending at the thread's head
	chPhase                        // a step into stopped at a phase, or went on
	chDebug                        // the graph's watches or expression breakpoints
	chWatch                        // watch values (at the selection or along the thread)
	chSubSel                       // a subgraph checkpoint was picked on a sub-lane, or left
	chThreadQuery                  // the thread list asks the store for other threads (a search, more)
	chStorage                      // what the storage window read of the store, or an operation on it began or ended

	chAll part = 1<<iota - 1
)

// model is the studio's one observable state: the store, the graph, the
// thread and everything that belongs to it (timeline, selected checkpoint
// and its view, errors, events, live run), the run status and breakpoints.
// Panels read it and subscribe to the parts they show; the studio's
// controller subscribes too, to load what a change asks for.
//
// What belongs to a thread lives in a scope, which is replaced (never
// cleared) when the store, the graph or the thread changes: nothing of one
// thread can stay on screen under another, and background work holding the
// old scope writes into a scope nobody shows.
//
// All methods must be called on the UI goroutine.
type model struct {
	graphs    []Graph
	graphIdx  int // -1 when there are no graphs
	store     checkpoint.Saver
	storeName string
	threads   []threadRow
	// moreThreads: the store holds more threads matching threadQ than
	// threads (they are read a page at a time).
	moreThreads bool
	// threadsRead: threads is what the store answered for this store,
	// graph and query, not the empty list a switch left while the store
	// is read (a LangGraph thread of hundreds of megabytes takes seconds).
	threadsRead bool
	threadQ     threadQuery
	rowsGen     int // counts rows the window wrote itself (setThreadRow)
	sc          *scope
	run         runStatus
	brk         breakpoints
	dbg         debugSet // the graph's watches and expression breakpoints
	note        string
	storage     storageState // what the storage window shows of the store

	subs    []*subscriber
	depth   int
	pending part
}

type subscriber struct {
	mask part
	fn   func(part)
}

// runStatus is what the window knows of the engine run in progress.
type runStatus struct {
	Going   bool      // a run is in progress (possibly not shown yet)
	Busy    bool      // shown as busy: the run outlasted busyDelay
	Kind    runKind   // what the run does
	Thread  string    // the thread it runs
	Started time.Time // when it started
	Last    time.Duration
}

// breakpoints are the studio's breakpoints: the whole truth for its runs.
type breakpoints struct {
	All           bool
	Before, After map[string]bool
}

// scope is what belongs to one thread of one graph in one store.
type scope struct {
	thread   string
	tl       *timeline
	complete bool            // tl holds every header of the thread
	read     int             // headers read so far while a long timeline loads, for the status line
	marks    map[string]mark // checkpoint id → what its stored writes say
	head     string          // the thread's latest checkpoint
	sel      string          // the selected checkpoint
	view     *view           // the selected checkpoint's view; may lag sel while it loads
	viewErr  error           // why sel could not be read; nil when it could or while it loads
	status   string          // where the thread's last run stopped ("interrupted at review")
	followed bool            // a run started elsewhere is followed on the thread (follow.go)
	errors   []errRow
	events   []evRow
	stream   []streamMsg // messages streaming in the run in progress
	calls    []liveCall  // model and tool calls of the thread's latest run
	sub      *subLanes   // the selected checkpoint's subgraph tasks' checkpoints
	// live holds, while a run goes, the node IDs (as the graph view names
	// them) of tasks running (true) or finished (false) in this step.
	live  map[string]bool
	pulse bool
	dbg   scopeDebug // the debugger's state on this thread
}

// mark is what a checkpoint's stored writes say about its step.
type mark uint8

const (
	markNone      mark = iota
	markInterrupt      // a task asked a question
	markError          // a task failed
)

func newScope(thread string) *scope {
	return &scope{thread: thread, tl: newTimeline(), marks: map[string]mark{}}
}

func newModel(graphs []Graph, store checkpoint.Saver, storeName string) *model {
	m := &model{graphs: graphs, graphIdx: -1, store: store, storeName: storeName, sc: newScope("")}
	if storeName == "" {
		m.storeName = "store"
	}
	m.brk = breakpoints{Before: map[string]bool{}, After: map[string]bool{}}
	return m
}

// subscribe calls fn after every update that changes a part in mask,
// until the returned func is called (a window that closes stops
// listening).
func (m *model) subscribe(mask part, fn func(part)) (unsubscribe func()) {
	s := &subscriber{mask, fn}
	m.subs = append(m.subs, s)
	return func() {
		s.mask = 0 // a flush going on skips it
		m.subs = slices.DeleteFunc(slices.Clone(m.subs), func(x *subscriber) bool { return x == s })
	}
}

// update runs fn and then tells listeners, once, everything it changed.
func (m *model) update(fn func()) {
	m.depth++
	defer func() {
		m.depth--
		if m.depth == 0 {
			m.flush()
		}
	}()
	fn()
}

// changed records c and tells listeners unless an update is going on.
func (m *model) changed(c part) {
	m.pending |= c
	if m.depth == 0 {
		m.flush()
	}
}

func (m *model) flush() {
	for m.pending != 0 {
		c := m.pending
		m.pending = 0
		m.depth++ // changes made by listeners are told after this round
		for _, s := range m.subs {
			if s.mask&c != 0 {
				s.fn(c)
			}
		}
		m.depth--
	}
}

// graph returns the selected graph (zero when none).
func (m *model) graph() Graph {
	if m.graphIdx < 0 || m.graphIdx >= len(m.graphs) {
		return Graph{}
	}
	return m.graphs[m.graphIdx]
}

// channels returns the selected graph's channels.
func (m *model) channels() []engine.ChannelInfo {
	if g := m.graph().Graph; g != nil {
		return g.Channels()
	}
	return nil
}

// scope returns the current thread's scope (never nil).
func (m *model) scope() *scope { return m.sc }

// thread returns the current thread id, "" for none.
func (m *model) thread() string { return m.sc.thread }

// setStore switches to another store: the thread list and the thread go.
func (m *model) setStore(s checkpoint.Saver, name string) {
	m.store, m.storeName = s, name
	m.threads, m.moreThreads, m.threadQ.Limit, m.threadsRead = nil, false, 0, false
	m.sc = newScope("")
	m.storage = storageState{}
	m.changed(chStore | chThreads | chThread | chStorage)
}

// setGraphs replaces the graphs offered (another store's: a LangGraph
// store's view graphs, or the program's own again) and selects the first.
func (m *model) setGraphs(graphs []Graph) {
	m.graphs = graphs
	m.graphIdx = -1
	m.threads, m.moreThreads, m.threadQ.Limit, m.threadsRead = nil, false, 0, false
	m.sc = newScope("")
	if len(graphs) > 0 {
		m.setGraph(0)
		return
	}
	m.changed(chGraph | chThreads | chThread)
}

// readOnly reports whether the selected graph is a view of threads
// another program wrote (engine.Graph.IsView) that Weft cannot run: a
// LangGraph store, where nothing can run or be written.
func (m *model) readOnly() bool {
	g := m.graph().Graph
	return g != nil && g.IsView() && !g.ViewRuns()
}

// isView reports whether the selected graph is a view, read-only or run
// elsewhere (a LangGraph server's): what only Weft's engine does (step
// into phases, what-if writes, answers left for workers) is not offered.
func (m *model) isView() bool {
	g := m.graph().Graph
	return g != nil && g.IsView()
}

// setGraph selects graph i: its breakpoints are the ones it was compiled
// with; the thread list and the thread go.
func (m *model) setGraph(i int) {
	if i < 0 || i >= len(m.graphs) {
		return
	}
	m.graphIdx = i
	m.threads, m.moreThreads, m.threadQ.Limit, m.threadsRead = nil, false, 0, false
	m.sc = newScope("")
	m.brk = seedBreakpoints(m.graphs[i].Graph)
	m.resetDebug(m.graphs[i].Graph)
	m.changed(chGraph | chThreads | chThread | chBreakpoints | chDebug)
}

// setThreads replaces the thread list; more says the store holds more
// threads matching the query.
func (m *model) setThreads(rows []threadRow, more bool) {
	m.threads, m.moreThreads, m.threadsRead = rows, more, true
	m.changed(chThreads)
}

// setThreadQuery asks the store for other threads: another search, or
// more of them.
func (m *model) setThreadQuery(q threadQuery) {
	if q == m.threadQ {
		return
	}
	m.threadQ = q
	m.changed(chThreadQuery)
}

// setThread makes id the current thread with a fresh scope; selecting the
// current thread again changes nothing.
func (m *model) setThread(id string) {
	if id == m.sc.thread {
		return
	}
	m.sc = newScope(id)
	m.changed(chThread)
}

// threadRow returns the thread list's row of id; the zero row when the
// list does not hold it.
func (m *model) threadRow(id string) threadRow {
	for _, r := range m.threads {
		if r.ID == id {
			return r
		}
	}
	return threadRow{}
}

// hasThread reports whether the thread list holds id.
func (m *model) hasThread(id string) bool { return m.threadRow(id).ID != "" }

// setThreadRow replaces (or adds, first) the row of thread r.ID.
func (m *model) setThreadRow(r threadRow) {
	m.rowsGen++
	for i := range m.threads {
		if m.threads[i].ID == r.ID {
			m.threads[i] = r
			m.changed(chThreads)
			return
		}
	}
	m.threads = append([]threadRow{r}, m.threads...)
	m.changed(chThreads)
}

// mergeHeaders adds headers of sc's thread to its timeline; the newest
// becomes the head.
func (m *model) mergeHeaders(sc *scope, hs []checkpoint.Header) { m.mergeItems(sc, itemsOf(hs)) }

// mergeItems is mergeHeaders for headers already made timeline items (a
// long thread's pages are, off the UI goroutine); it may reorder items.
func (m *model) mergeItems(sc *scope, items []tlItem) {
	if sc.tl.merge(items) {
		sc.head = sc.tl.head()
		if sc == m.sc {
			m.changed(chTimeline)
		}
	}
}

// setMarks records marks found in stored writes.
func (m *model) setMarks(sc *scope, marks map[string]mark) {
	changed := false
	for id, k := range marks {
		if old, ok := sc.marks[id]; !ok || old != k {
			sc.marks[id] = k
			changed = true
		}
	}
	if changed && sc == m.sc {
		m.changed(chTimeline)
	}
}

// selectCheckpoint selects checkpoint id of the current thread; its view
// loads afterwards (the controller listens to chSelection).
func (m *model) selectCheckpoint(id string) {
	if id == m.sc.sel {
		return
	}
	m.sc.sel = id
	m.sc.viewErr = nil
	m.changed(chSelection)
}

// setViewErr says checkpoint id of sc could not be read: the inspector
// shows why in place of its state (a damaged row, a value over the store's
// limit), so clicking along a damaged thread needs no dialog per click.
func (m *model) setViewErr(sc *scope, id string, err error) {
	if sc != m.sc || id != sc.sel {
		return
	}
	sc.view, sc.viewErr = nil, err
	m.changed(chView)
}

// setView shows v, loaded for checkpoint id of sc. A view for a selection
// that has moved on, or for another scope, is dropped.
func (m *model) setView(sc *scope, id string, v *view) {
	if sc != m.sc || id != sc.sel {
		return
	}
	sc.view, sc.viewErr = v, nil
	mk := markNone
	switch {
	case len(v.Snap.OpenInterrupts()) > 0:
		mk = markInterrupt
	case v.failed():
		mk = markError
	}
	m.setMarks(sc, map[string]mark{v.Snap.Ref.CheckpointID: mk})
	m.changed(chView)
	if v.Latest || v.Snap.Ref.CheckpointID == sc.head {
		m.changed(chInterrupts)
	}
}

// viewFor returns the view of the selection when it is loaded.
func (sc *scope) viewFor() *view {
	if sc.view == nil || sc.view.Snap.Ref.CheckpointID != sc.sel {
		return nil
	}
	return sc.view
}

// atHead reports whether the selected checkpoint is the thread's latest.
func (sc *scope) atHead() bool { return sc.sel != "" && sc.sel == sc.head }

// pending returns the questions waiting at the thread's head, when the
// head is shown.
func (sc *scope) pending() []engine.PendingInterrupt {
	if v := sc.viewFor(); v != nil && sc.atHead() && !v.Answered {
		return v.Snap.OpenInterrupts()
	}
	return nil
}

// setStatus says where the thread's last run stopped.
func (m *model) setStatus(sc *scope, s string) {
	sc.status = s
	if sc == m.sc {
		m.changed(chRun)
	}
}

// startRun records a run in progress; it is shown as busy only by
// setBusy, so that a short run changes nothing on screen until its result.
func (m *model) startRun(kind runKind, thread string) {
	m.run.Going, m.run.Busy, m.run.Kind, m.run.Thread, m.run.Started = true, false, kind, thread, time.Now()
	m.sc.live = nil
	m.sc.calls = nil
}

// setBusy shows the run in progress as busy.
func (m *model) setBusy() {
	if m.run.Going && !m.run.Busy {
		m.run.Busy = true
		m.changed(chRun)
	}
}

// endRun records that the run ended after elapsed.
func (m *model) endRun(elapsed time.Duration) {
	wasBusy := m.run.Busy
	m.run.Going, m.run.Busy = false, false
	if elapsed > 0 {
		m.run.Last = elapsed
	}
	m.sc.live, m.sc.pulse = nil, false
	m.changed(chRun)
	if wasBusy {
		m.changed(chLive)
	}
}

// taskMoved records a task of the run in progress (the window's own, or
// one started elsewhere that it follows) starting (running) or ending, by
// node ID.
func (m *model) taskMoved(sc *scope, id string, running bool) {
	if (!m.run.Going && !sc.followed) || sc != m.sc {
		return
	}
	if sc.live == nil {
		sc.live = map[string]bool{}
	}
	sc.live[id] = running
	m.changed(chLive)
}

// setFollowed marks sc's thread as running elsewhere and followed, or
// ends that: the graph's live tasks and the streamed tokens are cleared
// at either.
func (m *model) setFollowed(sc *scope, on bool) {
	sc.followed, sc.live, sc.pulse, sc.stream = on, nil, false, nil
	if sc == m.sc {
		m.changed(chLive | chRun) // Cancel stops a followed run
	}
}

// togglePulse makes running nodes pulse.
func (m *model) togglePulse() {
	for _, on := range m.sc.live {
		if on {
			m.sc.pulse = !m.sc.pulse
			m.changed(chLive)
			return
		}
	}
}

// addError records a failure on sc's thread.
func (m *model) addError(sc *scope, r errRow) {
	r.Thread = sc.thread
	for i := range sc.errors {
		o := &sc.errors[i]
		if o.Node == r.Node && sameError(o.Msg, r.Msg) {
			if r.Input != "" && (o.Input == "" || o.pendingInput) {
				o.Input, o.pendingInput = r.Input, r.pendingInput
				if sc == m.sc {
					m.changed(chErrors)
				}
			}
			return
		}
	}
	sc.errors = append(sc.errors, r)
	if sc == m.sc {
		m.changed(chErrors)
	}
}

// addEvents appends rows to sc's event log, keeping the newest maxEvents.
func (m *model) addEvents(sc *scope, rows []evRow) {
	if len(rows) == 0 {
		return
	}
	sc.events = mergeEvents(sc.events, rows)
	if over := len(sc.events) - maxEvents; over > 0 {
		sc.events = append(sc.events[:0:0], sc.events[over:]...)
	}
	if sc == m.sc {
		m.changed(chEvents)
	}
}

// clearEvents empties the current thread's event log.
func (m *model) clearEvents() {
	m.sc.events = nil
	m.changed(chEvents)
}

// setNote shows a short note in the status bar ("" clears it).
func (m *model) setNote(s string) {
	if s != m.note {
		m.note = s
		m.changed(chNote)
	}
}

// seedBreakpoints starts a graph's breakpoints from those it was compiled
// with, so they show on the graph and can be toggled off like any other:
// the studio's set is then the whole truth for its runs. A compiled "*"
// before every node is the Break-on-every-node switch.
func seedBreakpoints(g *engine.Graph) breakpoints {
	b := breakpoints{Before: map[string]bool{}, After: map[string]bool{}}
	if g == nil {
		return b
	}
	before, after := g.Breakpoints()
	for _, n := range before {
		if n == "*" {
			b.All = true
			continue
		}
		b.Before[n] = true
	}
	for _, n := range after {
		if n == "*" {
			for _, node := range g.Nodes() {
				b.After[node] = true
			}
			continue
		}
		b.After[n] = true
	}
	return b
}

// toggleBreakpoint flips the breakpoint before or after node.
func (m *model) toggleBreakpoint(node string, after bool) {
	set := m.brk.Before
	if after {
		set = m.brk.After
	}
	set[node] = !set[node]
	m.changed(chBreakpoints)
}

// setBreakAll turns "break on every node" on or off.
func (m *model) setBreakAll(on bool) {
	if m.brk.All != on {
		m.brk.All = on
		m.changed(chBreakpoints)
	}
}

// clearBreakpoints removes every breakpoint.
func (m *model) clearBreakpoints() {
	m.brk = breakpoints{Before: map[string]bool{}, After: map[string]bool{}}
	m.changed(chBreakpoints)
}

// lists returns the run options' breakpoint lists; nodes inside subgraph
// nodes go by their engine path ("summarize|gather").
func (b breakpoints) lists() (before, after []string) {
	if b.All {
		before = []string{"*"}
	}
	for n, on := range b.Before {
		if on && (!b.All || strings.Contains(n, "/")) {
			before = append(before, enginePath(n))
		}
	}
	for n, on := range b.After {
		if on {
			after = append(after, enginePath(n))
		}
	}
	return before, after
}

// sameError reports whether two error texts tell of one failure: the run's
// error and the stored task error differ by a "panic: " prefix or context.
func sameError(a, b string) bool {
	a, b = strings.TrimPrefix(a, "panic: "), strings.TrimPrefix(b, "panic: ")
	return a == b || a != "" && b != "" && (strings.Contains(a, b) || strings.Contains(b, a))
}
