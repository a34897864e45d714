// Lease helpers: claiming a thread before writing it, and reading who
// holds which thread.

package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
)

// leasesByThread returns the store's leases by thread id; none when the
// store has no leases.
func leasesByThread(ctx context.Context, s checkpoint.Saver) (map[string]*checkpoint.Lease, error) {
	l, ok := s.(checkpoint.Leaser)
	if !ok {
		return nil, nil
	}
	ls, err := l.Leases(ctx)
	if err != nil {
		return nil, err
	}
	m := make(map[string]*checkpoint.Lease, len(ls))
	for i := range ls {
		m[ls[i].ThreadID] = &ls[i]
	}
	return m, nil
}

// claimThread claims thread for this command (see engine.Graph.Claim).
func claimThread(ctx context.Context, g *engine.Graph, thread string, ttl time.Duration) (*engine.Claim, error) {
	return g.Claim(ctx, engine.WithThread(thread), engine.WithLeaseTTL(ttl))
}

// claimedState finds thread's graph, claims the thread and reads its state
// under the claim: the state a run started under the claim starts from,
// whatever other processes do meanwhile. The caller releases the claim.
func claimedState(ctx context.Context, s checkpoint.Saver, graphs []*engine.Graph, thread string, ttl time.Duration) (*engine.Graph, *engine.Claim, *engine.Snapshot, error) {
	g, err := graphOf(ctx, s, graphs, thread)
	if err != nil {
		return nil, nil, nil, err
	}
	claim, err := claimThread(ctx, g, thread, ttl)
	if err != nil {
		return nil, nil, nil, err
	}
	st, err := g.GetState(ctx, engine.WithThread(thread))
	if err != nil {
		claim.Release()
		return nil, nil, nil, err
	}
	return g, claim, st, nil
}

// holdForDelete takes thread's lease for a delete. When a run holds it, it
// fails, or with force asks the run to stop and waits up to wait for it.
func holdForDelete(ctx context.Context, l checkpoint.Leaser, thread string, force bool, wait time.Duration) (checkpoint.Lease, error) {
	owner := engine.DefaultLeaseOwner()
	lease, err := l.AcquireLease(ctx, thread, owner, 0)
	if err == nil || !errors.Is(err, checkpoint.ErrLeaseHeld) {
		return lease, err
	}
	if !force {
		return checkpoint.Lease{}, fmt.Errorf("%w; nothing was deleted (use -force to stop that run first)", err)
	}
	if _, err := l.StopLease(ctx, thread, owner+" to delete the thread"); err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
		return checkpoint.Lease{}, err
	}
	warnf(ctx, "weft delete: %v; asked it to stop, waiting", err)
	deadline := time.Now().Add(wait)
	for {
		lease, err := l.AcquireLease(ctx, thread, owner, 0)
		if err == nil || !errors.Is(err, checkpoint.ErrLeaseHeld) {
			return lease, err
		}
		if time.Now().After(deadline) {
			return checkpoint.Lease{}, fmt.Errorf("%w; it did not stop within %v, nothing was deleted", err, wait)
		}
		select {
		case <-ctx.Done():
			return checkpoint.Lease{}, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
