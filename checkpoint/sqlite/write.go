package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/internal/record"
)

// writeStmts are the statements every write uses, prepared once on the
// writer connection. putBlobs[n-1] inserts n blobs.
// putWrites[n-1] inserts n ordinary writes.
type writeStmts struct {
	putCheckpoint, putLoop, replaceWrite, head *sql.Stmt
	acquireLease, releaseLease                 *sql.Stmt // lease.go: every run takes and gives one
	putBlobs                                   [maxRows]*sql.Stmt
	putWrites                                  [maxRows]*sql.Stmt
}

// maxRows is the most blobs or writes one INSERT statement carries.
const maxRows = 8

const (
	sqlPutCheckpoint = `INSERT OR REPLACE INTO checkpoints
 (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, ts, checkpoint, metadata)
 VALUES (?, ?, ?, ?, ?, ?, ?)`
	// sqlPutLoop is sqlPutCheckpoint for a loop checkpoint with a parent: it
	// stores nothing when a checkpoint newer than the parent is already
	// stored there (another writer advanced the thread), unless this
	// checkpoint itself is (a retried Put). No row changed means a conflict.
	sqlPutLoop = `INSERT OR REPLACE INTO checkpoints
 (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, ts, checkpoint, metadata)
 SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7
 WHERE NOT EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id > ?4 AND checkpoint_id <> ?3)
    OR EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3)`
	sqlPutBlobs = `INSERT OR IGNORE INTO blobs (thread_id, checkpoint_ns, channel, version, value) VALUES `
	// Writes to checkpoint ?3 of thread ?1, namespace ?2 by task ?4 are
	// stored only when sqlWritesGuard holds: they are not a task's (?4 is
	// checkpoint.NullTaskID), or ?3 is not stored, or no newer checkpoint
	// is (a losing worker's writes to a superseded checkpoint are refused).
	sqlWritesGuard = ` WHERE ?4 = '` + checkpoint.NullTaskID + `'
    OR NOT EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id > ?3)
    OR NOT EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3)`
	sqlReplaceWrite = `INSERT OR REPLACE INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, value, task_path)
 SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8` + sqlWritesGuard
	sqlPutWrites = `INSERT OR IGNORE INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, value, task_path)
 SELECT ?1, ?2, ?3, ?4, column1, column2, column3, ?5 FROM (VALUES `
	// sqlHead returns the head (newest checkpoint id) of a thread and
	// namespace, NULL when it has none, and whether checkpoint ?3 is stored
	// there. Both are lookups in the primary key.
	sqlHead = `SELECT (SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = ?2),
 EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3)`
)

func (s *Saver) prepare(ctx context.Context) error {
	s.stmtOnce.Do(func() {
		prep := func(q string) *sql.Stmt {
			if s.stmtErr != nil {
				return nil
			}
			st, err := s.w.PrepareContext(ctx, q)
			if err != nil {
				s.stmtErr = fmt.Errorf("checkpoint store %s: prepare: %w", s.path, s.mapErr(err))
			}
			return st
		}
		s.stmts = writeStmts{
			putCheckpoint: prep(sqlPutCheckpoint),
			putLoop:       prep(sqlPutLoop),
			replaceWrite:  prep(sqlReplaceWrite),
			head:          prep(sqlHead),
			acquireLease:  prep(sqlAcquireLease),
			releaseLease:  prep(sqlReleaseLease),
		}
		blobs, writes := sqlPutBlobs, sqlPutWrites
		for n := 1; n <= maxRows; n++ {
			if n > 1 {
				blobs += ", "
				writes += ", "
			}
			i := 3 * (n - 1)
			blobs += fmt.Sprintf("(?1, ?2, ?%d, ?%d, ?%d)", 3+i, 4+i, 5+i)
			writes += fmt.Sprintf("(?%d, ?%d, ?%d)", 6+i, 7+i, 8+i)
			s.stmts.putBlobs[n-1] = prep(blobs)
			s.stmts.putWrites[n-1] = prep(writes + ")" + sqlWritesGuard)
		}
	})
	return s.stmtErr
}

// write runs fn in an IMMEDIATE transaction on the writer connection:
// begin, then roll back unless fn and the commit succeed. ctx governs the
// wait for the write lock (another process may hold it); fn gets a context
// without cancellation for its statements, which run while the lock is held
// and are short (a canceled statement would only waste the work done).
func (s *Saver) write(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	if err := s.writable(ctx); err != nil {
		return err
	}
	if err := s.prepare(ctx); err != nil {
		return err
	}
	return s.inTx(ctx, s.w, nil, fn)
}

