// Package studio is Weft's studio window as a testable package: graphs and
// threads, run controls with breakpoints, the graph with live highlights, a
// state inspector with diffs, a checkpoint timeline with forks, inline
// interrupt answers, the event log and the errors of a run.
//
// It never imports fyne.io/fyne/v2/app: the caller makes the app (package
// ui does, for the weft binary and for users' own programs; tests use
// fyne.io/fyne/v2/test) and hands it to New.
package studio

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/checkpoint"
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
}

// Config is what New needs. Store is an open saver (required); StoreName is
// how the status bar names it (e.g. "weft.db"; "" shows "store"). Graphs
// are offered in order, the first selected; entries with a nil Graph are
// skipped. OpenStore opens another store
// for File → Open from what the user typed or picked (a path or a DSN) and
// returns it with its display name; nil disables File → Open. The studio
// does not close stores: the caller owns them.
type Config struct {
	Store     checkpoint.Saver
	StoreName string
	Graphs    []Graph
	OpenStore func(spec string) (checkpoint.Saver, string, error)
}

// Studio is the studio window. Create it with New; all methods must be
// called on the UI goroutine.
type Studio struct {
	app  fyne.App
	win  fyne.Window
	cfg  Config
	sess *session

	storeName string
	graphIdx  int
	thread    string
	threadGen atomic.Int64 // changes with the thread, for background loaders
	threads   []threadRow

	sel        string // the selected checkpoint id
	view       *view  // what the inspector shows
	headID     string // the thread's latest checkpoint
	selSeq     int    // generation of selection loads; stale ones are dropped
	marks      map[string]string
	runState   string
	lastStep   time.Duration
	runStarted time.Time
	running    map[string]bool // nodes running now (from task events)
	pulse      bool            // alternates while a node runs
	finished   map[string]bool // nodes that finished during the current step

	breakBefore, breakAfter map[string]bool
	breakAll                bool

	layouter *render.Layouter

	tb   *toolbar
	th   *threadsPanel
	gp   *graphPanel
	insp *inspector
	tl   *timelinePanel
	ip   *interruptPanel
	ev   *eventsPanel
	errs *errorsPanel
	sb   *statusBar
	tabs *container.AppTabs

	content fyne.CanvasObject
	right   *container.Split // inspector over the bottom tabs

	forkDlg      *forkForm // the open edit-and-fork dialog, for tests
	runAfterFork bool      // run the new branch once the fork is selected
	lastExplain  string    // the last store explanation shown, for tests
}

// New builds the studio window for cfg on a: content, menus and keyboard
// shortcuts, sized 1280×800. It selects the first graph and its newest
// thread. Show the window with Window().Show() (or ShowAndRun).
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
	s := &Studio{app: a, cfg: cfg, sess: &session{}, storeName: cfg.StoreName, marks: map[string]string{},
		breakBefore: map[string]bool{}, breakAfter: map[string]bool{}, layouter: render.NewLayouter()}
	if s.storeName == "" {
		s.storeName = "store"
	}
	s.win = a.NewWindow("Weft Studio")
	s.tb = newToolbar(s)
	s.th = newThreadsPanel(s)
	s.gp = newGraphPanel(s)
	s.insp = newInspector(s)
	s.tl = newTimelinePanel(s)
	s.ip = newInterruptPanel(s)
	s.ev = newEventsPanel(s)
	s.errs = newErrorsPanel(s)
	s.sb = newStatusBar(s)

	s.tabs = container.NewAppTabs(
		container.NewTabItem("Interrupt", s.ip.obj),
		container.NewTabItem("Events", s.ev.obj),
		container.NewTabItem("Errors", s.errs.obj),
	)
	// The graph is drawn top to bottom, so it gets the full height of the
	// middle; the inspector and the Interrupt/Events/Errors tabs share the
	// right column, and the timeline runs along the bottom.
	right := container.NewVSplit(s.insp.obj, s.tabs)
	right.Offset = 0.62
	s.right = right
	s.tabs.OnSelected = func(*container.TabItem) {
		// A tab the user opens gets room to show more than two rows.
		if right.Offset > 0.5 {
			right.SetOffset(0.45)
		}
	}
	centre := container.NewHSplit(s.gp.obj, right)
	centre.Offset = 0.56
	main := container.NewHSplit(s.th.obj, centre)
	main.Offset = 0.16
	// Panel sizes the user chose are remembered between sessions.
	prefs := a.Preferences()
	for key, sp := range map[string]*container.Split{"split_threads": main, "split_graph": centre} {
		if v := prefs.FloatWithFallback(key, 0); v > 0.05 && v < 0.95 {
			sp.Offset = v
		}
	}
	body := container.NewBorder(nil, s.tl.obj, nil, nil, main)
	s.content = container.NewBorder(s.tb.obj, s.sb.obj, nil, nil, body)
	s.win.SetContent(s.content)
	s.win.SetMainMenu(s.menus())
	s.installShortcuts()
	s.win.Resize(fyne.NewSize(1280, 800))
	s.win.SetOnClosed(func() {
		prefs.SetFloat("split_threads", main.Offset)
		prefs.SetFloat("split_graph", centre.Offset)
		s.sess.cancelRun()
		_ = s.layouter.Close()
	})
	if len(cfg.Graphs) > 0 {
		s.selectGraph(0)
	}
	s.refreshStatus()
	return s
}

