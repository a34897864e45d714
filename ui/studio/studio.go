// Package studio is Weft's studio window as a testable package: graphs and
// threads, run controls with breakpoints, the graph with live highlights, a
// state inspector with diffs and a chat view, a checkpoint timeline with
// forks, inline interrupt answers, the event log and the errors of a run.
//
// The window has one observable model (store, graph, thread, selected
// checkpoint, run status, pending interrupts, breakpoints) that its panels
// subscribe to; each panel is a widget of its own that tests build alone.
// The Studio is the controller: it listens to the model too, and does what
// a change asks for (loading a timeline or a checkpoint, running the
// engine) off the UI goroutine, applying each result in one model update.
//
// It never imports fyne.io/fyne/v2/app: the caller makes the app (package
// ui does, for the weft binary and for users' own programs; tests use
// fyne.io/fyne/v2/test) and hands it to New.
package studio

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/longterm"
	"github.com/weftstudio/weft/checkpoint/store"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/render"
)

// Graph is one graph the studio offers: a compiled graph (its saver, if
// any, is replaced by the studio's store), a one-line description and an
// example input that pre-fills the new-thread form. A zero Description or
// nil Example just leaves those empty.
type Graph struct {
	Graph       *engine.Graph
	Description string
	Example     engine.Values
	// Input is the new-thread form's fields for a graph that declares no
	// channels (a LangGraph server's, from its input schema); nil uses the
	// graph's channels, and a form of none is JSON alone.
	Input []engine.ChannelInfo
}

// Config is what New needs. Store is an open saver (required); StoreName is
// how the status bar names it (e.g. "weft.db"; "" shows "store"). Graphs
// are offered in order, the first selected; entries with a nil Graph are
// skipped. OpenStore opens another store for File → Open from what the
// user typed or picked (a path or a DSN) and returns it with its display
// name; nil disables File → Open. The studio does not close stores: the
// caller owns them.
type Config struct {
	Store     checkpoint.Saver
	StoreName string
	Graphs    []Graph
	OpenStore func(spec string) (checkpoint.Saver, string, error)
	// OpenServer connects to the LangGraph server at addr (http or
	// https) with apiKey ("" for the environment's, see agentclient) for
	// File → Connect to server…, and returns its saver and display name;
	// nil disables the item.
	OpenServer func(addr, apiKey string) (checkpoint.Saver, string, error)
	// Package is the folder of the program's main package, where File →
	// Save as test proposes to write; "" proposes the working directory.
	Package string
	// LongTerm is the long-term store the graphs' nodes get and the Store
	// tab shows, for graphs compiled without one; nil uses the one the
	// checkpoint store keeps (SQLite and PostgreSQL do), if any.
	LongTerm longterm.Store
	// Embedder gives the long-term store the checkpoint store keeps
	// semantic search (when LongTerm is nil); nil searches by filter alone.
	Embedder longterm.Embedder
}

// Studio is the studio window. Create it with New; all methods must be
// called on the UI goroutine.
type Studio struct {
	app  fyne.App
	win  fyne.Window
	cfg  Config
	sess *session
	m    *model
	acts *actions

	layouter *render.Layouter

	*frame          // the panels and how the window arranges them
	dbg    *debugUI // the debugger's panels and state

	marksLoading map[string]bool // checkpoint ids whose marks are being read
	stopWatch    context.CancelFunc
	follow       following // the run started elsewhere being followed (follow.go)
	stopLoad     func()    // cancels the questions to a server being opened; nil when none is

	afterView func() // what to do once the next view is shown

	// The edit-run loop (restore.go, buildpanel.go).
	older    []*engine.Topology // graph shapes of earlier sessions (Restore)
	holdHead *scope             // a scope whose head is not selected yet: Restore checks its checkpoint
	storage  *storageConsole    // the open storage window
	lts      *storePanel        // the long-term store's panel, shown in ltsWin
	ltsWin   fyne.Window        // the open long-term store window; nil when closed
}

// busyDelay is how long a run goes before the window shows it as busy: a
// step that ends sooner changes nothing on screen until its result, which
// then arrives in one frame.
const busyDelay = 120 * time.Millisecond

// WindowSize is the size the studio's window opens at: it fits a 1366×768
// screen with room for a title bar and a taskbar (Fyne does not tell the
// screen's size before the window shows), and the window's content never
// asks for more (the right column's panels scroll in what the divider
// gives them, see frame.arrange).
var WindowSize = fyne.NewSize(1280, 720)