// Put stores cp as a child of parent; see checkpoint.Saver. Only channels in
// newVersions get a stored value (absent from cp.ChannelValues means empty);
// a value already stored for that channel and version is kept. Putting an
// existing checkpoint id again replaces its header and metadata.
//
// A loop checkpoint whose parent is not the newest checkpoint of its thread
// and namespace is refused with a *checkpoint.ConflictError (wrapping
// checkpoint.ErrConflict): another writer advanced the thread first. Input,
// update and fork checkpoints may branch from any checkpoint.
func (s *Saver) Put(ctx context.Context, parent checkpoint.Ref, cp checkpoint.Checkpoint, md checkpoint.Metadata, newVersions map[string]int64) (checkpoint.Ref, error) {
	run, fail, err := s.preparePut(parent, &cp, &md, newVersions)
	if err != nil {
		return checkpoint.Ref{}, err
	}
	if err := s.write(ctx, run); err != nil {
		return checkpoint.Ref{}, fail(err)
	}
	return checkpoint.Ref{ThreadID: parent.ThreadID, NS: parent.NS, CheckpointID: cp.ID}, nil
}

// preparePut checks and encodes a Put and returns the statements to run in
// a write transaction, and how to word an error of theirs.
func (s *Saver) preparePut(parent checkpoint.Ref, cpp *checkpoint.Checkpoint, md *checkpoint.Metadata, newVersions map[string]int64) (func(context.Context, *sql.Tx) error, func(error) error, error) {
	cp := cpp
	if err := record.CheckPut(parent, cp, md); err != nil {
		return nil, nil, err
	}
	fail := func(err error) error {
		if errors.Is(err, checkpoint.ErrConflict) {
			return err // it names the thread and checkpoints already
		}
		return fmt.Errorf("put checkpoint %q in thread %q ns %q to %s: %w", cp.ID, parent.ThreadID, parent.NS, s.path, err)
	}
	header, err := record.EncodeHeader(cp)
	if err != nil {
		return nil, nil, fail(err)
	}
	mdJSON, err := record.EncodeMetadata(md)
	if err != nil {
		return nil, nil, fail(err)
	}
	type blob struct {
		channel string
		version int64
		value   []byte
	}
	blobs := make([]blob, 0, len(newVersions))
	size := 0
	for ch, v := range newVersions {
		var val []byte // nil: empty channel, stored as NULL
		if b, ok := cp.ChannelValues[ch]; ok {
			if err := s.checkValue(ch, v, len(b)); err != nil {
				return nil, nil, fail(err)
			}
			val = b
			if b == nil {
				val = []byte{}
			}
			size += len(val)
		}
		blobs = append(blobs, blob{ch, v, val})
	}
	inHalves(len(blobs), size, func(i int) {
		if b := &blobs[i]; b.value != nil {
			b.value = s.cipher.Seal(record.Pack(b.value))
		}
	})
	var parentID any
	if parent.CheckpointID != "" {
		parentID = parent.CheckpointID
	}
	check := md.Source == checkpoint.SourceLoop && parent.CheckpointID != ""
	run := func(ctx context.Context, tx *sql.Tx) error {
		if parent.CheckpointID != "" && cp.ID < parent.CheckpointID {
			// Only a child sorting before its parent can sort before the
			// head; the lookup is for that rare case.
			head, _, err := s.head(ctx, tx, parent.ThreadID, parent.NS, cp.ID)
			if err != nil {
				return err
			}
			if head == parent.CheckpointID {
				return fmt.Errorf("%w: its parent %s is the head (is this machine's clock behind the one that wrote it?)", checkpoint.ErrIDBeforeParent, head)
			}
		}
		stmt := s.stmts.putCheckpoint
		if check {
			stmt = s.stmts.putLoop
		}
		res, err := tx.StmtContext(ctx, stmt).ExecContext(ctx,
			parent.ThreadID, parent.NS, cp.ID, parentID, record.FormatTS(cp.TS), header, mdJSON)
		if err != nil {
			return err
		}
		if check {
			if n, err := res.RowsAffected(); err != nil || n == 0 {
				if err != nil {
					return err
				}
				head, _, err := s.head(ctx, tx, parent.ThreadID, parent.NS, cp.ID)
				if err != nil {
					return err
				}
				return &checkpoint.ConflictError{ThreadID: parent.ThreadID, NS: parent.NS, ParentID: parent.CheckpointID, HeadID: head, CheckpointID: cp.ID}
			}
		}
		for len(blobs) > 0 {
			n := min(len(blobs), maxRows)
			args := make([]any, 2, 2+3*n)
			args[0], args[1] = parent.ThreadID, parent.NS
			for _, b := range blobs[:n] {
				var v any // nil: NULL, an empty channel
				if b.value != nil {
					v = b.value
				}
				args = append(args, b.channel, b.version, v)
			}
			if _, err := tx.StmtContext(ctx, s.stmts.putBlobs[n-1]).ExecContext(ctx, args...); err != nil {
				return err
			}
			blobs = blobs[n:]
		}
		return nil
	}
	return run, fail, nil
}

