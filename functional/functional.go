// Package functional is LangGraph's functional API for Go: an entrypoint is
// a durable function run on a thread, and tasks are functions it calls
// whose results are checkpointed, so a run resumed after an interrupt, a
// failure or a crash does not run a finished task again.
//
//	double := functional.NewTask("double", func(ctx context.Context, n int) (int, error) {
//		return 2 * n, nil
//	})
//	wf, err := functional.Entrypoint("main", func(ctx context.Context, n int, prev *int) (int, error) {
//		a, b := double.Call(ctx, n), double.Call(ctx, n+1) // run concurrently
//		x, err := a.Get(ctx)
//		if err != nil {
//			return 0, err
//		}
//		y, err := b.Get(ctx)
//		return x + y, err
//	}, functional.WithCompile(engine.WithSaver(memory.New())))
//	out, res, err := wf.Invoke(ctx, 3, engine.WithThread("t1"))
//
// An entrypoint compiles, as LangGraph's does, to a graph with one node (its
// name) that runs the function: wf.Graph() is an ordinary *engine.Graph, so
// savers, threads, history, interrupts, the studio and the Agent Server work
// with it unchanged. Each call of a task is an engine.Call task of that
// node's step: its result is stored as a pending write of the step's
// checkpoint and found again when the function runs again in the step.
// Functions must therefore be deterministic in the tasks they call and the
// order they call them in; side effects belong in tasks.
//
// The graph's state is two channels: ReturnKey holds the function's last
// return value and PreviousKey what it saved (the return
// value, or Final's Save) — the value the next run on the thread gets as
// prev. The input is an ephemeral channel (InputKey), as LangGraph's START
// channel, so it is in no state. LangGraph shows only the return value as a
// functional graph's values; here both channels are in Values.
//
// Interrupt inside a task or the entrypoint with engine.Interrupt (or
// engine.InterruptAs) and return its error; resume the thread with
// wf.Resume (engine.Command{Resume: …}). The entrypoint runs again from its
// start, finished tasks return their stored results, and the interrupted
// one runs again and gets the answer.
//
// A task takes options: TaskRetry retries it, TaskCache serves it from the
// graph's node cache on an input it has seen (LangGraph's task cache
// policy; compile the entrypoint with engine.WithCache), and TaskTimeout
// bounds each attempt (a Weft extension). wf.UpdateState writes the
// entrypoint's result into a thread as LangGraph's update_state does, and
// the Agent Server serves an entrypoint's graph with its input and output
// as they are (IsEntrypoint).
package functional

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
)

// The channels of an entrypoint's graph.
const (
	InputKey    = "input"    // the run's input (ephemeral: in no checkpoint's values)
	ReturnKey   = "return"   // the entrypoint's last return value
	PreviousKey = "previous" // what it saved for the next run on the thread: prev
)

// Final is an entrypoint's result when what it returns and what it saves
// for the next run on the thread (prev) differ: LangGraph's
// entrypoint.final(value=…, save=…).
type Final[Out, Save any] struct {
	Value Out  // returned to the caller
	Save  Save // given as prev to the next run on the thread
}

// Option configures an entrypoint. The zero configuration compiles the
// graph without a saver (no threads, no interrupts) and runs the function
// once per run, without retries.
type Option func(*config)

type config struct {
	compile []engine.CompileOption
	retry   *engine.RetryPolicy
}

// WithCompile passes options to the graph's engine.Compile: a saver
// (engine.WithSaver) for durable runs on threads, a store, a cache.
func WithCompile(opts ...engine.CompileOption) Option {
	return func(c *config) { c.compile = append(c.compile, opts...) }
}

// WithRetry retries the entrypoint's function when it fails (its node's
// retry policy); tasks have their own (TaskRetry).
func WithRetry(p engine.RetryPolicy) Option { return func(c *config) { c.retry = &p } }

// Workflow is a compiled entrypoint: a function of In returning Out that
// saves a Save for its next run on the thread. Its zero value is not
// usable: Entrypoint and EntrypointFinal make Workflows.
type Workflow[In, Out, Save any] struct {
	name  string
	g     *engine.Graph
	ret   engine.Key[Out]
	saved engine.Key[Save]
}

