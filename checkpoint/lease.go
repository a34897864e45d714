package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Lease is a run's claim on a thread, recorded in the store so that one run
// at a time advances a thread, whichever process it is in. A run acquires
// the lease before it loads the thread, renews it while it lives and
// releases it when it ends. A holder that dies stops renewing: its lease
// lapses at Expires, and only then may another run take the thread over,
// unless the holder ran on the same machine and its process is gone: then
// at once.
type Lease struct {
	ThreadID string
	// Owner says who holds the lease, for people: host, process id and
	// command, e.g. "build-7 pid 4242 (weft worker)". "" means the holder
	// did not say.
	Owner string
	// Token is unique to one acquisition: renewing and releasing name it,
	// so a holder whose lease was taken over cannot touch its successor's.
	Token string
	// Since is when the lease was acquired, Expires when it lapses unless
	// renewed. Both are the store's clock (for PostgreSQL, the server's).
	Since   time.Time
	Expires time.Time
	// StopRequested names who asked the holder to stop its run (StopLease);
	// "" when nobody did.
	StopRequested string
	// Expired is set by Leases on a lease that had lapsed when it was read,
	// or whose holder is known to have ended (Ended): its holder died or
	// stalled without releasing it. The thread may be taken over.
	Expired bool
	// Holder identifies the holding process for the savers (host, boot,
	// pid namespace, pid and start time), so that a holder on the same
	// machine whose process ended is recognised at once instead of being
	// waited out; opaque, "" when unknown.
	Holder string
	// Ended is set by Leases, with Expired, on a lease whose holder is
	// known to have ended before its lease lapsed, saying so: "the run by
	// pid 4242 on this host ended without finishing". "" otherwise.
	Ended string
	// TookOver is, on a lease HoldLease returned, the lapsed lease of a
	// run that died holding the thread, which the hold took over:
	// ReleaseLease puts it back, so that workers still see that a run died
	// there. nil when the thread was free, and on every other lease.
	TookOver *Lease
}

// DefaultLeaseTTL is how long a lease lasts without renewal when
// AcquireLease or RenewLease is given a ttl of zero or less.
const DefaultLeaseTTL = 30 * time.Second

// Leaser is an optional Saver capability: leases that keep one run per
// thread at a time across every process sharing the store. The engine
// claims a thread with it at the start of each run when its saver offers
// it. Leases are kept apart from checkpoints: DeleteThread, Prune and
// CopyThread leave them alone.
type Leaser interface {
	// AcquireLease claims threadID for owner for ttl (DefaultLeaseTTL when
	// ttl <= 0). When another live lease holds the thread it returns a
	// *LeaseHeldError (wrapping ErrLeaseHeld) and changes nothing; an
	// expired lease, or one whose holder was a process of this machine
	// that has ended, is taken over.
	AcquireLease(ctx context.Context, threadID, owner string, ttl time.Duration) (Lease, error)
	// RenewLease extends l (its ThreadID and Token) to ttl from now
	// (DefaultLeaseTTL when ttl <= 0) and returns it as stored, with
	// StopRequested set if someone asked the holder to stop. A lease that
	// lapsed but was not taken over is renewed. One released or taken over
	// since returns a *LeaseLostError.
	RenewLease(ctx context.Context, l Lease, ttl time.Duration) (Lease, error)
	// HoldLease claims threadID like AcquireLease, for work on the thread
	// that is not a run (a prune, a delete): runs are kept off it the same
	// way, but a lapsed lease it takes over (a run died there, and a worker
	// should continue it) is kept, in the store and in the returned
	// lease's TookOver, and ReleaseLease puts it back instead of deleting
	// it. A hold whose holder is killed lapses like a run's lease; Leases
	// then shows the dead run it took over, or nothing (a hold is no run).
	// A saver whose leases live in one process keeps it in TookOver only.
	HoldLease(ctx context.Context, threadID, owner string, ttl time.Duration) (Lease, error)
	// ReleaseLease ends l (its ThreadID and Token): the thread is free
	// again, or, when l.TookOver is set, holds that lapsed lease again.
	// Releasing a lease that is gone or was taken over is not an error.
	ReleaseLease(ctx context.Context, l Lease) error
	// StopLease asks the holder of threadID's live lease to stop its run,
	// recording by as who asked, and returns the lease. The holder sees it
	// at its next renewal. With no live lease it returns an error wrapping
	// ErrNotFound.
	StopLease(ctx context.Context, threadID, by string) (Lease, error)
	// Leases returns the leases of the given threads (of every thread when
	// none is given), live and expired (see Lease.Expired), by thread id.
	// A thread nobody holds has none.
	Leases(ctx context.Context, threadIDs ...string) ([]Lease, error)
}

