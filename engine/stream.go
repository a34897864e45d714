package engine

import (
	"context"
	"iter"
	"sync"
	"sync/atomic"
	"time"
)

// Event is one thing a run reports. Mode says which of the payload fields is
// set; NS is the subgraph namespace ("" at the root, "node:<task id>" inside
// a subgraph, nested levels joined by "|").
type Event struct {
	Mode StreamMode
	NS   string
	Step int
	Time time.Time

	Values Values // ModeValues: the state
	// Interrupts, with ModeValues, report a stop (LangGraph's
	// {"__interrupt__": [...]} values chunk): the questions of a task that
	// stopped at Interrupt, as it stops, with Values the state as the step
	// found it following LangGraphPython and nil following LangGraphJS;
	// empty but set, with Values nil, for a breakpoint following
	// LangGraphJS (see the package documentation, B1 and B2). nil for any
	// other values event.
	Interrupts []PendingInterrupt
	Update     *NodeUpdate   // ModeUpdates
	Custom     any           // ModeCustom
	Message    *MessageChunk // ModeMessages
	Task       *TaskEvent    // ModeTasks, and ModeDebug with DebugType "task" or "task_result"
	State      *Snapshot     // ModeCheckpoints, and ModeDebug with DebugType "checkpoint"
	Debug      string        // ModeDebug: "checkpoint", "task" or "task_result"
	Call       *CallEvent    // ModeCalls
	Lifecycle  *Lifecycle    // ModeLifecycle
}

// LifecycleKind says which boundary a Lifecycle event marks.
type LifecycleKind uint8

// The boundaries ModeLifecycle reports, in the order they happen for a
// step: its start once its tasks are planned, each task's start and end,
// and its end once its writes are applied and stored (or the step stopped
// at interrupts or failed).
const (
	StepStart LifecycleKind = iota + 1
	TaskStart
	TaskEnd
	StepEnd
)

// Lifecycle is one boundary of a super-step or task (ModeLifecycle). The
// event's Step and NS say which step; zero fields do not apply to Kind.
type Lifecycle struct {
	Kind LifecycleKind
	// Tasks counts the step's tasks (StepStart), those restored from
	// pending writes included; the hidden start task is not counted, as
	// it is not reported.
	Tasks int
	// TaskID, Node and Path name the task (TaskStart, TaskEnd).
	TaskID string
	Node   string
	Path   string
	// Checkpoint is, at StepEnd, the checkpoint the step stored, or, for a
	// step that stopped at interrupts, the one it started from, which holds
	// its pending writes; "" without a saver or when the step failed.
	Checkpoint string
	// Error says why the task or step failed (TaskEnd, StepEnd); "" when
	// it did not. ErrorKind classifies it.
	Error     string
	ErrorKind ErrorKind
	// Interrupts are the questions the task (TaskEnd) or the step's tasks
	// (StepEnd) stopped at.
	Interrupts []PendingInterrupt
	// Cached is set at TaskEnd when the node cache served the task's
	// writes: the node did not run (WithCachePolicy).
	Cached bool
}

// NodeUpdate is what one task wrote (ModeUpdates). Node is "__interrupt__"
// when the event reports interrupts instead.
type NodeUpdate struct {
	Node   string
	TaskID string
	Writes []Write // state writes in order; empty when the node wrote nothing
	// Cached is LangGraph's cached mark: the writes were not made by running
	// the node in this run but restored from the checkpoint's pending writes
	// or served by the node cache (CacheHit says which).
	Cached bool
	// CacheHit is set when the node cache served the writes (WithCache,
	// WithCachePolicy): the node did not run.
	CacheHit   bool
	Interrupts []PendingInterrupt
	// Return is a call task's result (Call) when Returned is set: LangGraph
	// streams it as {name: result}. Writes is then empty.
	Return   any
	Returned bool
}

// MessageChunk is a piece of a message a node streams (ModeMessages), with
// where it came from.
type MessageChunk struct {
	Message Message
	Node    string
	TaskID  string
}

