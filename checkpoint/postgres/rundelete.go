package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/internal/record"
)

var _ checkpoint.RunDeleter = (*Saver)(nil)

// DeleteRun deletes the checkpoints of run runID in threadID, with their
// writes and the values only they used, and sets the writes of starts back
// to what they were (checkpoint.RunDeleter), in one transaction that holds
// the thread's head locks: a Put to the thread waits for it, readers see
// the thread with the run or without it, and a refusal or a failure leaves
// everything as it was. The heads of the namespaces go back to their
// newest remaining checkpoint.
func (s *Saver) DeleteRun(ctx context.Context, threadID, runID string, starts ...checkpoint.RunStart) (checkpoint.RunDeleted, error) {
	if err := s.writable(ctx); err != nil {
		return checkpoint.RunDeleted{}, err
	}
	if err := record.CheckRunDelete(threadID, runID, starts); err != nil {
		return checkpoint.RunDeleted{}, err
	}
	var res checkpoint.RunDeleted
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		return s.deleteRun(ctx, tx, threadID, runID, starts, &res)
	})
	if err != nil {
		if errors.Is(err, checkpoint.ErrRunContinued) || errors.Is(err, checkpoint.ErrNotFound) {
			return checkpoint.RunDeleted{}, err // they name the run and checkpoint
		}
		return checkpoint.RunDeleted{}, fmt.Errorf("delete run %q of thread %q: %w", runID, threadID, connErr(err))
	}
	s.changed()
	return res, nil
}

