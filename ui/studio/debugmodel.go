package studio

// The debugger's part of the model: a graph's watches and expression
// breakpoints (kept with the graph, saved between sessions), and what the
// debugger knows of the current thread (a step into waiting at a phase,
// the breakpoint that stopped the last run, watch values, the subgraph
// checkpoint picked on a sub-lane).

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/inspect"
)

// debugSet is a graph's watches and expression breakpoints. Node
// breakpoints without a condition are model.brk (the engine's own); those
// with a condition, and breakpoints on data, are here (inspect's, checked
// by a phase hook). gen counts changes, so that results computed for an
// older set are dropped.
type debugSet struct {
	env     *inspect.Env
	graph   *engine.Graph
	Watches []watchItem
	Breaks  []breakItem
	gen     int
}

// watchItem is one watch: an expression shown at the selected checkpoint
// and along the thread.
type watchItem struct {
	Src  string
	Expr *inspect.Expr // nil when Src does not compile (Err says why)
	Err  error
}

// breakItem is one expression breakpoint as inspect.Parse reads it.
type breakItem struct {
	Spec string
	BP   inspect.Breakpoint
	Err  error // the spec does not fit the graph (say, saved for an older version): it stops nothing
}

// scopeDebug is what the debugger knows of one thread.
type scopeDebug struct {
	// phase is where a step into stands: waiting at a phase (reply set)
	// or, after the step was applied, what it changed; nil otherwise.
	phase *phaseStop
	// hit is the expression breakpoint that stopped the thread's last run.
	hit *inspect.Hit
	// at holds the watches' values at the selected checkpoint.
	at watchValues
	// cols holds the watches along the thread.
	cols *watchCols
	// subNS and subID name the subgraph checkpoint picked on a sub-lane;
	// subView is its view once loaded. Empty: the inspector shows sel.
	subNS, subID string
	subView      *view
}

// watchValues are the watches' values at one checkpoint.
type watchValues struct {
	ID   string // the checkpoint; "" for none
	Gen  int    // the debugSet generation they were computed for
	Vals []any
	Errs []error
}

// watchCols are the watches evaluated along a thread.
type watchCols struct {
	Gen   int
	Rows  map[string]inspect.WatchRow // by checkpoint id
	Done  int                         // checkpoints evaluated so far
	Total int                         // checkpoints to evaluate (the timeline's count when it started)
	Err   error
	// Running says the evaluation is still going.
	Running bool
	Took    time.Duration // how long the evaluation took, once done
}

// newDebugSet is g's empty set.
func newDebugSet(g *engine.Graph) debugSet {
	d := debugSet{graph: g}
	if g != nil {
		d.env = inspect.NewEnv(g)
	}
	return d
}

// compileWatch checks a watch expression against the graph.
func (d *debugSet) compileWatch(src string) watchItem {
	w := watchItem{Src: strings.TrimSpace(src)}
	if d.env == nil {
		w.Err = fmt.Errorf("no graph")
		return w
	}
	w.Expr, w.Err = d.env.Compile(w.Src)
	return w
}

// parseBreak checks a breakpoint spec against the graph.
func (d *debugSet) parseBreak(spec string) breakItem {
	b := breakItem{Spec: strings.TrimSpace(spec)}
	if d.graph == nil {
		b.Err = fmt.Errorf("no graph")
		return b
	}
	b.BP, b.Err = inspect.Parse(d.graph, d.env, b.Spec)
	b.Spec = b.BP.Spec
	if b.Spec == "" {
		b.Spec = strings.TrimSpace(spec)
	}
	return b
}

// exprs returns the watches that compile, with their index in Watches.
func (d *debugSet) exprs() ([]*inspect.Expr, []int) {
	var out []*inspect.Expr
	var idx []int
	for i, w := range d.Watches {
		if w.Expr != nil {
			out = append(out, w.Expr)
			idx = append(idx, i)
		}
	}
	return out, idx
}

// active returns the breakpoints that fit the graph.
func (d *debugSet) active() []inspect.Breakpoint {
	var out []inspect.Breakpoint
	for _, b := range d.Breaks {
		if b.Err == nil {
			out = append(out, b.BP)
		}
	}
	return out
}

// hasBreak reports whether spec is one of the breakpoints.
func (d *debugSet) hasBreak(spec string) bool {
	return slices.ContainsFunc(d.Breaks, func(b breakItem) bool { return b.Spec == spec })
}

// nodeCond returns the condition of the breakpoint before (or after)
// node, "" when it has none.
func (d *debugSet) nodeCond(node string, after bool) string {
	kind := inspect.BreakBefore
	if after {
		kind = inspect.BreakAfter
	}
	for _, b := range d.Breaks {
		if b.Err == nil && b.BP.Kind == kind && b.BP.Node == node && b.BP.Cond != nil {
			return b.BP.Cond.String()
		}
	}
	return ""
}

// resetDebug gives graph g an empty set of watches and expression
// breakpoints (listeners are told by the caller).
func (m *model) resetDebug(g *engine.Graph) {
	d := newDebugSet(g)
	d.gen = m.dbg.gen + 1
	m.dbg = d
}

