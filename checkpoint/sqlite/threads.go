package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/internal/record"
)

var _ checkpoint.ThreadSearcher = (*Saver)(nil)

// threadPageSQL returns the query of a page of threads and its arguments
// (limit -1 for none). It lists threads at a cost of a few primary-key
// seeks per thread, never a scan of the checkpoints: it skips from each
// thread id to the next (min over thread_id > previous), takes each
// thread's newest root checkpoint (the last in its key range), keeps those
// the search and the filter match, sorts them, and only for the page's
// threads reads the newest checkpoint's row again and counts root
// checkpoints.
//
// The filter is tested on the metadata of the row the newest-checkpoint
// seek lands on, in that one seek, and heads is materialized so that it is
// tested once per thread. Doing a thread's seeks together matters on a
// large store: a first pass of max() seeks and a second of lookups of
// those rows made the first page of 10,000 threads twice as slow, the
// second pass finding their pages gone from SQLite's cache.
func threadPageSQL(q checkpoint.ThreadQuery, conds []record.Cond, limit int) (string, []any) {
	var b strings.Builder
	var args []any
	b.WriteString(`WITH RECURSIVE t(id) AS (
  SELECT min(thread_id) FROM checkpoints
  UNION ALL
  SELECT (SELECT min(thread_id) FROM checkpoints WHERE thread_id > t.id) FROM t WHERE t.id IS NOT NULL),
heads AS MATERIALIZED (
  SELECT id, `)
	if len(conds) == 0 {
		b.WriteString("(SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = t.id AND checkpoint_ns = '')")
	} else {
		// The newest root checkpoint's id if its metadata matches, else
		// NULL. Metadata that is not JSON matches every filter: the JSON
		// functions would fail the whole page on it, and the thread, listed
		// with ThreadInfo.Err, must not hide whatever the filter.
		b.WriteString(`(SELECT checkpoint_id FROM (SELECT checkpoint_id, metadata FROM checkpoints
    WHERE thread_id = t.id AND checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1)
    WHERE CASE WHEN NOT json_valid(metadata) THEN 1 ELSE `)
		for i, c := range conds {
			clause, a := condSQL(c)
			if i > 0 {
				b.WriteString(" AND ")
			}
			b.WriteString(clause)
			args = append(args, a...)
		}
		b.WriteString(" END)")
	}
	b.WriteString(` AS latest
  FROM t WHERE id IS NOT NULL`)
	if q.Search != "" {
		b.WriteString(" AND instr(lower(id), lower(?)) > 0")
		args = append(args, q.Search)
	}
	b.WriteString(`),
page AS (
  SELECT id, latest FROM heads WHERE latest IS NOT NULL`)
	if q.After != nil {
		b.WriteString(" AND (latest < ? OR (latest = ? AND id > ?))")
		args = append(args, q.After.Latest.CheckpointID, q.After.Latest.CheckpointID, q.After.ThreadID)
	}
	b.WriteString(`
  ORDER BY latest DESC, id LIMIT ?)
SELECT p.id, p.latest, c.ts, c.metadata,
  (SELECT count(*) FROM checkpoints WHERE thread_id = p.id AND checkpoint_ns = '')
FROM page AS p JOIN checkpoints AS c ON c.thread_id = p.id AND c.checkpoint_ns = '' AND c.checkpoint_id = p.latest
ORDER BY p.latest DESC, p.id`)
	args = append(args, limit)
	return b.String(), args
}

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
	conds, err := record.CompileFilter(q.Filter)
	if err != nil {
		return checkpoint.ThreadPage{}, fmt.Errorf("list threads in %s: %w", s.path, err)
	}
	query, args := threadPageSQL(q, conds, limit)
	err = s.read(ctx, func(ctx context.Context, tx *sql.Tx) error {
		st, err := s.stmt(ctx, tx, query)
		if err != nil {
			return err
		}
		rows, err := st.QueryContext(ctx, args...)
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
			s.decodeThread(&ti, ts, md)
			page.Threads = append(page.Threads, ti)
		}
		return rows.Err()
	})
	if err != nil {
		return checkpoint.ThreadPage{}, fmt.Errorf("list threads (search %q, filter %v, limit %d) in %s: %w", q.Search, q.Filter, q.Limit, s.path, err)
	}
	if q.Limit > 0 && len(page.Threads) > q.Limit {
		page.Threads, page.More = page.Threads[:q.Limit], true
	}
	return page, nil
}
