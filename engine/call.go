package engine

// This file runs call tasks: functions a running node starts with Call,
// LangGraph's functional-API tasks (its PUSH tasks with a Call,
// __pregel_call). Each is a task of the node's step with an id of its own,
// run on a goroutine, whose result is stored as a pending write of the
// step's checkpoint; when the node runs again in the same step (a resume
// after an interrupt, a retry, a restart after a crash) the call finds its
// stored result and is not run again.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/weftstudio/weft/checkpoint"
)

// CallFunc is the body of a call task (Call): it gets the input Call was
// given and returns the task's result. Its context is the task's: Interrupt,
// RecordCall and nested Calls work in it as in a node.
type CallFunc func(ctx context.Context, in any) (any, error)

// CallOptions configure a call task. The zero CallOptions runs the task
// once, without retries, without a time limit and without the node cache.
type CallOptions struct {
	// Retry retries the task's function when it fails, as a node's retry
	// policy does; nil means a single attempt.
	Retry *RetryPolicy
	// Cache looks the task's result up in the node cache of the graph
	// running it (LangGraph's task cache policy, Python's
	// @task(cache_policy=...), LangGraph.js's task({cachePolicy})) before
	// it runs; it takes effect in a graph compiled WithCache, and nil
	// means no lookup. The key is the task's name with a hash of its input
	// as stored (the in given to Call), or of what the policy's Key makes
	// of State whose ArgAs reads that input. A hit returns the stored
	// result without running the function: the Future's Cached reports it,
	// and it streams as LangGraph streams it (a task start, an updates
	// event marked Cached and CacheHit, no task result). A call that
	// succeeds stores its result, for the policy's TTL (0: until the cache
	// is cleared), before its Future is done, so a later call with the
	// same key in the same run is a hit (see Task cache among the package's
	// deliberate differences). The entries of every call task of a graph
	// share one namespace of its cache, which no node's can have, named
	// after the graph: Graph.ClearCache with no nodes clears them.
	Cache *CachePolicy
	// Timeout limits each attempt of the task to the duration, as
	// WithTimeout does for a node: the task's context is cancelled when it
	// has passed, the attempt fails with a *TimeoutError (errors.As finds
	// it), and Retry retries it like any other failure. A Weft extension:
	// Python LangGraph's @task has no timeout, and the oracle pins none
	// (LangGraph.js 1.7's task() takes a timeout whose behaviour is not
	// compared). 0 or less means no limit.
	Timeout time.Duration
}

// Future is the result of a call task to come (Call). Its zero value is not
// usable: only Call makes Futures.
type Future struct {
	// ID is the call task's id, stable across re-runs of the calling node
	// in one step; "" when Call failed before the task was made.
	ID    string
	Name  string // the task's name
	done  chan struct{}
	v     any
	err   error
	saved bool // the result came from the checkpoint: the task did not run
	hit   bool // the result came from the node cache: the task did not run
}

