package checkpointtest

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
)

func leaser(s checkpoint.Saver) bool { _, ok := s.(checkpoint.Leaser); return ok }

func leaseCases() []testCase {
	cs := []testCase{
		{name: "acquire_then_listed", run: leaseAcquire},
		{name: "second_acquire_refused", run: leaseHeld},
		{name: "release_frees", run: leaseRelease},
		{name: "renew_extends", run: leaseRenew},
		{name: "expired_taken_over", run: leaseExpired},
		{name: "lapsed_renewable_until_taken", run: leaseLapsedRenew},
		{name: "stop_requested", run: leaseStop},
		{name: "filter_by_thread", run: leaseFilter},
		{name: "kept_apart_from_checkpoints", run: leaseApart},
		{name: "concurrent_acquire_one_wins", run: leaseConcurrent},
		{name: "rejects_missing_thread_id", run: leaseNoThread},
		{name: "hold_keeps_dead_run", run: leaseHoldKeepsDead},
		{name: "hold_of_free_thread_frees_it", run: leaseHoldFree},
		{name: "hold_refused_while_run_holds", run: leaseHoldRefused},
		{name: "prune_skips_runs_keeps_dead_runs", run: leasePrune},
	}
	for i := range cs {
		cs[i].needs, cs[i].capability = leaser, "checkpoint.Leaser"
	}
	return cs
}

// shortTTL is a lease short enough for a test to wait out, long enough for
// a loaded machine's round trips.
const shortTTL = 300 * time.Millisecond

func mustAcquire(t *testing.T, l checkpoint.Leaser, thread, owner string, ttl time.Duration) checkpoint.Lease {
	t.Helper()
	lease, err := l.AcquireLease(t.Context(), thread, owner, ttl)
	if err != nil {
		t.Fatalf("AcquireLease(%q, %q): %v", thread, owner, err)
	}
	return lease
}

func leasesOf(t *testing.T, l checkpoint.Leaser, threads ...string) []checkpoint.Lease {
	t.Helper()
	ls, err := l.Leases(t.Context(), threads...)
	if err != nil {
		t.Fatalf("Leases(%q): %v", threads, err)
	}
	return ls
}

// expectHeld fails unless err says thread is held by owner.
func expectHeld(t *testing.T, err error, thread, owner string) {
	t.Helper()
	var he *checkpoint.LeaseHeldError
	if !errors.Is(err, checkpoint.ErrLeaseHeld) || !errors.As(err, &he) {
		t.Fatalf("err = %v, want a *LeaseHeldError", err)
	}
	if he.Lease.ThreadID != thread || he.Lease.Owner != owner {
		t.Fatalf("held by %+v, want thread %q owner %q", he.Lease, thread, owner)
	}
	msg := err.Error()
	if !strings.Contains(msg, thread) || !strings.Contains(msg, owner) || !strings.Contains(msg, "is being run by") {
		t.Fatalf("error %q does not say that %q is being run by %q", msg, thread, owner)
	}
}

func leaseAcquire(t *testing.T, s checkpoint.Saver) {
	l := s.(checkpoint.Leaser)
	th := newThread("lease")
	before := time.Now().Add(-time.Minute) // the store's clock may differ a little
	lease := mustAcquire(t, l, th, "host pid 1 (test)", time.Minute)
	if lease.ThreadID != th || lease.Owner != "host pid 1 (test)" || lease.Token == "" {
		t.Fatalf("lease = %+v", lease)
	}
	if lease.Since.Before(before) || !lease.Expires.After(lease.Since) || lease.Expires.Sub(lease.Since) > time.Minute+time.Second {
		t.Fatalf("lease since %v expires %v; want now and a minute later", lease.Since, lease.Expires)
	}
	got := leasesOf(t, l, th)
	if len(got) != 1 || got[0].Token != lease.Token || got[0].Owner != lease.Owner || got[0].Expired {
		t.Fatalf("Leases = %+v, want the live lease %+v", got, lease)
	}
	if !got[0].Since.Equal(lease.Since) || !got[0].Expires.Equal(lease.Expires) {
		t.Fatalf("Leases times %v–%v, want %v–%v", got[0].Since, got[0].Expires, lease.Since, lease.Expires)
	}
}

