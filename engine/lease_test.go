package engine_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/checkpointtest"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
)

var leaseCount = engine.LastValue[int]("count")

// gatedGraph runs one node that counts its calls, tells started, then
// waits for release (or the end of its context).
func gatedGraph(t *testing.T, s checkpoint.Saver, calls *atomic.Int32, started chan<- struct{}, release <-chan struct{}) *engine.Graph {
	b := engine.NewGraph("gated", leaseCount)
	b.AddNode("work", func(ctx context.Context, st engine.State) (engine.Output, error) {
		calls.Add(1)
		if started != nil {
			started <- struct{}{}
		}
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return engine.Updates(leaseCount.Set(leaseCount.Get(st) + 1)), nil
	})
	b.AddEdge(engine.START, "work")
	return compile(t, b, engine.WithSaver(s))
}

// hideLeases is a saver without the Leaser capability (nor any other
// optional one).
type hideLeases struct{ checkpoint.Saver }

// TestSecondRunRefusedBeforeNodes: while a run holds a thread, a second run
// on it fails with a *checkpoint.LeaseHeldError naming the holder, before
// any of its nodes runs; once the first ends, the thread is free.
func TestSecondRunRefusedBeforeNodes(t *testing.T) {
	s := memory.New()
	var calls atomic.Int32
	started, release := make(chan struct{}, 1), make(chan struct{})
	g := gatedGraph(t, s, &calls, started, release)
	first := make(chan error, 1)
	go func() {
		_, err := g.Invoke(ctx, engine.Values{"count": 0}, engine.WithThread("t"), engine.WithLeaseOwner("first runner"))
		first <- err
	}()
	<-started
	_, err := g.Invoke(ctx, engine.Values{"count": 10}, engine.WithThread("t"))
	var he *checkpoint.LeaseHeldError
	if !errors.As(err, &he) || he.Lease.Owner != "first runner" {
		t.Fatalf("second run: err = %v, want a LeaseHeldError naming the first runner", err)
	}
	if !strings.Contains(err.Error(), `thread "t" is being run by first runner since`) {
		t.Errorf("error %q does not say who runs the thread", err)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("the node ran %d times, want once: the second run got past its claim", n)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if ls, _ := s.Leases(ctx, "t"); len(ls) != 0 {
		t.Errorf("the finished run left its lease: %+v", ls)
	}
	res := invoke(t, g, nil, engine.WithThread("t"))
	if !res.Done || res.Values["count"] != 1 {
		t.Errorf("after the first run: %+v", res)
	}
	// Other threads were never blocked, and a saver without leases claims
	// nothing.
	bare := gatedGraph(t, hideLeases{memory.New()}, new(atomic.Int32), nil, release)
	invoke(t, bare, engine.Values{"count": 0}, engine.WithThread("t"))
}

// TestClaimThenRun: a caller claims a thread, checks its state and runs
// under the claim; meanwhile other runs are refused; Release frees it.
func TestClaimThenRun(t *testing.T) {
	s := memory.New()
	var calls atomic.Int32
	release := make(chan struct{})
	close(release)
	g := gatedGraph(t, s, &calls, nil, release)
	c, err := g.Claim(ctx, engine.WithThread("t"), engine.WithLeaseOwner("checker"))
	if err != nil {
		t.Fatal(err)
	}
	if l := c.Lease(); l.ThreadID != "t" || l.Owner != "checker" || l.Token == "" {
		t.Fatalf("claim's lease %+v", l)
	}
	if _, err := g.Invoke(ctx, engine.Values{"count": 5}, engine.WithThread("t")); !errors.Is(err, checkpoint.ErrLeaseHeld) {
		t.Fatalf("a run outside the claim: err = %v, want ErrLeaseHeld", err)
	}
	if _, err := g.Claim(ctx, engine.WithThread("t")); !errors.Is(err, checkpoint.ErrLeaseHeld) {
		t.Fatalf("a second claim: err = %v, want ErrLeaseHeld", err)
	}
	if _, err := g.Invoke(ctx, engine.Values{"count": 0}, engine.WithThread("other"), engine.WithClaim(c)); err == nil || !strings.Contains(err.Error(), "claim is on thread") {
		t.Fatalf("a run on another thread under the claim: err = %v", err)
	}
	res, err := g.Invoke(ctx, engine.Values{"count": 0}, engine.WithThread("t"), engine.WithClaim(c))
	if err != nil || !res.Done {
		t.Fatalf("run under the claim: %v, %+v", err, res)
	}
	if ls, _ := s.Leases(ctx, "t"); len(ls) != 1 || ls[0].Token != c.Lease().Token {
		t.Fatalf("a run under a claim released it: %+v", ls)
	}
	if err := c.Release(); err != nil {
		t.Fatal(err)
	}
	if err := c.Release(); err != nil || c.Err() != nil {
		t.Fatalf("second Release: %v, Err %v", err, c.Err())
	}
	invoke(t, g, nil, engine.WithThread("t"))
	if n := calls.Load(); n != 1 {
		t.Errorf("the node ran %d times, want 1", n)
	}
}

// TestStopRequestEndsRun: StopLease from elsewhere ends the holder's run
// at its next renewal with an error wrapping ErrStopRequested, and the
// lease is released.
func TestStopRequestEndsRun(t *testing.T) {
	s := memory.New()
	started := make(chan struct{}, 1)
	g := gatedGraph(t, s, new(atomic.Int32), started, make(chan struct{}))
	done := make(chan error, 1)
	go func() {
		_, err := g.Invoke(ctx, engine.Values{"count": 0}, engine.WithThread("t"), engine.WithLeaseTTL(150*time.Millisecond))
		done <- err
	}()
	<-started
	if _, err := s.StopLease(ctx, "t", "ops"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, checkpoint.ErrStopRequested) || !strings.Contains(err.Error(), "ops") {
			t.Fatalf("stopped run: err = %v, want ErrStopRequested by ops", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the run did not stop")
	}
	if ls, _ := s.Leases(ctx, "t"); len(ls) != 0 {
		t.Errorf("the stopped run left its lease: %+v", ls)
	}
}

// lossySaver's leases are lost at their first renewal.
type lossySaver struct{ *memory.Saver }

func (l lossySaver) RenewLease(ctx context.Context, lease checkpoint.Lease, ttl time.Duration) (checkpoint.Lease, error) {
	return checkpoint.Lease{}, errors.Join(checkpoint.ErrLeaseLost, errors.New("taken over by a test"))
}

// TestLostLeaseEndsRun: a run whose lease is taken over stops with an
// error wrapping ErrLeaseLost instead of writing on.
func TestLostLeaseEndsRun(t *testing.T) {
	g := gatedGraph(t, lossySaver{memory.New()}, new(atomic.Int32), nil, make(chan struct{}))
	_, err := g.Invoke(ctx, engine.Values{"count": 0}, engine.WithThread("t"), engine.WithLeaseTTL(150*time.Millisecond))
	if !errors.Is(err, checkpoint.ErrLeaseLost) {
		t.Fatalf("err = %v, want ErrLeaseLost", err)
	}
}

func TestDefaultLeaseOwner(t *testing.T) {
	o := engine.DefaultLeaseOwner()
	if !strings.Contains(o, " pid ") || !strings.Contains(o, ".test") {
		t.Errorf("DefaultLeaseOwner() = %q, want host, pid and command", o)
	}
}

// TestStatusOf: a step cut short after one of two tasks finished leaves
// Next empty at the latest checkpoint, yet the thread is not done.
func TestStatusOf(t *testing.T) {
	s := memory.New()
	out := engine.List[string]("out")
	b := engine.NewGraph("status", out)
	for _, n := range []string{"a", "b"} {
		b.AddNode(n, func(context.Context, engine.State) (engine.Output, error) {
			return engine.Updates(out.Add(n)), nil
		})
		b.AddEdge(engine.START, n)
	}
	g := compile(t, b, engine.WithSaver(s))
	invoke(t, g, engine.Values{}, engine.WithThread("t"), engine.BreakBefore("a", "b"))
	snap, err := g.GetState(ctx, engine.WithThread("t"))
	if err != nil {
		t.Fatal(err)
	}
	if got := engine.StatusOf(snap, nil); got != engine.StatusPaused {
		t.Fatalf("at a breakpoint: %s, want paused", got)
	}
	// As a killed run leaves it: task a's writes stored, no next checkpoint.
	var aID string
	for _, ts := range snap.Tasks {
		if ts.Name == "a" {
			aID = ts.ID
		}
	}
	if err := s.PutWrites(ctx, snap.Ref, []checkpoint.Write{{Channel: "out", Value: []byte(`["a"]`)}}, aID, "pull:a"); err != nil {
		t.Fatal(err)
	}
	// Task b's writes too: Next is now empty.
	for _, ts := range snap.Tasks {
		if ts.Name == "b" {
			if err := s.PutWrites(ctx, snap.Ref, []checkpoint.Write{{Channel: "out", Value: []byte(`["b"]`)}}, ts.ID, "pull:b"); err != nil {
				t.Fatal(err)
			}
		}
	}
	snap, err = g.GetState(ctx, engine.WithThread("t"))
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Next) != 0 || snap.Done() || engine.StatusOf(snap, nil) != engine.StatusPaused {
		t.Fatalf("all writes pending: Next %v, Done %v, status %s; want [], false, paused", snap.Next, snap.Done(), engine.StatusOf(snap, nil))
	}
	held := &checkpoint.Lease{ThreadID: "t", Owner: "x"}
	if got := engine.StatusOf(snap, held); got != engine.StatusRunning {
		t.Errorf("with a live lease: %s, want running", got)
	}
	held.Expired = true
	if got := engine.StatusOf(snap, held); got != engine.StatusPaused {
		t.Errorf("with an expired lease: %s, want paused", got)
	}
	res := invoke(t, g, nil, engine.WithThread("t"))
	if !res.Done {
		t.Fatalf("continuing: %+v", res)
	}
	snap, _ = g.GetState(ctx, engine.WithThread("t"))
	if !snap.Done() || engine.StatusOf(snap, nil) != engine.StatusDone {
		t.Errorf("after continuing: Done %v, status %s", snap.Done(), engine.StatusOf(snap, nil))
	}
}

// TestAnsweredInterruptNotPending: a task answered and finished, in a run
// that stopped before its step's checkpoint, keeps its old interrupt in the
// snapshot (as LangGraph's does) but not as an open one: the thread is
// paused, not waiting, and continues with nil input without running the
// task again.
func TestAnsweredInterruptNotPending(t *testing.T) {
	s := &checkpointtest.StepCutShort{Saver: memory.New()}
	var runs atomic.Int32
	b := engine.NewGraph("ask", leaseCount)
	b.AddNode("ask", func(ctx context.Context, st engine.State) (engine.Output, error) {
		v, err := engine.Interrupt(ctx, "how many?")
		if err != nil {
			return nil, err
		}
		runs.Add(1)
		return engine.Updates(leaseCount.Set(int(v.(float64)))), nil
	})
	b.AddNode("after", func(_ context.Context, st engine.State) (engine.Output, error) {
		return engine.Updates(leaseCount.Set(leaseCount.Get(st) + 1)), nil
	})
	b.AddEdge(engine.START, "ask").AddEdge("ask", "after")
	g := compile(t, b, engine.WithSaver(s))
	th := engine.WithThread("t")
	invoke(t, g, engine.Values{}, th)
	s.Cut = true
	if _, err := g.Invoke(ctx, engine.Command{Resume: 41.0}, th, engine.WithDurability(engine.DurabilitySync)); err == nil {
		t.Fatal("the step's checkpoint was stored")
	}
	s.Cut = false
	snap, err := g.GetState(ctx, th)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.OpenInterrupts()) != 0 || len(snap.Interrupts) != 1 || !snap.Tasks[0].Finished || engine.StatusOf(snap, nil) != engine.StatusPaused {
		t.Fatalf("after the answered step was cut short: open interrupts %v of %v, status %s; want none open, paused", snap.OpenInterrupts(), snap.Interrupts, engine.StatusOf(snap, nil))
	}
	res := invoke(t, g, nil, th)
	if !res.Done || res.Values["count"] != 42 || runs.Load() != 1 {
		t.Fatalf("continuing: %+v, the answered task ran %d times", res, runs.Load())
	}
}