// New builds the studio window for cfg on a: content, menus and keyboard
// shortcuts, sized WindowSize, with the studio's theme. It selects the first
// graph and its newest thread. Show the window with Window().Show() (or
// ShowAndRun).
func New(a fyne.App, cfg Config) *Studio {
	uiMu.Lock() // background work started here reports only after New
	defer uiMu.Unlock()
	var graphs []Graph
	for _, g := range cfg.Graphs {
		if g.Graph != nil {
			graphs = append(graphs, g)
		}
	}
	cfg.Graphs = graphs
	s := &Studio{app: a, cfg: cfg, sess: &session{}, layouter: render.NewLayouter(), frame: &frame{}, marksLoading: map[string]bool{}}
	s.m = newModel(graphs, cfg.Store, cfg.StoreName)
	a.Settings().SetTheme(newTheme(a.Settings().Theme()))
	s.win = a.NewWindow("Weft Studio")
	s.acts = &actions{
		key: s.windowKey, run: s.Run, step: s.Step, pause: s.Pause, cancel: s.Cancel,
		newThread: s.newThreadDialog, editFork: s.editDialog, rerun: s.rerunFrom,
		resume: s.resume, leave: s.leaveForWorkers, dbg: s.newDebugActions(),
	}
	// The controller listens first: panels then see what it set up.
	s.m.subscribe(chStore|chGraph|chThread|chSelection|chView|chInterrupts|chThreadQuery, s.onChange)
	// The long-term store's window is read again when a step wrote
	// checkpoints (its nodes may have put items) and when a run ends, not
	// at every click on the timeline.
	s.m.subscribe(chTimeline|chRun, func(part) {
		if s.ltsWin != nil && !s.m.run.Going {
			s.lts.reload(s.lts.read.ns)
		}
	})
	// Shown as at the selected checkpoint, it follows the selection.
	s.m.subscribe(chThread|chSelection, func(part) {
		if s.ltsWin != nil && s.lts.asAt.Checked {
			s.lts.reload(s.lts.read.ns)
		}
	})

	s.tb = newToolbar(s.m, s.acts)
	s.th = newThreadsPanel(s.m, s.acts)
	s.gp = newGraphPanel(s.m, s.acts, s.layout)
	s.gp.onErr = s.showError
	s.gp.view.OnToggleBreakpoint = s.toggleBreakpoint
	s.insp = newInspector(s.m, s.acts)
	s.tl = newTimelinePanel(s.m)
	s.tl.onVisible = s.loadMarks
	s.ip = newInterruptPanel(s.m, s.acts)
	s.ev = newEventsPanel(s.m, s.acts)
	s.errs = newErrorsPanel(s.m, s.acts)
	s.lts = newStorePanel(storeHooks{
		load: func(work func() (storeRead, error), apply func(storeRead, error)) { goBG(s.sess, work, apply) },
		changes: func(work func() ([]longterm.Change, error), apply func([]longterm.Change, error)) {
			goBG(s.sess, work, apply)
		},
		selected: s.selectedMoment,
		goTo:     s.showWriter,
	})
	s.sb = newStatusBar(s.m)
	s.sb.tick = s.m.togglePulse
	s.newDebugUI()

	prefs := a.Preferences()
	s.win.SetContent(s.arrange(s.win.Canvas(), prefs, s.dbg))
	s.win.SetMainMenu(s.menus())
	s.installShortcuts()
	s.win.Resize(WindowSize)
	stopMemory := make(chan struct{})
	go watchMemory(stopMemory)
	s.win.SetOnClosed(func() {
		close(stopMemory)
		s.sess.closed.Store(true)
		if s.ltsWin != nil {
			s.ltsWin.Close()
		}
		s.stopFollowing()
		if s.stopLoad != nil {
			s.stopLoad()
		}
		s.saveSplits(prefs)
		if s.stopWatch != nil {
			s.stopWatch()
		}
		s.sess.cancelRun()
		s.sess.setViews(nil)
		_ = s.layouter.Close()
	})
	if isView(cfg.Store) {
		s.useStore(cfg.Store, cfg.StoreName)
	} else if len(graphs) > 0 {
		s.m.setGraph(0)
	} else {
		s.m.changed(chStore)
	}
	s.watchStore()
	return s
}

// Window returns the studio's window.
func (s *Studio) Window() fyne.Window { return s.win }

// WaitIdle blocks until the studio's background work (runs, loads, layout)
// is done; for tests and benchmarks. It must not be called on the UI
// goroutine of a real app.
func (s *Studio) WaitIdle() { s.sess.waitIdle() }

// onChange does what a change of the model asks for: bind the engine to
// the store and graph, list threads, read a thread's timeline, load the
// selected checkpoint, give a waiting question room.
func (s *Studio) onChange(c part) {
	m := s.m
	if c&(chStore|chGraph) != 0 {
		if g := m.graph(); g.Graph != nil {
			lt, why := s.longTerm(g, m.store)
			s.sess.bind(g, m.store, lt)
			s.lts.setStore(lt, why)
		} else {
			s.lts.setStore(nil, "No graph is open.")
		}
		s.refreshThreads(true)
	} else if c&chThreadQuery != 0 {
		s.refreshThreads(false)
	}
	sc := m.scope()
	if c&chThread != 0 && sc.thread != "" {
		s.loadTimeline(sc, sc.sel == "")
	}
	if c&(chThread|chSelection) != 0 && sc.sel != "" && sc.viewFor() == nil {
		s.loadView(sc, sc.sel)
	}
	if c&chView != 0 && s.afterView != nil && sc.viewFor() != nil {
		then := s.afterView
		s.afterView = nil
		defer then()
	}
	if c&chInterrupts != 0 && len(sc.pending()) > 0 {
		// A question waits: show it. The dividers stay where the user put
		// them: a moving one moves every click target under the pointer.
		s.tabs.SelectIndex(0)
	}
}

