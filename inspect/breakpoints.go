package inspect

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/weftstudio/weft/engine"
)

// BreakKind is what a Breakpoint watches for.
type BreakKind int

// Kinds of breakpoint. The zero BreakKind is invalid.
const (
	// BreakChange stops after a step that changed Channel.
	BreakChange BreakKind = iota + 1
	// BreakWhen stops after a step that changed a channel Cond reads when
	// Cond then holds: the state changed to one matching it.
	BreakWhen
	// BreakWrite stops after a step in which Node wrote Channel.
	BreakWrite
	// BreakBefore stops before a step that runs Node, when Cond (if any)
	// holds on the state the step starts from.
	BreakBefore
	// BreakAfter stops after a step that ran Node, when Cond (if any) holds
	// on the state the step led to.
	BreakAfter
)

// Breakpoint is one place a run should stop. Spec is how it was written
// (see Parse); the other fields are what it means.
type Breakpoint struct {
	Spec    string
	Kind    BreakKind
	Channel string
	Node    string
	Cond    *Expr // nil: unconditional
}

// Parse reads a breakpoint written as one of:
//
//	change:CHANNEL            the channel changes
//	when:EXPR                 the state changes to one where EXPR holds
//	write:NODE:CHANNEL        NODE writes CHANNEL
//	before:NODE [if EXPR]     before NODE runs (when EXPR holds)
//	after:NODE [if EXPR]      after NODE ran (when EXPR holds)
//
// A bare expression means when:EXPR. Channels, nodes and expressions are
// checked against the graph; the error says what is wrong.
func Parse(g *engine.Graph, env *Env, spec string) (Breakpoint, error) {
	spec = strings.TrimSpace(spec)
	b := Breakpoint{Spec: spec}
	kind, rest, ok := strings.Cut(spec, ":")
	if !ok || strings.ContainsAny(kind, " ()<>=!\"") {
		kind, rest = "when", spec
	}
	hasChan := func(name string) error {
		if _, ok := env.zero[name]; !ok {
			return fmt.Errorf("breakpoint %q: graph %q has no channel %q", spec, g.Name(), name)
		}
		return nil
	}
	hasNode := func(name string) error {
		if !slices.Contains(g.Nodes(), name) {
			return fmt.Errorf("breakpoint %q: graph %q has no node %q", spec, g.Name(), name)
		}
		return nil
	}
	var err error
	switch kind {
	case "change":
		b.Kind, b.Channel = BreakChange, strings.TrimSpace(rest)
		err = hasChan(b.Channel)
	case "when":
		b.Kind = BreakWhen
		if b.Cond, err = env.CompileBool(strings.TrimSpace(rest)); err == nil && len(b.Cond.reads) == 0 {
			err = fmt.Errorf("breakpoint %q: the expression reads no channel, so no step changes it", spec)
		}
	case "write":
		node, ch, ok := strings.Cut(rest, ":")
		if !ok {
			return b, fmt.Errorf("breakpoint %q: write needs write:NODE:CHANNEL", spec)
		}
		b.Kind, b.Node, b.Channel = BreakWrite, strings.TrimSpace(node), strings.TrimSpace(ch)
		if err = hasNode(b.Node); err == nil {
			err = hasChan(b.Channel)
		}
	case "before", "after":
		b.Kind = BreakBefore
		if kind == "after" {
			b.Kind = BreakAfter
		}
		node, cond, hasCond := strings.Cut(rest, " if ")
		b.Node = strings.TrimSpace(node)
		if err = hasNode(b.Node); err == nil && hasCond {
			b.Cond, err = env.CompileBool(strings.TrimSpace(cond))
		}
	default:
		return b, fmt.Errorf("breakpoint %q: unknown kind %q (change, when, write, before, after)", spec, kind)
	}
	return b, err
}

// Hit is what a Breakpoints set stopped a run for.
type Hit struct {
	Breakpoint Breakpoint
	Step       int
	// Checkpoint is where the run stopped: the checkpoint the step starts
	// from (BreakBefore) or the one it stored.
	Checkpoint string
	// Task names the task the breakpoint is about (BreakBefore,
	// BreakAfter, BreakWrite), "" for the others.
	Task string
}

