package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/internal/record"
)

// DeleteThread removes every checkpoint, value and write of threadID in all
// namespaces, in one transaction. Deleting a missing thread is not an error;
// an empty threadID returns an error wrapping checkpoint.ErrNoThread. A Put
// to the thread running at the same time either commits first (and is
// deleted) or starts the thread anew.
func (s *Saver) DeleteThread(ctx context.Context, threadID string) error {
	if err := s.writable(ctx); err != nil {
		return err
	}
	if threadID == "" {
		return fmt.Errorf("delete thread: %w", checkpoint.ErrNoThread)
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// The head rows first: this waits for Puts in progress on the thread.
		for _, table := range []string{"weft_threads", "weft_checkpoints", "weft_blobs", "weft_writes"} {
			if _, err := tx.Exec(ctx, `DELETE FROM `+table+` WHERE thread_id = $1`, threadID); err != nil {
				return fmt.Errorf("%s: %w", table, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("delete thread %q: %w", threadID, connErr(err))
	}
	s.changed()
	return nil
}

// lockHeads locks the head rows of threads, in a fixed order, so that Puts
// to them wait until the transaction ends (and ones in progress finish
// first).
func lockHeads(ctx context.Context, tx pgx.Tx, threads []string) error {
	_, err := tx.Exec(ctx, `SELECT 1 FROM weft_threads WHERE thread_id = ANY($1)
		ORDER BY thread_id, checkpoint_ns FOR UPDATE`, threads)
	if err != nil {
		return fmt.Errorf("lock thread heads: %w", err)
	}
	return nil
}

// sweep deletes what the checkpoints of threads no longer reference: writes
// to missing checkpoints, values of channel versions no checkpoint has, and
// heads of namespaces left empty.
func sweep(ctx context.Context, tx pgx.Tx, threads []string) error {
	for _, q := range []string{
		`DELETE FROM weft_writes w WHERE w.thread_id = ANY($1) AND NOT EXISTS (
			SELECT 1 FROM weft_checkpoints c
			WHERE c.thread_id = w.thread_id AND c.checkpoint_ns = w.checkpoint_ns AND c.checkpoint_id = w.checkpoint_id)`,
		`DELETE FROM weft_blobs b WHERE b.thread_id = ANY($1) AND NOT EXISTS (
			SELECT 1 FROM weft_checkpoints c CROSS JOIN LATERAL jsonb_each_text(c.checkpoint->'channel_versions') v
			WHERE c.thread_id = b.thread_id AND c.checkpoint_ns = b.checkpoint_ns AND v.key = b.channel AND v.value::bigint = b.version)`,
		`DELETE FROM weft_threads t WHERE t.thread_id = ANY($1) AND NOT EXISTS (
			SELECT 1 FROM weft_checkpoints c WHERE c.thread_id = t.thread_id AND c.checkpoint_ns = t.checkpoint_ns)`,
	} {
		if _, err := tx.Exec(ctx, q, threads); err != nil {
			return fmt.Errorf("delete unreferenced rows: %w", err)
		}
	}
	return nil
}

// Prune keeps only the newest keepLatest checkpoints of each namespace of
// each given thread, with their writes and the values they reference;
// everything else of those threads goes (keepLatest 0 deletes the threads).
// Other threads are untouched; missing threads and an empty list are no-ops;
// a negative keepLatest is an error. It runs in one transaction that holds
// the threads' head locks, so it never races a Put to them.
func (s *Saver) Prune(ctx context.Context, threadIDs []string, keepLatest int) error {
	if err := s.writable(ctx); err != nil {
		return err
	}
	if keepLatest < 0 {
		return fmt.Errorf("prune threads %q: keepLatest %d is negative", threadIDs, keepLatest)
	}
	if len(threadIDs) == 0 {
		return nil
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := lockHeads(ctx, tx, threadIDs); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM weft_checkpoints c USING (
				SELECT thread_id, checkpoint_ns, checkpoint_id,
					row_number() OVER (PARTITION BY thread_id, checkpoint_ns ORDER BY checkpoint_id DESC) AS rn
				FROM weft_checkpoints WHERE thread_id = ANY($1)) r
			WHERE c.thread_id = r.thread_id AND c.checkpoint_ns = r.checkpoint_ns AND c.checkpoint_id = r.checkpoint_id AND r.rn > $2`,
			threadIDs, keepLatest); err != nil {
			return err
		}
		return sweep(ctx, tx, threadIDs)
	})
	if err != nil {
		return fmt.Errorf("prune threads %q keeping %d: %w", threadIDs, keepLatest, connErr(err))
	}
	s.changed()
	return nil
}

// PruneOlderThan deletes, in every thread and namespace, the checkpoints
// whose timestamp is more than age before now, with their writes and the
// values no remaining checkpoint references, and returns how many
// checkpoints it deleted. The newest checkpoint of each thread and namespace
// is always kept, however old, so every thread can still be resumed. A
// negative age is an error; 0 keeps only the newest checkpoints.
func (s *Saver) PruneOlderThan(ctx context.Context, age time.Duration) (deleted int, err error) {
	if err := s.writable(ctx); err != nil {
		return 0, err
	}
	if age < 0 {
		return 0, fmt.Errorf("prune checkpoints older than %v: the age is negative", age)
	}
	cutoff := time.Now().Add(-age)
	const old = `c.ts < $1 AND EXISTS (SELECT 1 FROM weft_checkpoints n
		WHERE n.thread_id = c.thread_id AND n.checkpoint_ns = c.checkpoint_ns AND n.checkpoint_id > c.checkpoint_id)`
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT DISTINCT c.thread_id FROM weft_checkpoints c WHERE `+old, cutoff)
		if err != nil {
			return err
		}
		threads, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil || len(threads) == 0 {
			return err
		}
		if err := lockHeads(ctx, tx, threads); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM weft_checkpoints c WHERE c.thread_id = ANY($2) AND `+old, cutoff, threads)
		if err != nil {
			return err
		}
		deleted = int(tag.RowsAffected())
		return sweep(ctx, tx, threads)
	})
	if err != nil {
		return 0, fmt.Errorf("prune checkpoints older than %v (before %s): %w", age, cutoff.UTC().Format(time.RFC3339), connErr(err))
	}
	s.changed()
	return deleted, nil
}

// CopyThread copies every checkpoint, value and write of srcThreadID, in all
// namespaces, to dstThreadID, keeping checkpoint ids, parents and order, in
// one repeatable-read transaction. Checkpoints and writes already in
// dstThreadID with the same ids are replaced; others are kept. A missing
// source copies nothing. Empty thread ids return an error wrapping
// checkpoint.ErrNoThread. A Put to dstThreadID committed while the copy runs
// makes it fail with a serialization error; try again.
func (s *Saver) CopyThread(ctx context.Context, srcThreadID, dstThreadID string) error {
	if err := s.writable(ctx); err != nil {
		return err
	}
	if srcThreadID == "" || dstThreadID == "" {
		return fmt.Errorf("copy thread %q to %q: %w", srcThreadID, dstThreadID, checkpoint.ErrNoThread)
	}
	if srcThreadID == dstThreadID {
		return nil
	}
	// One snapshot for every statement, so a Put to the source committing
	// meanwhile is copied whole or not at all.
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead}, func(tx pgx.Tx) error {
		for _, q := range []string{
			// The destination's heads first: this locks them.
			`INSERT INTO weft_threads (thread_id, checkpoint_ns, head_id)
				SELECT $2, checkpoint_ns, max(checkpoint_id) FROM weft_checkpoints WHERE thread_id = $1 GROUP BY checkpoint_ns
				ON CONFLICT (thread_id, checkpoint_ns) DO UPDATE SET head_id = GREATEST(weft_threads.head_id, EXCLUDED.head_id), updated_at = now()`,
			`INSERT INTO weft_blobs (thread_id, checkpoint_ns, channel, version, blob)
				SELECT $2, checkpoint_ns, channel, version, blob FROM weft_blobs WHERE thread_id = $1
				ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING`,
			`INSERT INTO weft_checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, ts, ts_ns, checkpoint, metadata)
				SELECT $2, checkpoint_ns, checkpoint_id, parent_checkpoint_id, ts, ts_ns, checkpoint, metadata FROM weft_checkpoints WHERE thread_id = $1
				ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
					parent_checkpoint_id = EXCLUDED.parent_checkpoint_id, ts = EXCLUDED.ts, ts_ns = EXCLUDED.ts_ns,
					checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata`,
			`INSERT INTO weft_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, blob, task_path)
				SELECT $2, checkpoint_ns, checkpoint_id, task_id, idx, channel, blob, task_path FROM weft_writes WHERE thread_id = $1
				ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET
					channel = EXCLUDED.channel, blob = EXCLUDED.blob, task_path = EXCLUDED.task_path`,
		} {
			if _, err := tx.Exec(ctx, q, srcThreadID, dstThreadID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("copy thread %q to %q: %w", srcThreadID, dstThreadID, connErr(err))
	}
	s.changed()
	return nil
}

// ListThreads returns the threads that have root-namespace checkpoints,
// newest first by their latest root checkpoint (ties by thread id), with the
// number of root checkpoints and the latest one's metadata; limit 0 (or
// less) means no limit.
func (s *Saver) ListThreads(ctx context.Context, limit int) ([]checkpoint.ThreadInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	q := `SELECT t.thread_id, t.n, c.checkpoint_id, c.metadata, c.ts, c.ts_ns
		FROM (SELECT thread_id, count(*) AS n, max(checkpoint_id) AS latest FROM weft_checkpoints
			WHERE checkpoint_ns = '' GROUP BY thread_id) t
		JOIN weft_checkpoints c ON c.thread_id = t.thread_id AND c.checkpoint_ns = '' AND c.checkpoint_id = t.latest
		ORDER BY c.checkpoint_id DESC, t.thread_id`
	if limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", limit)
	}
	rows, err := s.pool.Query(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("list threads: %w", connErr(err))
	}
	defer rows.Close()
	var out []checkpoint.ThreadInfo
	for rows.Next() {
		var (
			info   checkpoint.ThreadInfo
			mdJSON []byte
			ts     pgtype.Timestamptz
			nanos  int32
		)
		if err := rows.Scan(&info.ThreadID, &info.Checkpoints, &info.Latest.CheckpointID, &mdJSON, &ts, &nanos); err != nil {
			return nil, fmt.Errorf("list threads: %w", connErr(err))
		}
		decodeThread(&info, mdJSON, ts, nanos)
		out = append(out, info)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list threads: %w", connErr(err))
	}
	return out, nil
}

// Stats counts threads (with at least one checkpoint), checkpoints, pending
// writes and stored values; Bytes is the disk space of the store's tables
// and indexes.
func (s *Saver) Stats(ctx context.Context) (checkpoint.Stats, error) {
	if err := ctx.Err(); err != nil {
		return checkpoint.Stats{}, err
	}
	var st checkpoint.Stats
	err := s.pool.QueryRow(ctx, `SELECT
			(SELECT count(DISTINCT thread_id) FROM weft_checkpoints),
			(SELECT count(*) FROM weft_checkpoints),
			(SELECT count(*) FROM weft_writes),
			(SELECT count(*) FROM weft_blobs),
			pg_total_relation_size('weft_checkpoints') + pg_total_relation_size('weft_blobs') +
				pg_total_relation_size('weft_writes') + pg_total_relation_size('weft_threads')`).
		Scan(&st.Threads, &st.Checkpoints, &st.Writes, &st.Blobs, &st.Bytes)
	if err != nil {
		return checkpoint.Stats{}, fmt.Errorf("checkpoint store stats: %w", connErr(err))
	}
	return st, nil
}

// decodeThread fills the metadata and timestamp of a thread listing's row
// from their stored forms. A damaged one (metadata of the wrong shape, a
// timestamp of ±infinity, nanoseconds outside 0-999) marks only this
// thread: ti.Err names the thread and checkpoint and says what is wrong,
// and the listing goes on.
func decodeThread(ti *checkpoint.ThreadInfo, md []byte, ts pgtype.Timestamptz, nanos int32) {
	ti.Latest.ThreadID = ti.ThreadID
	var errs []error
	m, err := record.DecodeMetadata(md)
	if err != nil {
		errs = append(errs, err)
	} else {
		ti.LatestMeta = m
	}
	switch {
	case !ts.Valid:
		errs = append(errs, errors.New("stored timestamp is NULL"))
	case ts.InfinityModifier != pgtype.Finite:
		errs = append(errs, fmt.Errorf("stored timestamp is %s", ts.InfinityModifier))
	case nanos < 0 || nanos > 999:
		errs = append(errs, fmt.Errorf("stored ts_ns is %d, not 0-999", nanos))
	default:
		ti.UpdatedAt = timestamp(ts.Time, nanos)
	}
	if len(errs) > 0 {
		ti.Err = fmt.Errorf("thread %q latest checkpoint %s: %w", ti.ThreadID, ti.Latest.CheckpointID, errors.Join(errs...))
	}
}