// Wait blocks until the task has finished, or ctx is done, and returns its
// result. The error is the task's (an *InterruptError when it stopped at
// Interrupt: return it from the node, wrapped or not), or ctx's.
func (f *Future) Wait(ctx context.Context) (any, error) {
	select {
	case <-f.done:
		return f.v, f.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Done is closed when the task has finished.
func (f *Future) Done() <-chan struct{} { return f.done }

// Restored reports whether the result was read from the checkpoint instead
// of running the task (it finished in an earlier run of the same step).
// Only meaningful once Done is closed.
func (f *Future) Restored() bool { return f.saved }

// Cached reports whether the result was served by the node cache instead
// of running the task (CallOptions.Cache). Only meaningful once Done is
// closed.
func (f *Future) Cached() bool { return f.hit }

// failedFuture is a Future that is done with err at once.
func failedFuture(name string, err error) *Future {
	f := &Future{Name: name, done: make(chan struct{}), err: err}
	close(f.done)
	return f
}

// callState is what a runtime keeps of its call tasks: every Future of the
// run by task id, so a node that runs again in the same step (its retry)
// gets the running or finished task instead of a second one.
type callState struct {
	callMu   sync.Mutex
	callFuts map[string]*Future
}

// Call starts fn as a call task of the running node and returns its
// Future at once: tasks started one after the other run concurrently. The
// task is LangGraph's functional-API task (a PUSH task with a Call): its id
// comes from the step's checkpoint, the step, the node's task path, name and
// the call's position among the calls of this run of the node, so a node
// that makes the same calls in the same order finds them again when it runs
// again. Its result (stored with the run's codecs: registered types keep
// theirs, others come back as JSON data) or its error is stored as a
// pending write of the step (channel checkpoint.Return), and a node run
// again in the same step — resumed after an interrupt, retried, or after a
// crash — gets a finished task's stored result without running it; a task
// that failed or stopped at Interrupt runs again. The calls stream as
// tasks: an updates event with the task's name and NodeUpdate.Return,
// tasks and lifecycle events.
//
// The node waits for its calls before its own task ends, and a node that
// fails cancels the calls still running. Call outside a running node, or
// with an empty name or nil fn, returns a Future that failed.
func Call(ctx context.Context, name string, in any, fn CallFunc, opts CallOptions) *Future {
	tc := taskFrom(ctx)
	switch {
	case tc == nil:
		return failedFuture(name, fmt.Errorf("engine.Call of task %q outside a running node", name))
	case name == "" || fn == nil:
		return failedFuture(name, fmt.Errorf("engine.Call in node %q: a task needs a name and a function", tc.t.name))
	}
	rt, parent := tc.rt, tc.t
	tc.mu.Lock()
	idx := tc.calls
	tc.calls++
	if tc.callCtx == nil {
		tc.callCtx, tc.callCancel = context.WithCancel(tc.Context)
	}
	cctx := tc.callCtx
	tc.mu.Unlock()

	path := "call:" + strconv.Itoa(idx) + ":" + parent.path
	id := hashID(rt.cpID, rt.ns, strconv.Itoa(tc.step), name, "__pregel_push", parent.path, strconv.Itoa(idx))

	rt.callMu.Lock()
	if f, ok := rt.callFuts[id]; ok {
		rt.callMu.Unlock()
		return f
	}
	f := &Future{ID: id, Name: name, done: make(chan struct{})}
	if rt.callFuts == nil {
		rt.callFuts = map[string]*Future{}
	}
	rt.callFuts[id] = f
	rt.callMu.Unlock()

	t := &task{node: &node{name: name, retry: opts.Retry, cache: opts.Cache, timeout: opts.Timeout}, name: name, push: true, arg: in, id: id, path: path}
	saved, err := rt.savedCall(t)
	if err != nil {
		f.err = err
		close(f.done)
		return f
	}
	if saved {
		f.v, f.saved = t.callResult, true
		rt.emitCallStart(t) // both LangGraphs report a restored call's start
		if rt.js() {        // Python streams nothing else for a stored result (B10)
			rt.emitCallUpdate(t, true)
		}
		close(f.done)
		return f
	}
	hit, err := rt.serveCall(t)
	if err != nil || hit {
		f.v, f.err, f.hit = t.callResult, err, hit
		close(f.done)
		return f
	}
	tc.callWG.Add(1)
	go func() {
		defer tc.callWG.Done()
		rt.runCall(cctx, t, fn, tc.step)
		f.v, f.err = t.callResult, t.err
		if t.err != nil && !isInterrupt(t.err) {
			parent.callFailed.Store(true)
		}
		close(f.done)
	}()
	return f
}

// savedCall gives t the result a previous run of its step stored for it,
// and its stored answers to interrupts. It reports whether t finished
// before (then it does not run).
func (rt *runtime) savedCall(t *task) (bool, error) {
	if rt.replay {
		return false, nil
	}
	done := false
	for _, pw := range rt.pending {
		if pw.TaskID != t.id {
			continue
		}
		switch pw.Channel {
		case checkpoint.Return:
			v, err := decodeLoose(pw.Value)
			if err != nil {
				return false, fmt.Errorf("checkpoint %s: stored result of task %q (%s): %w", rt.cpID, t.name, t.id, err)
			}
			t.callResult, done = v, true
		case checkpoint.Resume:
			if err := t.decodeResume(pw.Value); err != nil {
				return false, fmt.Errorf("checkpoint %s: %w", rt.cpID, err)
			}
		}
	}
	if v, ok := rt.resumeMap[t.interruptID()]; ok && !done {
		t.resume = append(t.resume, v)
		t.resumeNew = true
	}
	return done, nil
}

// runCall runs a call task to its end with its retry policy and stores
// how it ended: in the node cache too when it succeeded with a policy.
func (rt *runtime) runCall(ctx context.Context, t *task, fn CallFunc, step int) {
	rt.emitTaskStart(t)
	t.ran = true
	t.err = withRetry(ctx, t.node.retry, rt.reference(), func() error {
		return rt.callOnce(ctx, t, fn, step)
	})
	if t.err != nil && !isInterrupt(t.err) {
		var ne *NodeError
		if !errors.As(t.err, &ne) {
			t.err = &NodeError{Node: t.name, TaskID: t.id, NS: rt.ns, Err: t.err}
		}
	}
	if t.err == nil && t.cacheKey != "" {
		rt.storeCallCached(t)
	}
	rt.commitCall(ctx, t)
}

// callOnce runs one attempt of a call task's function, under its time
// limit if it has one (CallOptions.Timeout).
func (rt *runtime) callOnce(ctx context.Context, t *task, fn CallFunc, step int) error {
	if t.node.timeout > 0 {
		return rt.callTimed(ctx, t, fn, step)
	}
	return rt.callBody(ctx, t, fn, step)
}

// callTimed is callOnce under the task's time limit: the limit is the
// node's (withNodeTimeout), its *TimeoutError named as the task's.
func (rt *runtime) callTimed(ctx context.Context, t *task, fn CallFunc, step int) (err error) {
	ctx, done := withNodeTimeout(ctx, t)
	defer func() {
		done(&err)
		if te, ok := err.(*TimeoutError); ok {
			err = &callTimeoutError{te}
		}
	}()
	return rt.callBody(ctx, t, fn, step)
}

// callTimeoutError is a call task's *TimeoutError, described as the
// task's (CallOptions.Timeout) rather than a node's.
type callTimeoutError struct{ *TimeoutError }

func (e *callTimeoutError) Error() string {
	return fmt.Sprintf("task %q timed out after %s (its CallOptions.Timeout)", e.Node, e.Limit)
}

func (e *callTimeoutError) Unwrap() error { return e.TimeoutError }

// callBody runs one attempt of a call task's function, recovering a panic
// into a NodeError, and waits for the calls it made.
func (rt *runtime) callBody(ctx context.Context, t *task, fn CallFunc, step int) (err error) {
	tc := &taskCtx{Context: ctx, rt: rt, t: t, step: step}
	defer func() {
		if p := recover(); p != nil {
			err = panicError(t, rt.ns, p)
		}
		tc.endCalls(err)
	}()
	t.callResult, err = fn(tc, t.arg)
	return err
}

// endCalls waits for the calls a node or call task started, after
// cancelling them when it failed (an interrupt lets them finish, so their
// results are kept for the resume).
func (tc *taskCtx) endCalls(err error) {
	tc.mu.Lock()
	cancel := tc.callCancel
	tc.mu.Unlock()
	if cancel == nil {
		return
	}
	if err != nil && !isInterrupt(err) {
		cancel()
	}
	tc.callWG.Wait()
	cancel()
}

// commitCall stores a finished call task's result, error or interrupt as
// pending writes of the step's checkpoint and reports it.
func (rt *runtime) commitCall(ctx context.Context, t *task) {
	if t.err == nil {
		rt.emitCallUpdate(t, false)
	}
	if rt.em.on(ModeLifecycle) {
		l := &Lifecycle{Kind: TaskEnd, TaskID: t.id, Node: t.name, Path: t.path}
		var ie *InterruptError
		if errors.As(t.err, &ie) {
			l.Interrupts = ie.Interrupts
		} else if t.err != nil {
			l.Error, l.ErrorKind = t.err.Error(), errorKind(t.err)
		}
		rt.em.emit(Event{Mode: ModeLifecycle, Step: rt.step, Lifecycle: l})
	}
	if rt.em.on(ModeTasks | ModeDebug) {
		ev := &TaskEvent{ID: t.id, Name: t.name, Path: t.path, Done: true}
		var ie *InterruptError
		if errors.As(t.err, &ie) {
			ev.Interrupts = ie.Interrupts
		} else if t.err != nil {
			ev.Error, ev.ErrorKind = t.err.Error(), errorKind(t.err)
		} else {
			ev.Return, ev.Returned = t.callResult, true
		}
		rt.em.emit(Event{Mode: ModeTasks, Step: rt.step, Task: ev})
		rt.em.emit(Event{Mode: ModeDebug, Step: rt.step, Task: ev, Debug: "task_result"})
	}
	if rt.saver == nil {
		return
	}
	var ws []checkpoint.Write
	var ie *InterruptError
	switch {
	case t.err == nil:
		b, err := encodeLoose(t.callResult)
		if err != nil {
			t.err = &NodeError{Node: t.name, TaskID: t.id, NS: rt.ns, Err: fmt.Errorf("cannot store its result of type %T: %w", t.callResult, err)}
			ws = []checkpoint.Write{{Channel: checkpoint.Error, Value: encodeTaskError(t.err)}}
			break
		}
		ws = []checkpoint.Write{{Channel: checkpoint.Return, Value: b}}
	case errors.As(t.err, &ie):
		b, err := encodeInterrupts(ie.Interrupts)
		if err != nil {
			t.err = &NodeError{Node: t.name, TaskID: t.id, NS: rt.ns, Err: err}
			ws = []checkpoint.Write{{Channel: checkpoint.Error, Value: encodeTaskError(t.err)}}
			break
		}
		ws = []checkpoint.Write{{Channel: checkpoint.Interrupt, Value: b}}
	case ctx.Err() != nil && errors.Is(t.err, context.Canceled):
		return // cancelled with its node: it runs again with it
	default:
		ws = []checkpoint.Write{{Channel: checkpoint.Error, Value: encodeTaskError(t.err)}}
	}
	if len(t.resume) > 0 && (t.resumeNew || isInterrupt(t.err)) {
		b, err := t.encodeResume()
		if err != nil {
			t.err = &NodeError{Node: t.name, TaskID: t.id, NS: rt.ns, Err: err}
			return
		}
		ws = append(ws, checkpoint.Write{Channel: checkpoint.Resume, Value: b})
	}
	ws = t.calls.appendTo(ws)
	rt.storeTaskWrites(t, ws)
}

// emitCallUpdate reports a call task's result as LangGraph's updates
// stream does: {name: result}; cached when it came from the checkpoint or
// the node cache. A call's interrupt is not reported here: as in LangGraph
// its node, which gets it from Future.Wait and returns it, reports it.
func (rt *runtime) emitCallUpdate(t *task, cached bool) {
	if !rt.em.on(ModeUpdates) {
		return
	}
	rt.em.emit(Event{Mode: ModeUpdates, Step: rt.step, Update: &NodeUpdate{Node: t.name, TaskID: t.id, Cached: cached, CacheHit: t.cached, Return: t.callResult, Returned: true}})
}

// emitCallStart reports the start of a call task that does not run, its
// result restored from the checkpoint, in the tasks and debug streams, as
// both LangGraphs report every call they are given. It has no lifecycle
// events: nothing runs.
func (rt *runtime) emitCallStart(t *task) {
	if !rt.em.on(ModeTasks | ModeDebug) {
		return
	}
	ev := &TaskEvent{ID: t.id, Name: t.name, Path: t.path, Input: t.arg}
	rt.em.emit(Event{Mode: ModeTasks, Step: rt.step, Task: ev})
	rt.em.emit(Event{Mode: ModeDebug, Step: rt.step, Task: ev, Debug: "task"})
}

// callCacheNode is the last part of the node cache namespace of a graph's
// call tasks: a ':' is in no node name, so no node's namespace
// (cacheNS) ends with it.
const callCacheNode = ":calls"

// callCacheNS is the node cache namespace of graph g's call tasks, all of
// them: ClearCache clears it with g's nodes.
func callCacheNS(g *Graph) string { return g.name + "|" + callCacheNode }

// callCacheKey is a call task's key in its namespace: its name, then the
// key of its input (cacheKey), so tasks of one graph share the namespace
// without sharing entries.
func callCacheKey(name, key string) string {
	return strconv.Itoa(len(name)) + ":" + name + ":" + key
}

// serveCall looks a call task with a cache policy up in the node cache. A
// hit gets the stored result and is reported as LangGraph reports a
// cached task (a task start, an updates event marked cached, no task
// result), and, following LangGraph.js, stored as the task's pending
// write, as B9 for a node; it reports whether there was a hit. A miss
// keeps its key, for storeCallCached.
func (rt *runtime) serveCall(t *task) (bool, error) {
	c := rt.nodeCache()
	if t.node.cache == nil || c == nil {
		return false, nil
	}
	key, err := rt.cacheKey(t)
	if err != nil {
		return false, &NodeError{Node: t.name, TaskID: t.id, NS: rt.ns, Err: fmt.Errorf("cache key: %w", err)}
	}
	key = callCacheKey(t.name, key)
	ws, ok, err := c.Get(rt.ctx, callCacheNS(rt.g), key)
	if err != nil {
		return false, &NodeError{Node: t.name, TaskID: t.id, NS: rt.ns, Err: fmt.Errorf("reading the node cache: %w", err)}
	}
	if !ok {
		t.cacheKey = key
		return false, nil
	}
	if len(ws) != 1 || ws[0].Channel != checkpoint.Return {
		return false, &NodeError{Node: t.name, TaskID: t.id, NS: rt.ns, Err: fmt.Errorf("the node cache's entry of task %q holds no result (clear the cache)", t.name)}
	}
	v, err := decodeLoose(ws[0].Value)
	if err != nil {
		return false, &NodeError{Node: t.name, TaskID: t.id, NS: rt.ns, Err: fmt.Errorf("the node cache's result: %w (clear the cache)", err)}
	}
	t.callResult, t.restored, t.cached = v, true, true
	rt.emitTaskStart(t)
	rt.emitCallUpdate(t, true)
	if rt.em.on(ModeLifecycle) {
		rt.em.emit(Event{Mode: ModeLifecycle, Step: rt.step, Lifecycle: &Lifecycle{Kind: TaskEnd, TaskID: t.id, Node: t.name, Path: t.path, Cached: true}})
	}
	if rt.saver != nil && rt.js() {
		// LangGraph.js puts a hit's result like a run's, so a resume
		// restores it; Python keeps it out of the checkpoint, so a resume
		// looks it up again.
		rt.storeTaskWrites(t, ws)
		if t.err != nil {
			return false, t.err
		}
	}
	return true, nil
}

// storeCallCached keeps a call task's result in the node cache after it
// succeeded, under the key serveCall found missing.
func (rt *runtime) storeCallCached(t *task) {
	b, err := encodeLoose(t.callResult)
	if err == nil {
		err = rt.nodeCache().Set(rt.ctx, callCacheNS(rt.g), t.cacheKey, []checkpoint.Write{{Channel: checkpoint.Return, Value: b}}, t.node.cache.TTL)
	}
	if err != nil {
		t.err = &NodeError{Node: t.name, TaskID: t.id, NS: rt.ns, Err: fmt.Errorf("cannot keep its result in the node cache: %w", err)}
	}
}

// decodeResume sets the task's answers from their stored form (a
// checkpoint.Resume write).
func (t *task) decodeResume(b []byte) error {
	var vals []json.RawMessage
	if err := json.Unmarshal(b, &vals); err != nil {
		return fmt.Errorf("stored answers of task %s: %w", t.id, err)
	}
	t.resume = t.resume[:0]
	for _, raw := range vals {
		v, err := decodeLoose(raw)
		if err != nil {
			return fmt.Errorf("stored answer of task %s: %w", t.id, err)
		}
		t.resume = append(t.resume, v)
	}
	return nil
}

// encodeResume is the stored form of the task's answers.
func (t *task) encodeResume() ([]byte, error) {
	raws := make([]json.RawMessage, len(t.resume))
	for i, v := range t.resume {
		b, err := encodeLoose(v)
		if err != nil {
			return nil, fmt.Errorf("cannot store its answers: %w", err)
		}
		raws[i] = b
	}
	return json.Marshal(raws)
}