// setDebugSet replaces the graph's watches and expression breakpoints.
func (m *model) setDebugSet(d debugSet) {
	d.gen = m.dbg.gen + 1
	m.dbg = d
	m.changed(chDebug)
}

// addWatch adds a watch; one that does not compile is refused with its
// error.
func (m *model) addWatch(src string) error {
	w := m.dbg.compileWatch(src)
	if w.Err != nil {
		return w.Err
	}
	if slices.ContainsFunc(m.dbg.Watches, func(x watchItem) bool { return x.Src == w.Src }) {
		return fmt.Errorf("%s is watched already", w.Src)
	}
	m.dbg.Watches = append(m.dbg.Watches, w)
	m.dbg.gen++
	m.changed(chDebug)
	return nil
}

// removeWatch removes watch i.
func (m *model) removeWatch(i int) {
	if i < 0 || i >= len(m.dbg.Watches) {
		return
	}
	m.dbg.Watches = slices.Delete(slices.Clone(m.dbg.Watches), i, i+1)
	m.dbg.gen++
	m.changed(chDebug)
}

// addBreak adds an expression breakpoint; one that does not parse is
// refused with its error.
func (m *model) addBreak(spec string) error {
	b := m.dbg.parseBreak(spec)
	if b.Err != nil {
		return b.Err
	}
	if m.dbg.hasBreak(b.Spec) {
		return fmt.Errorf("%s is set already", b.Spec)
	}
	m.dbg.Breaks = append(m.dbg.Breaks, b)
	m.changed(chDebug | chBreakpoints)
	return nil
}

// removeBreak removes the breakpoint written spec.
func (m *model) removeBreak(spec string) {
	i := slices.IndexFunc(m.dbg.Breaks, func(b breakItem) bool { return b.Spec == spec })
	if i < 0 {
		return
	}
	m.dbg.Breaks = slices.Delete(slices.Clone(m.dbg.Breaks), i, i+1)
	m.changed(chDebug | chBreakpoints)
}

// setNodeCond puts a condition on the breakpoint before (or after) node:
// it replaces an unconditional one there and any earlier condition; ""
// removes the condition (and the breakpoint).
func (m *model) setNodeCond(node string, after bool, cond string) error {
	side := "before"
	set := m.brk.Before
	if after {
		side, set = "after", m.brk.After
	}
	cond = strings.TrimSpace(cond)
	old := m.dbg.nodeCond(node, after)
	if cond == old {
		return nil
	}
	if cond != "" {
		if b := m.dbg.parseBreak(side + ":" + node + " if " + cond); b.Err != nil {
			return b.Err
		}
	}
	m.update(func() {
		if old != "" {
			m.removeBreak(side + ":" + node + " if " + old)
		}
		if cond != "" {
			_ = m.addBreak(side + ":" + node + " if " + cond) // checked above
			if set[node] {
				set[node] = false
				m.changed(chBreakpoints)
			}
		}
	})
	return nil
}

// setPhase shows where a step into of sc's thread stands (nil: nowhere).
func (m *model) setPhase(sc *scope, p *phaseStop) {
	if sc.dbg.phase == p {
		return
	}
	sc.dbg.phase = p
	if sc == m.sc {
		m.changed(chPhase | chRun)
	}
}

// waiting returns the phase stop a step into waits at on the current
// thread, nil when none.
func (m *model) waiting() *phaseStop {
	if p := m.sc.dbg.phase; p != nil && p.reply != nil {
		return p
	}
	return nil
}

// setHit records the expression breakpoint that stopped sc's last run.
func (m *model) setHit(sc *scope, h *inspect.Hit) {
	sc.dbg.hit = h
}

// setWatchAt shows the watches' values at a checkpoint of sc.
func (m *model) setWatchAt(sc *scope, v watchValues) {
	sc.dbg.at = v
	if sc == m.sc {
		m.changed(chWatch)
	}
}

// setWatchCols shows the watches along sc's thread.
func (m *model) setWatchCols(sc *scope, c *watchCols) {
	sc.dbg.cols = c
	if sc == m.sc {
		m.changed(chWatch)
	}
}

// pickSub picks checkpoint id of subgraph namespace ns on a sub-lane for
// the inspector; "" goes back to the selected checkpoint.
func (m *model) pickSub(ns, id string) {
	sc := m.sc
	if sc.dbg.subNS == ns && sc.dbg.subID == id {
		return
	}
	sc.dbg.subNS, sc.dbg.subID, sc.dbg.subView = ns, id, nil
	m.changed(chSubSel | chView)
}

// setSubView shows the view of the picked subgraph checkpoint.
func (m *model) setSubView(sc *scope, ns, id string, v *view) {
	if sc != m.sc || sc.dbg.subNS != ns || sc.dbg.subID != id {
		return
	}
	sc.dbg.subView = v
	m.changed(chView)
}

// shown returns the view the inspector shows: the picked subgraph
// checkpoint's, else the selected checkpoint's (nil while loading).
func (sc *scope) shown() *view {
	if sc.dbg.subID != "" {
		return sc.dbg.subView
	}
	return sc.viewFor()
}
