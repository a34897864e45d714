package studio

// The debugger's glue between the window and the engine: the phase hook
// a run gets (expression breakpoints, step into), breakpoints on nodes
// inside subgraphs, and how a run's stop is told in the status line.

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"

	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/inspect"
	"github.com/weftstudio/weft/render"
)

// debugUI holds the debugger's panels and what the studio keeps for them.
type debugUI struct {
	phase *phasePanel
	watch *watchPanel
	brk   *breakPanel
	// stepping is the hook of the step into in progress, nil when none.
	stepping *stepper
	// modifiers returns the keyboard modifiers held (Shift+F10 arrives as
	// F10); nil asks the desktop driver.
	modifiers func() fyne.KeyModifier

	// savedPath is the selected graph's breakpoints file ("" when none is
	// kept); saved is what it holds.
	savedPath string
	saved     []byte
	writer    debugWriter
	// stopCols stops the evaluation of the watches along the thread.
	stopCols context.CancelFunc
}

// held returns the keyboard modifiers held now.
func (d *debugUI) held() fyne.KeyModifier { return heldKeys(d.modifiers) }

// heldKeys returns the keyboard modifiers held now: from f when set, else
// from the desktop driver.
func heldKeys(f func() fyne.KeyModifier) fyne.KeyModifier {
	if f != nil {
		return f()
	}
	if a := fyne.CurrentApp(); a != nil {
		if drv, ok := a.Driver().(desktop.Driver); ok {
			return drv.CurrentKeyModifiers()
		}
	}
	return 0
}

// newDebugActions are what the debugger's panels ask the studio.
func (s *Studio) newDebugActions() *debugActions {
	return &debugActions{
		stepInto: s.StepInto,
		phaseGo:  func(mode stepMode, pause bool) { s.continuePhase(mode, pause) },
		replace:  s.replaceDialog,
		whatIf:   s.whatIfDialog,
	}
}

// newDebugUI builds the debugger's panels and listens to the model for
// what they need.
func (s *Studio) newDebugUI() {
	s.dbg = &debugUI{}
	s.dbg.writer.onErr = func(err error) {
		uiDo(func() { s.flash("Could not save the breakpoints and watches: " + err.Error()) })
	}
	s.dbg.phase = newPhasePanel(s.m, s.acts)
	s.gp.view.OnContextMenu = s.nodeMenu
	s.tl.onCompare = s.compareDialog
	s.dbg.watch = newWatchPanel(s.m, s.acts)
	s.dbg.brk = newBreakPanel(s.m, s.acts)
	s.m.subscribe(chThread|chView|chDebug, func(part) { s.watchAt() })
	s.m.subscribe(chSelection|chSubSel|chTimeline, func(c part) {
		sc := s.m.scope()
		if sc.dbg.subID != "" && (sc.sub == nil || sc.sub.At != sc.sel) {
			s.m.pickSub("", "") // the sub-lanes of another checkpoint
			return
		}
		if c&chSubSel != 0 {
			s.loadSubView()
		}
	})
	s.m.subscribe(chThread|chTimeline|chDebug|chRun, func(c part) {
		if c&chRun != 0 && s.m.run.Going {
			return
		}
		s.watchColumns()
	})
	s.m.subscribe(chGraph|chBreakpoints|chDebug, func(c part) {
		if c&chGraph != 0 {
			s.loadDebug()
		} else {
			s.saveDebug()
		}
	})
	s.m.subscribe(chStore|chGraph|chThread|chPhase, func(c part) {
		if c&(chStore|chGraph|chThread) != 0 {
			s.releaseStep()
		}
		if c&chPhase != 0 && s.m.waiting() != nil {
			// The phase shows in the Step tab.
			s.selectTab("Step")
		}
	})
}

// releaseStep lets a step into waiting on a thread no longer shown go on
// to a clean stop (before its step at the plan, else after it), so that
// no run waits on a thread nobody sees.
func (s *Studio) releaseStep() {
	st := s.dbg.stepping
	if st == nil || st.sc == s.m.scope() {
		return
	}
	if p := st.sc.dbg.phase; p != nil && p.reply != nil {
		p.reply <- phaseReply{mode: stepFinish, pause: true}
		p.reply = nil
	}
}