// Entrypoint compiles fn as a durable function named name (LangGraph's
// @entrypoint): fn gets the run's input and prev, the value it returned in
// the last run on the thread that finished (nil on the thread's first run,
// or without a saver), and what it returns is both the run's result and the
// next run's prev. Errors name what is wrong with name or fn.
func Entrypoint[In, Out any](name string, fn func(ctx context.Context, in In, prev *Out) (Out, error), opts ...Option) (*Workflow[In, Out, Out], error) {
	if fn == nil {
		return nil, fmt.Errorf("functional.Entrypoint %q: nil function", name)
	}
	return EntrypointFinal(name, func(ctx context.Context, in In, prev *Out) (Final[Out, Out], error) {
		v, err := fn(ctx, in, prev)
		return Final[Out, Out]{Value: v, Save: v}, err
	}, opts...)
}

// EntrypointFinal is Entrypoint for a function that returns one value and
// saves another for the next run on the thread (LangGraph's
// entrypoint.final): prev is the last saved Save.
func EntrypointFinal[In, Out, Save any](name string, fn func(ctx context.Context, in In, prev *Save) (Final[Out, Save], error), opts ...Option) (*Workflow[In, Out, Save], error) {
	if fn == nil {
		return nil, fmt.Errorf("functional.EntrypointFinal %q: nil function", name)
	}
	if name == "" {
		return nil, errors.New("functional: an entrypoint needs a name")
	}
	var c config
	for _, o := range opts {
		o(&c)
	}
	input := engine.Ephemeral[In](InputKey)
	ret := engine.LastValue[Out](ReturnKey)
	saved := engine.LastValue[Save](PreviousKey)
	node := func(ctx context.Context, s engine.State) (engine.Output, error) {
		var prev *Save
		if v, ok := saved.Lookup(s); ok {
			prev = &v
		}
		f, err := fn(ctx, input.Get(s), prev)
		if err != nil {
			return nil, err
		}
		return engine.Updates(ret.Set(f.Value), saved.Set(f.Save)), nil
	}
	nopts := []engine.NodeOption{engine.OnInput()} // as LangGraph's: no __start__ step
	if c.retry != nil {
		nopts = append(nopts, engine.WithRetry(*c.retry))
	}
	g, err := engine.NewGraph(name, input, ret, saved).
		AddNode(name, node, nopts...).
		AddEdge(engine.START, name).
		AddEdge(name, engine.END).
		Compile(c.compile...)
	if err != nil {
		return nil, fmt.Errorf("functional: entrypoint %q: %w", name, err)
	}
	return &Workflow[In, Out, Save]{name: name, g: g, ret: ret, saved: saved}, nil
}

// IsEntrypoint reports whether g is an entrypoint's graph: one made by
// Entrypoint or EntrypointFinal, or a copy of one (Graph.WithSaver,
// WithCache, WithStore), recognised by its shape: one node, named as the
// graph, and the state InputKey (ephemeral), ReturnKey and PreviousKey
// (last values), in that order. A graph built by hand in that very shape
// counts as one. The Agent Server (package agentserver) uses it to give
// such a graph a run's input as is and to show its return value as its
// values, as LangGraph's server does with an entrypoint. A nil g is none.
func IsEntrypoint(g *engine.Graph) bool {
	if g == nil {
		return false
	}
	nodes, chans := g.Nodes(), g.Channels()
	if len(nodes) != 1 || nodes[0] != g.Name() || len(chans) != 3 {
		return false
	}
	want := [3][2]string{{InputKey, "ephemeral"}, {ReturnKey, "last_value"}, {PreviousKey, "last_value"}}
	for i, c := range chans {
		if c.Name != want[i][0] || c.Kind != want[i][1] {
			return false
		}
	}
	return true
}

// Graph returns the compiled graph: run it, stream it, inspect its threads
// as any graph's. Its input is engine.Values{InputKey: in}.
func (w *Workflow[In, Out, Save]) Graph() *engine.Graph { return w.g }

// Name returns the entrypoint's name, also its node's.
func (w *Workflow[In, Out, Save]) Name() string { return w.name }

