package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/internal/record"
)

var _ checkpoint.RunDeleter = (*Saver)(nil)

// DeleteRun deletes the checkpoints of run runID in threadID, with their
// writes and the values only they used, and sets the writes of starts back
// to what they were (checkpoint.RunDeleter), in one IMMEDIATE transaction:
// another process sees the thread with the run or without it, never half
// of it, and a refusal or a failure leaves everything as it was.
func (s *Saver) DeleteRun(ctx context.Context, threadID, runID string, starts ...checkpoint.RunStart) (checkpoint.RunDeleted, error) {
	if err := record.CheckRunDelete(threadID, runID, starts); err != nil {
		return checkpoint.RunDeleted{}, err
	}
	var res checkpoint.RunDeleted
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res = checkpoint.RunDeleted{} // a retried transaction counts afresh
		return s.deleteRun(ctx, tx, threadID, runID, starts, &res)
	})
	if err != nil {
		if errors.Is(err, checkpoint.ErrRunContinued) || errors.Is(err, checkpoint.ErrNotFound) {
			return checkpoint.RunDeleted{}, err // they name the run and checkpoint
		}
		return checkpoint.RunDeleted{}, fmt.Errorf("delete run %q of thread %q from %s: %w", runID, threadID, s.path, err)
	}
	return res, nil
}

