package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/internal/leaseerr"
	"github.com/weftstudio/weft/checkpoint/internal/proc"
)

// Leases live in weft_leases (migrations/0004_leases.sql), one row per
// thread. Every operation is one statement timed by the server's clock
// (clock_timestamp()), so workers on machines whose clocks differ agree on
// when a lease lapses.

func leaseSeconds(ttl time.Duration) float64 {
	if ttl <= 0 {
		ttl = checkpoint.DefaultLeaseTTL
	}
	return ttl.Seconds()
}

// AcquireLease claims threadID for owner for ttl; see checkpoint.Leaser.
func (s *Saver) AcquireLease(ctx context.Context, threadID, owner string, ttl time.Duration) (checkpoint.Lease, error) {
	if err := s.writable(ctx); err != nil {
		return checkpoint.Lease{}, err
	}
	if threadID == "" {
		return checkpoint.Lease{}, fmt.Errorf("acquire lease: %w", checkpoint.ErrNoThread)
	}
	l := checkpoint.Lease{ThreadID: threadID, Owner: owner, Token: checkpoint.NewID(), Holder: proc.Of(ctx)}
	// The insert takes the row, or an expired one over; a live holder's row
	// is left alone and the insert returns nothing. The holder may release
	// between that and reading its row: then try again.
	for range 3 {
		err := s.pool.QueryRow(ctx, `INSERT INTO weft_leases AS l (thread_id, owner, token, acquired_at, expires_at, stop_by, holder)
			VALUES ($1, $2, $3, clock_timestamp(), clock_timestamp() + make_interval(secs => $4), '', $5)
			ON CONFLICT (thread_id) DO UPDATE SET owner = EXCLUDED.owner, token = EXCLUDED.token,
				acquired_at = EXCLUDED.acquired_at, expires_at = EXCLUDED.expires_at, stop_by = '', holder = EXCLUDED.holder, hold = false, dead = ''
			WHERE l.expires_at <= clock_timestamp()
			RETURNING acquired_at, expires_at`, threadID, owner, l.Token, leaseSeconds(ttl), l.Holder).Scan(&l.Since, &l.Expires)
		if err == nil {
			return l, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return checkpoint.Lease{}, fmt.Errorf("acquire the lease of thread %q: %w", threadID, connErr(err))
		}
		cur, ok, err := s.leaseOf(ctx, threadID)
		if err != nil {
			return checkpoint.Lease{}, fmt.Errorf("acquire the lease of thread %q: %w", threadID, err)
		}
		if ok && proc.Gone(cur.Holder) {
			// Its holder's process ended on this machine: take it over
			// now, unless someone else took it meanwhile.
			err := s.pool.QueryRow(ctx, `UPDATE weft_leases SET owner = $2, token = $3, acquired_at = clock_timestamp(),
					expires_at = clock_timestamp() + make_interval(secs => $4), stop_by = '', holder = $5, hold = false, dead = ''
				WHERE thread_id = $1 AND token = $6
				RETURNING acquired_at, expires_at`, threadID, owner, l.Token, leaseSeconds(ttl), l.Holder, cur.Token).Scan(&l.Since, &l.Expires)
			if err == nil {
				return l, nil
			}
			if !errors.Is(err, pgx.ErrNoRows) {
				return checkpoint.Lease{}, fmt.Errorf("acquire the lease of thread %q: %w", threadID, connErr(err))
			}
			continue
		}
		if ok {
			return checkpoint.Lease{}, &checkpoint.LeaseHeldError{Lease: cur}
		}
	}
	return checkpoint.Lease{}, fmt.Errorf("acquire the lease of thread %q: it was taken and released three times in a row; try again", threadID)
}

