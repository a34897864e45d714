package studio

// Step into: a super-step stopped at each of its phases. The engine calls
// a hook at the plan, before each task, at the barrier and after apply
// (engine.WithPhases); the studio's hook shows each phase and waits, on
// the run's goroutine, until the user goes on. In a parallel step the user
// picks which task runs next; at the barrier the writes waiting to apply
// can be dropped or replaced, which makes the step's checkpoint a fork
// that lists the edits.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/render"
)

// stepMode says how a step into goes on from a phase.
type stepMode int32

const (
	stepPhases stepMode = iota // stop at the next phase
	stepFinish                 // run the rest of the step, stop after it
	stepRunOn                  // no more phase stops: run to the next stop
)

// phaseStop is where a step into stands: waiting at a phase (reply set)
// or, after the step applied (PhaseApply), what it changed.
type phaseStop struct {
	// Info is what the engine showed (the UI only reads it); at PhaseTask
	// its Tasks are every task of the step, Pending those not run yet.
	Info engine.PhaseInfo
	// Next is, at PhaseTask, the task that runs next: the engine's choice
	// until the user picks another pending one.
	Next string
	// Edits are, at PhaseBarrier, the user's drops and replacements of
	// the waiting writes.
	Edits []engine.StepEdit
	// Sends are, at PhaseBarrier, the Send packets each task wrote (by
	// task id): the next step's tasks, which the engine's Result (state
	// writes only) leaves out; read from the tasks' stored writes.
	Sends    map[string][]sendPacket
	SendsErr error           // why the Send packets could not be read
	reply    chan phaseReply // nil when nothing waits (apply, or answered)
}

// sendPacket is one Send a task wrote: the node it starts and its
// argument, as stored (JSON).
type sendPacket struct {
	Node string
	Arg  any
}

// phaseReply is the user's answer to a phase stop.
type phaseReply struct {
	mode  stepMode
	next  string
	edits []engine.StepEdit
	pause bool // stop the run (at the plan: before the step)
}

// stepper is the hook of one step-into run.
type stepper struct {
	s     *Studio
	sc    *scope
	store checkpoint.Saver // the run's store, where the tasks' writes are
	mode  atomic.Int32
}