// TaskEvent is a task's start (Result, Error and Interrupts empty, Done
// false) or its end (Done true).
type TaskEvent struct {
	ID         string
	Name       string
	Path       string
	Triggers   []string
	Input      any // at a task's start: a push task's Send argument, a pull task's state (Values)
	Done       bool
	Result     []Write
	Error      string
	ErrorKind  ErrorKind // with Error: what kind of failure it is
	Interrupts []PendingInterrupt
	// Return is a call task's result (Call) when Returned is set; a
	// node's task has none.
	Return   any
	Returned bool
}

// emitter delivers events to a sink. A nil *emitter emits nothing.
type emitter struct {
	modes StreamMode
	ns    string
	sink  func(Event)
}

func (e *emitter) on(m StreamMode) bool { return e != nil && e.modes&m != 0 }

func (e *emitter) emit(ev Event) {
	if e == nil || e.modes&ev.Mode == 0 {
		return
	}
	ev.NS = e.ns
	ev.Time = time.Now()
	e.sink(ev)
}

// child returns an emitter for a subgraph running in namespace ns.
func (e *emitter) child(ns string) *emitter {
	if e == nil {
		return nil
	}
	return &emitter{modes: e.modes, ns: ns, sink: e.sink}
}

// observerQueue feeds an observer from a bounded buffer without ever
// blocking the run.
type observerQueue struct {
	ch      chan Event
	dropped atomic.Int64
	done    chan struct{}
}

func newObserverQueue(size int, fn func(Event)) *observerQueue {
	q := &observerQueue{ch: make(chan Event, size), done: make(chan struct{})}
	go func() {
		defer close(q.done)
		for ev := range q.ch {
			fn(ev)
		}
	}()
	return q
}

func (q *observerQueue) send(ev Event) {
	select {
	case q.ch <- ev:
	default:
		q.dropped.Add(1)
	}
}

func (q *observerQueue) close() int {
	close(q.ch)
	<-q.done
	return int(q.dropped.Load())
}

// Stream runs the graph and yields its events of the given modes as they
// happen, then a final (Event{}, err) if the run failed. Unlike an
// observer, the iterator loses nothing: the run waits while the consumer is
// busy (up to a small buffer), and leaving the loop early cancels the run.
// An observer given with WithObserver still gets its events.
func (gr *Graph) Stream(ctx context.Context, input Input, modes StreamMode, opts ...RunOption) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		ch := make(chan Event, 64)
		var res struct {
			sync.Mutex
			err error
		}
		go func() {
			defer close(ch)
			sink := func(ev Event) {
				select {
				case ch <- ev:
				case <-ctx.Done():
				}
			}
			_, err := gr.invoke(ctx, input, modes, sink, opts)
			res.Lock()
			res.err = err
			res.Unlock()
		}()
		for ev := range ch {
			if !yield(ev, nil) {
				cancel()
				for range ch {
				}
				return
			}
		}
		res.Lock()
		err := res.err
		res.Unlock()
		if err != nil {
			yield(Event{}, err)
		}
	}
}

// Emit sends v to the run's custom stream (ModeCustom) from inside a node.
// Outside a node it does nothing.
func Emit(ctx context.Context, v any) {
	tc := taskFrom(ctx)
	if tc == nil {
		return
	}
	tc.rt.em.emit(Event{Mode: ModeCustom, Step: tc.step, Custom: v})
}

// EmitMessage streams a message chunk (ModeMessages) from inside a node, as a
// model's tokens arrive. Outside a node it does nothing.
func EmitMessage(ctx context.Context, chunk Message) {
	tc := taskFrom(ctx)
	if tc == nil {
		return
	}
	tc.rt.em.emit(Event{Mode: ModeMessages, Step: tc.step, Message: &MessageChunk{Message: chunk, Node: tc.t.name, TaskID: tc.t.id}})
}