// Window returns the studio's window.
func (s *Studio) Window() fyne.Window { return s.win }

// WaitIdle blocks until the studio's background work (runs, loads, layout)
// is done; for tests and benchmarks. It must not be called on the UI
// goroutine of a real app.
func (s *Studio) WaitIdle() { s.sess.waitIdle() }

// graph returns the selected graph's spec.
func (s *Studio) graph() Graph {
	if s.graphIdx < 0 || s.graphIdx >= len(s.cfg.Graphs) {
		return Graph{}
	}
	return s.cfg.Graphs[s.graphIdx]
}

// selectGraph shows graph i: its drawing, threads and the newest thread.
func (s *Studio) selectGraph(i int) {
	if i < 0 || i >= len(s.cfg.Graphs) {
		return
	}
	s.graphIdx = i
	s.sess.bind(s.cfg.Graphs[i], s.cfg.Store)
	s.seedBreakpoints(s.cfg.Graphs[i].Graph)
	s.tb.setGraph(i)
	s.gp.layout()
	s.setThread("")
	s.refreshThreads(true)
}

// refreshThreads reloads the thread list; with pickNewest it selects the
// newest thread when none is selected and reads every thread's status,
// otherwise only the current thread's status is read again.
func (s *Studio) refreshThreads(pickNewest bool) {
	only := ""
	if !pickNewest && s.thread != "" {
		only = s.thread
	}
	goBG(s.sess, func() ([]threadRow, error) {
		return s.sess.listThreads(context.Background(), only)
	}, func(rows []threadRow, err error) {
		if err != nil {
			s.showError("Listing threads", err)
			return
		}
		if only != "" {
			old := map[string]threadRow{}
			for _, r := range s.threads {
				old[r.ID] = r
			}
			for i := range rows {
				if rows[i].ID != only {
					rows[i].Status, rows[i].Holder = old[rows[i].ID].Status, old[rows[i].ID].Holder
				}
			}
		}
		s.threads = rows
		s.th.setRows(rows)
		if pickNewest && s.thread == "" && len(rows) > 0 {
			s.setThread(rows[0].ID)
		}
	})
}

// setThread shows thread id ("" for none): timeline, state, interrupts.
func (s *Studio) setThread(id string) {
	s.clearThread(id)
	if id != "" {
		s.reloadTimeline(true)
	}
	s.refreshStatus()
}

// clearThread makes id the current thread and empties the views of the
// previous one.
func (s *Studio) clearThread(id string) {
	s.thread = id
	s.threadGen.Add(1)
	s.sel, s.view, s.headID = "", nil, ""
	s.marks = map[string]string{}
	s.th.selectThread(id)
	s.tl.clear()
	s.insp.show(nil)
	s.ip.show(nil)
	s.gp.highlight()
	s.runState = ""
}

// headerPage is how many checkpoint headers one read of the timeline
// takes; the newest page is shown before older ones arrive.
const headerPage = 2000

// reloadTimeline reads the thread's checkpoint headers; with selectHead
// the latest checkpoint is selected afterwards.
func (s *Studio) reloadTimeline(selectHead bool) {
	thread := s.thread
	if s.tl.count() == 0 {
		s.loadTimeline(thread, selectHead)
		return
	}
	// Usually a step adds a checkpoint or two: read the newest few and
	// merge; read everything again when they do not meet what is shown.
	const recent = 64
	goBG(s.sess, func() ([]checkpoint.Header, error) {
		return s.sess.headers(context.Background(), thread, "", recent)
	}, func(hs []checkpoint.Header, err error) {
		switch {
		case thread != s.thread:
		case err != nil:
			s.showError("Reading the timeline", err)
		case len(hs) == recent && !s.tl.knows(hs[len(hs)-1].Ref.CheckpointID):
			s.tl.clear()
			s.loadTimeline(thread, selectHead)
		default:
			s.tl.merge(hs)
			s.timelineMerged(selectHead)
		}
	})
}

