package engine

import (
	"context"
	"fmt"
	"slices"

	"github.com/weftstudio/weft/checkpoint"
)

// ThreadStatus says where a thread stands. The studio's thread list, the
// headless `weft threads` and the AG-UI server all decide it with
// StatusOf, so they never disagree.
type ThreadStatus string

// The statuses of a thread.
const (
	// StatusRunning: a run holds the thread's lease now.
	StatusRunning ThreadStatus = "running"
	// StatusWaiting: tasks wait for answers to their interrupts.
	StatusWaiting ThreadStatus = "waiting"
	// StatusFailed: a task of the next step failed; running again retries
	// it.
	StatusFailed ThreadStatus = "failed"
	// StatusPaused: tasks remain (a breakpoint, a step limit, a run that
	// was stopped or died mid-step); Invoke with nil input continues.
	StatusPaused ThreadStatus = "paused"
	// StatusDone: no task remains.
	StatusDone ThreadStatus = "done"
)

// StatusOf returns the status of a thread whose latest snapshot is snap and
// whose lease (checkpoint.Leaser.Leases) is lease, nil when nobody holds
// it. An expired lease is nobody's.
func StatusOf(snap *Snapshot, lease *checkpoint.Lease) ThreadStatus {
	switch {
	case lease != nil && !lease.Expired:
		return StatusRunning
	case len(snap.OpenInterrupts()) > 0:
		return StatusWaiting
	case slices.ContainsFunc(snap.Tasks, func(t TaskState) bool { return t.Error != "" }):
		return StatusFailed
	case snap.Done():
		return StatusDone
	}
	return StatusPaused
}

// HasWork reports whether a worker should run the thread named with
// WithThread: an answer stored by SubmitAnswer waits for it, or a run died
// in it (lease, the thread's lease as checkpoint.Leaser.Leases lists it,
// is expired) and left it paused between or inside steps. A thread waiting
// for a person or failed is not a worker's; one paused on purpose (a
// breakpoint, a stopped client) with no dead run in it is left alone. A
// nil lease is no lease. The rule lives here, beside StatusOf and
// AnswerWaiting, so every caller (weft worker first) asks the same one.
func (gr *Graph) HasWork(ctx context.Context, lease *checkpoint.Lease, opts ...RunOption) (bool, error) {
	if ok, err := gr.AnswerWaiting(ctx, opts...); err != nil || ok {
		return ok, err
	}
	if gr.saver == nil {
		return false, nil
	}
	cfg := newWriteConfig(opts)
	tp, err := gr.saver.Get(ctx, checkpoint.Ref{ThreadID: cfg.thread, NS: cfg.ns})
	if err != nil {
		return false, err
	}
	midStep := false
	for _, pw := range tp.PendingWrites {
		switch {
		case pw.TaskID == checkpoint.NullTaskID:
		case pw.Channel == checkpoint.Interrupt, pw.Channel == checkpoint.Error:
			return false, nil // waiting for a person, or failed: not a worker's to retry
		default:
			midStep = true
		}
	}
	if !midStep && (lease == nil || !lease.Expired) {
		return false, nil // paused on purpose: left alone
	}
	snap, err := gr.GetState(ctx, opts...)
	if err != nil {
		return false, err
	}
	return StatusOf(snap, nil) == StatusPaused, nil
}

// AnswerWaiting reports whether the thread's latest checkpoint holds an
// answer stored by SubmitAnswer that no run has used yet: work for a
// worker.
func (gr *Graph) AnswerWaiting(ctx context.Context, opts ...RunOption) (bool, error) {
	if gr.view != nil {
		return false, nil // nothing here answers: the program that wrote the thread does
	}
	cfg := newWriteConfig(opts)
	if gr.saver == nil {
		return false, nil
	}
	tp, err := gr.saver.Get(ctx, checkpoint.Ref{ThreadID: cfg.thread, NS: cfg.ns})
	if err != nil {
		return false, err
	}
	answered, interrupted := false, false
	for _, pw := range tp.PendingWrites {
		switch {
		case pw.TaskID == checkpoint.NullTaskID && pw.Channel == checkpoint.Resume:
			v, err := decodeLoose(pw.Value)
			if err != nil {
				return false, fmt.Errorf("thread %q: stored answer: %w", cfg.thread, err)
			}
			_, used := v.(answerUsed)
			answered = !used
		case pw.Channel == checkpoint.Interrupt:
			interrupted = true
		}
	}
	return answered && interrupted, nil
}
