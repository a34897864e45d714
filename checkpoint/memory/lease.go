package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/internal/leaseerr"
)

var _ checkpoint.Leaser = (*Saver)(nil)

// leases are the saver's thread leases (checkpoint.Leaser). They live in
// this process only, like everything the saver holds: they keep runs of
// one process that share the saver from advancing a thread together.
type leases struct {
	mu sync.Mutex
	m  map[string]checkpoint.Lease // by thread id
	// now is the clock; tests may replace it. nil means time.Now.
	now func() time.Time
}

func (l *leases) clock() time.Time {
	if l.now != nil {
		return l.now()
	}
	return time.Now()
}

func ttlOrDefault(ttl time.Duration) time.Duration {
	if ttl <= 0 {
		return checkpoint.DefaultLeaseTTL
	}
	return ttl
}

// AcquireLease claims threadID for owner for ttl; see checkpoint.Leaser.
func (s *Saver) AcquireLease(ctx context.Context, threadID, owner string, ttl time.Duration) (checkpoint.Lease, error) {
	if err := s.check(ctx); err != nil {
		return checkpoint.Lease{}, err
	}
	if threadID == "" {
		return checkpoint.Lease{}, fmt.Errorf("acquire lease: %w", checkpoint.ErrNoThread)
	}
	l := &s.leases
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock()
	if cur, ok := l.m[threadID]; ok && now.Before(cur.Expires) {
		return checkpoint.Lease{}, &checkpoint.LeaseHeldError{Lease: cur}
	}
	if l.m == nil {
		l.m = map[string]checkpoint.Lease{}
	}
	lease := checkpoint.Lease{ThreadID: threadID, Owner: owner, Token: checkpoint.NewID(), Since: now, Expires: now.Add(ttlOrDefault(ttl))}
	l.m[threadID] = lease
	return lease, nil
}

// HoldLease claims threadID for work that is not a run, keeping a lapsed
// lease it takes over for ReleaseLease to put back; see checkpoint.Leaser.
func (s *Saver) HoldLease(ctx context.Context, threadID, owner string, ttl time.Duration) (checkpoint.Lease, error) {
	if err := s.check(ctx); err != nil {
		return checkpoint.Lease{}, err
	}
	if threadID == "" {
		return checkpoint.Lease{}, fmt.Errorf("hold lease: %w", checkpoint.ErrNoThread)
	}
	l := &s.leases
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock()
	cur, had := l.m[threadID]
	if had && now.Before(cur.Expires) {
		return checkpoint.Lease{}, &checkpoint.LeaseHeldError{Lease: cur}
	}
	if l.m == nil {
		l.m = map[string]checkpoint.Lease{}
	}
	lease := checkpoint.Lease{ThreadID: threadID, Owner: owner, Token: checkpoint.NewID(), Since: now, Expires: now.Add(ttlOrDefault(ttl))}
	if had {
		cur.Expired = true
		lease.TookOver = &cur
	}
	l.m[threadID] = checkpoint.Lease{ThreadID: threadID, Owner: owner, Token: lease.Token, Since: lease.Since, Expires: lease.Expires}
	return lease, nil
}

// RenewLease extends lease to ttl from now; see checkpoint.Leaser.
func (s *Saver) RenewLease(ctx context.Context, lease checkpoint.Lease, ttl time.Duration) (checkpoint.Lease, error) {
	if err := s.check(ctx); err != nil {
		return checkpoint.Lease{}, err
	}
	l := &s.leases
	l.mu.Lock()
	defer l.mu.Unlock()
	cur, ok := l.m[lease.ThreadID]
	if !ok || cur.Token != lease.Token {
		return checkpoint.Lease{}, leaseerr.Lost(lease.ThreadID, cur, ok)
	}
	cur.Expires = l.clock().Add(ttlOrDefault(ttl))
	l.m[lease.ThreadID] = cur
	return cur, nil
}

// ReleaseLease ends lease; see checkpoint.Leaser.
func (s *Saver) ReleaseLease(ctx context.Context, lease checkpoint.Lease) error {
	if s.err != nil {
		return s.err
	}
	l := &s.leases
	l.mu.Lock()
	defer l.mu.Unlock()
	if cur, ok := l.m[lease.ThreadID]; ok && cur.Token == lease.Token {
		if back := lease.TookOver; back != nil {
			l.m[lease.ThreadID] = checkpoint.Lease{ThreadID: back.ThreadID, Owner: back.Owner, Token: back.Token,
				Since: back.Since, Expires: back.Expires, StopRequested: back.StopRequested}
		} else {
			delete(l.m, lease.ThreadID)
		}
	}
	return nil
}

// StopLease asks the holder of threadID's live lease to stop; see
// checkpoint.Leaser.
func (s *Saver) StopLease(ctx context.Context, threadID, by string) (checkpoint.Lease, error) {
	if err := s.check(ctx); err != nil {
		return checkpoint.Lease{}, err
	}
	l := &s.leases
	l.mu.Lock()
	defer l.mu.Unlock()
	cur, ok := l.m[threadID]
	if !ok || !l.clock().Before(cur.Expires) {
		return checkpoint.Lease{}, fmt.Errorf("thread %q has no run to stop: %w", threadID, checkpoint.ErrNotFound)
	}
	if by == "" {
		by = "someone"
	}
	cur.StopRequested = by
	l.m[threadID] = cur
	return cur, nil
}

// Leases returns the leases of threadIDs, or of every thread; see
// checkpoint.Leaser.
func (s *Saver) Leases(ctx context.Context, threadIDs ...string) ([]checkpoint.Lease, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	l := &s.leases
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock()
	var out []checkpoint.Lease
	for id, cur := range l.m {
		if len(threadIDs) > 0 && !slices.Contains(threadIDs, id) {
			continue
		}
		cur.Expired = !now.Before(cur.Expires)
		out = append(out, cur)
	}
	slices.SortFunc(out, func(a, b checkpoint.Lease) int { return strings.Compare(a.ThreadID, b.ThreadID) })
	return out, nil
}