// head returns the newest checkpoint id of thread and ns ("" when it has
// none) and whether checkpoint id is stored there, inside tx.
func (s *Saver) head(ctx context.Context, tx *sql.Tx, thread, ns, id string) (string, bool, error) {
	var head sql.NullString
	var exists bool
	if err := tx.StmtContext(ctx, s.stmts.head).QueryRowContext(ctx, thread, ns, id).Scan(&head, &exists); err != nil {
		return "", false, err
	}
	return head.String, exists, nil
}

// PutWrites stores a task's writes against ref; see checkpoint.Saver.
// Ordinary writes are INSERT OR IGNORE on (task id, position in the batch);
// special writes (checkpoint.SpecialIndex) are INSERT OR REPLACE on their
// fixed index. A task's writes (not checkpoint.NullTaskID's) to a stored
// checkpoint that is no longer the newest of its thread and namespace are
// refused with a *checkpoint.ConflictError: another writer finished that
// step first.
func (s *Saver) PutWrites(ctx context.Context, ref checkpoint.Ref, writes []checkpoint.Write, taskID, taskPath string) error {
	if err := record.CheckWrites(ref, taskID); err != nil {
		return err
	}
	if len(writes) == 0 {
		return s.writable(ctx)
	}
	run, err := s.prepareWrites(ref, writes, taskID, taskPath)
	if err == nil {
		err = s.write(ctx, run)
	}
	if err != nil {
		return writesErr(s, ref, writes, taskID, err)
	}
	return nil
}

func writesErr(s *Saver, ref checkpoint.Ref, writes []checkpoint.Write, taskID string, err error) error {
	if errors.Is(err, checkpoint.ErrConflict) {
		return err // it names the thread, checkpoint and task already
	}
	return fmt.Errorf("put %d writes of task %q to checkpoint %q in thread %q ns %q to %s: %w", len(writes), taskID, ref.CheckpointID, ref.ThreadID, ref.NS, s.path, err)
}

