package engine

// This file claims a thread for a run: one run per thread at a time, across
// every process sharing the store, when the saver offers leases
// (checkpoint.Leaser).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/weftstudio/weft/checkpoint"
)

// leaseConfig is what a run knows about its lease.
type leaseConfig struct {
	owner string        // "" means DefaultLeaseOwner()
	ttl   time.Duration // 0 means checkpoint.DefaultLeaseTTL
	claim *Claim        // the caller's claim (WithClaim); nil: the run claims the thread itself
}

// WithLeaseOwner names the run in its thread's lease, which other processes
// show ("thread T is being run by OWNER since …"). The default is
// DefaultLeaseOwner().
func WithLeaseOwner(owner string) RunOption {
	return func(c *runConfig) { c.lease.owner = owner }
}

// WithLeaseTTL sets how long the run's lease outlives the run if its
// process dies (default checkpoint.DefaultLeaseTTL, 30 s): another run may
// take the thread over only then, or at once when it runs on the same
// machine and sees that the process is gone. A live run renews it every
// third of d.
// 0 or less keeps the default.
func WithLeaseTTL(d time.Duration) RunOption {
	return func(c *runConfig) { c.lease.ttl = d }
}

// WithClaim runs under c, a claim the caller took with Graph.Claim on the
// same thread: the run neither claims nor releases the thread, so a caller
// can check the thread's state and run on it with no other run in between.
// The run ends early, with the claim's error, if the claim is lost.
func WithClaim(c *Claim) RunOption {
	return func(cfg *runConfig) { cfg.lease.claim = c }
}

// DefaultLeaseOwner describes this process for a lease: host name, process
// id and command, e.g. "build-7 pid 4242 (weft worker)". Only the program's
// name and its first word are shown, never flags, which may hold secrets.
func DefaultLeaseOwner() string { return defaultOwner() }

// defaultOwner computes the default owner once: host, pid and arguments do
// not change while the process runs.
var defaultOwner = sync.OnceValue(func() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown host"
	}
	cmd := "?"
	if len(os.Args) > 0 {
		cmd = filepath.Base(os.Args[0])
		if len(os.Args) > 1 && os.Args[1] != "" && !strings.HasPrefix(os.Args[1], "-") && !strings.ContainsAny(os.Args[1], ":/@=") {
			cmd += " " + os.Args[1]
		}
	}
	return fmt.Sprintf("%s pid %d (%s)", host, os.Getpid(), cmd)
})

// Claim is a thread held by one caller: while it lasts, no other run on the
// thread starts, in this process or another sharing the store. Take it with
// Graph.Claim, run under it with WithClaim, and Release it. It renews its
// lease in the background; if the lease is lost (a stall past its ttl let
// another run take the thread over) or someone asks the holder to stop
// (checkpoint.Leaser.StopLease), Context ends and Err says why.
//
// With a saver that has no leases a Claim holds nothing: its Lease is zero
// and it is never lost.
type Claim struct {
	thread string
	leaser checkpoint.Leaser // nil: nothing is held
	ttl    time.Duration

	ctx    context.Context
	cancel context.CancelCauseFunc

	// mu guards lease, timer and ended, and is held during a renewal, so
	// Release waits for one in progress.
	mu    sync.Mutex
	lease checkpoint.Lease
	timer *time.Timer // the next renewal; nil when nothing is held
	last  time.Time   // when a renewal last succeeded (or the lease was acquired)
	ended bool        // released or lost: no more renewals

	release  sync.Once
	released error
}

// Claim claims the thread named with WithThread for the caller (the owner
// and ttl of WithLeaseOwner and WithLeaseTTL apply) and returns the claim;
// the caller must Release it. When another run holds the thread it returns
// an error wrapping a *checkpoint.LeaseHeldError, before anything else
// happens.
func (gr *Graph) Claim(ctx context.Context, opts ...RunOption) (*Claim, error) {
	cfg := newRunConfig(opts)
	if gr.saver == nil {
		return nil, errors.New("Claim needs a graph compiled with engine.WithSaver")
	}
	if cfg.thread == "" {
		return nil, errors.New("Claim needs a thread: engine.WithThread")
	}
	return gr.claim(ctx, cfg)
}

func (gr *Graph) claim(ctx context.Context, cfg *runConfig) (*Claim, error) {
	if gr.view != nil {
		return nil, gr.viewErr()
	}
	c := &Claim{thread: cfg.thread, ttl: cfg.lease.ttl}
	if c.ttl <= 0 {
		c.ttl = checkpoint.DefaultLeaseTTL
	}
	c.ctx, c.cancel = context.WithCancelCause(ctx)
	l, ok := gr.saver.(checkpoint.Leaser)
	if !ok {
		return c, nil
	}
	owner := cfg.lease.owner
	if owner == "" {
		owner = DefaultLeaseOwner()
	}
	lease, err := l.AcquireLease(ctx, cfg.thread, owner, c.ttl)
	if err != nil {
		c.cancel(err)
		if errors.Is(err, checkpoint.ErrLeaseHeld) {
			return nil, err
		}
		return nil, fmt.Errorf("claiming thread %q: %w", cfg.thread, err)
	}
	c.leaser, c.lease, c.last = l, lease, time.Now()
	c.mu.Lock()
	c.timer = time.AfterFunc(c.ttl/3, c.renew)
	c.mu.Unlock()
	return c, nil
}

