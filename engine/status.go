package engine

import (
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