// Input is the graph input that runs the entrypoint on in.
func (w *Workflow[In, Out, Save]) Input(in In) engine.Values { return engine.Values{InputKey: in} }

// Invoke runs the entrypoint on in (a thread needs engine.WithThread when
// the graph has a saver). out is what the function returned; when the run
// stopped at an interrupt, out is the zero Out and res.Interrupts holds the
// questions: answer them with Resume.
func (w *Workflow[In, Out, Save]) Invoke(ctx context.Context, in In, opts ...engine.RunOption) (out Out, res *engine.Result, err error) {
	return w.run(ctx, w.Input(in), opts)
}

// Resume answers the thread's pending interrupt (engine.Command{Resume:
// answer}) and runs the entrypoint again, as Invoke.
func (w *Workflow[In, Out, Save]) Resume(ctx context.Context, answer any, opts ...engine.RunOption) (out Out, res *engine.Result, err error) {
	return w.run(ctx, engine.Command{Resume: answer}, opts)
}

func (w *Workflow[In, Out, Save]) run(ctx context.Context, in engine.Input, opts []engine.RunOption) (out Out, res *engine.Result, err error) {
	res, err = w.g.Invoke(ctx, in, opts...)
	if err != nil || res == nil {
		return out, res, err
	}
	out, _ = w.Output(res)
	return out, res, nil
}

// UpdateState writes value into the thread as the entrypoint's result, as
// LangGraph's update_state(config, value) does on an entrypoint's graph
// (as its only node, named or inferred): a new checkpoint (source
// "update") whose return value is value, and value is what the next run
// on the thread gets as prev. On a thread stopped at an interrupt the
// update completes the stopped run: nothing is left to resume. Give the
// thread with engine.WithThread (and engine.WithCheckpoint to update a
// past checkpoint: a fork). An entrypoint that saves another type than
// it returns (EntrypointFinal) cannot save value: use UpdateFinal.
func (w *Workflow[In, Out, Save]) UpdateState(ctx context.Context, value Out, opts ...engine.RunOption) (checkpoint.Ref, error) {
	save, ok := any(value).(Save)
	if !ok {
		var zero Save
		return checkpoint.Ref{}, fmt.Errorf("functional: UpdateState of entrypoint %q: it saves a %T for the next run, not the %T it returns: use UpdateFinal to give both", w.name, zero, value)
	}
	return w.UpdateFinal(ctx, Final[Out, Save]{Value: value, Save: save}, opts...)
}

// UpdateFinal is UpdateState with a return value and a different value
// saved for the next run, as LangGraph's update_state(config,
// entrypoint.final(value=…, save=…)).
func (w *Workflow[In, Out, Save]) UpdateFinal(ctx context.Context, f Final[Out, Save], opts ...engine.RunOption) (checkpoint.Ref, error) {
	return w.g.UpdateState(ctx, engine.Updates(w.ret.Set(f.Value), w.saved.Set(f.Save)), w.name, opts...)
}

// Output returns the return value a finished run's result holds; ok is
// false when the run did not finish (it stopped at an interrupt).
func (w *Workflow[In, Out, Save]) Output(res *engine.Result) (out Out, ok bool) {
	if res == nil || !res.Done {
		return out, false
	}
	v, ok := res.Values[ReturnKey]
	if !ok {
		return out, false
	}
	out, err := as[Out](v)
	return out, err == nil
}

// Task is a function an entrypoint (or another task) calls whose result is
// checkpointed (LangGraph's @task). Its zero value is not usable: make
// Tasks with NewTask.
type Task[In, Out any] struct {
	name string
	fn   func(context.Context, In) (Out, error)
	opts engine.CallOptions
}

// TaskOption configures a task. The zero configuration runs its function
// once per call, without retries, without a time limit and without the
// node cache.
type TaskOption func(*engine.CallOptions)

// TaskRetry retries a task's function when it fails, within the call.
func TaskRetry(p engine.RetryPolicy) TaskOption {
	return func(o *engine.CallOptions) { o.Retry = &p }
}

