package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/internal/record"
)

var _ checkpoint.ThreadSearcher = (*Saver)(nil)

// sqlThreadPage lists a page of threads at a cost of a few primary-key
// seeks per thread, never a scan of the checkpoints: it skips from each
// thread id to the next (min over thread_id > previous), takes each
// thread's newest root checkpoint (max in its key range), sorts those, and
// only for the page's threads reads the newest checkpoint's row and counts
// root checkpoints. ?1 is the search text (empty for none), ?2 and ?3 the
// cursor's checkpoint id and thread id (NULL for none), ?4 the limit (-1
// for none).
const sqlThreadPage = `WITH RECURSIVE t(id) AS (
  SELECT min(thread_id) FROM checkpoints
  UNION ALL
  SELECT (SELECT min(thread_id) FROM checkpoints WHERE thread_id > t.id) FROM t WHERE t.id IS NOT NULL),
heads AS (
  SELECT id, (SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = t.id AND checkpoint_ns = '') AS latest
  FROM t WHERE id IS NOT NULL AND (?1 = '' OR instr(lower(id), lower(?1)) > 0)),
page AS (
  SELECT id, latest FROM heads
  WHERE latest IS NOT NULL AND (?2 IS NULL OR latest < ?2 OR (latest = ?2 AND id > ?3))
  ORDER BY latest DESC, id LIMIT ?4)
SELECT p.id, p.latest, c.ts, c.metadata,
  (SELECT count(*) FROM checkpoints WHERE thread_id = p.id AND checkpoint_ns = '')
FROM page AS p JOIN checkpoints AS c ON c.thread_id = p.id AND c.checkpoint_ns = '' AND c.checkpoint_id = p.latest
ORDER BY p.latest DESC, p.id`

// SearchThreads lists a page of threads (checkpoint.ThreadSearcher), in
// ListThreads' order. Its cost grows with the number of threads (a few
// index seeks each) and the page's checkpoints, not with the store's size:
// the first page of 10,000 threads takes a fraction of the time listing
// them all does.
func (s *Saver) SearchThreads(ctx context.Context, q checkpoint.ThreadQuery) (checkpoint.ThreadPage, error) {
	page := checkpoint.ThreadPage{Threads: []checkpoint.ThreadInfo{}}
	limit := -1
	if q.Limit > 0 {
		limit = q.Limit + 1 // one more tells whether another page follows
	}
	var afterID, afterThread any
	if q.After != nil {
		afterID, afterThread = q.After.Latest.CheckpointID, q.After.ThreadID
	}
	err := s.read(ctx, func(ctx context.Context, tx *sql.Tx) error {
		st, err := s.stmt(ctx, tx, sqlThreadPage)
		if err != nil {
			return err
		}
		rows, err := st.QueryContext(ctx, q.Search, afterID, afterThread, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		var md sql.RawBytes
		var ts string
		for rows.Next() {
			var ti checkpoint.ThreadInfo
			if err := rows.Scan(&ti.ThreadID, &ti.Latest.CheckpointID, &ts, &md, &ti.Checkpoints); err != nil {
				return err
			}
			ti.Latest.ThreadID = ti.ThreadID
			if ti.UpdatedAt, err = record.ParseTS(ts); err != nil {
				return fmt.Errorf("thread %q: %w", ti.ThreadID, err)
			}
			if ti.LatestMeta, err = record.DecodeMetadata(md); err != nil {
				return fmt.Errorf("thread %q checkpoint %q: %w", ti.ThreadID, ti.Latest.CheckpointID, err)
			}
			page.Threads = append(page.Threads, ti)
		}
		return rows.Err()
	})
	if err != nil {
		return checkpoint.ThreadPage{}, fmt.Errorf("list threads (search %q, limit %d) in %s: %w", q.Search, q.Limit, s.path, err)
	}
	if q.Limit > 0 && len(page.Threads) > q.Limit {
		page.Threads, page.More = page.Threads[:q.Limit], true
	}
	return page, nil
}
