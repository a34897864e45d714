package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/weftstudio/weft/checkpoint"
)

// Result is the outcome of a run that did not fail.
type Result struct {
	// Values is the state as the run last reported it (its last values
	// event, as LangGraph's invoke returns its last values chunk): the state
	// at its end when a step changed any state channel or the run resumed a
	// thread, and empty when it did neither; following LangGraphPython, also
	// the state when the run stopped at interrupts. For a run stopped by
	// interrupts, the writes of the tasks that finished in its last step
	// count as applied.
	Values Values
	// Interrupts are the questions waiting for an answer; empty unless the
	// run stopped at Interrupt calls. nil then, except for a run stopped at
	// a breakpoint following LangGraphJS, where it is empty but set (its
	// "__interrupt__": []).
	Interrupts []PendingInterrupt
	// Next names the tasks that would run next; empty when the graph is done.
	Next []string
	// Done is true when the graph reached its end (no tasks left).
	Done bool
	// Breakpoint says where a run stopped that was neither done nor
	// stopped by interrupts; StopNone (the zero value) otherwise.
	Breakpoint Stop
	// After names the nodes whose step the run stopped after (Breakpoint
	// "after"), sorted; nil for any other stop. Next says what runs next.
	After []string
	// Ref is the latest checkpoint of the run; zero without a saver.
	Ref checkpoint.Ref
	// Steps counts the super-steps this run executed.
	Steps int
	// Dropped counts observer events lost because the observer was slow.
	Dropped int
	// changed holds, for a subgraph run, the state channels its own nodes
	// wrote, with their final values: what the parent task writes back.
	changed []Write
}

// Stop says why a run stopped short of its end without an interrupt. It
// is a string so it reads as itself in JSON and logs.
type Stop string

// The stops of a run. The zero Stop, StopNone, means the run finished or
// stopped at interrupts.
const (
	StopNone   Stop = ""       // done, or stopped at Interrupt calls
	StopBefore Stop = "before" // a static breakpoint before a node (WithInterruptBefore)
	StopAfter  Stop = "after"  // a static breakpoint after a node (WithInterruptAfter)
	StopStep   Stop = "step"   // WithStepLimit or WithStopCheck
	StopPhase  Stop = "phase"  // a phase hook returned ErrPause (WithPhases)
)

// Invoke runs the graph to its end, an interrupt, a breakpoint or a step
// limit, and returns the state. input is Values (or an Update) to start a
// run, a Command to answer interrupts or steer, or nil to continue a thread.
func (gr *Graph) Invoke(ctx context.Context, input Input, opts ...RunOption) (*Result, error) {
	return gr.invoke(ctx, input, 0, nil, opts)
}

func (gr *Graph) invoke(ctx context.Context, input Input, modes StreamMode, sink func(Event), opts []RunOption) (*Result, error) {
	if gr.view != nil {
		if gr.view.run == nil {
			return nil, gr.viewErr()
		}
		return gr.viewInvoke(ctx, input, newWriteConfig(opts), modes, sink)
	}
	cfg := newWriteConfig(opts)
	var ends []func(*Result, error)
	if len(gr.hooks) > 0 {
		ctx, modes, sink, ends = gr.startHooks(ctx, input, cfg, modes, sink)
	}
	var q *observerQueue
	if cfg.observer != nil {
		q = newObserverQueue(cfg.observerBuf, cfg.observer)
		obsModes := cfg.modes
		inner := sink
		innerModes := modes
		sink = func(ev Event) {
			if obsModes&ev.Mode != 0 {
				q.send(ev)
			}
			if inner != nil && innerModes&ev.Mode != 0 {
				inner(ev)
			}
		}
		modes |= obsModes
	}
	var em *emitter
	if sink != nil && modes != 0 {
		em = &emitter{modes: modes, sink: sink}
	}
	res, err := gr.execute(ctx, input, cfg, em)
	if q != nil {
		d := q.close()
		if res != nil {
			res.Dropped = d
		}
	}
	for _, end := range ends {
		end(res, err)
	}
	return res, err
}

func (gr *Graph) execute(ctx context.Context, input Input, cfg *runConfig, em *emitter) (res *Result, err error) {
	ctx, endClaim, err := gr.claimRun(ctx, cfg) // one run per thread: see lease.go
	if err != nil {
		return nil, err
	}
	defer func() { err = endClaim(err) }()
	rt, err := gr.newRuntime(ctx, cfg, em)
	if err != nil {
		return nil, err
	}
	defer rt.releaseBufs()
	rt.step = -1
	if rt.saver != nil {
		// gerr, not err: the deferred check below must see the named result.
		saved, gerr := rt.saver.Get(ctx, checkpoint.Ref{ThreadID: cfg.thread, NS: cfg.ns, CheckpointID: cfg.checkpointID})
		switch {
		case errors.Is(gerr, checkpoint.ErrNotFound):
			if cfg.checkpointID != "" {
				return nil, fmt.Errorf("thread %q has no checkpoint %q", cfg.thread, cfg.checkpointID)
			}
		case gerr != nil:
			return nil, fmt.Errorf("loading thread %q: %w", cfg.thread, gerr)
		default:
			if err := rt.load(saved); err != nil {
				return nil, err
			}
			if err := rt.noteHead(); err != nil {
				return nil, err
			}
			rt.replay = cfg.checkpointID != "" && cfg.parentRT == nil && !rt.continuesAddressedHead(input, saved.Metadata.Source)
		}
		ip, inProcess := rt.saver.(checkpoint.InProcess)
		if cfg.durability == DurabilityAsync && !(inProcess && ip.InProcess()) {
			rt.bg = newBGWriter(ctx, rt.saver)
			defer func() {
				if werr := rt.bg.close(); werr != nil && err == nil {
					res, err = nil, fmt.Errorf("saving checkpoints: %w", werr)
				}
			}()
		}
	}
	defer rt.releaseScratch()
	rt.stop = rt.step + cfg.limit + 1
	if err := rt.first(input); err != nil {
		return nil, err
	}
	res, err = rt.loop()
	if cfg.durability == DurabilityExit && rt.saver != nil {
		if werr := rt.flushExit(); werr != nil && err == nil {
			return nil, werr
		}
	}
	return res, err
}