// hook is the run's engine.PhaseFunc: it shows each phase and waits for
// the user; after apply it shows what changed and ends the run there.
// Inside a subgraph node (PhaseInfo.NS) it waits after apply as at any
// phase: ending the run there would pause the parent's task.
func (st *stepper) hook(ctx context.Context, p *engine.PhaseInfo) error {
	mode := stepMode(st.mode.Load())
	if mode == stepRunOn {
		return nil
	}
	if p.Phase == engine.PhaseApply && p.NS == "" {
		st.show(&phaseStop{Info: *p})
		return engine.ErrPause
	}
	info := *p
	if p.Phase == engine.PhaseTask && len(p.Tasks) <= 1 {
		return nil // one task: nothing to choose between
	}
	if mode == stepFinish {
		return nil
	}
	ch := make(chan phaseReply, 1)
	stop := &phaseStop{Info: info, Next: p.Next, reply: ch}
	if p.Phase == engine.PhaseBarrier && st.store != nil {
		stop.Sends, stop.SendsErr = readSends(ctx, st.store, p.Ref, p.Tasks)
	}
	st.show(stop)
	select {
	case r := <-ch:
		st.mode.Store(int32(r.mode))
		switch p.Phase {
		case engine.PhasePlan:
			if r.pause {
				return engine.ErrPause
			}
		case engine.PhaseTask:
			if r.next != "" {
				p.Next = r.next
			}
		case engine.PhaseBarrier:
			p.Edits = r.edits
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (st *stepper) show(stop *phaseStop) {
	uiDo(func() { st.s.m.update(func() { st.s.m.setPhase(st.sc, stop) }) })
}

// StepInto runs the thread's next super-step stopping at each of its
// phases; while a step into waits at a phase, it goes on to the next one.
func (s *Studio) StepInto() {
	if s.continuePhase(stepPhases, false) {
		return
	}
	s.startRun(kindStepInto, runRequest{})
}

// continuePhase answers the phase stop the current thread's step into
// waits at, if any, and reports whether there was one.
func (s *Studio) continuePhase(mode stepMode, pause bool) bool {
	stop := s.m.waiting()
	if stop == nil {
		return false
	}
	stop.reply <- phaseReply{mode: mode, next: stop.Next, edits: stop.Edits, pause: pause}
	stop.reply = nil
	s.m.setPhase(s.m.scope(), nil)
	return true
}

// pickTask makes pending task id the one that runs next at a PhaseTask
// stop.
func (m *model) pickTask(id string) {
	if p := m.waiting(); p != nil && p.Info.Phase == engine.PhaseTask && p.Next != id {
		for _, pid := range p.Info.Pending {
			if pid == id {
				p.Next = id
				m.changed(chPhase)
				return
			}
		}
	}
}

// setEdits sets the edits of the writes waiting at a barrier stop.
func (m *model) setEdits(edits []engine.StepEdit) {
	if p := m.waiting(); p != nil && p.Info.Phase == engine.PhaseBarrier {
		p.Edits = edits
		m.changed(chPhase)
	}
}

// phaseHighlight marks, while a step into stands at a phase, the step's
// tasks on the graph: planned or waiting (next), the one about to run
// (running) and those done (finished), with "done/total" on a node that
// runs several tasks.
func phaseHighlight(h render.Highlight, sc *scope) {
	p := sc.dbg.phase
	if p == nil || (p.Info.Phase == engine.PhaseApply && p.Info.NS == "") {
		return
	}
	pending := map[string]bool{}
	for _, id := range p.Info.Pending {
		pending[id] = true
	}
	total, done := map[string]int{}, map[string]int{}
	for _, t := range p.Info.Tasks {
		total[t.Name]++
		if p.Info.Phase == engine.PhaseBarrier || p.Info.Phase == engine.PhaseApply || (p.Info.Phase == engine.PhaseTask && !pending[t.ID]) {
			done[t.Name]++
		}
	}
	for _, id := range ancestors(nodeID(p.Info.NS, "")) {
		h.States[id] = render.StateRunning // the subgraph node stepped into
	}
	for _, t := range p.Info.Tasks {
		if t.Name == engine.START {
			continue
		}
		id := nodeID(p.Info.NS, t.Name)
		st := render.StateNext
		switch {
		case done[t.Name] == total[t.Name]:
			st = render.StateFinished
		case p.Info.Phase == engine.PhaseTask && t.ID == p.Next:
			st = render.StateRunning
		}
		if h.States[id] != render.StateRunning {
			h.States[id] = st
		}
		if total[t.Name] > 1 && p.Info.Phase == engine.PhaseTask {
			h.Badges[id] = fmt.Sprintf("%d/%d", done[t.Name], total[t.Name])
		}
	}
}

// phaseLine is the status line's account of a step into: the phase and
// what the keys do there; inside a subgraph node, which one.
func phaseLine(p *phaseStop) string {
	if p == nil {
		return ""
	}
	if p.Info.NS != "" {
		return "inside " + subgraphPath(p.Info.NS) + " · " + rootPhaseLine(p)
	}
	return rootPhaseLine(p)
}

// subgraphPath names the subgraph nodes of namespace ns, outermost first:
// "summarize" or "outer › inner".
func subgraphPath(ns string) string { return strings.Join(nsNodes(ns), " › ") }

func rootPhaseLine(p *phaseStop) string {
	i := p.Info
	if i.Phase == engine.PhaseApply && i.NS != "" {
		// Inside a subgraph the run waits after apply too (see hook).
		changed := "no channel changed"
		if len(i.Updated) > 0 {
			changed = "changed " + strings.Join(i.Updated, ", ")
		}
		return fmt.Sprintf("step %d applied, %s · Shift+F10 goes on", i.Step, changed)
	}
	switch i.Phase {
	case engine.PhasePlan:
		return fmt.Sprintf("stepping into step %d · plan: %s · Shift+F10 runs it, F10 finishes the step, F5 runs on", i.Step, countTasks(i.Tasks))
	case engine.PhaseTask:
		return fmt.Sprintf("stepping into step %d · run: %d of %d tasks left, %s next · Shift+F10 runs it", i.Step, len(i.Pending), len(i.Tasks), taskLabel(i.Tasks, p.Next))
	case engine.PhaseBarrier:
		s := fmt.Sprintf("stepping into step %d · barrier: %s", i.Step, barrierWaits(countWrites(i.Tasks), countSends(p.Sends)))
		if len(p.Edits) > 0 {
			s += fmt.Sprintf(", %d edited (the step will be a fork)", len(p.Edits))
		}
		if countWrites(i.Tasks)+countSends(p.Sends) == 1 {
			return s + " · Shift+F10 applies it"
		}
		return s + " · Shift+F10 applies them"
	case engine.PhaseApply:
		if len(i.Updated) == 0 {
			return fmt.Sprintf("stepped into step %d: applied, no channel changed", i.Step)
		}
		return fmt.Sprintf("stepped into step %d: applied, changed %s", i.Step, strings.Join(i.Updated, ", "))
	}
	return ""
}

// countTasks says how many tasks of which nodes a step runs.
func countTasks(ts []engine.TaskState) string {
	var names []string
	for _, t := range ts {
		names = append(names, t.Name)
	}
	if len(ts) == 1 {
		return "1 task (" + joinNames(names) + ")"
	}
	return fmt.Sprintf("%d tasks (%s)", len(ts), joinNames(names))
}

// writesWait says how many writes wait at a barrier: "1 write waits",
// "3 writes wait".
func writesWait(n int) string {
	if n == 1 {
		return "1 write waits"
	}
	return plural(n, "write") + " wait"
}

func countWrites(ts []engine.TaskState) int {
	n := 0
	for _, t := range ts {
		n += len(t.Result)
	}
	return n
}

// taskLabel names task id of ts: "research #2" when its node runs several.
func taskLabel(ts []engine.TaskState, id string) string {
	count, total := map[string]int{}, map[string]int{}
	for _, t := range ts {
		total[t.Name]++
	}
	for _, t := range ts {
		count[t.Name]++
		if t.ID == id {
			name := t.Name
			if name == engine.START {
				name = "start"
			}
			if total[t.Name] > 1 {
				return fmt.Sprintf("%s #%d", name, count[t.Name])
			}
			return name
		}
	}
	return shortID(id)
}

// triggerText says in words why a task runs: the channels that triggered
// it (an edge into the node is the channel "branch:to:NODE"), or the Send
// that made it.
func triggerText(t engine.TaskState, trig []string) string {
	if strings.HasPrefix(t.Path, "push") {
		return "a Send from the previous step"
	}
	var why []string
	for _, c := range trig {
		switch {
		case c == engine.START:
			why = append(why, "the input")
		case strings.HasPrefix(c, "branch:to:"):
			why = append(why, "an edge into "+strings.TrimPrefix(c, "branch:to:"))
		case strings.HasPrefix(c, "join:"):
			why = append(why, "a join ("+c+")")
		default:
			why = append(why, "channel "+c+" changed")
		}
	}
	if len(why) == 0 {
		return "planned"
	}
	return "triggered by " + strings.Join(why, ", ")
}

// sendsWait bounds how long the barrier waits for the tasks' writes to
// be stored: a run stores them from a goroutine of its own (the default
// durability), which is some milliseconds behind the barrier.
const sendsWait = time.Second

// readSends reads the Send packets tasks (of the step from ref) wrote, by
// task id, from their stored writes (checkpoint.Tasks), once every task
// has stored its writes.
func readSends(ctx context.Context, store checkpoint.Saver, ref checkpoint.Ref, tasks []engine.TaskState) (map[string][]sendPacket, error) {
	var tp *checkpoint.Tuple
	for deadline := time.Now().Add(sendsWait); ; {
		var err error
		if tp, err = store.Get(ctx, ref); err != nil {
			return nil, fmt.Errorf("reading checkpoint %s: %w", ref.CheckpointID, err)
		}
		stored := map[string]bool{}
		for _, pw := range tp.PendingWrites {
			stored[pw.TaskID] = true
		}
		missing := ""
		for _, t := range tasks {
			if t.Finished && !stored[t.ID] {
				missing = taskLabel(tasks, t.ID)
				break
			}
		}
		if missing == "" {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the writes of %s are not stored after %v", missing, sendsWait)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	var out map[string][]sendPacket
	for _, pw := range tp.PendingWrites {
		if pw.Channel != checkpoint.Tasks {
			continue
		}
		ps, err := decodeSends(pw.Value)
		if err != nil {
			return out, fmt.Errorf("the Send packets of %s: %w", taskLabel(tasks, pw.TaskID), err)
		}
		if out == nil {
			out = map[string][]sendPacket{}
		}
		out[pw.TaskID] = append(out[pw.TaskID], ps...)
	}
	return out, nil
}

// decodeSends reads a stored write to checkpoint.Tasks: one Send or a
// list, each {"node", "values" or "arg"}.
func decodeSends(b []byte) ([]sendPacket, error) {
	type form struct {
		Node   string          `json:"node"`
		Values json.RawMessage `json:"values"`
		Arg    json.RawMessage `json:"arg"`
	}
	var forms []form
	if len(b) > 0 && b[0] == '{' {
		var f form
		if err := json.Unmarshal(b, &f); err != nil {
			return nil, err
		}
		forms = []form{f}
	} else if err := json.Unmarshal(b, &forms); err != nil {
		return nil, err
	}
	out := make([]sendPacket, 0, len(forms))
	for _, f := range forms {
		raw := f.Values
		if raw == nil {
			raw = f.Arg
		}
		var arg any
		if raw != nil {
			if err := json.Unmarshal(raw, &arg); err != nil {
				return nil, fmt.Errorf("the Send to %q: %w", f.Node, err)
			}
		}
		if f.Values == nil {
			// An argument other than Values is stored with its registered
			// type's name: {"type": "string", "value": …}; the value is
			// what the node reads.
			if m, ok := arg.(map[string]any); ok && len(m) == 2 && m["type"] != nil {
				if v, ok := m["value"]; ok {
					arg = v
				}
			}
		}
		out = append(out, sendPacket{Node: f.Node, Arg: arg})
	}
	return out, nil
}

// countSends counts a barrier's Send packets.
func countSends(sends map[string][]sendPacket) int {
	n := 0
	for _, ps := range sends {
		n += len(ps)
	}
	return n
}

// barrierWaits says what waits at a barrier: "3 writes wait", "3 Sends
// wait", "1 write and 2 Sends wait".
func barrierWaits(writes, sends int) string {
	switch {
	case sends == 0:
		return writesWait(writes)
	case writes == 0 && sends == 1:
		return "1 Send waits"
	case writes == 0:
		return plural(sends, "Send") + " wait"
	}
	return plural(writes, "write") + " and " + plural(sends, "Send") + " wait"
}