// prepareWrites encodes a PutWrites and returns the statements to run in a
// write transaction; a value over the size limit is an error.
func (s *Saver) prepareWrites(ref checkpoint.Ref, writes []checkpoint.Write, taskID, taskPath string) (func(context.Context, *sql.Tx) error, error) {
	for _, w := range writes {
		if err := s.checkWrite(w.Channel, len(w.Value)); err != nil {
			return nil, err
		}
	}
	type prepared struct {
		idx     int
		special bool
		channel string
		value   any
	}
	batch := make([]prepared, len(writes))
	for i, w := range writes {
		idx, special := record.WriteIndex(i, w.Channel)
		var v any
		if w.Value != nil {
			v = s.cipher.Seal(record.Pack(w.Value))
		}
		batch[i] = prepared{idx, special, w.Channel, v}
	}
	var ordinary, special []prepared
	for _, w := range batch {
		if w.special {
			special = append(special, w)
		} else {
			ordinary = append(ordinary, w)
		}
	}
	return func(ctx context.Context, tx *sql.Tx) error {
		// Every statement is guarded (sqlWritesGuard); the first one that
		// stores nothing may have been refused, which the head tells.
		checked := taskID == checkpoint.NullTaskID
		check := func(res sql.Result, special bool) error {
			if checked {
				return nil
			}
			checked = true
			if n, err := res.RowsAffected(); err != nil || n > 0 {
				return err
			}
			head, exists, err := s.head(ctx, tx, ref.ThreadID, ref.NS, ref.CheckpointID)
			switch {
			case err != nil:
				return err
			case exists && head != ref.CheckpointID:
				return &checkpoint.ConflictError{ThreadID: ref.ThreadID, NS: ref.NS, ParentID: ref.CheckpointID, HeadID: head, TaskID: taskID}
			case special:
				return fmt.Errorf("a special write to checkpoint %s stored nothing", ref.CheckpointID)
			}
			return nil // ordinary writes stored before: ignored
		}
		for len(ordinary) > 0 {
			n := min(len(ordinary), maxRows)
			args := make([]any, 5, 5+3*n)
			args[0], args[1], args[2], args[3], args[4] = ref.ThreadID, ref.NS, ref.CheckpointID, taskID, taskPath
			for _, w := range ordinary[:n] {
				args = append(args, w.idx, w.channel, w.value)
			}
			res, err := tx.StmtContext(ctx, s.stmts.putWrites[n-1]).ExecContext(ctx, args...)
			if err == nil {
				err = check(res, false)
			}
			if err != nil {
				return err
			}
			ordinary = ordinary[n:]
		}
		for _, w := range special {
			res, err := tx.StmtContext(ctx, s.stmts.replaceWrite).ExecContext(ctx,
				ref.ThreadID, ref.NS, ref.CheckpointID, taskID, w.idx, w.channel, w.value, taskPath)
			if err == nil {
				err = check(res, true)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// parallelPackMin is how many bytes of values a Put or a batch must hold
// before they are compressed on two goroutines instead of one: compression
// is much of the cost of writing wide values, and a background writer's
// caller is usually waiting for it.
const parallelPackMin = 16 << 10

// inHalves calls do(i) for every i < n, splitting the work between this
// goroutine and another when size (bytes of values to encode) reaches
// parallelPackMin. do must be safe to call concurrently for different i.
func inHalves(n, size int, do func(i int)) {
	if n < 2 || size < parallelPackMin {
		for i := range n {
			do(i)
		}
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := n / 2; i < n; i++ {
			do(i)
		}
	})
	for i := range n / 2 {
		do(i)
	}
	wg.Wait()
}

// WriteBatch stores ops in order in one transaction: all of them or none
// (checkpoint.BatchWriter).
func (s *Saver) WriteBatch(ctx context.Context, ops []checkpoint.Op) error {
	type prepared struct {
		run  func(context.Context, *sql.Tx) error
		fail func(error) error
		err  error
	}
	preps := make([]prepared, len(ops))
	size := 0
	for _, op := range ops {
		if op.Checkpoint != nil {
			for ch := range op.NewVersions {
				size += len(op.Checkpoint.ChannelValues[ch])
			}
		}
		for _, w := range op.Writes {
			size += len(w.Value)
		}
	}
	inHalves(len(ops), size, func(i int) {
		op, p := ops[i], &preps[i]
		if op.Checkpoint != nil {
			md := op.Metadata
			p.run, p.fail, p.err = s.preparePut(op.Ref, op.Checkpoint, &md, op.NewVersions)
			return
		}
		if p.err = record.CheckWrites(op.Ref, op.TaskID); p.err != nil || len(op.Writes) == 0 {
			return
		}
		p.fail = func(err error) error { return writesErr(s, op.Ref, op.Writes, op.TaskID, err) }
		if p.run, p.err = s.prepareWrites(op.Ref, op.Writes, op.TaskID, op.TaskPath); p.err != nil {
			p.err = p.fail(p.err)
		}
	})
	for _, p := range preps {
		if p.err != nil {
			return p.err
		}
	}
	failed := -1
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for i, p := range preps {
			if p.run == nil {
				continue
			}
			if err := p.run(ctx, tx); err != nil {
				failed = i
				return err
			}
		}
		return nil
	})
	if err != nil && failed >= 0 {
		return preps[failed].fail(err)
	}
	if err != nil {
		return fmt.Errorf("write a batch of %d to %s: %w", len(ops), s.path, err)
	}
	return nil
}

// DeleteThread removes every checkpoint, value and write of threadID in all
// namespaces. Deleting a missing thread is not an error; an empty threadID
// returns an error wrapping checkpoint.ErrNoThread.
func (s *Saver) DeleteThread(ctx context.Context, threadID string) error {
	if threadID == "" {
		return fmt.Errorf("delete thread: %w", checkpoint.ErrNoThread)
	}
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for _, table := range []string{"checkpoints", "blobs", "writes"} {
			if _, err := tx.ExecContext(ctx, "DELETE FROM "+table+" WHERE thread_id = ?", threadID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("delete thread %q from %s: %w", threadID, s.path, err)
	}
	return nil
}

// Prune keeps only the newest keepLatest checkpoints of each namespace of each
// given thread, with their writes and the values they reference; everything
// else of those threads goes (keepLatest 0 deletes the threads). Other
// threads are untouched; missing threads and an empty list are no-ops. A
// negative keepLatest is an error. All threads are pruned in one transaction.
func (s *Saver) Prune(ctx context.Context, threadIDs []string, keepLatest int) error {
	if keepLatest < 0 {
		return fmt.Errorf("prune threads %q: keepLatest %d is negative", threadIDs, keepLatest)
	}
	if len(threadIDs) == 0 {
		return s.writable(ctx)
	}
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for _, tid := range threadIDs {
			if _, err := tx.ExecContext(ctx, `DELETE FROM checkpoints WHERE thread_id = ?1 AND (checkpoint_ns, checkpoint_id) IN (
  SELECT checkpoint_ns, checkpoint_id FROM (
    SELECT checkpoint_ns, checkpoint_id, row_number() OVER (PARTITION BY checkpoint_ns ORDER BY checkpoint_id DESC) AS n
    FROM checkpoints WHERE thread_id = ?1)
  WHERE n > ?2)`, tid, keepLatest); err != nil {
				return fmt.Errorf("thread %q: %w", tid, err)
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM writes WHERE thread_id = ?1 AND NOT EXISTS (
  SELECT 1 FROM checkpoints AS c WHERE c.thread_id = ?1
   AND c.checkpoint_ns = writes.checkpoint_ns AND c.checkpoint_id = writes.checkpoint_id)`, tid); err != nil {
				return fmt.Errorf("thread %q: %w", tid, err)
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM blobs WHERE thread_id = ?1
 AND (checkpoint_ns, channel, version) NOT IN (
  SELECT c.checkpoint_ns, v.key, v.value
  FROM checkpoints AS c, json_each(c.checkpoint, '$.channel_versions') AS v
  WHERE c.thread_id = ?1)`, tid); err != nil {
				return fmt.Errorf("thread %q: %w", tid, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("prune %s to %d checkpoints per namespace: %w", s.path, keepLatest, err)
	}
	return nil
}

// CopyThread copies every checkpoint, value and write of srcThreadID, in all
// namespaces, to dstThreadID, keeping checkpoint ids, parents and order, in
// one transaction. Checkpoints and writes already in dstThreadID with the same
// ids are replaced; others are kept. A missing source copies nothing. Empty
// thread ids return an error wrapping checkpoint.ErrNoThread.
func (s *Saver) CopyThread(ctx context.Context, srcThreadID, dstThreadID string) error {
	if srcThreadID == "" || dstThreadID == "" {
		return fmt.Errorf("copy thread %q to %q: %w", srcThreadID, dstThreadID, checkpoint.ErrNoThread)
	}
	if srcThreadID == dstThreadID {
		return s.writable(ctx)
	}
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for _, q := range []string{
			`INSERT OR REPLACE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, ts, checkpoint, metadata)
 SELECT ?2, checkpoint_ns, checkpoint_id, parent_checkpoint_id, ts, checkpoint, metadata FROM checkpoints WHERE thread_id = ?1`,
			`INSERT OR IGNORE INTO blobs (thread_id, checkpoint_ns, channel, version, value)
 SELECT ?2, checkpoint_ns, channel, version, value FROM blobs WHERE thread_id = ?1`,
			`INSERT OR REPLACE INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, value, task_path)
 SELECT ?2, checkpoint_ns, checkpoint_id, task_id, idx, channel, value, task_path FROM writes WHERE thread_id = ?1`,
		} {
			if _, err := tx.ExecContext(ctx, q, srcThreadID, dstThreadID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("copy thread %q to %q in %s: %w", srcThreadID, dstThreadID, s.path, err)
	}
	return nil
}

// checkValue refuses a channel value over the store's write limit:
// checkpoint.MaxValueSize, or the lower one WithMaxValueSize set.
func (s *Saver) checkValue(channel string, version int64, n int) error {
	if s.maxValue < checkpoint.MaxValueSize && n > s.maxValue {
		return fmt.Errorf("the value of channel %q at version %d is %d bytes: %w of %d bytes (sqlite.WithMaxValueSize); nothing was stored", channel, version, n, ErrValueTooLarge, s.maxValue)
	}
	return record.CheckValue(channel, version, n)
}

// checkWrite is checkValue for the value of a pending write.
func (s *Saver) checkWrite(channel string, n int) error {
	if s.maxValue < checkpoint.MaxValueSize && n > s.maxValue {
		return fmt.Errorf("the write to channel %q is %d bytes: %w of %d bytes (sqlite.WithMaxValueSize); nothing was stored", channel, n, ErrValueTooLarge, s.maxValue)
	}
	return record.CheckWrite(channel, n)
}