func leaseHeld(t *testing.T, s checkpoint.Saver) {
	l := s.(checkpoint.Leaser)
	th := newThread("lease")
	first := mustAcquire(t, l, th, "first", time.Minute)
	_, err := l.AcquireLease(t.Context(), th, "second", time.Minute)
	expectHeld(t, err, th, "first")
	got := leasesOf(t, l, th)
	if len(got) != 1 || got[0].Token != first.Token {
		t.Fatalf("after a refused acquire, Leases = %+v, want only the first", got)
	}
	// Another thread is free.
	mustAcquire(t, l, newThread("lease"), "second", time.Minute)
}

func leaseRelease(t *testing.T, s checkpoint.Saver) {
	l := s.(checkpoint.Leaser)
	th := newThread("lease")
	first := mustAcquire(t, l, th, "first", time.Minute)
	if err := l.ReleaseLease(t.Context(), first); err != nil {
		t.Fatalf("ReleaseLease: %v", err)
	}
	if got := leasesOf(t, l, th); len(got) != 0 {
		t.Fatalf("after release, Leases = %+v, want none", got)
	}
	second := mustAcquire(t, l, th, "second", time.Minute)
	// Releasing again, or a lease that was never acquired, is no error and
	// leaves the holder alone.
	if err := l.ReleaseLease(t.Context(), first); err != nil {
		t.Fatalf("second ReleaseLease: %v", err)
	}
	if err := l.ReleaseLease(t.Context(), checkpoint.Lease{ThreadID: newThread("lease"), Token: "none"}); err != nil {
		t.Fatalf("ReleaseLease of an unknown lease: %v", err)
	}
	if got := leasesOf(t, l, th); len(got) != 1 || got[0].Token != second.Token {
		t.Fatalf("a stale release touched the new holder: %+v", got)
	}
	if _, err := l.RenewLease(t.Context(), first, time.Minute); !errors.Is(err, checkpoint.ErrLeaseLost) {
		t.Fatalf("renewing a released lease: err = %v, want ErrLeaseLost", err)
	}
}

func leaseRenew(t *testing.T, s checkpoint.Saver) {
	l := s.(checkpoint.Leaser)
	th := newThread("lease")
	lease := mustAcquire(t, l, th, "holder", shortTTL)
	renewed, err := l.RenewLease(t.Context(), lease, time.Hour)
	if err != nil {
		t.Fatalf("RenewLease: %v", err)
	}
	if renewed.Token != lease.Token || renewed.Owner != "holder" || !renewed.Since.Equal(lease.Since) {
		t.Fatalf("renewed lease %+v, want %+v with a later expiry", renewed, lease)
	}
	if !renewed.Expires.After(lease.Expires.Add(30 * time.Minute)) {
		t.Fatalf("renewed to %v, want about an hour after %v", renewed.Expires, lease.Since)
	}
	time.Sleep(2 * shortTTL) // past the first expiry: the renewal holds
	_, err = l.AcquireLease(t.Context(), th, "other", time.Minute)
	expectHeld(t, err, th, "holder")
}