// longTerm is the long-term store g's nodes get in the window: the one g
// was compiled with, else Config.LongTerm, else the one the checkpoint
// store keeps (SQLite and PostgreSQL keep one in the same file or
// database, as the commands use it); nil with the reason when there is
// none.
func (s *Studio) longTerm(g Graph, saver checkpoint.Saver) (longterm.Store, string) {
	if lt := g.Graph.Store(); lt != nil {
		return lt, ""
	}
	if s.cfg.LongTerm != nil {
		return s.cfg.LongTerm, ""
	}
	if isView(saver) {
		return nil, "A LangGraph store or server: Weft does not read its long-term store."
	}
	lt, err := store.LongTerm(saver, longterm.Config{Embedder: s.cfg.Embedder})
	if err != nil {
		return nil, "This store keeps no long-term items: " + err.Error() + "."
	}
	return lt, ""
}

// layout lays out a topology on the render goroutine for the graph panel.
func (s *Studio) layout(topo *engine.Topology, opts render.DOTOptions, done func(*render.Geometry, error)) {
	goBG(s.sess, func() (*render.Geometry, error) {
		return s.layouter.Layout(context.Background(), topo, opts)
	}, done)
}

// refreshThreads reloads the thread list as the model's query asks; with
// pickNewest it selects the newest thread when none is selected. A
// thread's status is read again only when its latest checkpoint changed.
func (s *Studio) refreshThreads(pickNewest bool) {
	known := map[string]threadRow{}
	for _, r := range s.m.threads {
		known[r.ID] = r
	}
	graphIdx, store, gen, q := s.m.graphIdx, s.m.store, s.m.rowsGen, s.m.threadQ
	type listing struct {
		rows []threadRow
		more bool
	}
	goBG(s.sess, func() (listing, error) {
		rows, more, err := s.sess.listThreads(context.Background(), q, known)
		return listing{rows, more}, err
	}, func(l listing, err error) {
		if graphIdx != s.m.graphIdx || store != s.m.store || q != s.m.threadQ {
			return // another graph, store or query meanwhile
		}
		if err != nil {
			s.m.update(func() { s.m.setThreads(s.m.threads, s.m.moreThreads) })
			s.showError("Listing threads", err)
			return
		}
		rows := l.rows
		if gen != s.m.rowsGen {
			// The window wrote rows (a run, a new thread) while the store
			// was read: those are newer than what the listing saw.
			rows = newerRows(rows, s.m.threads)
		}
		s.m.update(func() {
			if !s.m.threadsRead || !sameRows(rows, s.m.threads) || l.more != s.m.moreThreads {
				s.m.setThreads(rows, l.more)
			}
			if pickNewest && s.m.thread() == "" && len(rows) > 0 {
				s.m.setThread(rows[0].ID)
			}
			s.followIfBusy(s.m.scope())
		})
		s.fillStatuses()
	})
}

// fillStatuses reads the statuses a listing left out (it reads at most
// maxStatus, so the list shows at once) a pass at a time, each shown as
// it arrives; it stops when a pass adds none (a thread whose state cannot
// be read keeps no status) or the list changed meanwhile.
func (s *Studio) fillStatuses() {
	before := withStatus(s.m.threads)
	if before == len(s.m.threads) {
		return
	}
	rows := slices.Clone(s.m.threads)
	known := map[string]threadRow{}
	for _, r := range rows {
		known[r.ID] = r
	}
	graphIdx, store, gen, q := s.m.graphIdx, s.m.store, s.m.rowsGen, s.m.threadQ
	goBG(s.sess, func() ([]threadRow, error) {
		s.sess.statuses(context.Background(), rows, known)
		return rows, nil
	}, func(rows []threadRow, _ error) {
		if graphIdx != s.m.graphIdx || store != s.m.store || q != s.m.threadQ || gen != s.m.rowsGen ||
			!slices.EqualFunc(rows, s.m.threads, func(a, b threadRow) bool { return a.ID == b.ID && a.Latest == b.Latest }) {
			return // the list moved on; its own listing reads what it needs
		}
		if withStatus(rows) <= before {
			return
		}
		s.m.update(func() { s.m.setThreads(rows, s.m.moreThreads) })
		s.fillStatuses()
	})
}

// withStatus counts the rows that have a status.
func withStatus(rows []threadRow) int {
	n := 0
	for _, r := range rows {
		if r.Status != "" {
			n++
		}
	}
	return n
}

// newerRows merges a listing read from the store with the rows the window
// wrote meanwhile: a row whose latest checkpoint is newer (ids are UUIDv7)
// than the listing's stays, and so does a thread the listing does not have
// yet.
func newerRows(listed, mine []threadRow) []threadRow {
	byID := map[string]int{}
	for i, r := range listed {
		byID[r.ID] = i
	}
	out := append([]threadRow(nil), listed...)
	var started []threadRow
	for _, r := range mine {
		i, ok := byID[r.ID]
		switch {
		case !ok:
			started = append(started, r)
		case r.Latest > out[i].Latest:
			out[i] = r
		}
	}
	return append(started, out...)
}

