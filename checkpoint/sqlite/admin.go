package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/internal/record"
)

// ListThreads returns the threads that have root-namespace checkpoints,
// newest first by their latest root checkpoint (ties by thread id); limit 0
// (or less) means no limit.
func (s *Saver) ListThreads(ctx context.Context, limit int) ([]checkpoint.ThreadInfo, error) {
	if limit <= 0 {
		limit = -1
	}
	var out []checkpoint.ThreadInfo
	err := s.read(ctx, func(ctx context.Context, tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT c.thread_id, c.checkpoint_id, c.ts, c.metadata, g.n
FROM (SELECT thread_id, max(checkpoint_id) AS latest, count(*) AS n
      FROM checkpoints WHERE checkpoint_ns = '' GROUP BY thread_id) AS g
JOIN checkpoints AS c ON c.thread_id = g.thread_id AND c.checkpoint_ns = '' AND c.checkpoint_id = g.latest
ORDER BY c.checkpoint_id DESC, c.thread_id
LIMIT ?`, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		var md sql.RawBytes // reused from row to row by Scan
		for rows.Next() {
			var ti checkpoint.ThreadInfo
			var ts string
			if err := rows.Scan(&ti.ThreadID, &ti.Latest.CheckpointID, &ts, &md, &ti.Checkpoints); err != nil {
				return err
			}
			s.decodeThread(&ti, ts, md)
			out = append(out, ti)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("list threads in %s: %w", s.path, err)
	}
	return out, nil
}

// Stats counts threads (with at least one checkpoint), checkpoints, writes
// and stored values; Bytes is the size of the database file plus its
// write-ahead log on disk.
func (s *Saver) Stats(ctx context.Context) (checkpoint.Stats, error) {
	var st checkpoint.Stats
	var pages, pageSize int64
	err := s.read(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT
 (SELECT count(DISTINCT thread_id) FROM checkpoints),
 (SELECT count(*) FROM checkpoints),
 (SELECT count(*) FROM writes),
 (SELECT count(*) FROM blobs)`).Scan(&st.Threads, &st.Checkpoints, &st.Writes, &st.Blobs); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, "PRAGMA page_size").Scan(&pageSize)
	})
	if err != nil {
		return st, fmt.Errorf("stats of %s: %w", s.path, err)
	}
	st.Bytes = pages * pageSize
	if fi, err := os.Stat(s.path); err == nil && fi.Size() > st.Bytes {
		st.Bytes = fi.Size()
	}
	if fi, err := os.Stat(s.path + "-wal"); err == nil {
		st.Bytes += fi.Size()
	}
	return st, nil
}

// decodeThread fills the timestamp and metadata of a thread listing's row
// from their stored forms. A damaged one marks only this thread (ti.Err
// names the thread, checkpoint and store, and says what is wrong); the
// listing goes on.
func (s *Saver) decodeThread(ti *checkpoint.ThreadInfo, ts string, md []byte) {
	ti.Latest.ThreadID = ti.ThreadID
	var errs []error
	var err error
	if ti.UpdatedAt, err = record.ParseTS(ts); err != nil {
		errs = append(errs, err)
	}
	if ti.LatestMeta, err = record.DecodeMetadata(md); err != nil {
		ti.LatestMeta = checkpoint.Metadata{}
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		ti.Err = fmt.Errorf("thread %q latest checkpoint %q in %s: %w", ti.ThreadID, ti.Latest.CheckpointID, s.path, errors.Join(errs...))
	}
}
