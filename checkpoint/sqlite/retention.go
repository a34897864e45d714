package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/internal/record"
	"github.com/weftstudio/weft/checkpoint/internal/report"
)

var (
	_ checkpoint.PolicyPruner = (*Saver)(nil)
	_ checkpoint.Vacuumer     = (*Saver)(nil)
)

// PruneBy deletes what p selects (checkpoint.PolicyPruner). It finds what
// to delete in read transactions, then deletes it in IMMEDIATE
// transactions of at most pruneChunk rows each, so another process's
// writer waits for one chunk at most (tens of milliseconds; deleting a
// value stored on overflow pages reads each of them to free it) and
// readers never wait (WAL). A value goes once no checkpoint refers to it:
// checkpoints a run adds meanwhile refer to kept values or new ones, and
// each deletion checks them again. Writes to checkpoints not stored (yet)
// are left alone: another process may be about to store the checkpoint.
func (s *Saver) PruneBy(ctx context.Context, p checkpoint.PrunePolicy) (checkpoint.PruneResult, error) {
	threads, err := report.PruneThreads(ctx, p, " "+s.path, s.writable, s.threadIDs)
	if err != nil {
		return checkpoint.PruneResult{}, err
	}
	var cutoff any // NULL: any age
	if !p.OlderThan.IsZero() {
		cutoff = record.FormatTS(p.OlderThan)
	}
	return report.PruneEach(ctx, p, threads, " in "+s.path+" ("+describePolicy(p)+")", func(tid string) (checkpoint.PruneResult, error) {
		return s.pruneThread(ctx, tid, p.KeepLatest, cutoff)
	})
}

// pruneChunk is the most checkpoints, or values, one transaction of a
// prune deletes.
var pruneChunk = 1000

// describePolicy says what a policy keeps, for errors.
func describePolicy(p checkpoint.PrunePolicy) string {
	d := fmt.Sprintf("keeping the newest %d per namespace", p.KeepLatest)
	if !p.OlderThan.IsZero() {
		d += " and everything since " + p.OlderThan.UTC().Format(time.RFC3339)
	}
	return d
}

