package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/internal/leaseerr"
	"github.com/weftstudio/weft/checkpoint/internal/proc"
)

var _ checkpoint.Leaser = (*Saver)(nil)

// Leases live in the table leases (migrations/0002_leases.sql), one row per
// thread, written in IMMEDIATE transactions like checkpoints, so that of
// two processes claiming a thread at once exactly one gets it. Times are
// this machine's clock in Unix milliseconds: every process sharing a SQLite
// file runs on one machine.

// now is the leases' clock; tests may replace it.
var now = time.Now

const (
	// sqlAcquireLease takes thread ?1's lease, or an expired one over (at
	// time ?4); a live holder's row is left alone and no row changes.
	sqlAcquireLease = `INSERT INTO leases (thread_id, owner, token, acquired_at, expires_at, stop_by, holder) VALUES (?1, ?2, ?3, ?4, ?5, '', ?6)
 ON CONFLICT (thread_id) DO UPDATE SET owner = excluded.owner, token = excluded.token,
  acquired_at = excluded.acquired_at, expires_at = excluded.expires_at, stop_by = '', holder = excluded.holder, hold = 0, dead = ''
 WHERE leases.expires_at <= ?4`
	// sqlTakeOverLease takes over lease ?7 of thread ?1, whose holder ended.
	sqlTakeOverLease = `UPDATE leases SET owner = ?2, token = ?3, acquired_at = ?4, expires_at = ?5, stop_by = '', holder = ?6, hold = 0, dead = ''
 WHERE thread_id = ?1 AND token = ?7`
	sqlReleaseLease = `DELETE FROM leases WHERE thread_id = ? AND token = ?`
)

func leaseTTL(ttl time.Duration) time.Duration {
	if ttl <= 0 {
		return checkpoint.DefaultLeaseTTL
	}
	return ttl
}

func ms(t time.Time) int64 { return t.UnixMilli() }

// leaseRow reads the lease of thread in tx; ok is false when there is none.
func leaseRow(ctx context.Context, tx *sql.Tx, thread string) (l checkpoint.Lease, ok bool, err error) {
	var since, expires int64
	err = tx.QueryRowContext(ctx, `SELECT owner, token, acquired_at, expires_at, stop_by, holder FROM leases WHERE thread_id = ?`, thread).
		Scan(&l.Owner, &l.Token, &since, &expires, &l.StopRequested, &l.Holder)
	if errors.Is(err, sql.ErrNoRows) {
		return checkpoint.Lease{}, false, nil
	}
	if err != nil {
		return checkpoint.Lease{}, false, err
	}
	l.ThreadID, l.Since, l.Expires = thread, time.UnixMilli(since), time.UnixMilli(expires)
	return l, true, nil
}

// AcquireLease claims threadID for owner for ttl; see checkpoint.Leaser.
func (s *Saver) AcquireLease(ctx context.Context, threadID, owner string, ttl time.Duration) (checkpoint.Lease, error) {
	if threadID == "" {
		return checkpoint.Lease{}, fmt.Errorf("acquire lease: %w", checkpoint.ErrNoThread)
	}
	t := now()
	out := checkpoint.Lease{ThreadID: threadID, Owner: owner, Token: checkpoint.NewID(), Holder: proc.Of(ctx),
		Since: time.UnixMilli(ms(t)), Expires: time.UnixMilli(ms(t.Add(leaseTTL(ttl))))}
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.StmtContext(ctx, s.stmts.acquireLease).ExecContext(ctx, threadID, owner, out.Token, ms(out.Since), ms(out.Expires), out.Holder)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n > 0 {
			return err
		}
		cur, _, err := leaseRow(ctx, tx, threadID)
		if err != nil {
			return err
		}
		if proc.Gone(cur.Holder) {
			// Its holder's process ended on this machine: no need to wait
			// for the lease to lapse.
			_, err := tx.ExecContext(ctx, sqlTakeOverLease, threadID, owner, out.Token, ms(out.Since), ms(out.Expires), out.Holder, cur.Token)
			return err
		}
		return &checkpoint.LeaseHeldError{Lease: cur}
	})
	if errors.Is(err, checkpoint.ErrLeaseHeld) {
		return checkpoint.Lease{}, err
	}
	if err != nil {
		return checkpoint.Lease{}, fmt.Errorf("acquire the lease of thread %q in %s: %w", threadID, s.path, err)
	}
	return out, nil
}

