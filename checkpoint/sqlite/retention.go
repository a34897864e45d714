package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/internal/record"
)

var (
	_ checkpoint.PolicyPruner = (*Saver)(nil)
	_ checkpoint.Vacuumer     = (*Saver)(nil)
)

// PruneBy deletes what p selects (checkpoint.PolicyPruner): each thread in
// an IMMEDIATE transaction of its own, so another process's writer waits
// for one thread at most and readers never wait (WAL). Values that a kept
// checkpoint still refers to stay, whoever stored them.
func (s *Saver) PruneBy(ctx context.Context, p checkpoint.PrunePolicy) (checkpoint.PruneResult, error) {
	var res checkpoint.PruneResult
	if p.KeepLatest < 0 {
		return res, fmt.Errorf("prune %s: KeepLatest %d is negative", s.path, p.KeepLatest)
	}
	if err := s.writable(ctx); err != nil {
		return res, err
	}
	threads := p.Threads
	if p.AllThreads {
		var err error
		if threads, err = s.threadIDs(ctx); err != nil {
			return res, fmt.Errorf("prune %s: %w", s.path, err)
		}
	}
	var cutoff any // NULL: any age
	if !p.OlderThan.IsZero() {
		cutoff = record.FormatTS(p.OlderThan)
	}
	for i, tid := range threads {
		if tid == "" {
			return res, fmt.Errorf("prune %s: %w", s.path, checkpoint.ErrNoThread)
		}
		var one checkpoint.PruneResult
		err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
			var err error
			one, err = pruneThread(ctx, tx, tid, p.KeepLatest, cutoff)
			return err
		})
		if err != nil {
			return res, fmt.Errorf("prune thread %q in %s (%s): %w", tid, s.path, describePolicy(p), err)
		}
		res.Checkpoints += one.Checkpoints
		res.Values += one.Values
		res.Writes += one.Writes
		res.Bytes = res.Bytes.Add(one.Bytes)
		if one.Checkpoints > 0 {
			res.Threads++
		}
		if p.Progress != nil {
			p.Progress(i+1, len(threads))
		}
	}
	return res, nil
}

// describePolicy says what a policy keeps, for errors.
func describePolicy(p checkpoint.PrunePolicy) string {
	d := fmt.Sprintf("keeping the newest %d per namespace", p.KeepLatest)
	if !p.OlderThan.IsZero() {
		d += " and everything since " + p.OlderThan.UTC().Format(time.RFC3339)
	}
	return d
}

// pruneThread deletes, in tx, the checkpoints of thread past the keep
// newest of each namespace and older than cutoff (NULL: any age), then
// the writes of deleted checkpoints and the values no remaining checkpoint
// refers to, and returns what went.
func pruneThread(ctx context.Context, tx *sql.Tx, thread string, keep int, cutoff any) (checkpoint.PruneResult, error) {
	var res checkpoint.PruneResult
	deleted := func(q string, args []any, n *int64, b *int64) error {
		return scanRows(ctx, tx, q, args, func(sc func(...any) error) error {
			var size int64
			if err := sc(&size); err != nil {
				return err
			}
			*n++
			*b += size
			return nil
		})
	}
	if err := deleted(`DELETE FROM checkpoints WHERE thread_id = ?1 AND (checkpoint_ns, checkpoint_id) IN (
  SELECT checkpoint_ns, checkpoint_id FROM (
    SELECT checkpoint_ns, checkpoint_id, ts, row_number() OVER (PARTITION BY checkpoint_ns ORDER BY checkpoint_id DESC) AS n
    FROM checkpoints WHERE thread_id = ?1)
  WHERE n > ?2 AND (?3 IS NULL OR ts < ?3))
RETURNING `+sqlHeaderBytes, []any{thread, keep, cutoff}, &res.Checkpoints, &res.Bytes.Headers); err != nil {
		return res, err
	}
	if res.Checkpoints == 0 {
		return res, nil
	}
	if err := deleted(`DELETE FROM writes WHERE thread_id = ?1 AND NOT EXISTS (
  SELECT 1 FROM checkpoints AS c WHERE c.thread_id = ?1
   AND c.checkpoint_ns = writes.checkpoint_ns AND c.checkpoint_id = writes.checkpoint_id)
RETURNING ifnull(length(value), 0)`, []any{thread}, &res.Writes, &res.Bytes.Writes); err != nil {
		return res, err
	}
	err := deleted(`DELETE FROM blobs WHERE thread_id = ?1
 AND (checkpoint_ns, channel, version) NOT IN (
  SELECT c.checkpoint_ns, v.key, v.value
  FROM checkpoints AS c, json_each(c.checkpoint, '$.channel_versions') AS v
  WHERE c.thread_id = ?1)
RETURNING ifnull(length(value), 0)`, []any{thread}, &res.Values, &res.Bytes.Values)
	return res, err
}