// HoldLease claims threadID for work that is not a run, keeping a lapsed
// lease it takes over for ReleaseLease to put back; see checkpoint.Leaser.
func (s *Saver) HoldLease(ctx context.Context, threadID, owner string, ttl time.Duration) (checkpoint.Lease, error) {
	if err := s.writable(ctx); err != nil {
		return checkpoint.Lease{}, err
	}
	if threadID == "" {
		return checkpoint.Lease{}, fmt.Errorf("hold lease: %w", checkpoint.ErrNoThread)
	}
	l := checkpoint.Lease{ThreadID: threadID, Owner: owner, Token: checkpoint.NewID(), Holder: proc.Of(ctx)}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// The row lock keeps the lapsed lease as read until it is replaced.
		cur := checkpoint.Lease{ThreadID: threadID}
		var hold bool
		var dead string
		err := tx.QueryRow(ctx, `SELECT owner, token, acquired_at, expires_at, stop_by, expires_at <= clock_timestamp(), holder, hold, dead
			FROM weft_leases WHERE thread_id = $1 FOR UPDATE`, threadID).
			Scan(&cur.Owner, &cur.Token, &cur.Since, &cur.Expires, &cur.StopRequested, &cur.Expired, &cur.Holder, &hold, &dead)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			// Nobody holds it; another holder may insert first (the
			// insert then returns nothing).
			err = tx.QueryRow(ctx, `INSERT INTO weft_leases (thread_id, owner, token, acquired_at, expires_at, stop_by, holder, hold, dead)
				VALUES ($1, $2, $3, clock_timestamp(), clock_timestamp() + make_interval(secs => $4), '', $5, true, '')
				ON CONFLICT (thread_id) DO NOTHING
				RETURNING acquired_at, expires_at`, threadID, owner, l.Token, leaseSeconds(ttl), l.Holder).Scan(&l.Since, &l.Expires)
			if errors.Is(err, pgx.ErrNoRows) {
				return errRaced
			}
			return err
		case err != nil:
			return err
		case !cur.Expired && !proc.Gone(cur.Holder):
			return &checkpoint.LeaseHeldError{Lease: cur}
		}
		if hold { // a hold that lapsed (its holder was killed): keep the run it took over
			if l.TookOver, err = proc.DecodeDead(threadID, dead); err != nil {
				return err
			}
		} else {
			cur.Expired, cur.Ended = true, proc.Ended(cur.Holder)
			l.TookOver = &cur
		}
		return tx.QueryRow(ctx, `UPDATE weft_leases SET owner = $2, token = $3, acquired_at = clock_timestamp(),
				expires_at = clock_timestamp() + make_interval(secs => $4), stop_by = '', holder = $5, hold = true, dead = $6
			WHERE thread_id = $1 RETURNING acquired_at, expires_at`, threadID, owner, l.Token, leaseSeconds(ttl), l.Holder, proc.EncodeDead(l.TookOver)).Scan(&l.Since, &l.Expires)
	})
	switch {
	case errors.Is(err, checkpoint.ErrLeaseHeld):
		return checkpoint.Lease{}, err
	case errors.Is(err, errRaced):
		// Another holder inserted the row first: it holds the thread now.
		cur, ok, err := s.leaseOf(ctx, threadID)
		if err != nil {
			return checkpoint.Lease{}, fmt.Errorf("hold the lease of thread %q: %w", threadID, err)
		}
		if !ok {
			return checkpoint.Lease{}, fmt.Errorf("hold the lease of thread %q: it was taken and released meanwhile; try again", threadID)
		}
		return checkpoint.Lease{}, &checkpoint.LeaseHeldError{Lease: cur}
	case err != nil:
		return checkpoint.Lease{}, fmt.Errorf("hold the lease of thread %q: %w", threadID, connErr(err))
	}
	return l, nil
}

// errRaced: another holder inserted a lease row between reading and
// inserting.
var errRaced = errors.New("raced")

// leaseOf reads the lease of thread; ok is false when there is none.
func (s *Saver) leaseOf(ctx context.Context, thread string) (checkpoint.Lease, bool, error) {
	l := checkpoint.Lease{ThreadID: thread}
	err := s.pool.QueryRow(ctx, `SELECT owner, token, acquired_at, expires_at, stop_by, expires_at <= clock_timestamp(), holder
		FROM weft_leases WHERE thread_id = $1`, thread).Scan(&l.Owner, &l.Token, &l.Since, &l.Expires, &l.StopRequested, &l.Expired, &l.Holder)
	if errors.Is(err, pgx.ErrNoRows) {
		return checkpoint.Lease{}, false, nil
	}
	if err != nil {
		return checkpoint.Lease{}, false, connErr(err)
	}
	return l, true, nil
}

// RenewLease extends l to ttl from now; see checkpoint.Leaser.
func (s *Saver) RenewLease(ctx context.Context, l checkpoint.Lease, ttl time.Duration) (checkpoint.Lease, error) {
	if err := s.writable(ctx); err != nil {
		return checkpoint.Lease{}, err
	}
	out := checkpoint.Lease{ThreadID: l.ThreadID, Token: l.Token}
	err := s.pool.QueryRow(ctx, `UPDATE weft_leases SET expires_at = clock_timestamp() + make_interval(secs => $3)
		WHERE thread_id = $1 AND token = $2
		RETURNING owner, acquired_at, expires_at, stop_by`, l.ThreadID, l.Token, leaseSeconds(ttl)).
		Scan(&out.Owner, &out.Since, &out.Expires, &out.StopRequested)
	switch {
	case err == nil:
		return out, nil
	case !errors.Is(err, pgx.ErrNoRows):
		return checkpoint.Lease{}, fmt.Errorf("renew the lease of thread %q: %w", l.ThreadID, connErr(err))
	}
	cur, ok, err := s.leaseOf(ctx, l.ThreadID)
	if err != nil {
		return checkpoint.Lease{}, fmt.Errorf("renew the lease of thread %q: %w", l.ThreadID, err)
	}
	return checkpoint.Lease{}, leaseerr.Lost(l.ThreadID, cur, ok)
}

