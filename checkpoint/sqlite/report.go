package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"sync"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/internal/record"
	"github.com/weftstudio/weft/checkpoint/internal/report"
)

var _ checkpoint.StorageReporter = (*Saver)(nil)

// sqlHeaderBytes is the stored size of a checkpoint row, as
// checkpoint.ByteCounts.Headers counts it.
const sqlHeaderBytes = `length(checkpoint_id) + ifnull(length(parent_checkpoint_id), 0) + length(ts) + length(checkpoint) + length(metadata)`

// StorageSummary describes the whole store (checkpoint.StorageReporter).
// Sizes come from SQL aggregates over lengths, which SQLite reads from the
// rows' headers without touching the values' overflow pages: one pass over
// each table in primary-key order, grouped by thread as it goes (no sort),
// the three passes in parallel, each in a read transaction of its own (so
// under concurrent writes they may disagree by what was written
// meanwhile). Deep adds a sort of every value row by channel and a walk
// of every page (dbstat).
func (s *Saver) StorageSummary(ctx context.Context, opts checkpoint.StorageOptions) (*checkpoint.StorageSummary, error) {
	opts = opts.WithDefaults()
	out := &checkpoint.StorageSummary{Engine: "sqlite"}
	var (
		tally              = report.NewTally()
		pages, free, psize int64
	)
	parts := []func(ctx context.Context, tx *sql.Tx) error{
		func(ctx context.Context, tx *sql.Tx) error {
			return scanRows(ctx, tx, `SELECT thread_id, count(*), sum(`+sqlHeaderBytes+`), min(ts), max(ts)
FROM checkpoints GROUP BY thread_id`, nil, func(sc func(...any) error) error {
				var id, first, last string
				t := &report.Lifetime{}
				if err := sc(&id, &t.Checkpoints, &t.Bytes.Headers, &first, &last); err != nil {
					return err
				}
				var err error
				if t.First, err = record.ParseTS(first); err != nil {
					return fmt.Errorf("thread %q: %w", id, err)
				}
				if t.Last, err = record.ParseTS(last); err != nil {
					return fmt.Errorf("thread %q: %w", id, err)
				}
				tally.Threads[id] = t
				return nil
			})
		},
		func(ctx context.Context, tx *sql.Tx) error {
			// max() picks the row whose bare columns (namespace, channel,
			// version) come along: each thread's largest value.
			return scanRows(ctx, tx, `SELECT thread_id, count(*), ifnull(sum(length(value)), 0), max(length(value)), checkpoint_ns, channel, version
FROM blobs GROUP BY thread_id`, nil, func(sc func(...any) error) error {
				var v checkpoint.ValueSize
				var sz report.Sizes
				var big sql.NullInt64
				if err := sc(&v.ThreadID, &sz.N, &sz.Bytes, &big, &v.NS, &v.Channel, &v.Version); err != nil {
					return err
				}
				tally.Values[v.ThreadID] = sz
				if big.Valid {
					v.Bytes = big.Int64
					tally.Largest = append(tally.Largest, v)
				}
				return nil
			})
		},
		sizesBy(`SELECT thread_id, count(*), ifnull(sum(length(value)), 0) FROM writes GROUP BY thread_id`, tally.Writes),
		func(ctx context.Context, tx *sql.Tx) error {
			var err error
			pages, free, psize, err = pageCounts(ctx, tx)
			return err
		},
	}
	if opts.Deep {
		// The lengths are taken in a subquery that is not flattened
		// (LIMIT), so the sort carries them instead of the values.
		parts = append(parts,
			sizesBy(`SELECT channel, count(*), ifnull(sum(n), 0) FROM (SELECT channel, length(value) AS n FROM blobs LIMIT -1) GROUP BY channel`, tally.ChValues),
			sizesBy(`SELECT channel, count(*), ifnull(sum(n), 0) FROM (SELECT channel, length(value) AS n FROM writes LIMIT -1) GROUP BY channel`, tally.ChWrites),
			func(ctx context.Context, tx *sql.Tx) error {
				var err error
				out.Tables, err = tableSizes(ctx, tx)
				return err
			})
	}
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	for i, part := range parts {
		wg.Go(func() { errs[i] = s.read(ctx, part) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("storage summary of %s: %w", s.path, err)
		}
	}

	tally.Summarize(out, opts)
	out.FileBytes = s.fileBytes(pages * psize)
	out.FreeBytes = free * psize
	return out, nil
}

// pageCounts returns the file's pages, its free pages and the page size.
func pageCounts(ctx context.Context, tx *sql.Tx) (pages, free, size int64, err error) {
	for _, p := range []struct {
		q string
		v *int64
	}{{"PRAGMA page_count", &pages}, {"PRAGMA freelist_count", &free}, {"PRAGMA page_size", &size}} {
		if err = tx.QueryRowContext(ctx, p.q).Scan(p.v); err != nil {
			return
		}
	}
	return
}

// fileBytes returns the size of the store's file and log on disk, at least
// pagesBytes (the file may not be written out yet).
func (s *Saver) fileBytes(pagesBytes int64) int64 {
	n := pagesBytes
	if fi, err := os.Stat(s.path); err == nil && fi.Size() > n {
		n = fi.Size()
	}
	if fi, err := os.Stat(s.path + "-wal"); err == nil {
		n += fi.Size()
	}
	return n
}

// sizesBy returns a part of a report that reads rows (key, count, bytes)
// into m.
func sizesBy(q string, m map[string]report.Sizes, args ...any) func(context.Context, *sql.Tx) error {
	return func(ctx context.Context, tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var k string
			var n, b int64
			if err := rows.Scan(&k, &n, &b); err != nil {
				return err
			}
			sz := m[k]
			sz.Add(n, b)
			m[k] = sz
		}
		return rows.Err()
	}
}