func leaseExpired(t *testing.T, s checkpoint.Saver) {
	l := s.(checkpoint.Leaser)
	th := newThread("lease")
	dead := mustAcquire(t, l, th, "dead", shortTTL)
	time.Sleep(2 * shortTTL)
	got := leasesOf(t, l, th)
	if len(got) != 1 || !got[0].Expired || got[0].Token != dead.Token {
		t.Fatalf("Leases after the ttl = %+v, want the dead holder's, expired", got)
	}
	heir := mustAcquire(t, l, th, "heir", time.Minute)
	if heir.Token == dead.Token {
		t.Fatal("the heir got the dead holder's token")
	}
	_, err := l.RenewLease(t.Context(), dead, time.Minute)
	var lost *checkpoint.LeaseLostError
	if !errors.Is(err, checkpoint.ErrLeaseLost) || !errors.As(err, &lost) || lost.Now == nil || lost.Now.Owner != "heir" || !strings.Contains(err.Error(), "heir took it over") {
		t.Fatalf("the dead holder renewed after a takeover: err = %v, want a LeaseLostError naming the heir", err)
	}
	if err := l.ReleaseLease(t.Context(), dead); err != nil {
		t.Fatal(err)
	}
	got = leasesOf(t, l, th)
	if len(got) != 1 || got[0].Token != heir.Token || got[0].Expired {
		t.Fatalf("after the dead holder's release, Leases = %+v, want the heir's", got)
	}
}

func leaseLapsedRenew(t *testing.T, s checkpoint.Saver) {
	l := s.(checkpoint.Leaser)
	th := newThread("lease")
	slow := mustAcquire(t, l, th, "slow", shortTTL)
	time.Sleep(2 * shortTTL)
	// Nobody took it over: the stalled holder may go on.
	if _, err := l.RenewLease(t.Context(), slow, time.Minute); err != nil {
		t.Fatalf("renewing a lapsed lease nobody took: %v", err)
	}
	_, err := l.AcquireLease(t.Context(), th, "other", time.Minute)
	expectHeld(t, err, th, "slow")
}

func leaseStop(t *testing.T, s checkpoint.Saver) {
	l := s.(checkpoint.Leaser)
	th := newThread("lease")
	if _, err := l.StopLease(t.Context(), th, "ops"); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("StopLease with no lease: err = %v, want ErrNotFound", err)
	}
	lease := mustAcquire(t, l, th, "runner", time.Minute)
	if lease.StopRequested != "" {
		t.Fatalf("a new lease has StopRequested %q", lease.StopRequested)
	}
	stopped, err := l.StopLease(t.Context(), th, "ops at desk 3")
	if err != nil {
		t.Fatalf("StopLease: %v", err)
	}
	if stopped.Token != lease.Token || stopped.StopRequested != "ops at desk 3" {
		t.Fatalf("StopLease returned %+v", stopped)
	}
	renewed, err := l.RenewLease(t.Context(), lease, time.Minute)
	if err != nil {
		t.Fatalf("RenewLease after a stop request: %v", err)
	}
	if renewed.StopRequested != "ops at desk 3" {
		t.Fatalf("the holder's renewal does not see the stop request: %+v", renewed)
	}
	// The lease stays until its holder releases it.
	_, err = l.AcquireLease(t.Context(), th, "other", time.Minute)
	expectHeld(t, err, th, "runner")
	if err := l.ReleaseLease(t.Context(), renewed); err != nil {
		t.Fatal(err)
	}
	if fresh := mustAcquire(t, l, th, "next", time.Minute); fresh.StopRequested != "" {
		t.Fatalf("a new holder inherited the stop request: %+v", fresh)
	}
}

func leaseFilter(t *testing.T, s checkpoint.Saver) {
	l := s.(checkpoint.Leaser)
	a, b, c := newThread("leaseA"), newThread("leaseB"), newThread("leaseC")
	for _, th := range []string{a, b, c} {
		mustAcquire(t, l, th, "o-"+th, time.Minute)
	}
	got := leasesOf(t, l, c, a)
	if len(got) != 2 || got[0].ThreadID != a || got[1].ThreadID != c {
		t.Fatalf("Leases(c, a) = %+v, want a's and c's, by thread id", got)
	}
	all := leasesOf(t, l)
	found := 0
	for i, x := range all {
		if x.ThreadID == a || x.ThreadID == b || x.ThreadID == c {
			found++
		}
		if i > 0 && all[i-1].ThreadID >= x.ThreadID {
			t.Fatalf("Leases() not ordered by thread id: %q before %q", all[i-1].ThreadID, x.ThreadID)
		}
	}
	if found != 3 {
		t.Fatalf("Leases() = %+v, want at least the 3 leases taken", all)
	}
	if got := leasesOf(t, l, newThread("nobody")); len(got) != 0 {
		t.Fatalf("Leases of a thread nobody holds = %+v", got)
	}
}