// headerPage is how many checkpoint headers the first read of the
// timeline asks for (what opens at once); each further page is twice the
// last, up to maxHeaderPage, so a long thread is read in a few queries
// while a page's headers (some 1 KB each with their metadata) stay few
// enough.
const (
	headerPage    = 2000
	maxHeaderPage = 32000
	// mergeHeaders is how many items read after the first page wait
	// before they join the timeline: each merge lays the whole timeline
	// out again on the UI goroutine, so a 100,000-checkpoint thread shows
	// its first page at once and the rest in one merge, not five.
	mergeHeaders = 100000
	// bulkHeaders is a timeline long enough that the memory its reading
	// took is handed back, handBack after the reading ends.
	bulkHeaders = 20000
	handBack    = 500 * time.Millisecond
)

// recentHeaders is how many of the newest headers a refresh reads: a step
// adds a checkpoint or two.
const recentHeaders = 64

// loadTimeline reads every header of sc's thread, newest first, a page at
// a time; the first page is shown (and, with selectHead, its head
// selected) at once. The status line counts the headers read: text that
// changes once a page, where an animated progress bar would repaint the
// window every frame and take a core from the reading (0.6 against 0.72 s
// for 100,000 headers in the real window).
func (s *Studio) loadTimeline(sc *scope, selectHead bool) {
	thread := sc.thread
	progress := func(read int) {
		uiDo(func() {
			sc.read = read
			if sc == s.m.sc {
				s.sb.update()
			}
		})
	}
	goBG(s.sess, func() (struct{}, error) {
		before, limit, read := "", headerPage, 0
		var waiting [][]tlItem // pages read, not yet merged, newest first
		waitingN := 0
		for first := true; ; first, limit = false, min(limit*2, maxHeaderPage) {
			if s.sessScope() != sc {
				return struct{}{}, nil // another thread was chosen
			}
			hs, err := s.sess.headers(context.Background(), thread, before, limit)
			if err != nil {
				return struct{}{}, err
			}
			isFirst, n := first, len(hs)
			read += n
			if n > 0 {
				before = hs[n-1].Ref.CheckpointID
			}
			waiting = append(waiting, itemsOf(hs))
			if last := n < limit; isFirst || last || waitingN+n >= mergeHeaders {
				items := oldestFirst(waiting)
				waiting, waitingN = waiting[:0], 0
				r := read
				uiDo(func() {
					if !last {
						sc.read = r
					}
					s.m.update(func() {
						s.m.mergeItems(sc, items)
						if isFirst && sc == s.m.sc && (selectHead || sc.sel == "") && sc.head != "" && s.holdHead != sc {
							s.m.selectCheckpoint(sc.head)
						}
					})
				})
			} else {
				waitingN += n
				progress(read)
			}
			if n < limit {
				uiDo(func() {
					sc.complete = true
					if sc == s.m.sc {
						s.sb.update()
					}
				})
				if read >= bulkHeaders {
					// The pages' headers are garbage now, but an idle
					// window runs no collection for two minutes, and
					// until one runs the runtime keeps their memory
					// (70 MB after 100,000 headers). A moment later, so
					// the collection does not hold up the last merge.
					time.AfterFunc(handBack, debug.FreeOSMemory)
				}
				return struct{}{}, nil
			}
		}
	}, func(_ struct{}, err error) {
		if err != nil && sc == s.m.sc {
			s.showError("Reading the timeline", err)
		}
	})
}

// sessScope returns the current scope from a background goroutine.
func (s *Studio) sessScope() *scope {
	uiMu.Lock()
	defer uiMu.Unlock()
	return s.m.sc
}

// loadView loads checkpoint id of sc for the inspector and the graph.
func (s *Studio) loadView(sc *scope, id string) {
	latest := id == sc.head
	thread := sc.thread
	goBG(s.sess, func() (*view, error) {
		return s.sess.load(context.Background(), thread, id, latest)
	}, func(v *view, err error) {
		if sc != s.m.sc || sc.sel != id {
			return
		}
		if err != nil {
			s.m.update(func() { s.m.setViewErr(sc, id, err) })
			return
		}
		s.m.update(func() { s.showView(sc, v) })
	})
}

// showView shows v in sc: when v is a newer head than the one selected
// (another process moved the thread), its header joins the timeline and it
// is selected.
func (s *Studio) showView(sc *scope, v *view) {
	id := v.Snap.Ref.CheckpointID
	if !sc.tl.knows(id) {
		s.m.mergeHeaders(sc, []checkpoint.Header{{Ref: v.Snap.Ref, Parent: v.Snap.Parent, TS: v.Snap.CreatedAt, Metadata: v.Snap.Metadata}})
	}
	if sc.sel != id {
		s.m.selectCheckpoint(id)
	}
	s.m.setView(sc, id, v)
	s.loadSubLanes(sc, v)
	if v.Latest || id == sc.head {
		for _, r := range failedTasks(v.Snap) {
			r.pendingInput = false
			s.m.addError(sc, r)
		}
	}
}

