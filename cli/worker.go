// The worker command: the loop that finds threads with waiting answers or
// dead runs and continues them.

package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/store"
	"github.com/weftstudio/weft/engine"
)

// cmdWorker runs the threads that have work and nobody to do it: answers
// stored with answer (SubmitAnswer), and threads a run left mid-way when
// its process died (its lease lapsed, or a step's writes are stored with
// no checkpoint after them). With -watch it keeps looking until
// interrupted, and waits out store outages instead of exiting.
func cmdWorker(ctx context.Context, s checkpoint.Saver, graphs []*engine.Graph, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	watch := fs.Duration("watch", 0, "keep polling at this interval instead of stopping when no work is left")
	ttl := fs.Duration("lease-ttl", checkpoint.DefaultLeaseTTL, "how long a thread stays claimed if this process dies")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	tl, ok := s.(checkpoint.ThreadLister)
	if !ok {
		return errors.New("this store cannot list threads")
	}
	byName := graphsByName(graphs)
	done := []ResultJSON{}
	ctx, lost := watchStore(ctx, s, storeCheckInterval)
	wait := time.Duration(0) // the backoff while the store is unreachable
	for {
		if c, ok := s.(store.Checker); ok {
			if err := c.Check(ctx); err != nil {
				return err // the store file is gone or replaced: nothing to wait for
			}
		}
		err := workOnce(ctx, s, tl, byName, *ttl, *watch > 0, &done)
		switch {
		case err == nil:
			if wait > 0 {
				warnf(ctx, "weft worker: the store is reachable again")
			}
			wait = 0
		case ctx.Err() != nil:
			// Stopped (an interrupt, or the store gone): whatever the
			// round was doing ends with the context, which is no failure
			// of its own.
			if cause := lost(); cause != nil {
				return cause
			}
			return printJSON(w, done)
		case *watch <= 0:
			return err
		default:
			wait = min(max(2*wait, time.Second), 30*time.Second)
			warnf(ctx, "weft worker: %v; retrying in %v", err, wait)
		}
		if *watch <= 0 || stopRequested(ctx) {
			break
		}
		pause := *watch
		if wait > 0 {
			pause = wait
		}
		select {
		case <-ctx.Done():
			if err := lost(); err != nil {
				return err
			}
			return printJSON(w, done)
		case <-time.After(pause):
		}
	}
	return printJSON(w, done)
}

// workOnce runs every thread with work once. Under -watch (keepGoing) a
// failed run is reported and the others go on; only a failure to read the
// store is returned.
func workOnce(ctx context.Context, s checkpoint.Saver, tl checkpoint.ThreadLister, byName map[string]*engine.Graph, ttl time.Duration, keepGoing bool, done *[]ResultJSON) error {
	infos, err := tl.ListThreads(ctx, 0)
	if err != nil {
		return err
	}
	leases, err := leasesByThread(ctx, s)
	if err != nil {
		return err
	}
	for _, ti := range infos {
		if stopRequested(ctx) {
			return nil // a signal: no new thread
		}
		name, _ := ti.LatestMeta.Extra[engine.MetaGraph].(string)
		g := byName[name]
		if g == nil {
			continue
		}
		if l := leases[ti.ThreadID]; l != nil && !l.Expired {
			continue // being run
		}
		if ok, err := g.HasWork(ctx, leases[ti.ThreadID], engine.WithThread(ti.ThreadID)); err != nil || !ok {
			if err != nil {
				return fmt.Errorf("thread %q: %w", ti.ThreadID, err)
			}
			continue
		}
		res, err := runWork(ctx, s, g, ti.ThreadID, leases[ti.ThreadID], ttl)
		switch {
		case errors.Is(err, checkpoint.ErrLeaseHeld), errors.Is(err, errNoWork):
			continue // another worker was first
		case err != nil && keepGoing && ctx.Err() == nil:
			warnf(ctx, "weft worker: thread %q: %v", ti.ThreadID, err)
			continue
		case err != nil:
			return fmt.Errorf("thread %q: %w", ti.ThreadID, err)
		}
		*done = append(*done, resultJSON(ti.ThreadID, res))
	}
	return nil
}

// errNoWork: the thread had work when listed, but not once claimed.
var errNoWork = errors.New("nothing left to do")

// runWork claims thread, checks it still has work and continues it. lease
// is the thread's lease when it was listed: an expired one says a run died
// there (claiming the thread replaced it).
func runWork(ctx context.Context, s checkpoint.Saver, g *engine.Graph, thread string, lease *checkpoint.Lease, ttl time.Duration) (*engine.Result, error) {
	claim, err := claimThread(ctx, g, thread, ttl)
	if err != nil {
		return nil, err
	}
	// Another worker may have done the work between the listing and the
	// claim.
	if ok, err := g.HasWork(ctx, lease, engine.WithThread(thread)); err != nil || !ok {
		claim.Release()
		if err == nil {
			err = errNoWork
		}
		return nil, err
	}
	res, err := g.Invoke(ctx, nil, engine.WithThread(thread), engine.WithClaim(claim), stopAtBoundary(ctx))
	if stopRequested(ctx) && err == nil && len(res.Interrupts) == 0 && len(res.Next) > 0 {
		// Stopped by a signal between steps: the lease is left to lapse,
		// so the next worker continues the thread from the step stored.
		claim.Abandon()
		warnf(ctx, "weft worker: thread %q stopped before %v; the next worker continues it", thread, res.Next)
		return res, nil
	}
	claim.Release()
	return res, err
}
