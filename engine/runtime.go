package engine

// This file is what a running node can learn about its run (LangGraph's
// Runtime and the langgraph_* keys of a node's config), and the per-node
// timeout.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weftstudio/weft/checkpoint/longterm"
)

// Runtime describes the task a node is running as: where it is in the
// thread's timeline and which run it belongs to. Get it with RuntimeOf.
type Runtime struct {
	// ThreadID is the run's thread; "" for a graph without a saver run
	// without WithThread.
	ThreadID string
	// CheckpointID is the checkpoint the task's step started from; "" without
	// a saver.
	CheckpointID string
	// Step is the super-step the task runs in: the step of the checkpoint
	// its writes will be part of.
	Step int
	// Node is the node's name; TaskID the task's id (the id its pending
	// writes and stream events carry).
	Node   string
	TaskID string
	// NS is the namespace of the graph running the node: "" at the root,
	// "node:<task id>" inside a subgraph, nested levels joined by "|".
	NS string
	// RunID is the id given with WithRunID (also in every checkpoint's
	// metadata); "" when the run was given none.
	RunID string
	// RemainingSteps is how many more super-steps the run may start after
	// this one before its recursion limit stops it (Python LangGraph's
	// RemainingSteps managed value): the limit's step minus Step, counted
	// from where this run began (a subgraph from its own first step). On a
	// new run the first node after START sees the limit minus one; a
	// resumed task sees the limit plus one, as the resumed run counts from
	// the checkpoint it continues. A node seeing 0 still runs, but the run
	// then fails with a RecursionLimitError. Computed for each task, never
	// stored: it is in no checkpoint, snapshot or stream event.
	RemainingSteps int
	// IsLastStep is true on the step whose RemainingSteps is 1 (Python
	// LangGraph's IsLastStep managed value): the last step after which the
	// run can still end without a RecursionLimitError, so a route that
	// goes to END there finishes the run. Never stored.
	IsLastStep bool
	// Store is the graph's long-term store (WithStore; inside a subgraph,
	// that of the outermost graph with one); nil when it has none. It is
	// shared by every thread and run, and never part of a checkpoint.
	Store longterm.Store
}

// RuntimeOf returns the Runtime of the node running with ctx. ok is false
// outside a running node (a path function of a conditional edge also runs
// as its node and gets the node's Runtime).
func RuntimeOf(ctx context.Context) (r Runtime, ok bool) {
	tc := taskFrom(ctx)
	if tc == nil {
		return Runtime{}, false
	}
	rt := tc.rt
	// rt.stop is the last step the run may take; Python LangGraph
	// computes its managed values from the same two numbers.
	return Runtime{ThreadID: rt.cfg.thread, CheckpointID: rt.cpID, Step: tc.step, Node: tc.t.name,
		TaskID: tc.t.id, NS: rt.ns, RunID: rt.cfg.runID,
		RemainingSteps: rt.stop - tc.step, IsLastStep: tc.step == rt.stop-1, Store: rt.longTerm()}, true
}

// longTerm returns the long-term store of the outermost graph of the run
// that has one (LangGraph: a parent's store reaches its subgraphs).
func (rt *runtime) longTerm() longterm.Store {
	var s longterm.Store
	for p := rt; p != nil; p = p.cfg.parentRT {
		if p.g.store != nil {
			s = p.g.store
		}
	}
	return s
}

// WithRunContext passes v to every node of the run (subgraphs included),
// which read it with RunContext: the run's static context, such as a user
// id, a database handle or a model client (LangGraph's context= and
// Runtime.context). It is not saved in checkpoints: give it again to each
// run, including resumes.
func WithRunContext(v any) RunOption { return func(c *runConfig) { c.runCtx = v } }

// RunContext returns the value given to the run with WithRunContext, as a
// T. ok is false outside a running node, when the run has none, or when it
// is not a T.
func RunContext[T any](ctx context.Context) (v T, ok bool) {
	tc := taskFrom(ctx)
	if tc == nil {
		return v, false
	}
	rt := tc.rt
	for rt.cfg.parentRT != nil { // a subgraph run: the root run holds it
		rt = rt.cfg.parentRT
	}
	v, ok = rt.cfg.runCtx.(T)
	return v, ok
}

// WithTimeout limits each attempt of the node to d: its context is
// cancelled when d has passed, and an attempt that has not returned by then
// fails with a *TimeoutError, which the node's retry policy retries like
// any other error (unless its RetryOn says otherwise). A node must watch
// its context for the limit to cut it short: one that ignores it is failed
// when it returns. d ≤ 0 means no limit, as without the option.
func WithTimeout(d time.Duration) NodeOption { return func(n *nodeDef) { n.timeout = d } }

// TimeoutError is the failure of a task attempt that outlived its node's
// WithTimeout limit.
type TimeoutError struct {
	Node  string
	Limit time.Duration
}

// Error describes the TimeoutError.
func (e *TimeoutError) Error() string {
	return fmt.Sprintf("node %q timed out after %s (its engine.WithTimeout limit)", e.Node, e.Limit)
}

// withNodeTimeout gives one attempt of t its node's time limit. done turns
// the attempt's error into a *TimeoutError when the limit, and not the
// run's own context, ended it; it must run after every other deferred
// function of the attempt (so after a recovered panic too). Without a limit
// done is nil: the caller skips it, and no attempt pays for the hook.
func withNodeTimeout(ctx context.Context, t *task) (context.Context, func(*error)) {
	d := t.node.timeout
	if d <= 0 {
		return ctx, nil
	}
	tctx, cancel := context.WithTimeoutCause(ctx, d, &TimeoutError{Node: t.name, Limit: d})
	return tctx, func(errp *error) {
		expired := ctx.Err() == nil && errors.Is(tctx.Err(), context.DeadlineExceeded)
		cancel()
		if expired && (*errp == nil || !isInterrupt(*errp)) {
			*errp = context.Cause(tctx)
		}
	}
}