func (s *Saver) deleteRun(ctx context.Context, tx *sql.Tx, thread, run string, starts []checkpoint.RunStart, res *checkpoint.RunDeleted) error {
	type nsID struct{ ns, id string }
	victims := map[nsID]bool{}
	var pairs [][2]string
	if err := scanRows(ctx, tx, `SELECT checkpoint_ns, checkpoint_id FROM checkpoints
WHERE thread_id = ?1 AND json_extract(metadata, '$.run_id') = ?2`, []any{thread, run}, func(sc func(...any) error) error {
		var k nsID
		if err := sc(&k.ns, &k.id); err != nil {
			return err
		}
		victims[k] = true
		pairs = append(pairs, [2]string{k.ns, k.id})
		return nil
	}); err != nil {
		return err
	}
	list, _ := json.Marshal(pairs)
	if len(pairs) > 0 {
		// A checkpoint of another run (or of none) whose parent, or one
		// of whose parent graphs' checkpoints, is the run's.
		var ns, id, other, parent string
		err := tx.QueryRowContext(ctx, `SELECT c.checkpoint_ns, c.checkpoint_id, ifnull(json_extract(c.metadata, '$.run_id'), ''), c.parent_checkpoint_id
FROM checkpoints AS c WHERE c.thread_id = ?1 AND json_extract(c.metadata, '$.run_id') IS NOT ?2
 AND (c.checkpoint_ns, c.parent_checkpoint_id) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?3))
UNION ALL
SELECT c.checkpoint_ns, c.checkpoint_id, ifnull(json_extract(c.metadata, '$.run_id'), ''), p.value
FROM checkpoints AS c, json_each(c.metadata, '$.parents') AS p WHERE c.thread_id = ?1 AND json_extract(c.metadata, '$.run_id') IS NOT ?2
 AND (p.key, p.value) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?3))
LIMIT 1`, thread, run, string(list)).Scan(&ns, &id, &other, &parent)
		switch {
		case err == nil:
			return record.RunContinued(thread, run, ns, id, other, parent)
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
	}
	for _, st := range starts {
		ref := st.Ref
		if victims[nsID{ref.NS, ref.CheckpointID}] {
			continue
		}
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3`,
			thread, ref.NS, ref.CheckpointID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("delete run %q of thread %q: start checkpoint %s (ns %q) in %s: %w", run, thread, ref.CheckpointID, ref.NS, s.path, checkpoint.ErrNotFound)
		}
		if err != nil {
			return err
		}
		var have []record.KeyedWrite
		if err := scanRows(ctx, tx, `SELECT task_id, idx, channel, value, task_path FROM writes
WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3`, []any{thread, ref.NS, ref.CheckpointID}, func(sc func(...any) error) error {
			var w record.KeyedWrite
			var v []byte
			if err := sc(&w.TaskID, &w.Idx, &w.Channel, &v, &w.TaskPath); err != nil {
				return err
			}
			if v != nil {
				plain, err := s.cipher.Open(v)
				if err == nil {
					plain, err = unpack(plain)
				}
				if err != nil {
					return fmt.Errorf("write %d of task %q to checkpoint %s: %w", w.Idx, w.TaskID, ref.CheckpointID, err)
				}
				w.Value = record.NonNil(plain)
			}
			have = append(have, w)
			return nil
		}); err != nil {
			return err
		}
		drop, add := record.ResetWrites(have, st.Writes)
		for _, w := range drop {
			if _, err := tx.ExecContext(ctx, `DELETE FROM writes WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3 AND task_id = ?4 AND idx = ?5`,
				thread, ref.NS, ref.CheckpointID, w.TaskID, w.Idx); err != nil {
				return err
			}
		}
		for _, w := range add {
			var v any
			if w.Value != nil {
				v = s.cipher.Seal(record.Pack(w.Value))
			}
			if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, value, task_path)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)`, thread, ref.NS, ref.CheckpointID, w.TaskID, w.Idx, w.Channel, v, w.TaskPath); err != nil {
				return err
			}
		}
		res.Writes += len(drop)
		res.Restored += len(add)
	}
	if len(pairs) == 0 {
		return nil
	}
	// The values the run's checkpoints used, by namespace, before they go.
	type val struct {
		ns, channel string
		version     int64
	}
	var used []val
	if err := scanRows(ctx, tx, `SELECT DISTINCT c.checkpoint_ns, v.key, v.value FROM checkpoints AS c, json_each(c.checkpoint, '$.channel_versions') AS v
WHERE c.thread_id = ?1 AND (c.checkpoint_ns, c.checkpoint_id) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?2))`, []any{thread, string(list)}, func(sc func(...any) error) error {
		var u val
		if err := sc(&u.ns, &u.channel, &u.version); err != nil {
			return err
		}
		used = append(used, u)
		return nil
	}); err != nil {
		return err
	}
	count := func(q string, args []any) (int, error) {
		r, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return 0, err
		}
		n, err := r.RowsAffected()
		return int(n), err
	}
	var err error
	if res.Checkpoints, err = count(`DELETE FROM checkpoints WHERE thread_id = ?1
 AND (checkpoint_ns, checkpoint_id) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?2))`, []any{thread, string(list)}); err != nil {
		return err
	}
	n, err := count(`DELETE FROM writes WHERE thread_id = ?1
 AND (checkpoint_ns, checkpoint_id) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?2))`, []any{thread, string(list)})
	if err != nil {
		return err
	}
	res.Writes += n
	// What the remaining checkpoints of those namespaces use, read once
	// (a query per value would scan them per value: seconds for a long
	// run in a long thread, all of it holding the write lock).
	nsSet := map[string]bool{}
	for _, u := range used {
		nsSet[u.ns] = true
	}
	nss := make([]string, 0, len(nsSet))
	for ns := range nsSet {
		nss = append(nss, ns)
	}
	nsList, _ := json.Marshal(nss)
	still := map[val]bool{}
	if err := scanRows(ctx, tx, `SELECT c.checkpoint_ns, v.key, v.value FROM checkpoints AS c, json_each(c.checkpoint, '$.channel_versions') AS v
WHERE c.thread_id = ?1 AND c.checkpoint_ns IN (SELECT value FROM json_each(?2))`, []any{thread, string(nsList)}, func(sc func(...any) error) error {
		var u val
		if err := sc(&u.ns, &u.channel, &u.version); err != nil {
			return err
		}
		still[u] = true
		return nil
	}); err != nil {
		return err
	}
	var unused []any
	for _, u := range used {
		if !still[u] {
			unused = append(unused, []any{u.ns, u.channel, u.version})
		}
	}
	if len(unused) > 0 {
		uList, _ := json.Marshal(unused)
		n, err := count(`DELETE FROM blobs WHERE thread_id = ?1
 AND (checkpoint_ns, channel, version) IN (SELECT value ->> 0, value ->> 1, value ->> 2 FROM json_each(?2))`, []any{thread, string(uList)})
		if err != nil {
			return err
		}
		res.Values = n
	}
	return nil
}