// Breakpoints is a set of breakpoints checked while a run steps. Use
// Phases as the run's engine.WithPhases hook. The zero Breakpoints stops
// nowhere.
type Breakpoints struct {
	List []Breakpoint
	// Err, when set, receives errors of evaluating conditions (a condition
	// that fails does not stop the run); nil drops them.
	Err func(b Breakpoint, err error)
	// ResumeAt names the checkpoint a run continues from after one of
	// these breakpoints stopped it before a step there (Hit.Checkpoint):
	// the run's first plan at that checkpoint is not stopped again by a
	// BreakBefore breakpoint, as the engine does not stop twice before one
	// step. "" checks every plan.
	ResumeAt string

	mu      sync.Mutex
	hit     *Hit
	resumed bool // the plan at ResumeAt was let through in this run
}

// Hit returns what stopped the last run, or nil.
func (bs *Breakpoints) Hit() *Hit {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	return bs.hit
}

// Phases returns the engine.PhaseFunc that pauses a run at the first
// breakpoint that holds; chain further hooks with Then. It looks only at
// the phases of the graph the run started on: the expressions name its
// channels, not a subgraph's.
func (bs *Breakpoints) Phases() engine.PhaseFunc {
	bs.mu.Lock()
	bs.hit, bs.resumed = nil, false
	bs.mu.Unlock()
	return func(_ context.Context, p *engine.PhaseInfo) error {
		if p.NS != "" {
			return nil // a subgraph's phase (engine.WithSubgraphPhases): its state is not the graph's
		}
		if h := bs.check(p); h != nil {
			bs.mu.Lock()
			bs.hit = h
			bs.mu.Unlock()
			return engine.ErrPause
		}
		return nil
	}
}

// Then returns a hook that calls first, then (unless first paused or
// failed) next: breakpoints alongside a stepping debugger's own hook.
func Then(first, next engine.PhaseFunc) engine.PhaseFunc {
	return func(ctx context.Context, p *engine.PhaseInfo) error {
		if err := first(ctx, p); err != nil {
			return err
		}
		return next(ctx, p)
	}
}

func (bs *Breakpoints) check(p *engine.PhaseInfo) *Hit {
	h := bs.checkPhase(p)
	if h != nil && h.Checkpoint == "" {
		h.Checkpoint = p.Ref.CheckpointID
	}
	return h
}

func (bs *Breakpoints) checkPhase(p *engine.PhaseInfo) *Hit {
	switch p.Phase {
	case engine.PhasePlan:
		if bs.ResumeAt != "" && p.Ref.CheckpointID == bs.ResumeAt {
			bs.mu.Lock()
			first := !bs.resumed
			bs.resumed = true
			bs.mu.Unlock()
			if first {
				return nil
			}
		}
		for _, b := range bs.List {
			if b.Kind != BreakBefore {
				continue
			}
			if t := taskNamed(p.Tasks, b.Node); t != "" && bs.holds(b, p.Values) {
				return &Hit{Breakpoint: b, Step: p.Step, Task: t, Checkpoint: p.Ref.CheckpointID}
			}
		}
	case engine.PhaseApply:
		for _, b := range bs.List {
			switch b.Kind {
			case BreakChange:
				if slices.Contains(p.Updated, b.Channel) {
					return &Hit{Breakpoint: b, Step: p.Step}
				}
			case BreakWhen:
				if slices.ContainsFunc(b.Cond.reads, func(c string) bool { return slices.Contains(p.Updated, c) }) && bs.holds(b, p.Values) {
					return &Hit{Breakpoint: b, Step: p.Step}
				}
			case BreakWrite:
				for _, t := range p.Tasks {
					if t.Name == b.Node && slices.ContainsFunc(t.Result, func(w engine.Write) bool { return w.Channel == b.Channel }) {
						return &Hit{Breakpoint: b, Step: p.Step, Task: t.ID}
					}
				}
			case BreakAfter:
				if t := taskNamed(p.Tasks, b.Node); t != "" && bs.holds(b, p.Values) {
					return &Hit{Breakpoint: b, Step: p.Step, Task: t}
				}
			}
		}
	}
	return nil
}

func (bs *Breakpoints) holds(b Breakpoint, vals engine.Values) bool {
	if b.Cond == nil {
		return true
	}
	ok, err := b.Cond.Holds(vals)
	if err != nil && bs.Err != nil {
		bs.Err(b, err)
	}
	return ok
}

// taskNamed returns the id of the first task running node, or "".
func taskNamed(tasks []engine.TaskState, node string) string {
	for _, t := range tasks {
		if t.Name == node {
			return t.ID
		}
	}
	return ""
}