// pruneThread deletes the checkpoints of thread past the keep newest of
// each namespace and older than cutoff (NULL: any age), with their writes,
// then the values no remaining checkpoint refers to, and returns what went
// (also when it fails part way: what was deleted until then).
func (s *Saver) pruneThread(ctx context.Context, thread string, keep int, cutoff any) (checkpoint.PruneResult, error) {
	var res checkpoint.PruneResult
	victims := map[string][]string{} // namespace → checkpoint ids
	var nss []string
	var newest string // the thread's newest checkpoint id when looked at
	err := s.read(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT ifnull(max(checkpoint_id), '') FROM checkpoints WHERE thread_id = ?`, thread).Scan(&newest); err != nil {
			return err
		}
		return scanRows(ctx, tx, `SELECT checkpoint_ns, checkpoint_id FROM (
  SELECT checkpoint_ns, checkpoint_id, ts, row_number() OVER (PARTITION BY checkpoint_ns ORDER BY checkpoint_id DESC) AS n
  FROM checkpoints WHERE thread_id = ?1)
WHERE n > ?2 AND (?3 IS NULL OR ts < ?3)`, []any{thread, keep, cutoff}, func(sc func(...any) error) error {
			var ns, id string
			if err := sc(&ns, &id); err != nil {
				return err
			}
			if victims[ns] == nil {
				nss = append(nss, ns)
			}
			victims[ns] = append(victims[ns], id)
			return nil
		})
	})
	if err != nil || len(nss) == 0 {
		return res, err
	}
	deleted := func(tx *sql.Tx, q string, args []any, n, b *int64) error {
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
	for _, ns := range nss {
		ids := victims[ns]
		for len(ids) > 0 {
			chunk := ids[:min(len(ids), pruneChunk)]
			ids = ids[len(chunk):]
			list, _ := json.Marshal(chunk)
			err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
				args := []any{thread, ns, string(list)}
				if err := deleted(tx, `DELETE FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = ?2
 AND checkpoint_id IN (SELECT value FROM json_each(?3))
RETURNING `+sqlHeaderBytes, args, &res.Checkpoints, &res.Bytes.Headers); err != nil {
					return err
				}
				return deleted(tx, `DELETE FROM writes WHERE thread_id = ?1 AND checkpoint_ns = ?2
 AND checkpoint_id IN (SELECT value FROM json_each(?3))
RETURNING ifnull(length(value), 0)`, args, &res.Writes, &res.Bytes.Writes)
			})
			if err != nil {
				return res, err
			}
		}
		if err := s.pruneValues(ctx, thread, ns, newest, &res); err != nil {
			return res, err
		}
	}
	return res, nil
}

// pruneValues deletes the values of thread and ns that no checkpoint refers
// to, pruneChunk at a time. newest is the thread's newest checkpoint id
// when the prune began: each deletion checks again that no checkpoint put
// since refers to the value.
func (s *Saver) pruneValues(ctx context.Context, thread, ns, newest string, res *checkpoint.PruneResult) error {
	type key struct {
		channel string
		version int64
	}
	used := map[key]bool{}
	var unused [][2]any
	err := s.read(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := scanRows(ctx, tx, `SELECT v.key, v.value FROM checkpoints AS c, json_each(c.checkpoint, '$.channel_versions') AS v
WHERE c.thread_id = ?1 AND c.checkpoint_ns = ?2`, []any{thread, ns}, func(sc func(...any) error) error {
			var k key
			if err := sc(&k.channel, &k.version); err != nil {
				return err
			}
			used[k] = true
			return nil
		}); err != nil {
			return err
		}
		return scanRows(ctx, tx, `SELECT channel, version FROM blobs WHERE thread_id = ?1 AND checkpoint_ns = ?2`, []any{thread, ns}, func(sc func(...any) error) error {
			var k key
			if err := sc(&k.channel, &k.version); err != nil {
				return err
			}
			if !used[k] {
				unused = append(unused, [2]any{k.channel, k.version})
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	for len(unused) > 0 {
		chunk := unused[:min(len(unused), pruneChunk)]
		unused = unused[len(chunk):]
		list, _ := json.Marshal(chunk)
		err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
			return scanRows(ctx, tx, `DELETE FROM blobs WHERE thread_id = ?1 AND checkpoint_ns = ?2
 AND (channel, version) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?3))
 AND NOT EXISTS (SELECT 1 FROM checkpoints AS c, json_each(c.checkpoint, '$.channel_versions') AS v
  WHERE c.thread_id = ?1 AND c.checkpoint_ns = ?2 AND c.checkpoint_id > ?4 AND v.key = blobs.channel AND v.value = blobs.version)
RETURNING ifnull(length(value), 0)`, []any{thread, ns, string(list), newest}, func(sc func(...any) error) error {
				var size int64
				if err := sc(&size); err != nil {
					return err
				}
				res.Values++
				res.Bytes.Values += size
				return nil
			})
		})
		if err != nil {
			return err
		}
	}
	return nil
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
		var err error
		pages, free, psize, err = pageCounts(ctx, tx)
		return err
	})
	if err != nil {
		return res, fmt.Errorf("vacuum %s: %w", s.path, err)
	}
	res.BytesBefore = s.fileBytes(pages * psize)
	total := (pages - free) * psize
	// The log's size is polled by a goroutine while this one moves on to
	// the next phase: one lock keeps calls of Progress one at a time, and
	// a poll that comes after the rewrite never reports it again.
	var progress struct {
		sync.Mutex
		phase string
	}
	tell := func(phase string, done int64) {
		if opts.Progress == nil {
			return
		}
		progress.Lock()
		defer progress.Unlock()
		if phase == "rewriting" && progress.phase != "" && progress.phase != phase {
			return
		}
		progress.phase = phase
		opts.Progress(checkpoint.VacuumProgress{Phase: phase, Done: min(done, total), Total: total})
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
			// A background checkpoint, this process's or another's
			// (walCheckpointer), refuses this one (busy) while it runs; it
			// is short, so try again for a while.
			for deadline := time.Now().Add(2 * time.Second); ; {
				err = conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logged, &moved)
				if err != nil || busy == 0 || time.Now().After(deadline) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
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