// HoldForPrune returns a PrunePolicy.Hold that holds each thread with l's
// HoldLease as owner for the prune: a thread a live run holds is skipped
// (PruneResult.Skipped names its holder), and a lapsed lease of a run that
// died is put back afterwards, so that a worker still continues that run.
// Every command that prunes a shared store uses it, so that all honour
// leases alike.
func HoldForPrune(l Leaser, owner string) func(ctx context.Context, threadID string) (func(), error) {
	return func(ctx context.Context, thread string) (func(), error) {
		lease, err := l.HoldLease(ctx, thread, owner, 0)
		if err != nil {
			return nil, err
		}
		return func() { _ = l.ReleaseLease(context.WithoutCancel(ctx), lease) }, nil
	}
}

// Lease errors. Compare with errors.Is.
var (
	// ErrLeaseHeld: another run holds the thread. errors.As with
	// *LeaseHeldError says who and since when.
	ErrLeaseHeld = errors.New("thread is being run elsewhere")
	// ErrLeaseLost: a lease was released or taken over by another run
	// (its holder stalled past Expires).
	ErrLeaseLost = errors.New("the thread's lease was lost")
	// ErrStopRequested: someone asked the run holding the thread to stop
	// (StopLease); the run ended early.
	ErrStopRequested = errors.New("the run was asked to stop")
)

// LeaseHeldError is returned when a thread is claimed while another run
// holds its lease. It wraps ErrLeaseHeld.
type LeaseHeldError struct {
	Lease Lease // the holder's lease
}

// Error says which thread, who runs it and since when.
func (e *LeaseHeldError) Error() string {
	l := e.Lease
	owner := l.Owner
	if owner == "" {
		owner = "another process"
	}
	return fmt.Sprintf("thread %q is being run by %s since %s (its lease expires at %s unless renewed)",
		l.ThreadID, owner, l.Since.Local().Format(time.DateTime), l.Expires.Local().Format(time.TimeOnly))
}

// Unwrap returns ErrLeaseHeld.
func (e *LeaseHeldError) Unwrap() error { return ErrLeaseHeld }

// LeaseLostError is returned when a holder renews a lease that was
// released or taken over since. It wraps ErrLeaseLost.
type LeaseLostError struct {
	ThreadID string
	// Now is the thread's lease now, nil when it was released.
	Now *Lease
}

// Error says which thread and who holds it now.
func (e *LeaseLostError) Error() string {
	if e.Now == nil {
		return fmt.Sprintf("thread %q: %v: it was released", e.ThreadID, ErrLeaseLost)
	}
	owner := e.Now.Owner
	if owner == "" {
		owner = "another process"
	}
	return fmt.Sprintf("thread %q: %v: %s took it over at %s", e.ThreadID, ErrLeaseLost, owner, e.Now.Since.Local().Format(time.DateTime))
}

// Unwrap returns ErrLeaseLost.
func (e *LeaseLostError) Unwrap() error { return ErrLeaseLost }

// ErrConflict is wrapped by the error a saver returns when another writer
// advanced the same thread and namespace first. Savers that share a store
// between processes (SQLite, PostgreSQL) refuse, with a *ConflictError:
//
//   - a Put of a loop checkpoint (the end of a super-step) whose parent is
//     not the newest checkpoint of its thread and namespace (the head);
//   - a PutWrites of a task's writes (not NullTaskID's) to a stored
//     checkpoint that is not the head: the step it belongs to was already
//     finished by another writer.
//
// Input, update and fork checkpoints may branch from any checkpoint, and a
// Put of a checkpoint id already stored (a retry) is never a conflict.
// Nothing is stored; reload the thread and run the step again, or give up.
var ErrConflict = errors.New("checkpoint conflict: the thread was advanced by another writer")

// ConflictError describes a refused Put or PutWrites; it wraps ErrConflict.
type ConflictError struct {
	ThreadID     string // the thread
	NS           string // the namespace ("" is the root graph)
	ParentID     string // the parent the refused checkpoint was put under, or the checkpoint the refused writes were for
	HeadID       string // the newest checkpoint there when the write ran
	CheckpointID string // the refused checkpoint; "" for refused writes
	TaskID       string // the task whose writes were refused; "" for a refused checkpoint
}

// Error says which thread, namespace and checkpoints conflicted.
func (e *ConflictError) Error() string {
	if e.TaskID != "" {
		return fmt.Sprintf("put writes of task %s to checkpoint %s in thread %q ns %q: it is no longer the newest checkpoint (%s is): %v",
			e.TaskID, e.ParentID, e.ThreadID, e.NS, e.HeadID, ErrConflict)
	}
	return fmt.Sprintf("put checkpoint %s in thread %q ns %q: its parent %s is no longer the newest checkpoint (%s is): %v",
		e.CheckpointID, e.ThreadID, e.NS, e.ParentID, e.HeadID, ErrConflict)
}

// Unwrap returns ErrConflict.
func (e *ConflictError) Unwrap() error { return ErrConflict }