// loadMarks reads, from the store, whether the checkpoints in columns
// first..last asked a question or failed (their stored writes say), so the
// timeline marks them without their being opened.
func (s *Studio) loadMarks(first, last int) {
	sc := s.m.scope()
	var refs []string
	for i := first; i <= last; i++ {
		id := sc.tl.id(i)
		if id == "" || s.marksLoading[id] {
			continue
		}
		if _, ok := sc.marks[id]; ok {
			continue
		}
		s.marksLoading[id] = true
		refs = append(refs, id)
	}
	if len(refs) == 0 {
		return
	}
	thread := sc.thread
	goBG(s.sess, func() (map[string]mark, error) {
		return s.sess.marks(context.Background(), thread, refs)
	}, func(marks map[string]mark, err error) {
		for _, id := range refs {
			delete(s.marksLoading, id)
		}
		if err == nil {
			s.m.setMarks(sc, marks)
		}
	})
}

// toggleBreakpoint flips the breakpoint before or after node; a node
// inside an expanded subgraph is named by its path ("summarize/gather"),
// which the run passes on to the subgraph.
func (s *Studio) toggleBreakpoint(node string, after bool) { s.m.toggleBreakpoint(node, after) }

// travel selects the checkpoint before (dir < 0) or after the selected one
// on its branch.
func (s *Studio) travel(dir int) {
	sc := s.m.scope()
	var id string
	if dir < 0 {
		id = sc.tl.prev(sc.sel)
	} else {
		id = sc.tl.next(sc.sel)
	}
	if id != "" {
		s.m.selectCheckpoint(id)
	}
}

// runKind names what a run does, for the status bar.
type runKind string

const (
	kindRun    runKind = "running"
	kindStep   runKind = "stepping"
	kindResume runKind = "resuming"
	kindReplay runKind = "re-running"
	kindStart  runKind = "starting"
	// kindStepInto runs one super-step stopping at each of its phases.
	kindStepInto runKind = "stepping into"
)

// runResult is a run's outcome with what the window shows next, read on
// the run's goroutine so that it reaches the screen in one update.
type runResult struct {
	out     *runOutcome
	err     error
	headers []checkpoint.Header
	view    *view
	readErr error
}

// startRun runs the engine on the current thread. Nothing changes on
// screen until the result, unless the run outlasts busyDelay; the result
// (timeline, the new head in the inspector and graph, interrupts, errors,
// the thread's row) is applied in one model update.
func (s *Studio) startRun(kind runKind, req runRequest) {
	if s.refuseView() || (kind == kindStepInto && s.refuseEngineOnly()) {
		return
	}
	sc := s.m.scope()
	if sc.thread == "" && req.Thread == "" {
		s.newThreadDialog()
		return
	}
	if s.m.run.Going || s.sess.running.Load() {
		s.flash("A run is going: pause or cancel it first")
		return
	}
	if req.Thread == "" {
		req.Thread = sc.thread
	}
	if kind == kindResume && s.m.isView() && req.Checkpoint == "" {
		// The answer names the checkpoint whose questions the user saw:
		// a server whose thread moved meanwhile refuses it rather than
		// answer another branch (engine.ErrViewMoved).
		req.Checkpoint = sc.head
	}
	if (kind == kindRun || kind == kindStep || kind == kindStepInto) && req.Checkpoint == "" && req.Input == nil && sc.sel != "" && !sc.atHead() && sc.head != "" {
		s.askHistory(kind, req)
		return
	}
	req.Before, req.After = s.m.brk.lists()
	obs := &runObserver{s: s, sc: sc}
	req.Observer = obs.observe
	dr := s.debugRun(sc, kind, &req)
	s.m.startRun(kind, req.Thread)
	busy := time.AfterFunc(busyDelay, func() { uiDo(func() { s.m.setBusy() }) })
	thread := req.Thread
	goBG(s.sess, func() (*runResult, error) {
		r := &runResult{}
		r.out, r.err = s.sess.run(req)
		if r.err == errBusy {
			return r, nil
		}
		ctx := context.Background()
		r.headers, r.readErr = s.sess.headers(ctx, thread, "", recentHeaders)
		if r.readErr == nil && len(r.headers) > 0 {
			r.view, r.readErr = s.sess.load(ctx, thread, "", true)
		}
		return r, nil
	}, func(r *runResult, _ error) {
		busy.Stop()
		s.m.update(func() {
			obs.flush()
			dr.finish(r)
			s.applyRun(sc, r)
		})
	})
}

// applyRun shows a run's result; it runs inside one model update.
func (s *Studio) applyRun(sc *scope, r *runResult) {
	m := s.m
	var elapsed time.Duration
	if r.out != nil {
		elapsed = r.out.Elapsed
	}
	m.endRun(elapsed)
	sc.stream = nil
	if r.err == errBusy {
		s.flash(r.err.Error())
		return
	}
	switch {
	case r.err != nil && errorsIsCanceled(r.err):
		m.setStatus(sc, "cancelled")
	case errors.Is(r.err, engine.ErrViewMoved):
		m.setStatus(sc, "not sent: the thread moved")
		if sc == m.sc {
			s.showError("The thread moved", fmt.Errorf("nothing was sent: another client moved this thread since its state was read here, "+
				"and acting anyway could answer or run the wrong branch; the window now shows its new head, act again there if it still asks (%w)", r.err))
		}
	case r.err != nil:
		node, msg := describeErr(r.err)
		st := "failed"
		if node != "" {
			st = "failed at " + node
		}
		m.setStatus(sc, st)
		m.addError(sc, errRow{Node: node, Msg: msg, Input: "(see the failed task in the latest checkpoint)", pendingInput: true})
		if sc == m.sc {
			s.tabs.SelectIndex(2)
		}
	case r.out != nil:
		m.setStatus(sc, describeStop(r.out.Res, r.view, sc.dbg))
	}
	if r.readErr != nil {
		if sc == m.sc {
			s.showError("Reading the thread after the run", r.readErr)
		}
		return
	}
	before := sc.tl.count()
	m.mergeHeaders(sc, r.headers)
	if n := len(r.headers); n == recentHeaders && before > 0 && !sc.tl.knows(r.headers[n-1].Ref.CheckpointID) {
		s.loadTimeline(sc, false) // more happened than the newest page holds
	}
	if before == 0 && len(r.headers) < recentHeaders {
		sc.complete = true // a new thread: every header is here
	}
	if r.view != nil {
		s.showView(sc, r.view)
		count := sc.tl.count()
		if !sc.complete {
			count = rowCount(m, sc.thread) + sc.tl.count() - before
		}
		m.setThreadRow(threadRowOf(sc, r.view, count))
	}
}