// renew runs every third of the ttl until Release (a timer, not a
// goroutine per claim: most runs end long before the first renewal). It
// ends the claim when the lease is lost, cannot be renewed within its ttl,
// or someone asks the holder to stop.
func (c *Claim) renew() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended || c.ctx.Err() != nil {
		return
	}
	every := c.ttl / 3
	rctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), every)
	started := time.Now()
	l, err := c.leaser.RenewLease(rctx, c.lease, c.ttl)
	cancel()
	var end error
	switch {
	case err == nil:
		c.last, c.lease = started, l
		if l.StopRequested != "" {
			end = fmt.Errorf("thread %q: %w by %s", c.thread, checkpoint.ErrStopRequested, l.StopRequested)
		}
	case errors.Is(err, checkpoint.ErrLeaseLost):
		end = err
	case time.Since(c.last) >= c.ttl:
		end = fmt.Errorf("thread %q: %w: it could not be renewed for %v: %w", c.thread, checkpoint.ErrLeaseLost, c.ttl.Round(time.Millisecond), err)
	default:
		// The store may be back in a moment: try again soon, well before
		// the lease lapses.
		every = min(every, time.Second)
	}
	if end != nil {
		c.ended = true
		c.cancel(end)
		return
	}
	c.timer.Reset(every)
}

// Lease returns the lease the claim holds, as last stored; zero when the
// saver has no leases.
func (c *Claim) Lease() checkpoint.Lease {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lease
}

// Context is done when the claim ends: released, lost, asked to stop, or
// its parent context done.
func (c *Claim) Context() context.Context { return c.ctx }

// Err says why the claim ended early: an error wrapping
// checkpoint.ErrLeaseLost or checkpoint.ErrStopRequested, or the parent
// context's error; nil while it holds and after Release.
func (c *Claim) Err() error {
	if c.ctx.Err() == nil {
		return nil
	}
	cause := context.Cause(c.ctx)
	if errors.Is(cause, errReleased) {
		return nil
	}
	return cause
}

var errReleased = errors.New("claim released")

// Release gives the thread up; later calls do nothing and return the
// first's result. The lease is released even when the context the claim
// was taken with has ended. A failed release is returned, but costs
// nothing more than the lease's ttl: another run can take the thread over
// once it lapses.
func (c *Claim) Release() error {
	c.release.Do(func() {
		defer c.cancel(errReleased)
		if c.leaser == nil {
			return
		}
		c.mu.Lock() // waits for a renewal in progress
		c.ended = true
		c.timer.Stop()
		lease := c.lease
		c.mu.Unlock()
		if ip, ok := c.leaser.(checkpoint.InProcess); ok && ip.InProcess() {
			c.released = c.leaser.ReleaseLease(context.WithoutCancel(c.ctx), lease) // nothing to wait for
			return
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), 10*time.Second)
		defer cancel()
		c.released = c.leaser.ReleaseLease(ctx, lease)
	})
	return c.released
}

// Abandon gives the claim up without releasing its lease, which then
// lapses at its expiry (at once, for a holder on this machine whose process
// has ended), so the thread reads as a run that stopped mid-way and a
// worker continues it. A worker stopped by a signal uses it: the runs it
// paused at a step boundary are to be picked up, not left as if paused on
// purpose. Later calls of Release or Abandon do nothing.
func (c *Claim) Abandon() {
	c.release.Do(func() {
		defer c.cancel(errReleased)
		if c.leaser == nil {
			return
		}
		c.mu.Lock() // waits for a renewal in progress
		c.ended = true
		c.timer.Stop()
		c.mu.Unlock()
	})
}

// claimRun claims the run's thread when the saver offers leases (the root
// graph of a run only: subgraphs run under their parent's claim) and
// returns the run's context, which ends if the claim is lost, and end,
// which releases the claim and explains an error the loss caused.
func (gr *Graph) claimRun(ctx context.Context, cfg *runConfig) (context.Context, func(error) error, error) {
	keep := func(err error) error { return err }
	if cfg.parentRT != nil || gr.saver == nil || cfg.thread == "" {
		return ctx, keep, nil
	}
	c, own := cfg.lease.claim, cfg.lease.claim == nil
	switch {
	case own:
		if _, ok := gr.saver.(checkpoint.Leaser); !ok {
			return ctx, keep, nil
		}
		var err error
		if c, err = gr.claim(ctx, cfg); err != nil {
			return nil, nil, err
		}
	case c.thread != cfg.thread:
		return nil, nil, fmt.Errorf("engine.WithClaim: the claim is on thread %q, the run on thread %q", c.thread, cfg.thread)
	case c.Err() != nil:
		return nil, nil, c.Err()
	}
	explain := func(err error, cause error) error {
		if err != nil && (errors.Is(cause, checkpoint.ErrLeaseLost) || errors.Is(cause, checkpoint.ErrStopRequested)) {
			return cause
		}
		return err
	}
	if own { // the claim's context, derived from ctx, is the run's
		return c.ctx, func(err error) error {
			cause := context.Cause(c.ctx)
			_ = c.Release() // a failed release only delays the next run by the ttl
			return explain(err, cause)
		}, nil
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	unhook := context.AfterFunc(c.ctx, func() { cancel(context.Cause(c.ctx)) })
	return runCtx, func(err error) error {
		unhook()
		cause := context.Cause(runCtx)
		cancel(nil)
		return explain(err, cause)
	}, nil
}