func (s *Saver) deleteRun(ctx context.Context, tx pgx.Tx, thread, run string, starts []checkpoint.RunStart, res *checkpoint.RunDeleted) error {
	if err := lockHeads(ctx, tx, []string{thread}); err != nil {
		return err
	}
	type nsID struct{ ns, id string }
	victims := map[nsID]bool{}
	var nss, ids []string
	rows, _ := tx.Query(ctx, `SELECT checkpoint_ns, checkpoint_id FROM weft_checkpoints
		WHERE thread_id = $1 AND metadata->>'run_id' = $2`, thread, run)
	var k nsID
	if _, err := pgx.ForEachRow(rows, []any{&k.ns, &k.id}, func() error {
		victims[k] = true
		nss, ids = append(nss, k.ns), append(ids, k.id)
		return nil
	}); err != nil {
		return fmt.Errorf("find the run's checkpoints: %w", err)
	}
	if len(ids) > 0 {
		// A checkpoint of another run (or of none) whose parent, or one
		// of whose parent graphs' checkpoints, is the run's.
		var ns, id, other, parent string
		err := tx.QueryRow(ctx, `WITH v(ns, id) AS (SELECT * FROM unnest($3::text[], $4::text[]))
			SELECT c.checkpoint_ns, c.checkpoint_id, coalesce(c.metadata->>'run_id', ''), c.parent_checkpoint_id
			FROM weft_checkpoints c JOIN v ON v.ns = c.checkpoint_ns AND v.id = c.parent_checkpoint_id
			WHERE c.thread_id = $1 AND c.metadata->>'run_id' IS DISTINCT FROM $2
			UNION ALL
			SELECT c.checkpoint_ns, c.checkpoint_id, coalesce(c.metadata->>'run_id', ''), p.value
			FROM weft_checkpoints c CROSS JOIN LATERAL jsonb_each_text(CASE WHEN jsonb_typeof(c.metadata->'parents') = 'object' THEN c.metadata->'parents' ELSE '{}' END) p
			JOIN v ON v.ns = p.key AND v.id = p.value
			WHERE c.thread_id = $1 AND c.metadata->>'run_id' IS DISTINCT FROM $2
			LIMIT 1`, thread, run, nss, ids).Scan(&ns, &id, &other, &parent)
		switch {
		case err == nil:
			return record.RunContinued(thread, run, ns, id, other, parent)
		case !errors.Is(err, pgx.ErrNoRows):
			return fmt.Errorf("look for checkpoints that continue the run: %w", err)
		}
	}
	for _, st := range starts {
		ref := st.Ref
		if victims[nsID{ref.NS, ref.CheckpointID}] {
			continue
		}
		var one int
		err := tx.QueryRow(ctx, `SELECT 1 FROM weft_checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3`,
			thread, ref.NS, ref.CheckpointID).Scan(&one)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("delete run %q of thread %q: start checkpoint %s (ns %q): %w", run, thread, ref.CheckpointID, ref.NS, checkpoint.ErrNotFound)
		}
		if err != nil {
			return err
		}
		var have []record.KeyedWrite
		rows, _ := tx.Query(ctx, `SELECT task_id, idx, channel, blob, task_path FROM weft_writes
			WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3`, thread, ref.NS, ref.CheckpointID)
		var w record.KeyedWrite
		var v []byte
		if _, err := pgx.ForEachRow(rows, []any{&w.TaskID, &w.Idx, &w.Channel, &v, &w.TaskPath}, func() error {
			w.Value = nil
			if v != nil {
				plain, err := s.cipher.Open(v)
				if err != nil {
					return fmt.Errorf("write %d of task %q to checkpoint %s: %w", w.Idx, w.TaskID, ref.CheckpointID, err)
				}
				w.Value = record.NonNil(record.CloneBytes(plain))
			}
			have = append(have, w)
			return nil
		}); err != nil {
			return fmt.Errorf("read the writes of start checkpoint %s: %w", ref.CheckpointID, err)
		}
		drop, add := record.ResetWrites(have, st.Writes)
		for _, w := range drop {
			if _, err := tx.Exec(ctx, `DELETE FROM weft_writes WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3 AND task_id = $4 AND idx = $5`,
				thread, ref.NS, ref.CheckpointID, w.TaskID, w.Idx); err != nil {
				return err
			}
		}
		for _, w := range add {
			if _, err := tx.Exec(ctx, `INSERT INTO weft_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, blob, task_path)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
				ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET channel = EXCLUDED.channel, blob = EXCLUDED.blob, task_path = EXCLUDED.task_path`,
				thread, ref.NS, ref.CheckpointID, w.TaskID, w.Idx, w.Channel, s.cipher.Seal(w.Value), w.TaskPath); err != nil {
				return err
			}
		}
		res.Writes += len(drop)
		res.Restored += len(add)
	}
	if len(ids) == 0 {
		return nil
	}
	const victimsCTE = `WITH v(ns, id) AS (SELECT * FROM unnest($2::text[], $3::text[]))`
	// The values the run's checkpoints used, kept aside before they go.
	if _, err := tx.Exec(ctx, `CREATE TEMP TABLE weft_run_values ON COMMIT DROP AS `+victimsCTE+`
		SELECT DISTINCT c.checkpoint_ns AS ns, e.key AS channel, e.value::bigint AS version
		FROM weft_checkpoints c JOIN v ON v.ns = c.checkpoint_ns AND v.id = c.checkpoint_id
		CROSS JOIN LATERAL jsonb_each_text(c.checkpoint->'channel_versions') e
		WHERE c.thread_id = $1`, thread, nss, ids); err != nil {
		return fmt.Errorf("find the run's values: %w", err)
	}
	tag, err := tx.Exec(ctx, victimsCTE+`
		DELETE FROM weft_checkpoints c USING v WHERE c.thread_id = $1 AND c.checkpoint_ns = v.ns AND c.checkpoint_id = v.id`, thread, nss, ids)
	if err != nil {
		return fmt.Errorf("delete the run's checkpoints: %w", err)
	}
	res.Checkpoints = int(tag.RowsAffected())
	if tag, err = tx.Exec(ctx, victimsCTE+`
		DELETE FROM weft_writes w USING v WHERE w.thread_id = $1 AND w.checkpoint_ns = v.ns AND w.checkpoint_id = v.id`, thread, nss, ids); err != nil {
		return fmt.Errorf("delete the run's writes: %w", err)
	}
	res.Writes += int(tag.RowsAffected())
	// Set aside what the remaining checkpoints still use, as one join (a
	// NOT EXISTS per value scans them per value: seconds for a long run in
	// a long thread, all of it holding the thread's heads).
	if _, err := tx.Exec(ctx, `DELETE FROM weft_run_values r USING (
			SELECT DISTINCT c.checkpoint_ns AS ns, e.key AS channel, e.value::bigint AS version
			FROM weft_checkpoints c CROSS JOIN LATERAL jsonb_each_text(c.checkpoint->'channel_versions') e
			WHERE c.thread_id = $1 AND c.checkpoint_ns IN (SELECT DISTINCT ns FROM weft_run_values)) u
		WHERE r.ns = u.ns AND r.channel = u.channel AND r.version = u.version`, thread); err != nil {
		return fmt.Errorf("find the values still used: %w", err)
	}
	if tag, err = tx.Exec(ctx, `DELETE FROM weft_blobs b USING weft_run_values r
		WHERE b.thread_id = $1 AND b.checkpoint_ns = r.ns AND b.channel = r.channel AND b.version = r.version`, thread); err != nil {
		return fmt.Errorf("delete the run's values: %w", err)
	}
	res.Values = int(tag.RowsAffected())
	if _, err := tx.Exec(ctx, `DROP TABLE weft_run_values`); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM weft_threads t WHERE t.thread_id = $1 AND NOT EXISTS (
			SELECT 1 FROM weft_checkpoints c WHERE c.thread_id = t.thread_id AND c.checkpoint_ns = t.checkpoint_ns)`, thread); err != nil {
		return fmt.Errorf("update the thread's heads: %w", err)
	}
	if _, err := tx.Exec(ctx, `UPDATE weft_threads t SET head_id = (SELECT max(checkpoint_id) FROM weft_checkpoints c
			WHERE c.thread_id = t.thread_id AND c.checkpoint_ns = t.checkpoint_ns), updated_at = now()
		WHERE t.thread_id = $1`, thread); err != nil {
		return fmt.Errorf("update the thread's heads: %w", err)
	}
	return nil
}