// debugRun is the debugger's part of one run.
type debugRun struct {
	s  *Studio
	sc *scope
	bs *inspect.Breakpoints
	st *stepper
}

// debugRun sets req's phase hook: the graph's expression breakpoints
// and, for a step into, the stepping hook after them.
func (s *Studio) debugRun(sc *scope, kind runKind, req *runRequest) *debugRun {
	dr := &debugRun{s: s, sc: sc}
	var hooks []engine.PhaseFunc
	if list := s.m.dbg.active(); len(list) > 0 {
		bs := &inspect.Breakpoints{List: list}
		bs.Err = func(b inspect.Breakpoint, err error) {
			uiDo(func() {
				s.m.addError(sc, errRow{Node: "breakpoint " + b.Spec, Msg: err.Error(), Input: "the condition could not be evaluated, so it did not stop the run"})
			})
		}
		from := req.Checkpoint
		if from == "" {
			from = sc.head
		}
		if h := sc.dbg.hit; h != nil && h.Breakpoint.Kind == inspect.BreakBefore && h.Checkpoint == from {
			bs.ResumeAt = from // go on past the stop
		}
		dr.bs = bs
		hooks = append(hooks, bs.Phases())
	}
	if kind == kindStepInto {
		dr.st = &stepper{s: s, sc: sc, store: s.m.store}
		s.dbg.stepping = dr.st
		hooks = append(hooks, dr.st.hook)
		req.SubPhases = true // step into a subgraph node too
	}
	switch len(hooks) {
	case 1:
		req.Phases = hooks[0]
	case 2:
		req.Phases = inspect.Then(hooks[0], hooks[1])
	}
	s.m.setHit(sc, nil)
	s.m.setPhase(sc, nil)
	return dr
}

// finish records, once the run ended, which expression breakpoint
// stopped it; a phase stop still shown as waiting is gone with the run. A
// step into's time is mostly the user's: it is not reported as the run's.
func (dr *debugRun) finish(r *runResult) {
	if dr.st != nil && r.out != nil {
		r.out.Elapsed = 0
	}
	if dr.bs != nil {
		dr.s.m.setHit(dr.sc, dr.bs.Hit())
	}
	if dr.st != nil {
		if dr.s.dbg.stepping == dr.st {
			dr.s.dbg.stepping = nil
		}
		if p := dr.sc.dbg.phase; p != nil && p.reply != nil {
			dr.s.m.setPhase(dr.sc, nil)
		}
	}
}

// replaceDialog asks for a new value of a write to channel.
func (s *Studio) replaceDialog(channel string, cur any, done func(v any)) {
	g := s.m.graph().Graph
	if g == nil {
		return
	}
	s.valueDialog(fmt.Sprintf("Replace the write to %s", channel), channel, cur, func(data []byte) (any, error) {
		return g.DecodeValue(channel, data)
	}, done)
}

// enginePath turns the graph view's ID of a node inside an expanded
// subgraph ("summarize/gather") into the engine's path for it
// ("summarize|gather"); root nodes keep their name.
func enginePath(id string) string { return strings.ReplaceAll(id, "/", "|") }

// describeStop says in a few words where a run stopped. A breakpoint
// inside a subgraph stops its subgraph node without a question and
// without a root breakpoint: it is named by the subgraph and what it runs
// next there.
func describeStop(r *engine.Result, v *view, dbg scopeDebug) string {
	d := describeResult(r)
	if r != nil && r.Breakpoint == "phase" {
		switch {
		case dbg.hit != nil:
			h := dbg.hit
			s := fmt.Sprintf("breakpoint %s · step %d", h.Breakpoint.Spec, h.Step)
			if len(r.Next) > 0 {
				s += " · next " + joinNames(r.Next)
			}
			return s
		case dbg.phase != nil && dbg.phase.Info.Phase == engine.PhaseApply:
			return phaseLine(dbg.phase)
		case len(r.Next) > 0:
			return "paused · next " + joinNames(r.Next)
		}
		return "paused"
	}
	if r == nil || v == nil || r.Done || r.Breakpoint != "" || len(r.Interrupts) > 0 {
		return d
	}
	if inner := innerStop(v.Snap); inner != "" {
		return inner
	}
	return d
}