// loadTimeline reads every header of the thread, newest first, a page at a
// time; the first page is shown (and its head selected) at once.
func (s *Studio) loadTimeline(thread string, selectHead bool) {
	gen := s.threadGen.Load()
	s.sb.setBusy(true)
	goBG(s.sess, func() (struct{}, error) {
		before := ""
		for first := true; ; first = false {
			if s.threadGen.Load() != gen {
				return struct{}{}, nil // another thread was chosen
			}
			hs, err := s.sess.headers(context.Background(), thread, before, headerPage)
			if err != nil {
				return struct{}{}, err
			}
			isFirst := first
			uiDo(func() {
				if thread != s.thread {
					return
				}
				s.tl.merge(hs)
				if isFirst {
					s.timelineMerged(selectHead)
				}
			})
			if len(hs) < headerPage {
				return struct{}{}, nil
			}
			before = hs[len(hs)-1].Ref.CheckpointID
		}
	}, func(_ struct{}, err error) {
		s.sb.setBusy(false)
		if err != nil && thread == s.thread {
			s.showError("Reading the timeline", err)
		}
	})
}

// timelineMerged follows new headers: the head moves, and is selected
// when asked or when nothing is.
func (s *Studio) timelineMerged(selectHead bool) {
	if head := s.tl.head(); head != "" {
		s.headID = head
		if selectHead || s.sel == "" {
			s.selectCheckpoint(head)
		}
	}
	s.refreshStatus()
}

// selectCheckpoint time-travels to checkpoint id: the inspector, graph
// highlights and interrupt panel follow.
func (s *Studio) selectCheckpoint(id string) {
	s.sel = id
	s.selSeq++
	seq := s.selSeq
	s.tl.setSelected(id)
	thread := s.thread
	latest := id == s.headID
	goBG(s.sess, func() (*view, error) {
		return s.sess.load(context.Background(), thread, id, latest)
	}, func(v *view, err error) {
		if seq != s.selSeq || thread != s.thread {
			return
		}
		if err != nil {
			s.showError("Loading checkpoint", err)
			return
		}
		s.view = v
		if len(v.Snap.Interrupts) > 0 {
			s.marks[id] = "interrupt"
		}
		for _, t := range v.Snap.Tasks {
			if t.Error != "" {
				s.marks[id] = "error"
			}
		}
		s.tl.refreshMarks()
		if s.runAfterFork && latest {
			s.runAfterFork = false
			defer s.Run()
		}
		s.insp.show(v)
		s.gp.highlight()
		s.gp.showInterrupt()
		if latest {
			s.ip.show(v.Snap.Interrupts)
			if len(v.Snap.Interrupts) > 0 {
				// A question waits: give the answer room.
				s.tabs.SelectIndex(0)
				s.right.SetOffset(0.4)
			} else if s.right.Offset < 0.5 {
				s.right.SetOffset(0.62)
			}
			s.errs.showTasks(v.Snap)
		} else {
			s.ip.show(nil)
			if s.right.Offset < 0.5 {
				s.right.SetOffset(0.62)
			}
		}
		s.refreshStatus()
	})
}

// breakpoints returns the run options' breakpoint lists.
func (s *Studio) breakpoints() (before, after []string) {
	if s.breakAll {
		return []string{"*"}, nil
	}
	for n, on := range s.breakBefore {
		if on {
			before = append(before, n)
		}
	}
	for n, on := range s.breakAfter {
		if on {
			after = append(after, n)
		}
	}
	return before, after
}

// seedBreakpoints starts the graph's breakpoints from those it was compiled
// with, so they show on the graph and can be toggled off like any other:
// the studio's set is then the whole truth for its runs. A compiled "*"
// before every node is the Break-on-every-node switch.
func (s *Studio) seedBreakpoints(g *engine.Graph) {
	s.breakBefore, s.breakAfter = map[string]bool{}, map[string]bool{}
	all := false
	var before, after []string
	if g != nil {
		before, after = g.Breakpoints()
	}
	for _, n := range before {
		if n == "*" {
			all = true
			continue
		}
		s.breakBefore[n] = true
	}
	for _, n := range after {
		if n == "*" {
			for _, node := range g.Nodes() {
				s.breakAfter[node] = true
			}
			continue
		}
		s.breakAfter[n] = true
	}
	if s.tb != nil && s.tb.breakAll != nil {
		s.tb.breakAll.SetChecked(all) // its callback sets s.breakAll
	}
	s.breakAll = all
}

// toggleBreakpoint flips the breakpoint before or after node.
func (s *Studio) toggleBreakpoint(node string, after bool) {
	m := s.breakBefore
	if after {
		m = s.breakAfter
	}
	m[node] = !m[node]
	s.gp.highlight()
}

// runKind names what a run does, for the status bar.
type runKind string

const (
	kindRun    runKind = "running"
	kindStep   runKind = "stepping"
	kindResume runKind = "resuming"
	kindReplay runKind = "re-running"
	kindStart  runKind = "starting"
)