// rowCount returns the checkpoint count the thread list has for thread.
func rowCount(m *model, thread string) int {
	for _, r := range m.threads {
		if r.ID == thread {
			return r.Count
		}
	}
	return 0
}

// threadRowOf is the thread list's row for a thread whose latest checkpoint's
// view is v.
func threadRowOf(sc *scope, v *view, count int) threadRow {
	md := v.Snap.Metadata
	return threadRow{ID: sc.thread, Step: md.Step, Source: md.Source, Updated: v.Snap.CreatedAt,
		Count: count, Status: string(engine.StatusOf(v.Snap, nil)), Latest: v.Snap.Ref.CheckpointID}
}

// askHistory asks whether a Step or Run pressed on an older checkpoint
// continues from it (a new branch) or goes to the thread's latest
// checkpoint and acts there.
func (s *Studio) askHistory(kind runKind, req runRequest) {
	sc := s.m.scope()
	v := sc.viewFor()
	step := "this checkpoint"
	if v != nil {
		step = fmt.Sprintf("step %d", v.Snap.Metadata.Step)
	}
	verb := "Step"
	switch kind {
	case kindRun:
		verb = "Run"
	case kindStepInto:
		verb = "Step into"
	}
	q := widget.NewLabel(fmt.Sprintf("You are looking at %s, not the thread's latest checkpoint.\n\n"+
		"Continue from here: %s from %s as a new branch (the later checkpoints stay).\n"+
		"Go to latest: show the latest checkpoint and %s from there.", step, verb, step, lower(verb)))
	q.Wrapping = fyne.TextWrapWord
	var dlg dialog.Dialog
	sel := sc.sel
	fromHere := widget.NewButton("Continue from here", func() {
		dlg.Hide()
		if s.m.scope() != sc {
			return
		}
		req.Checkpoint = sel
		s.startRun(kind, req)
	})
	fromHere.Importance = widget.HighImportance
	head := widget.NewButton("Go to latest", func() {
		dlg.Hide()
		if s.m.scope() != sc {
			return
		}
		s.m.selectCheckpoint(sc.head)
		if sc.viewFor() != nil {
			s.startRun(kind, req)
			return
		}
		// Act once the latest checkpoint is shown.
		s.afterView = func() {
			if s.m.scope() == sc && sc.atHead() {
				s.startRun(kind, req)
			}
		}
	})
	cancel := widget.NewButton("Cancel", func() { dlg.Hide() })
	content := container.NewBorder(nil, container.NewHBox(layoutSpacer(), cancel, head, fromHere), nil, nil, q)
	dlg = dialog.NewCustomWithoutButtons(verb+" from an older checkpoint?", content, s.win)
	dlg.Resize(fyne.NewSize(560, 240))
	showDialog(dlg, content)
}

func lower(s string) string {
	if s == "" {
		return s
	}
	return string(s[0]+'a'-'A') + s[1:]
}

// describeResult says in a few words where a run stopped.
func describeResult(r *engine.Result) string {
	switch {
	case r == nil:
		return ""
	case len(r.Interrupts) > 0:
		return "interrupted at " + r.Interrupts[0].Node
	case r.Done:
		return "done"
	case r.Breakpoint == "before":
		return "breakpoint before " + joinNames(r.Next)
	case r.Breakpoint == "after" && len(r.Next) > 0:
		return fmt.Sprintf("breakpoint after %s · next %s", joinNames(r.After), joinNames(r.Next))
	case r.Breakpoint == "after":
		return "breakpoint after " + joinNames(r.After)
	case r.Breakpoint == "step":
		return "paused · next " + joinNames(r.Next)
	}
	return "stopped"
}

// Run continues the thread to the next interrupt, breakpoint or the end
// (from a step into's phase stop: without further phase stops).
func (s *Studio) Run() {
	if !s.continuePhase(stepRunOn, false) {
		s.startRun(kindRun, runRequest{})
	}
}

// Step runs exactly one super-step of the thread (from a step into's
// phase stop: the rest of that step).
func (s *Studio) Step() {
	if !s.continuePhase(stepFinish, false) {
		s.startRun(kindStep, runRequest{StepLimit: 1})
	}
}