// TaskCache caches the task's results by its input (LangGraph's
// @task(cache_policy=CachePolicy(...)), task({cachePolicy}) in
// LangGraph.js) in the node cache of the entrypoint's graph: compile it
// with one (WithCompile(engine.WithCache(nodecache.NewMemory())), or a
// store's NodeCache); without a cache the policy has no effect. A call
// whose key has an entry that has not expired returns the stored result
// without running the task, in any thread (Future.Cached reports it); a
// call that succeeds stores its result for p.TTL (0: until the cache is
// cleared). p.Key makes the key of engine.State whose ArgAs reads the
// task's input; nil keys on the whole input as stored. The graph's
// ClearCache with no nodes clears every task's entries (see
// engine.CallOptions.Cache). A negative TTL counts as 0.
func TaskCache(p engine.CachePolicy) TaskOption {
	if p.TTL < 0 {
		p.TTL = 0
	}
	return func(o *engine.CallOptions) { o.Cache = &p }
}

// TaskTimeout limits each attempt of the task to d, as engine.WithTimeout
// does for a node: the task's context is cancelled when d has passed and
// the attempt fails with an *engine.TimeoutError, which TaskRetry's policy
// retries like any other failure. A Weft extension: Python LangGraph's
// @task has no timeout (LangGraph.js 1.7's task() has one, not compared
// with Weft's). d ≤ 0 means no limit.
func TaskTimeout(d time.Duration) TaskOption {
	return func(o *engine.CallOptions) { o.Timeout = d }
}

// NewTask makes a task named name (its name in updates, history and the
// studio) running fn.
func NewTask[In, Out any](name string, fn func(ctx context.Context, in In) (Out, error), opts ...TaskOption) *Task[In, Out] {
	t := &Task[In, Out]{name: name, fn: fn}
	for _, o := range opts {
		o(&t.opts)
	}
	return t
}

// Name returns the task's name.
func (t *Task[In, Out]) Name() string { return t.name }

// Call starts the task on in, concurrently with the caller and the other
// tasks it started, and returns its Future at once. ctx must be the
// context of a running entrypoint or task; otherwise the Future fails. A
// call that finished in an earlier run of the same step (before an
// interrupt or a crash) is not run again: its Future has the stored
// result.
func (t *Task[In, Out]) Call(ctx context.Context, in In) *Future[Out] {
	var fn engine.CallFunc
	if t.fn != nil {
		fn = func(ctx context.Context, in any) (any, error) {
			v, ok := in.(In)
			if !ok {
				return nil, fmt.Errorf("task %q: input of type %T, want %T", t.name, in, v)
			}
			return t.fn(ctx, v)
		}
	}
	return &Future[Out]{f: engine.Call(ctx, t.name, in, fn, t.opts)}
}

// Future is a task's result to come. Its zero value is not usable: only
// Task.Call makes Futures.
type Future[Out any] struct{ f *engine.Future }

// Get waits for the task and returns its result or error. An
// *engine.InterruptError means the task stopped at an interrupt: return it
// from the entrypoint. A result stored by an earlier run comes back
// converted from its stored form (through JSON unless its type is
// registered with engine.RegisterType).
func (f *Future[Out]) Get(ctx context.Context) (Out, error) {
	v, err := f.f.Wait(ctx)
	if err != nil {
		var zero Out
		return zero, err
	}
	return as[Out](v)
}

// Done is closed when the task has finished.
func (f *Future[Out]) Done() <-chan struct{} { return f.f.Done() }

// ID returns the task's id ("" when the call failed before it started).
func (f *Future[Out]) ID() string { return f.f.ID }

// Restored reports whether the result came from the checkpoint instead of
// a run of the task; meaningful once Done is closed.
func (f *Future[Out]) Restored() bool { return f.f.Restored() }

// Cached reports whether the result was served by the node cache instead
// of a run of the task (TaskCache); meaningful once Done is closed.
func (f *Future[Out]) Cached() bool { return f.f.Cached() }

// as converts v to T: directly when it is one, otherwise through JSON (a
// value read back from a checkpoint as JSON data).
func as[T any](v any) (T, error) {
	if t, ok := v.(T); ok {
		return t, nil
	}
	var t T
	if v == nil {
		return t, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return t, fmt.Errorf("result of type %T: %w", v, err)
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return t, fmt.Errorf("result %s does not fit %T: %w", b, t, err)
	}
	return t, nil
}