// HoldLease claims threadID for work that is not a run, keeping a lapsed
// lease it takes over for ReleaseLease to put back; see checkpoint.Leaser.
func (s *Saver) HoldLease(ctx context.Context, threadID, owner string, ttl time.Duration) (checkpoint.Lease, error) {
	if threadID == "" {
		return checkpoint.Lease{}, fmt.Errorf("hold lease: %w", checkpoint.ErrNoThread)
	}
	t := now()
	out := checkpoint.Lease{ThreadID: threadID, Owner: owner, Token: checkpoint.NewID(), Holder: proc.Of(ctx),
		Since: time.UnixMilli(ms(t)), Expires: time.UnixMilli(ms(t.Add(leaseTTL(ttl))))}
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		out.TookOver = nil // a retried transaction starts again
		cur, ok, err := leaseRow(ctx, tx, threadID)
		if err != nil {
			return err
		}
		if ok && !leaseDead(cur, t) {
			return &checkpoint.LeaseHeldError{Lease: cur}
		}
		if ok {
			var hold bool
			var dead string
			if err := tx.QueryRowContext(ctx, `SELECT hold, dead FROM leases WHERE thread_id = ?`, threadID).Scan(&hold, &dead); err != nil {
				return err
			}
			if hold { // a hold that lapsed (its holder was killed): keep the run it took over
				if out.TookOver, err = proc.DecodeDead(threadID, dead); err != nil {
					return err
				}
			} else {
				cur.Expired, cur.Ended = true, proc.Ended(cur.Holder)
				out.TookOver = &cur
			}
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO leases (thread_id, owner, token, acquired_at, expires_at, stop_by, holder, hold, dead) VALUES (?1, ?2, ?3, ?4, ?5, '', ?6, 1, ?7)
 ON CONFLICT (thread_id) DO UPDATE SET owner = excluded.owner, token = excluded.token,
  acquired_at = excluded.acquired_at, expires_at = excluded.expires_at, stop_by = '', holder = excluded.holder, hold = 1, dead = excluded.dead`,
			threadID, owner, out.Token, ms(out.Since), ms(out.Expires), out.Holder, proc.EncodeDead(out.TookOver))
		return err
	})
	if errors.Is(err, checkpoint.ErrLeaseHeld) {
		return checkpoint.Lease{}, err
	}
	if err != nil {
		return checkpoint.Lease{}, fmt.Errorf("hold the lease of thread %q in %s: %w", threadID, s.path, err)
	}
	return out, nil
}

// leaseDead reports whether l's holder can no longer be running at t: its
// lease lapsed, or its process of this machine ended.
func leaseDead(l checkpoint.Lease, t time.Time) bool {
	return !t.Before(l.Expires) || proc.Gone(l.Holder)
}

// RenewLease extends l to ttl from now; see checkpoint.Leaser.
func (s *Saver) RenewLease(ctx context.Context, l checkpoint.Lease, ttl time.Duration) (checkpoint.Lease, error) {
	var out checkpoint.Lease
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		cur, ok, err := leaseRow(ctx, tx, l.ThreadID)
		if err != nil {
			return err
		}
		if !ok || cur.Token != l.Token {
			return leaseerr.Lost(l.ThreadID, cur, ok)
		}
		cur.Expires = time.UnixMilli(ms(now().Add(leaseTTL(ttl))))
		out = cur
		_, err = tx.ExecContext(ctx, `UPDATE leases SET expires_at = ? WHERE thread_id = ? AND token = ?`, ms(cur.Expires), l.ThreadID, l.Token)
		return err
	})
	if errors.Is(err, checkpoint.ErrLeaseLost) {
		return checkpoint.Lease{}, err
	}
	if err != nil {
		return checkpoint.Lease{}, fmt.Errorf("renew the lease of thread %q in %s: %w", l.ThreadID, s.path, err)
	}
	return out, nil
}

// ReleaseLease ends l; see checkpoint.Leaser.
func (s *Saver) ReleaseLease(ctx context.Context, l checkpoint.Lease) error {
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if b := l.TookOver; b != nil {
			// Put the dead run's lease back: workers still continue it.
			_, err := tx.ExecContext(ctx, `UPDATE leases SET owner = ?, token = ?, acquired_at = ?, expires_at = ?, stop_by = ?, holder = ?, hold = 0, dead = ''
 WHERE thread_id = ? AND token = ?`, b.Owner, b.Token, ms(b.Since), ms(b.Expires), b.StopRequested, b.Holder, l.ThreadID, l.Token)
			return err
		}
		_, err := tx.StmtContext(ctx, s.stmts.releaseLease).ExecContext(ctx, l.ThreadID, l.Token)
		return err
	})
	if err != nil {
		return fmt.Errorf("release the lease of thread %q in %s: %w", l.ThreadID, s.path, err)
	}
	return nil
}

// StopLease asks the holder of threadID's live lease to stop; see
// checkpoint.Leaser.
func (s *Saver) StopLease(ctx context.Context, threadID, by string) (checkpoint.Lease, error) {
	if by == "" {
		by = "someone"
	}
	var out checkpoint.Lease
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		cur, ok, err := leaseRow(ctx, tx, threadID)
		if err != nil {
			return err
		}
		if !ok || leaseDead(cur, now()) {
			return fmt.Errorf("thread %q has no run to stop: %w", threadID, checkpoint.ErrNotFound)
		}
		cur.StopRequested = by
		out = cur
		_, err = tx.ExecContext(ctx, `UPDATE leases SET stop_by = ? WHERE thread_id = ? AND token = ?`, by, threadID, cur.Token)
		return err
	})
	if errors.Is(err, checkpoint.ErrNotFound) {
		return checkpoint.Lease{}, err
	}
	if err != nil {
		return checkpoint.Lease{}, fmt.Errorf("stop the run of thread %q in %s: %w", threadID, s.path, err)
	}
	return out, nil
}

// Leases returns the leases of threadIDs, or of every thread; see
// checkpoint.Leaser.
func (s *Saver) Leases(ctx context.Context, threadIDs ...string) ([]checkpoint.Lease, error) {
	q := `SELECT thread_id, owner, token, acquired_at, expires_at, stop_by, holder, hold, dead FROM leases`
	args := make([]any, len(threadIDs))
	if len(threadIDs) > 0 {
		q += ` WHERE thread_id IN (?` + strings.Repeat(`, ?`, len(threadIDs)-1) + `)`
		for i, id := range threadIDs {
			args[i] = id
		}
	}
	q += ` ORDER BY thread_id`
	var out []checkpoint.Lease
	err := s.read(ctx, func(ctx context.Context, tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		t, ended := now(), proc.EndedMemo()
		for rows.Next() {
			var l checkpoint.Lease
			var since, expires int64
			var hold bool
			var dead string
			if err := rows.Scan(&l.ThreadID, &l.Owner, &l.Token, &since, &expires, &l.StopRequested, &l.Holder, &hold, &dead); err != nil {
				return err
			}
			l.Since, l.Expires = time.UnixMilli(since), time.UnixMilli(expires)
			l.Expired = !t.Before(l.Expires)
			if !l.Expired {
				l.Ended = ended(l.Holder)
				l.Expired = l.Ended != ""
			}
			if hold && l.Expired {
				// A hold whose holder was killed was no run: what it
				// stands for is the dead run it took over, if any.
				d, err := proc.DecodeDead(l.ThreadID, dead)
				if err != nil {
					return err
				}
				if d == nil {
					continue
				}
				l = *d
			}
			out = append(out, l)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("read the leases in %s: %w", s.path, err)
	}
	return out, nil
}