// ReleaseLease ends l; see checkpoint.Leaser.
func (s *Saver) ReleaseLease(ctx context.Context, l checkpoint.Lease) error {
	if err := s.writable(ctx); err != nil {
		return err
	}
	q, args := `DELETE FROM weft_leases WHERE thread_id = $1 AND token = $2`, []any{l.ThreadID, l.Token}
	if b := l.TookOver; b != nil {
		// Put the dead run's lease back: workers still continue it.
		q = `UPDATE weft_leases SET owner = $3, token = $4, acquired_at = $5, expires_at = $6, stop_by = $7, holder = $8, hold = false, dead = ''
			WHERE thread_id = $1 AND token = $2`
		args = append(args, b.Owner, b.Token, b.Since, b.Expires, b.StopRequested, b.Holder)
	}
	if _, err := s.pool.Exec(ctx, q, args...); err != nil {
		return fmt.Errorf("release the lease of thread %q: %w", l.ThreadID, connErr(err))
	}
	return nil
}

// StopLease asks the holder of threadID's live lease to stop; see
// checkpoint.Leaser.
func (s *Saver) StopLease(ctx context.Context, threadID, by string) (checkpoint.Lease, error) {
	if err := s.writable(ctx); err != nil {
		return checkpoint.Lease{}, err
	}
	if by == "" {
		by = "someone"
	}
	out := checkpoint.Lease{ThreadID: threadID}
	err := s.pool.QueryRow(ctx, `UPDATE weft_leases SET stop_by = $2
		WHERE thread_id = $1 AND expires_at > clock_timestamp()
		RETURNING owner, token, acquired_at, expires_at, stop_by, holder`, threadID, by).
		Scan(&out.Owner, &out.Token, &out.Since, &out.Expires, &out.StopRequested, &out.Holder)
	switch {
	case errors.Is(err, pgx.ErrNoRows), err == nil && proc.Gone(out.Holder):
		// (A holder that ended keeps the request: harmless, a takeover
		// clears it.)
		return checkpoint.Lease{}, fmt.Errorf("thread %q has no run to stop: %w", threadID, checkpoint.ErrNotFound)
	case err != nil:
		return checkpoint.Lease{}, fmt.Errorf("stop the run of thread %q: %w", threadID, connErr(err))
	}
	return out, nil
}

// Leases returns the leases of threadIDs, or of every thread; see
// checkpoint.Leaser.
func (s *Saver) Leases(ctx context.Context, threadIDs ...string) ([]checkpoint.Lease, error) {
	q := `SELECT thread_id, owner, token, acquired_at, expires_at, stop_by, expires_at <= clock_timestamp(), holder, hold, dead FROM weft_leases`
	var args []any
	if len(threadIDs) > 0 {
		q += ` WHERE thread_id = ANY($1)`
		args = append(args, threadIDs)
	}
	rows, err := s.pool.Query(ctx, q+` ORDER BY thread_id`, args...)
	if err != nil {
		return nil, fmt.Errorf("read the leases: %w", connErr(err))
	}
	ended := proc.EndedMemo()
	all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (checkpoint.Lease, error) {
		var l checkpoint.Lease
		var hold bool
		var dead string
		err := r.Scan(&l.ThreadID, &l.Owner, &l.Token, &l.Since, &l.Expires, &l.StopRequested, &l.Expired, &l.Holder, &hold, &dead)
		if err != nil {
			return l, err
		}
		if !l.Expired {
			l.Ended = ended(l.Holder)
			l.Expired = l.Ended != ""
		}
		if hold && l.Expired {
			// A hold whose holder was killed was no run: what it stands
			// for is the dead run it took over, if any (ThreadID "": none).
			d, err := proc.DecodeDead(l.ThreadID, dead)
			if err != nil || d == nil {
				return checkpoint.Lease{}, err
			}
			l = *d
		}
		return l, nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the leases: %w", connErr(err))
	}
	out := all[:0]
	for _, l := range all {
		if l.ThreadID != "" {
			out = append(out, l)
		}
	}
	return out, nil
}