// Pause asks the run in progress to stop before its next super-step (a
// step into waiting at a phase stops before its step at the plan, else
// after it).
func (s *Studio) Pause() {
	if s.continuePhase(stepFinish, true) {
		return
	}
	if s.sess.running.Load() {
		s.sess.requestPause()
		s.flash("Pausing before the next step…")
	}
}

// Cancel aborts the run in progress.
func (s *Studio) Cancel() {
	if !s.m.run.Going && s.cancelFollowed() {
		return
	}
	s.sess.cancelRun()
}

// rerunFrom replays the thread from the selected checkpoint as a new branch.
func (s *Studio) rerunFrom() {
	if sel := s.m.scope().sel; sel != "" {
		s.startRun(kindReplay, runRequest{Checkpoint: sel})
	}
}

// resume answers pending interrupts: one answer (byID nil) or by id.
func (s *Studio) resume(one any, byID map[string]any) {
	cmd := engine.Command{Resume: one}
	if byID != nil {
		cmd = engine.Command{ResumeByID: byID}
	}
	s.startRun(kindResume, runRequest{Input: cmd})
}

// leaveForWorkers stores the answers without running the thread, for the
// worker processes that share a PostgreSQL (or SQLite) store: one of them
// resumes the thread with them (weft worker); the window follows the
// thread as the worker moves it.
func (s *Studio) leaveForWorkers(one any, byID map[string]any) {
	if s.refuseEngineOnly() {
		return
	}
	cmd := engine.Command{Resume: one}
	if byID != nil {
		cmd = engine.Command{ResumeByID: byID}
	}
	sc := s.m.scope()
	goBG(s.sess, func() (checkpoint.Ref, error) {
		return s.sess.submit(context.Background(), sc.thread, cmd)
	}, func(_ checkpoint.Ref, err error) {
		if err != nil {
			s.showError("Leaving the answer for workers", err)
			return
		}
		s.m.setStatus(sc, "answer stored · a worker will resume this thread")
		s.refresh()
	})
}

// startThread creates thread id from input and runs its first step, so
// the graph shows what runs next.
func (s *Studio) startThread(id string, input engine.Values) {
	s.m.update(func() {
		s.m.setThreadRow(threadRow{ID: id, Updated: time.Now()})
		s.m.setThread(id)
	})
	s.startRun(kindStart, runRequest{Thread: id, Input: input, StepLimit: 1})
}

// forkAt writes value to channel at checkpoint id of sc as asNode and
// selects the new branch; with run, the new branch then runs to its next
// stop. then is told the outcome.
func (s *Studio) forkAt(sc *scope, id, channel string, value []byte, asNode string, run bool, then func(error)) {
	thread := sc.thread
	goBG(s.sess, func() (*view, error) {
		if _, err := s.sess.fork(context.Background(), thread, id, channel, value, asNode); err != nil {
			return nil, err
		}
		return s.sess.load(context.Background(), thread, "", true)
	}, func(v *view, err error) {
		if then != nil {
			then(err)
		}
		if err != nil || sc != s.m.sc {
			return
		}
		s.m.update(func() {
			s.showView(sc, v)
			s.m.setStatus(sc, "forked · Run or Step continues the new branch")
		})
		if run {
			s.Run()
		}
	})
}

// refresh reads the store again: the thread list, the newest headers of
// the current thread and its shown checkpoint; the head is followed when
// it is shown. It is File → Reload, and what the studio does when another
// process changed the store.
func (s *Studio) refresh() {
	s.refreshThreads(false)
	sc := s.m.scope()
	if sc.thread == "" || s.m.run.Going {
		return
	}
	thread, sel, atHead := sc.thread, sc.sel, sc.atHead()
	type fresh struct {
		hs   []checkpoint.Header
		view *view
	}
	goBG(s.sess, func() (fresh, error) {
		var f fresh
		var err error
		ctx := context.Background()
		if f.hs, err = s.sess.headers(ctx, thread, "", recentHeaders); err != nil {
			return f, err
		}
		if sel != "" || len(f.hs) > 0 {
			f.view, err = s.sess.load(ctx, thread, sel, atHead || sel == "")
		}
		return f, err
	}, func(f fresh, err error) {
		if sc != s.m.sc || s.m.run.Going {
			return
		}
		if err != nil {
			// A thread deleted by another process: show it is gone.
			if !s.m.hasThread(thread) {
				s.m.setThread("")
			}
			return
		}
		s.m.update(func() {
			n := len(f.hs)
			head := sc.head
			s.m.mergeHeaders(sc, f.hs)
			if sc.head != head && head != "" {
				// Another process moved the thread: where this window's
				// last run stopped is no longer the thread's state.
				s.m.setStatus(sc, "")
			}
			if n == recentHeaders && !sc.tl.knows(f.hs[n-1].Ref.CheckpointID) {
				s.loadTimeline(sc, false)
			}
			if f.view == nil || sc.sel != sel {
				return // the user moved on
			}
			if old := sc.viewFor(); old == nil || viewSig(old) != viewSig(f.view) {
				s.showView(sc, f.view)
			}
		})
	})
}