// innerStop names the subgraph tasks of snap paused with work left and no
// question: "breakpoint inside summarize · next gather".
func innerStop(snap *engine.Snapshot) string {
	var where, next []string
	var walk func(s *engine.Snapshot)
	walk = func(s *engine.Snapshot) {
		for _, t := range s.Tasks {
			st := t.State
			if st == nil {
				continue
			}
			if len(st.Interrupts) == 0 && !st.Done() && !hasSubState(st) {
				if l := nsLabel(t.NS); !slices.Contains(where, l) {
					where = append(where, l)
				}
				next = append(next, st.Next...)
			}
			walk(st)
		}
	}
	walk(snap)
	if len(where) == 0 {
		return ""
	}
	return "breakpoint inside " + strings.Join(where, ", ") + " · next " + joinNames(uniq(next))
}

// hasSubState reports whether a task of s has a state of its own: the
// stop is then deeper down.
func hasSubState(s *engine.Snapshot) bool {
	for _, t := range s.Tasks {
		if t.State != nil && !t.State.Done() {
			return true
		}
	}
	return false
}

// condBreakpoints draws the graph's conditional node breakpoints as
// breakpoint dots too (the hint under the graph names the condition).
func condBreakpoints(h render.Highlight, m *model) {
	for _, b := range m.dbg.Breaks {
		if b.Err != nil {
			continue
		}
		switch b.BP.Kind {
		case inspect.BreakBefore:
			h.BreakBefore[b.BP.Node] = true
		case inspect.BreakAfter:
			h.BreakAfter[b.BP.Node] = true
		}
	}
}

// loadSubView loads the subgraph checkpoint picked on a sub-lane for the
// inspector: its own state, read with engine.WithNamespace.
func (s *Studio) loadSubView() {
	sc := s.m.scope()
	ns, id, thread := sc.dbg.subNS, sc.dbg.subID, sc.thread
	if id == "" {
		return
	}
	goBG(s.sess, func() (*view, error) {
		return s.sess.loadNS(context.Background(), thread, ns, id)
	}, func(v *view, err error) {
		if err != nil {
			if sc == s.m.scope() {
				s.showError("Loading the subgraph's checkpoint", err)
			}
			return
		}
		s.m.setSubView(sc, ns, id, v)
	})
}

// loadNS reads checkpoint id of subgraph namespace ns of a thread, and its
// parent for the diff, with the subgraph's channels.
func (s *session) loadNS(ctx context.Context, thread, ns, id string) (*view, error) {
	g, _ := s.current()
	opts := []engine.RunOption{engine.WithThread(thread), engine.WithNamespace(ns)}
	snap, err := g.GetState(ctx, append(opts, engine.WithCheckpoint(id))...)
	if err != nil {
		return nil, err
	}
	v := &view{Snap: snap, NS: ns, Chans: subgraphChannels(g.Topology(), ns)}
	if snap.Parent != nil && snap.Parent.CheckpointID != "" {
		if p, err := g.GetState(ctx, append(opts, engine.WithCheckpoint(snap.Parent.CheckpointID))...); err == nil {
			v.Parent = p
		}
	}
	return v, nil
}

// subgraphChannels returns the channels of the subgraph that runs in
// namespace ns ("node:task|inner:task" names its nodes); nil when the
// topology has no such subgraph.
func subgraphChannels(t *engine.Topology, ns string) []engine.ChannelInfo {
	for _, seg := range strings.Split(ns, "|") {
		name, _, _ := strings.Cut(seg, ":")
		var next *engine.Topology
		for _, n := range t.Nodes {
			if n.Name == name {
				next = n.Subgraph
			}
		}
		if next == nil {
			return nil
		}
		t = next
	}
	return t.Channels
}