// startRun runs the engine on the current thread. Results update the
// timeline (one merge), select the new head and show interrupts or errors.
func (s *Studio) startRun(kind runKind, req runRequest) {
	if s.thread == "" && req.Thread == "" {
		s.newThreadDialog()
		return
	}
	if s.sess.running.Load() {
		s.sb.flash("A run is going: pause or cancel it first")
		return
	}
	if req.Thread == "" {
		req.Thread = s.thread
	}
	req.Before, req.After = s.breakpoints()
	req.Observer = s.ev.observer()
	s.runState = string(kind) + "…"
	s.runStarted = time.Now()
	s.running, s.finished = map[string]bool{}, map[string]bool{}
	s.tb.setBusy(true)
	s.sb.setBusy(true)
	s.ip.show(nil)
	s.refreshStatus()
	thread := req.Thread
	goBG(s.sess, func() (*runOutcome, error) { return s.sess.run(req) }, func(out *runOutcome, err error) {
		s.tb.setBusy(false)
		s.sb.setBusy(false)
		s.running, s.finished = nil, nil
		s.ev.flush()
		if out != nil {
			s.lastStep = out.Elapsed
		}
		if thread != s.thread {
			// The user moved to another thread meanwhile: stay there.
			s.refreshThreads(false)
			s.refreshStatus()
			return
		}
		switch {
		case err == errBusy:
			s.sb.flash(err.Error())
		case err != nil && errorsIsCanceled(err):
			s.runState = "cancelled"
		case err != nil:
			node, msg := describeErr(err)
			s.runState = "failed"
			if node != "" {
				s.runState = "failed at " + node
			}
			s.errs.add(node, msg, "")
			s.tabs.SelectIndex(2)
		default:
			s.runState = describeResult(out.Res)
		}
		s.refreshThreads(false)
		s.reloadTimeline(true)
		s.refreshStatus()
	})
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

// Run continues the thread to the next interrupt, breakpoint or the end.
func (s *Studio) Run() { s.startRun(kindRun, runRequest{}) }

// Step runs exactly one super-step of the thread.
func (s *Studio) Step() { s.startRun(kindStep, runRequest{StepLimit: 1}) }

// Pause asks the run in progress to stop before its next super-step.
func (s *Studio) Pause() {
	if s.sess.running.Load() {
		s.sess.requestPause()
		s.runState = "pausing…"
		s.refreshStatus()
	}
}

// Cancel aborts the run in progress.
func (s *Studio) Cancel() { s.sess.cancelRun() }

// rerunFrom replays the thread from the selected checkpoint as a new branch.
func (s *Studio) rerunFrom() {
	if s.sel == "" {
		return
	}
	s.startRun(kindReplay, runRequest{Checkpoint: s.sel})
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
// resumes the thread with them (weft worker); the studio shows the result
// when the thread is reloaded.
func (s *Studio) leaveForWorkers(one any, byID map[string]any) {
	cmd := engine.Command{Resume: one}
	if byID != nil {
		cmd = engine.Command{ResumeByID: byID}
	}
	thread := s.thread
	goBG(s.sess, func() (checkpoint.Ref, error) {
		return s.sess.submit(context.Background(), thread, cmd)
	}, func(_ checkpoint.Ref, err error) {
		if err != nil {
			s.showError("Leaving the answer for workers", err)
			return
		}
		s.runState = "answer stored · a worker will resume this thread"
		s.ip.show(nil)
		s.refreshStatus()
	})
}

// startThread creates thread id from input and runs its first step, so
// the graph shows what runs next.
func (s *Studio) startThread(id string, input engine.Values) {
	s.clearThread(id)
	s.startRun(kindStart, runRequest{Thread: id, Input: input, StepLimit: 1})
}

// forkAt writes value to channel at the selected checkpoint as asNode and
// selects the new branch.
func (s *Studio) forkAt(channel string, value []byte, asNode string, then func(error)) {
	id, thread := s.sel, s.thread
	goBG(s.sess, func() (checkpoint.Ref, error) {
		return s.sess.fork(context.Background(), thread, id, channel, value, asNode)
	}, func(ref checkpoint.Ref, err error) {
		if then != nil {
			then(err)
		}
		if err != nil {
			return
		}
		s.runState = "forked · Run or Step continues the new branch"
		s.reloadTimeline(true)
	})
}

// showError shows err in a dialog, titled with what was being done.
func (s *Studio) showError(what string, err error) {
	if err == nil {
		return
	}
	d := dialog.NewError(fmt.Errorf("%s: %s", what, explain(err)), s.win)
	d.Show()
}

// refreshStatus updates the status bar.
func (s *Studio) refreshStatus() { s.sb.update() }

// placeholder returns a centred, muted hint.
func placeholder(text string) *widget.Label {
	l := widget.NewLabel(text)
	l.Alignment = fyne.TextAlignCenter
	l.Importance = widget.LowImportance
	l.Wrapping = fyne.TextWrapWord
	return l
}