// watchStore follows changes other processes make to the store, when it
// can tell (checkpoint.Watcher): the window refreshes without user action.
func (s *Studio) watchStore() {
	if s.stopWatch != nil {
		s.stopWatch()
		s.stopWatch = nil
	}
	w, ok := s.m.store.(checkpoint.Watcher)
	if !ok {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := w.Watch(ctx)
	if err != nil {
		cancel()
		s.flash("Not following other processes: " + err.Error())
		return
	}
	s.stopWatch = cancel
	go func() {
		for range ch {
			if s.sess.closed.Load() {
				return
			}
			uiDo(s.refresh)
		}
	}()
}

// showError shows err in a dialog, titled with what was being done.
func (s *Studio) showError(what string, err error) {
	if err == nil {
		return
	}
	d := dialog.NewError(fmt.Errorf("%s: %s", what, explain(err)), s.win)
	d.Show()
}

// openLongTerm opens the long-term store's window (View → Long-term
// store…), or brings the open one forward. The store outlives threads, so
// it has a window of its own rather than a tab of the thread's panels.
func (s *Studio) openLongTerm() {
	if s.ltsWin != nil {
		s.ltsWin.RequestFocus()
		return
	}
	w := s.app.NewWindow("Long-term store · " + s.m.storeName)
	w.SetContent(s.lts)
	w.Canvas().SetOnTypedKey(func(ev *fyne.KeyEvent) { s.windowKey(ev, false) }) // F5, F10… run the studio from here too
	w.Resize(fyne.NewSize(900, 520))
	w.SetOnClosed(func() {
		if s.ltsWin == w {
			s.ltsWin = nil
		}
	})
	s.ltsWin = w
	w.Show()
	s.lts.reload(s.lts.read.ns)
}

// selectedMoment is the checkpoint selected in the main window, for the
// long-term store's "as at": its time and a name for it; false when none
// is selected or its time is not known yet.
func (s *Studio) selectedMoment() (moment, bool) {
	sc := s.m.scope()
	if sc.sel == "" {
		return moment{}, false
	}
	i := sc.tl.at(sc.sel)
	if i < 0 {
		return moment{}, false
	}
	it := sc.tl.items[i]
	return moment{t: it.ts, label: fmt.Sprintf("step %d of thread %s", it.step, sc.thread)}, true
}

// showWriter selects, in the main window, the checkpoint whose step ran
// the task w (the one its writes were made from) and brings the window
// forward; it returns why it cannot when w's thread is not in this graph's
// thread list.
func (s *Studio) showWriter(w longterm.Writer) string {
	if w.ThreadID == "" {
		return "That change was made outside a thread."
	}
	if !s.m.hasThread(w.ThreadID) {
		return fmt.Sprintf("Thread %s is not in %s's thread list: open its graph to see it.", w.ThreadID, s.m.graph().Graph.Name())
	}
	s.m.update(func() {
		s.m.setThread(w.ThreadID)
		if w.NS == "" {
			s.m.selectCheckpoint(w.CheckpointID)
		} // a subgraph's step: the thread opens at its head, the task in its lanes
	})
	s.win.RequestFocus()
	return ""
}

// clearCache deletes the open graph's cached node writes (Run → Clear the
// node cache), so its nodes with a cache policy run again.
func (s *Studio) clearCache() {
	g, _ := s.sess.current()
	if g == nil {
		return
	}
	goBG(s.sess, func() (struct{}, error) {
		return struct{}{}, g.ClearCache(context.Background())
	}, func(_ struct{}, err error) {
		if err != nil {
			s.showError("Clearing the node cache", err)
			return
		}
		s.flash("Node cache of " + g.Name() + " cleared: its cached nodes run again")
	})
}

// flash shows a short note in the status bar for a few seconds.
func (s *Studio) flash(msg string) {
	s.m.setNote(msg)
	time.AfterFunc(4*time.Second, func() {
		uiDo(func() {
			if s.m.note == msg {
				s.m.setNote("")
			}
		})
	})
}

// windowKey is the window's keyboard, whatever has the focus: F5 Run,
// F10 Step, Shift+F10 Step into, F6 Pause, F9 break on every node, Esc
// cancels a run, and ←/→ walk the selected checkpoint's branch (except in
// a text field).
func (s *Studio) windowKey(ev *fyne.KeyEvent, inText bool) bool {
	switch ev.Name {
	case fyne.KeyF5:
		s.Run()
	case fyne.KeyF10:
		if s.dbg.held()&fyne.KeyModifierShift != 0 {
			s.StepInto()
		} else {
			s.Step()
		}
	case fyne.KeyF6:
		s.Pause()
	case fyne.KeyF9:
		s.m.setBreakAll(!s.m.brk.All)
	case fyne.KeyEscape:
		if !s.m.run.Going {
			return false
		}
		s.Cancel()
	case fyne.KeyLeft, fyne.KeyRight:
		if inText {
			return false
		}
		if ev.Name == fyne.KeyLeft {
			s.travel(-1)
		} else {
			s.travel(1)
		}
	default:
		return false
	}
	return true
}

// placeholder returns a centred, muted hint.
func placeholder(text string) *widget.Label {
	l := widget.NewLabel(text)
	l.Alignment = fyne.TextAlignCenter
	l.Importance = widget.LowImportance
	l.Wrapping = fyne.TextWrapWord
	return l
}