// threadIDs returns every thread id with a checkpoint, by skipping from
// one to the next in the primary key (a seek per thread, not a scan).
func (s *Saver) threadIDs(ctx context.Context) ([]string, error) {
	var out []string
	err := s.read(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return scanRows(ctx, tx, `WITH RECURSIVE t(id) AS (
  SELECT min(thread_id) FROM checkpoints
  UNION ALL
  SELECT (SELECT min(thread_id) FROM checkpoints WHERE thread_id > t.id) FROM t WHERE t.id IS NOT NULL)
SELECT id FROM t WHERE id IS NOT NULL`, nil, func(sc func(...any) error) error {
			var id string
			if err := sc(&id); err != nil {
				return err
			}
			out = append(out, id)
			return nil
		})
	})
	return out, err
}

// PruneOlderThan deletes, in every thread and namespace, the checkpoints
// written more than age ago, except the newest of each (so every thread
// can still be resumed), with their writes and the values nothing refers
// to any more, and returns how many checkpoints it deleted. A negative age
// is an error. It is PruneBy with KeepLatest 1 for every thread.
func (s *Saver) PruneOlderThan(ctx context.Context, age time.Duration) (int, error) {
	if age < 0 {
		return 0, fmt.Errorf("prune checkpoints older than %v: the age is negative", age)
	}
	res, err := s.PruneBy(ctx, checkpoint.PrunePolicy{AllThreads: true, KeepLatest: 1, OlderThan: time.Now().Add(-age)})
	return int(res.Checkpoints), err
}

// vacuumPoll is how often Vacuum reports progress.
var vacuumPoll = 100 * time.Millisecond

// Vacuum rebuilds the file without its free pages (checkpoint.Vacuumer):
// SQLite's VACUUM, then a checkpoint that truncates the write-ahead log
// VACUUM filled. Readers in other connections and processes keep reading
// the file as it was until it commits; writers wait (up to the busy
// timeout, then fail). Progress reports the pages written to the log
// against the pages in use: VACUUM has no progress of its own to report,
// and in WAL mode it writes every page it keeps to the log. opts.Full is
// ignored: VACUUM always rewrites the whole file.
func (s *Saver) Vacuum(ctx context.Context, opts checkpoint.VacuumOptions) (checkpoint.VacuumResult, error) {
	start := time.Now()
	var res checkpoint.VacuumResult
	if err := s.writable(ctx); err != nil {
		return res, err
	}
	var pages, free, psize int64
	err := s.read(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for _, p := range []struct {
			q string
			v *int64
		}{{"PRAGMA page_count", &pages}, {"PRAGMA freelist_count", &free}, {"PRAGMA page_size", &psize}} {
			if err := tx.QueryRowContext(ctx, p.q).Scan(p.v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("vacuum %s: %w", s.path, err)
	}
	res.BytesBefore = s.fileBytes(pages * psize)
	total := (pages - free) * psize
	tell := func(phase string, done int64) {
		if opts.Progress != nil {
			opts.Progress(checkpoint.VacuumProgress{Phase: phase, Done: min(done, total), Total: total})
		}
	}
	tell("rewriting", 0)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	if opts.Progress != nil {
		wg.Go(func() {
			t := time.NewTicker(vacuumPoll)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					if fi, err := os.Stat(s.path + "-wal"); err == nil {
						tell("rewriting", fi.Size())
					}
				}
			}
		})
	}
	conn, err := s.w.Conn(ctx)
	if err == nil {
		_, err = conn.ExecContext(ctx, "VACUUM")
		if err == nil {
			// Move the rewritten pages into the file and empty the log;
			// it waits for readers of older pages (busy timeout).
			tell("checkpointing the log", total)
			var busy, logged, moved int
			err = conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logged, &moved)
			if err == nil && busy != 0 {
				err = fmt.Errorf("the log could not be emptied: another connection is reading (%d of %d pages moved); the space is given back once it is", moved, logged)
			}
		}
		conn.Close()
	}
	close(stop)
	wg.Wait()
	if err != nil {
		err = s.mapErr(err)
		if strings.Contains(err.Error(), "SQL statements in progress") {
			err = fmt.Errorf("%w (another statement of this process is still reading)", err)
		}
		return res, fmt.Errorf("vacuum %s: %w", s.path, err)
	}
	s.checked.Store(0) // the file is the same one; check it at the next write
	if fi, err := os.Stat(s.path); err == nil {
		res.BytesAfter = fi.Size()
	}
	if fi, err := os.Stat(s.path + "-wal"); err == nil {
		res.BytesAfter += fi.Size()
	}
	res.Reclaimed = max(0, res.BytesBefore-res.BytesAfter)
	res.Took = time.Since(start)
	tell("done", total)
	return res, nil
}
