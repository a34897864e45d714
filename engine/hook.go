package engine

// This file lets a program attach itself to every run of a graph, whoever
// starts it (its own code, the CLI, a server): tracing is the use it was
// made for.

import (
	"context"
	"maps"
	"slices"
)

// RunInfo describes a run as it starts, for a RunHook.
type RunInfo struct {
	// Graph is the graph that runs (the copy the hook was attached to).
	Graph *Graph
	// Thread is the run's thread (WithThread); "" for a run without one.
	Thread string
	// Checkpoint is the checkpoint the run starts from when WithCheckpoint
	// named one; "" for the thread's latest.
	Checkpoint string
	// Input is the run's input as Invoke or Stream got it: Values or an
	// Update for new input, a Command, or nil to continue the thread.
	Input Input
}

// RunHooks is what a RunHook attaches to one run. Zero fields attach
// nothing.
type RunHooks struct {
	// Context, when not nil, replaces the run's context; it must derive
	// from the one the hook was given, so cancellation still reaches the
	// run.
	Context context.Context
	// Metadata is added to the metadata of the run's checkpoints; a key the
	// caller set with WithMetadata keeps the caller's value.
	Metadata map[string]any
	// Modes selects the events OnEvent sees.
	Modes StreamMode
	// OnEvent is called with each event of Modes synchronously, on the
	// goroutine that reports it (the run's, or a task's: concurrently for
	// the tasks of one step). It must be safe for concurrent use, fast,
	// and never block: the run waits for it. Events are shared: read
	// them, do not modify them.
	OnEvent func(Event)
	// OnEnd is called once, as Invoke or Stream returns, with the run's
	// result and error, after every observer has seen its events.
	OnEnd func(*Result, error)
}

// RunHook is called as each run of a graph starts (Invoke and Stream; not
// state reads or updates, not the runs of its subgraphs, whose events reach
// the hook with their namespace) and says what to attach to it.
type RunHook func(ctx context.Context, run RunInfo) RunHooks

// WithRunHook returns a copy of the graph whose every run calls hook, after
// the hooks the graph already had. The copy shares everything else with
// the graph; the graph itself is not changed.
func (gr *Graph) WithRunHook(hook RunHook) *Graph {
	c := *gr
	c.hooks = append(slices.Clip(gr.hooks), hook)
	return &c
}

// startHooks calls the graph's hooks for a run about to start and folds
// what they attach into its context, metadata and event sink. It returns
// the functions to call as the run ends.
func (gr *Graph) startHooks(ctx context.Context, input Input, cfg *runConfig, modes StreamMode, sink func(Event)) (context.Context, StreamMode, func(Event), []func(*Result, error)) {
	info := RunInfo{Graph: gr, Thread: cfg.thread, Checkpoint: cfg.checkpointID, Input: input}
	var ends []func(*Result, error)
	for _, hook := range gr.hooks {
		h := hook(ctx, info)
		if h.Context != nil {
			ctx = h.Context
		}
		if len(h.Metadata) > 0 {
			md := maps.Clone(h.Metadata)
			maps.Copy(md, cfg.metadata)
			cfg.metadata = md
		}
		if h.OnEvent != nil && h.Modes != 0 {
			inner, innerModes, hookModes, fn := sink, modes, h.Modes, h.OnEvent
			sink = func(ev Event) {
				if hookModes&ev.Mode != 0 {
					fn(ev)
				}
				if inner != nil && innerModes&ev.Mode != 0 {
					inner(ev)
				}
			}
			modes |= hookModes
		}
		if h.OnEnd != nil {
			ends = append(ends, h.OnEnd)
		}
	}
	return ctx, modes, sink, ends
}