func largestValues(ctx context.Context, tx *sql.Tx, q string, args ...any) ([]checkpoint.ValueSize, error) {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []checkpoint.ValueSize
	for rows.Next() {
		var v checkpoint.ValueSize
		if err := rows.Scan(&v.ThreadID, &v.NS, &v.Channel, &v.Version, &v.Bytes); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// tableSizes reads the space of each table with its indexes from dbstat,
// largest first; nil when this SQLite lacks dbstat.
func tableSizes(ctx context.Context, tx *sql.Tx) ([]checkpoint.TableBytes, error) {
	rows, err := tx.QueryContext(ctx, `SELECT coalesce(m.tbl_name, d.name), sum(d.pgsize), sum(d.unused)
FROM dbstat AS d LEFT JOIN sqlite_schema AS m ON m.name = d.name
GROUP BY 1 ORDER BY 2 DESC, 1`)
	if err != nil {
		return nil, nil // no dbstat in this build: the summary goes without
	}
	defer rows.Close()
	var out []checkpoint.TableBytes
	for rows.Next() {
		var t checkpoint.TableBytes
		if err := rows.Scan(&t.Table, &t.Bytes, &t.Unused); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// ThreadStorage describes one thread (checkpoint.StorageReporter), in one
// read transaction that reads the thread's rows through its primary keys:
// every checkpoint row (for the highest step of its channel versions, to
// tell which values it created), and the lengths of its values and writes.
func (s *Saver) ThreadStorage(ctx context.Context, threadID string, opts checkpoint.StorageOptions) (*checkpoint.ThreadStorage, error) {
	if threadID == "" {
		return nil, fmt.Errorf("thread storage: %w", checkpoint.ErrNoThread)
	}
	opts = opts.WithDefaults()
	t := report.Thread{ID: threadID, Values: map[report.NSStep]report.Sizes{}, Writes: map[report.NSID]report.Sizes{}}
	err := s.read(ctx, func(ctx context.Context, tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT checkpoint_ns, checkpoint_id, ifnull(json_extract(metadata, '$.step'), 0), ts, `+sqlHeaderBytes+`,
 ifnull((SELECT max(value) FROM json_each(checkpoint, '$.channel_versions')), 0)
FROM checkpoints WHERE thread_id = ?`, threadID)
		if err != nil {
			return err
		}
		defer rows.Close()
		var ts sql.RawBytes
		for rows.Next() {
			var c report.Checkpoint
			var own int64
			if err := rows.Scan(&c.NS, &c.ID, &c.Step, &ts, &c.Header, &own); err != nil {
				return err
			}
			if c.TS, err = record.ParseTSBytes(ts); err != nil {
				return fmt.Errorf("checkpoint %q: %w", c.ID, err)
			}
			c.Own = checkpoint.VersionStep(own)
			t.Checkpoints = append(t.Checkpoints, c)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if len(t.Checkpoints) == 0 {
			return nil
		}
		if err := scanRows(ctx, tx, `SELECT checkpoint_ns, version >> 32, count(*), ifnull(sum(length(value)), 0)
FROM blobs WHERE thread_id = ? GROUP BY 1, 2`, []any{threadID}, func(sc func(...any) error) error {
			var k report.NSStep
			var sz report.Sizes
			if err := sc(&k.NS, &k.Step, &sz.N, &sz.Bytes); err != nil {
				return err
			}
			t.Values[k] = sz
			return nil
		}); err != nil {
			return err
		}
		if err := scanRows(ctx, tx, `SELECT checkpoint_ns, checkpoint_id, count(*), ifnull(sum(length(value)), 0)
FROM writes WHERE thread_id = ? GROUP BY 1, 2`, []any{threadID}, func(sc func(...any) error) error {
			var k report.NSID
			var sz report.Sizes
			if err := sc(&k.NS, &k.ID, &sz.N, &sz.Bytes); err != nil {
				return err
			}
			t.Writes[k] = sz
			return nil
		}); err != nil {
			return err
		}
		chValues, chWrites := map[string]report.Sizes{}, map[string]report.Sizes{}
		// Lengths are taken in subqueries that are not flattened (LIMIT),
		// so the sorts carry them instead of the values.
		if err := sizesBy(`SELECT channel, count(*), ifnull(sum(n), 0)
FROM (SELECT channel, length(value) AS n FROM blobs WHERE thread_id = ? LIMIT -1) GROUP BY channel`, chValues, threadID)(ctx, tx); err != nil {
			return err
		}
		if err := sizesBy(`SELECT channel, count(*), ifnull(sum(n), 0)
FROM (SELECT channel, length(value) AS n FROM writes WHERE thread_id = ? LIMIT -1) GROUP BY channel`, chWrites, threadID)(ctx, tx); err != nil {
			return err
		}
		t.Channels = report.Channels(chValues, chWrites)
		t.Largest, err = largestValues(ctx, tx, `SELECT * FROM (SELECT thread_id, checkpoint_ns, channel, version, length(value) AS n
FROM blobs WHERE thread_id = ? AND value IS NOT NULL LIMIT -1) ORDER BY n DESC LIMIT ?`, threadID, opts.Top)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("storage of thread %q in %s: %w", threadID, s.path, err)
	}
	out := t.Build(opts)
	if out == nil {
		return nil, fmt.Errorf("storage of thread %q in %s: the thread has no checkpoint: %w", threadID, s.path, checkpoint.ErrNotFound)
	}
	return out, nil
}

// scanRows runs q and calls row for each result row with its Scan.
func scanRows(ctx context.Context, tx *sql.Tx, q string, args []any, row func(scan func(...any) error) error) error {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := row(rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}