func leaseApart(t *testing.T, s checkpoint.Saver) {
	l := s.(checkpoint.Leaser)
	th := newThread("lease")
	mustPut(t, s, checkpoint.Ref{ThreadID: th}, newCP(nil, nil), inputMD(), nil)
	lease := mustAcquire(t, l, th, "runner", time.Minute)
	if err := s.DeleteThread(t.Context(), th); err != nil {
		t.Fatal(err)
	}
	if got := leasesOf(t, l, th); len(got) != 1 || got[0].Token != lease.Token {
		t.Fatalf("DeleteThread touched the lease: %+v", got)
	}
}

func leaseConcurrent(t *testing.T, s checkpoint.Saver) {
	l := s.(checkpoint.Leaser)
	th := newThread("lease")
	const n = 8
	var (
		wg     sync.WaitGroup
		start  = make(chan struct{})
		mu     sync.Mutex
		won    []checkpoint.Lease
		held   int
		others []error
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			lease, err := l.AcquireLease(t.Context(), th, "racer "+string(rune('a'+i)), time.Minute)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won = append(won, lease)
			case errors.Is(err, checkpoint.ErrLeaseHeld):
				held++
			default:
				others = append(others, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if len(others) > 0 {
		t.Fatalf("racing acquires failed: %v", others)
	}
	if len(won) != 1 || held != n-1 {
		t.Fatalf("%d racers won and %d were refused, want 1 and %d", len(won), held, n-1)
	}
}

func leaseNoThread(t *testing.T, s checkpoint.Saver) {
	l := s.(checkpoint.Leaser)
	if _, err := l.AcquireLease(t.Context(), "", "o", time.Minute); !errors.Is(err, checkpoint.ErrNoThread) {
		t.Fatalf("AcquireLease without a thread id: err = %v, want ErrNoThread", err)
	}
}

// sharedStore reports whether s is shared between processes (not
// checkpoint.InProcess): such savers keep one history per thread by
// refusing stale writers (checkpoint.ErrConflict).
func sharedStore(s checkpoint.Saver) bool {
	ip, ok := s.(checkpoint.InProcess)
	return !ok || !ip.InProcess()
}

func conflictCases() []testCase {
	cs := []testCase{
		{name: "loop_child_of_old_checkpoint", run: conflictLoop},
		{name: "retried_put_no_conflict", run: conflictRetry},
		{name: "branches_allowed", run: conflictBranches},
		{name: "heads_per_namespace", run: conflictNamespaces},
		{name: "task_writes_to_old_checkpoint", run: conflictWrites},
		{name: "batch_checked_in_order", run: conflictBatch},
	}
	for i := range cs {
		cs[i].needs, cs[i].capability = sharedStore, "a store shared between processes"
	}
	return cs
}

// expectConflict fails unless err is a *ConflictError about thread, naming
// parent (the checkpoint written to) and head.
func expectConflict(t *testing.T, err error, thread, parent, head, task string) {
	t.Helper()
	var ce *checkpoint.ConflictError
	if !errors.Is(err, checkpoint.ErrConflict) || !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a *ConflictError", err)
	}
	if ce.ThreadID != thread || ce.ParentID != parent || ce.HeadID != head || ce.TaskID != task {
		t.Fatalf("conflict %+v, want thread %q parent %s head %s task %q", ce, thread, parent, head, task)
	}
	if !strings.Contains(err.Error(), thread) {
		t.Fatalf("error %q does not name thread %q", err, thread)
	}
}

func conflictLoop(t *testing.T, s checkpoint.Saver) {
	th := newThread("conflict")
	in := mustPut(t, s, checkpoint.Ref{ThreadID: th}, newCP(nil, nil), inputMD(), nil)
	a := mustPut(t, s, in, newCP(nil, nil), loopMD(0), nil)
	late := newCP(nil, nil)
	_, err := s.Put(t.Context(), in, late, loopMD(0), nil)
	expectConflict(t, err, th, in.CheckpointID, a.CheckpointID, "")
	expectNotFound(t, s, checkpoint.Ref{ThreadID: th, CheckpointID: late.ID})
	mustPut(t, s, a, newCP(nil, nil), loopMD(1), nil)
}

func conflictRetry(t *testing.T, s checkpoint.Saver) {
	th := newThread("conflict")
	in := mustPut(t, s, checkpoint.Ref{ThreadID: th}, newCP(nil, nil), inputMD(), nil)
	cp := newCP(nil, nil)
	mustPut(t, s, in, cp, loopMD(0), nil)
	mustPut(t, s, in, cp, loopMD(0), nil) // the same Put again
	mustPut(t, s, checkpoint.Ref{ThreadID: th, CheckpointID: cp.ID}, newCP(nil, nil), loopMD(1), nil)
	mustPut(t, s, in, cp, loopMD(0), nil) // an older retry still is one
}

func conflictBranches(t *testing.T, s checkpoint.Saver) {
	th := newThread("conflict")
	in := mustPut(t, s, checkpoint.Ref{ThreadID: th}, newCP(nil, nil), inputMD(), nil)
	a := mustPut(t, s, in, newCP(nil, nil), loopMD(0), nil)
	mustPut(t, s, a, newCP(nil, nil), loopMD(1), nil)
	// Update, input and fork checkpoints branch from old checkpoints.
	mustPut(t, s, in, newCP(nil, nil), checkpoint.Metadata{Source: checkpoint.SourceUpdate, Step: 0}, nil)
	mustPut(t, s, in, newCP(nil, nil), inputMD(), nil)
	f := mustPut(t, s, in, newCP(nil, nil), checkpoint.Metadata{Source: checkpoint.SourceFork, Step: 0}, nil)
	// The fork is the head: the old branch cannot advance, the fork can.
	_, err := s.Put(t.Context(), a, newCP(nil, nil), loopMD(1), nil)
	expectConflict(t, err, th, a.CheckpointID, f.CheckpointID, "")
	mustPut(t, s, f, newCP(nil, nil), loopMD(1), nil)
	// A loop checkpoint with no parent starts a branch of its own.
	mustPut(t, s, checkpoint.Ref{ThreadID: th}, newCP(nil, nil), loopMD(0), nil)
}

func conflictNamespaces(t *testing.T, s checkpoint.Saver) {
	th := newThread("conflict")
	root := mustPut(t, s, checkpoint.Ref{ThreadID: th}, newCP(nil, nil), inputMD(), nil)
	sub := mustPut(t, s, checkpoint.Ref{ThreadID: th, NS: "child:1"}, newCP(nil, nil), inputMD(), nil)
	// The root's newer head does not make the namespace's stale, nor the
	// other way round.
	mustPut(t, s, root, newCP(nil, nil), loopMD(0), nil)
	mustPut(t, s, sub, newCP(nil, nil), loopMD(0), nil)
}

func conflictWrites(t *testing.T, s checkpoint.Saver) {
	th := newThread("conflict")
	in := mustPut(t, s, checkpoint.Ref{ThreadID: th}, newCP(nil, nil), inputMD(), nil)
	mustWrites(t, s, in, "winner", "", "v", "1")
	a := mustPut(t, s, in, newCP(nil, nil), loopMD(0), nil)
	// A losing worker finishes the same step late: its writes do not land
	// on the old checkpoint.
	err := s.PutWrites(t.Context(), in, []checkpoint.Write{{Channel: "v", Value: []byte("2")}}, "loser", "")
	expectConflict(t, err, th, in.CheckpointID, a.CheckpointID, "loser")
	expectWrites(t, s, in, pw("winner", "v", "1"))
	// Writes of no task (a Command given as input) may go to any
	// checkpoint, and task writes to the head are fine.
	mustWrites(t, s, in, checkpoint.NullTaskID, "", "v", "3")
	mustWrites(t, s, a, "next", "", "v", "4")
	// So are writes that arrive before their checkpoint is stored.
	mustWrites(t, s, checkpoint.Ref{ThreadID: th, CheckpointID: checkpoint.NewID()}, "early", "", "v", "5")
}

func conflictBatch(t *testing.T, s checkpoint.Saver) {
	bw, ok := s.(checkpoint.BatchWriter)
	if !ok {
		t.Skip("no checkpoint.BatchWriter")
	}
	th := newThread("conflict")
	in := mustPut(t, s, checkpoint.Ref{ThreadID: th}, newCP(nil, nil), inputMD(), nil)
	a, b := newCP(nil, nil), newCP(nil, nil)
	aRef := checkpoint.Ref{ThreadID: th, CheckpointID: a.ID}
	// A batch that advances the thread step by step is fine.
	err := bw.WriteBatch(t.Context(), []checkpoint.Op{
		{Ref: in, Writes: []checkpoint.Write{{Channel: "v", Value: []byte("1")}}, TaskID: "t0"},
		{Ref: in, Checkpoint: &a, Metadata: loopMD(0)},
		{Ref: aRef, Writes: []checkpoint.Write{{Channel: "v", Value: []byte("2")}}, TaskID: "t1"},
		{Ref: aRef, Checkpoint: &b, Metadata: loopMD(1)},
	})
	if err != nil {
		t.Fatalf("WriteBatch of one chain: %v", err)
	}
	// One that writes to a checkpoint its own earlier op superseded is
	// refused whole.
	c := newCP(nil, nil)
	bRef := checkpoint.Ref{ThreadID: th, CheckpointID: b.ID}
	err = bw.WriteBatch(t.Context(), []checkpoint.Op{
		{Ref: bRef, Checkpoint: &c, Metadata: loopMD(2)},
		{Ref: bRef, Writes: []checkpoint.Write{{Channel: "v", Value: []byte("3")}}, TaskID: "late"},
	})
	expectConflict(t, err, th, b.ID, c.ID, "late")
	expectNotFound(t, s, checkpoint.Ref{ThreadID: th, CheckpointID: c.ID})
}

// lapsed acquires a lease on thread for owner and waits until it lapses,
// as a run that died leaves it.
func lapsed(t *testing.T, l checkpoint.Leaser, thread, owner string) checkpoint.Lease {
	t.Helper()
	lease := mustAcquire(t, l, thread, owner, shortTTL)
	time.Sleep(2 * shortTTL)
	return lease
}

// expectDeadRun fails unless thread's only lease is dead, lapsed and not
// taken over.
func expectDeadRun(t *testing.T, l checkpoint.Leaser, thread string, dead checkpoint.Lease) {
	t.Helper()
	got := leasesOf(t, l, thread)
	if len(got) != 1 || got[0].Token != dead.Token || got[0].Owner != dead.Owner || !got[0].Expired ||
		!got[0].Since.Equal(dead.Since) {
		t.Fatalf("Leases(%q) = %+v, want the dead run's lapsed lease %+v", thread, got, dead)
	}
}

// A hold takes a dead run's lease over, keeping runs off the thread, and
// puts it back when released, so that a worker still sees the dead run.
func leaseHoldKeepsDead(t *testing.T, s checkpoint.Saver) {
	l := s.(checkpoint.Leaser)
	th := newThread("lease")
	dead := lapsed(t, l, th, "desk pid 1 (weft worker)")
	hold, err := l.HoldLease(t.Context(), th, "pruner", time.Minute)
	if err != nil {
		t.Fatalf("HoldLease over a lapsed lease: %v", err)
	}
	if hold.Owner != "pruner" || hold.Token == "" || hold.Token == dead.Token || hold.TookOver == nil || hold.TookOver.Token != dead.Token {
		t.Fatalf("hold = %+v, want pruner's lease that took over %+v", hold, dead)
	}
	_, err = l.AcquireLease(t.Context(), th, "run", time.Minute)
	expectHeld(t, err, th, "pruner")
	if got := leasesOf(t, l, th); len(got) != 1 || got[0].Token != hold.Token || got[0].Expired || got[0].TookOver != nil {
		t.Fatalf("while held, Leases = %+v, want the live hold", got)
	}
	if err := l.ReleaseLease(t.Context(), hold); err != nil {
		t.Fatalf("ReleaseLease: %v", err)
	}
	expectDeadRun(t, l, th, dead)
	// The dead run is continued as before.
	mustAcquire(t, l, th, "worker", time.Minute)
}

func leaseHoldFree(t *testing.T, s checkpoint.Saver) {
	l := s.(checkpoint.Leaser)
	th := newThread("lease")
	hold, err := l.HoldLease(t.Context(), th, "pruner", time.Minute)
	if err != nil || hold.TookOver != nil || hold.Owner != "pruner" {
		t.Fatalf("HoldLease of a free thread = %+v, %v", hold, err)
	}
	if err := l.ReleaseLease(t.Context(), hold); err != nil {
		t.Fatalf("ReleaseLease: %v", err)
	}
	if got := leasesOf(t, l, th); len(got) != 0 {
		t.Fatalf("after releasing the hold, Leases = %+v, want none", got)
	}
	if _, err := l.HoldLease(t.Context(), "", "pruner", 0); !errors.Is(err, checkpoint.ErrNoThread) {
		t.Fatalf("HoldLease of thread \"\": %v, want ErrNoThread", err)
	}
}

func leaseHoldRefused(t *testing.T, s checkpoint.Saver) {
	l := s.(checkpoint.Leaser)
	th := newThread("lease")
	run := mustAcquire(t, l, th, "desk pid 9 (weft run)", time.Minute)
	_, err := l.HoldLease(t.Context(), th, "pruner", time.Minute)
	expectHeld(t, err, th, "desk pid 9 (weft run)")
	if got := leasesOf(t, l, th); len(got) != 1 || got[0].Token != run.Token {
		t.Fatalf("after a refused hold, Leases = %+v, want the run's", got)
	}
}

// A prune under HoldForPrune prunes the threads it can, names the one a run
// holds, and leaves a dead run's lease as it found it.
func leasePrune(t *testing.T, s checkpoint.Saver) {
	pr, ok := s.(checkpoint.PolicyPruner)
	if !ok {
		t.Skip("the saver cannot prune by policy")
	}
	l := s.(checkpoint.Leaser)
	dead, live, free := newThread("prune-dead"), newThread("prune-live"), newThread("prune-free")
	cd, cl, cf := chain(t, s, dead, "", 3), chain(t, s, live, "", 3), chain(t, s, free, "", 3)
	mustAcquire(t, l, live, "desk pid 9 (weft worker)", time.Minute)
	died := lapsed(t, l, dead, "desk pid 1 (weft worker)")
	res, err := pr.PruneBy(t.Context(), checkpoint.PrunePolicy{Threads: []string{dead, live, free}, KeepLatest: 1,
		Hold: checkpoint.HoldForPrune(l, "pruner")})
	if err != nil {
		t.Fatalf("PruneBy: %v", err)
	}
	if res.Threads != 2 || len(res.Skipped) != 1 || res.Skipped[0].ThreadID != live ||
		!strings.Contains(res.Skipped[0].Reason, "is being run by desk pid 9 (weft worker)") {
		t.Errorf("result %+v, want 2 threads pruned and %s skipped, naming its holder", res, live)
	}
	expectList(t, s, checkpoint.ListOptions{ThreadID: dead}, cd[2:])
	expectList(t, s, checkpoint.ListOptions{ThreadID: live}, rev(cl...))
	expectList(t, s, checkpoint.ListOptions{ThreadID: free}, cf[2:])
	expectDeadRun(t, l, dead, died)
	if got := leasesOf(t, l, free); len(got) != 0 {
		t.Errorf("after the prune, the free thread has leases %+v", got)
	}
}
