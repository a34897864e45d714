package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/internal/record"
)

// Put stores cp as a child of parent in one statement (one round trip, one
// transaction: the function weft_put); see
// checkpoint.Saver. Only channels in newVersions get a stored value (absent
// from cp.ChannelValues means empty); a value already stored for that channel
// and version is kept. Putting a checkpoint id again replaces its header and
// metadata.
//
// A checkpoint of source "loop" (and "input", with WithStrictInput) whose
// parent is not the newest checkpoint of its thread and namespace is refused
// with a *ConflictError wrapping ErrConflict; see the package documentation
// for the full rule.
func (s *Saver) Put(ctx context.Context, parent checkpoint.Ref, cp checkpoint.Checkpoint, md checkpoint.Metadata, newVersions map[string]int64) (checkpoint.Ref, error) {
	if err := s.writable(ctx); err != nil {
		return checkpoint.Ref{}, err
	}
	if err := record.CheckPut(parent, &cp, &md); err != nil {
		return checkpoint.Ref{}, err
	}
	where := func(err error) error {
		return fmt.Errorf("put checkpoint %s in thread %q ns %q: %w", cp.ID, parent.ThreadID, parent.NS, connErr(err))
	}
	if cp.ChannelVersions == nil { // stored as {} so SQL can always join versions to values
		cp.ChannelVersions = map[string]int64{}
	}
	header, err := record.EncodeHeader(&cp)
	if err != nil {
		return checkpoint.Ref{}, where(err)
	}
	mdJSON, err := record.EncodeMetadata(&md)
	if err != nil {
		return checkpoint.Ref{}, where(err)
	}
	chans := make([]string, 0, len(newVersions))
	vers := make([]int64, 0, len(newVersions))
	blobs := make([][]byte, 0, len(newVersions))
	for ch, v := range newVersions {
		var val []byte // nil: the channel is empty at this version
		if b, ok := cp.ChannelValues[ch]; ok {
			if err := record.CheckValue(ch, v, len(b)); err != nil {
				return checkpoint.Ref{}, where(err)
			}
			val = s.cipher.Seal(record.NonNil(b))
		}
		chans = append(chans, ch)
		vers = append(vers, v)
		blobs = append(blobs, val)
	}
	ts := cp.TS.UTC()
	tsMicro, tsNanos := ts.Truncate(time.Microsecond), ts.Nanosecond()%1000
	var parentID *string
	if parent.CheckpointID != "" {
		parentID = &parent.CheckpointID
	}

	_, err = s.pool.Exec(ctx, `SELECT weft_put($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		parent.ThreadID, parent.NS, cp.ID, parentID, md.Source == checkpoint.SourceLoop || (s.strictInput && md.Source == checkpoint.SourceInput),
		tsMicro, tsNanos, string(header), string(mdJSON), chans, vers, blobs)
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
		s.changed()
		return checkpoint.Ref{ThreadID: parent.ThreadID, NS: parent.NS, CheckpointID: cp.ID}, nil
	case errors.As(err, &pgErr) && pgErr.Code == codeConflict:
		return checkpoint.Ref{}, &checkpoint.ConflictError{ThreadID: parent.ThreadID, NS: parent.NS, ParentID: parent.CheckpointID, HeadID: pgErr.Detail, CheckpointID: cp.ID}
	case errors.As(err, &pgErr) && pgErr.Code == codeIDBeforeParent:
		return checkpoint.Ref{}, where(fmt.Errorf("the new id sorts before its parent's: checkpoint ids are UUIDv7 and must grow; is this machine's clock behind the one that wrote %s?", pgErr.Detail))
	default:
		return checkpoint.Ref{}, where(err)
	}
}

// SQLSTATEs weft_put (migrations/0002_put_function.sql) and weft_put_writes
// (0004_leases.sql) raise.
const (
	codeConflict       = "WF001"
	codeIDBeforeParent = "WF002"
	codeWritesConflict = "WF003"
)

// PutWrites stores a task's writes against ref in one statement
// (weft_put_writes); see checkpoint.Saver. Ordinary writes are kept once
// per (taskID, index); special writes (checkpoint.SpecialIndex) replace
// earlier ones. A task's writes to a stored checkpoint that is no longer
// the newest of its thread and namespace are refused with a
// *ConflictError: another writer finished that step first.
func (s *Saver) PutWrites(ctx context.Context, ref checkpoint.Ref, writes []checkpoint.Write, taskID, taskPath string) error {
	if err := s.writable(ctx); err != nil {
		return err
	}
	if err := record.CheckWrites(ref, taskID); err != nil {
		return err
	}
	if len(writes) == 0 {
		return nil
	}
	for _, w := range writes {
		if err := record.CheckWrite(w.Channel, len(w.Value)); err != nil {
			return fmt.Errorf("put %d writes of task %q to checkpoint %s in thread %q ns %q: %w", len(writes), taskID, ref.CheckpointID, ref.ThreadID, ref.NS, err)
		}
	}
	idxs := make([]int32, 0, len(writes))
	chans := make([]string, 0, len(writes))
	vals := make([][]byte, 0, len(writes))
	pos := map[int]int{} // index → position in the batch, to keep one row per index
	for i, w := range writes {
		idx, special := record.WriteIndex(i, w.Channel)
		if at, ok := pos[idx]; ok {
			if special { // a later special write replaces an earlier one
				chans[at], vals[at] = w.Channel, s.cipher.Seal(w.Value)
			}
			continue
		}
		pos[idx] = len(idxs)
		idxs = append(idxs, int32(idx))
		chans = append(chans, w.Channel)
		vals = append(vals, s.cipher.Seal(w.Value))
	}
	_, err := s.pool.Exec(ctx, `SELECT weft_put_writes($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		ref.ThreadID, ref.NS, ref.CheckpointID, taskID, taskPath, taskID != checkpoint.NullTaskID, idxs, chans, vals)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == codeWritesConflict {
		return &checkpoint.ConflictError{ThreadID: ref.ThreadID, NS: ref.NS, ParentID: ref.CheckpointID, HeadID: pgErr.Detail, TaskID: taskID}
	}
	if err != nil {
		return fmt.Errorf("put writes of task %q to checkpoint %s in thread %q ns %q: %w", taskID, ref.CheckpointID, ref.ThreadID, ref.NS, connErr(err))
	}
	s.changed()
	return nil
}
