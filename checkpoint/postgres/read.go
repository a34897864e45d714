package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/crypt"
	"github.com/weftstudio/weft/checkpoint/internal/record"
)

// tupleColumns selects everything a tuple needs from weft_checkpoints c: the
// header, metadata, the values of its channel versions (non-empty ones,
// ordered by channel) and its pending writes (ordered by task id, index).
const tupleColumns = `c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.ts, c.ts_ns, c.checkpoint, c.metadata,
	vals.chans, vals.blobs, w.task_ids, w.channels, w.blobs, w.paths`

// tupleJoins supplies the vals.* and w.* columns of tupleColumns. Arrays
// are NULL when there are no values or writes.
const tupleJoins = `LEFT JOIN LATERAL (SELECT array_agg(b.channel ORDER BY b.channel) AS chans, array_agg(b.blob ORDER BY b.channel) AS blobs
	FROM jsonb_each_text(c.checkpoint->'channel_versions') v
	JOIN weft_blobs b ON b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns AND b.channel = v.key AND b.version = v.value::bigint
	WHERE b.blob IS NOT NULL) vals ON true
LEFT JOIN LATERAL (SELECT array_agg(x.task_id ORDER BY x.task_id, x.idx) AS task_ids,
		array_agg(x.channel ORDER BY x.task_id, x.idx) AS channels,
		array_agg(x.blob ORDER BY x.task_id, x.idx) AS blobs,
		array_agg(x.task_path ORDER BY x.task_id, x.idx) AS paths
	FROM weft_writes x WHERE x.thread_id = c.thread_id AND x.checkpoint_ns = c.checkpoint_ns AND x.checkpoint_id = c.checkpoint_id) w ON true`

// tupleRow is one row of tupleColumns.
type tupleRow struct {
	thread, ns, id string
	parent         *string
	ts             time.Time
	tsNanos        int32
	header, md     []byte
	chans          []string
	blobs          [][]byte
	wTasks, wChans []string
	wBlobs         [][]byte
	wPaths         []string
}

func (r *tupleRow) dest() []any {
	return []any{&r.thread, &r.ns, &r.id, &r.parent, &r.ts, &r.tsNanos, &r.header, &r.md,
		&r.chans, &r.blobs, &r.wTasks, &r.wChans, &r.wBlobs, &r.wPaths}
}

// timestamp rebuilds a stored timestamp, in UTC, to the nanosecond.
func timestamp(ts time.Time, nanos int32) time.Time {
	return ts.UTC().Add(time.Duration(nanos))
}

func (r *tupleRow) tuple(c *crypt.Cipher) (*checkpoint.Tuple, error) {
	where := func(err error) error {
		return fmt.Errorf("checkpoint %s in thread %q ns %q: %w", r.id, r.thread, r.ns, err)
	}
	cp, err := record.DecodeHeader(r.header, r.id, timestamp(r.ts, r.tsNanos))
	if err != nil {
		return nil, where(err)
	}
	for i, ch := range r.chans {
		v, err := c.Open(r.blobs[i])
		if err != nil {
			return nil, where(fmt.Errorf("channel %q: %w", ch, err))
		}
		cp.ChannelValues[ch] = record.NonNil(v)
	}
	md, err := record.DecodeMetadata(r.md)
	if err != nil {
		return nil, where(err)
	}
	t := &checkpoint.Tuple{
		Ref:           checkpoint.Ref{ThreadID: r.thread, NS: r.ns, CheckpointID: r.id},
		Checkpoint:    cp,
		Metadata:      md,
		PendingWrites: make([]checkpoint.PendingWrite, len(r.wTasks)),
	}
	if r.parent != nil && *r.parent != "" {
		t.Parent = &checkpoint.Ref{ThreadID: r.thread, NS: r.ns, CheckpointID: *r.parent}
	}
	for i := range r.wTasks {
		v, err := c.Open(r.wBlobs[i])
		if err != nil {
			return nil, where(fmt.Errorf("write to %q of task %s: %w", r.wChans[i], r.wTasks[i], err))
		}
		t.PendingWrites[i] = checkpoint.PendingWrite{TaskID: r.wTasks[i], Channel: r.wChans[i], Value: v, TaskPath: r.wPaths[i]}
	}
	return t, nil
}

// Get returns the checkpoint ref names, or the latest (highest id) of its
// thread and namespace when ref.CheckpointID is ""; see checkpoint.Saver. It
// returns an error wrapping checkpoint.ErrNotFound when there is none, and
// checkpoint.ErrNoThread for an empty thread id.
func (s *Saver) Get(ctx context.Context, ref checkpoint.Ref) (*checkpoint.Tuple, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if ref.ThreadID == "" {
		return nil, fmt.Errorf("get checkpoint %q: %w", ref.CheckpointID, checkpoint.ErrNoThread)
	}
	q := `SELECT ` + tupleColumns + ` FROM weft_checkpoints c ` + tupleJoins + `
		WHERE c.thread_id = $1 AND c.checkpoint_ns = $2`
	args := []any{ref.ThreadID, ref.NS}
	if ref.CheckpointID != "" {
		q += ` AND c.checkpoint_id = $3`
		args = append(args, ref.CheckpointID)
	} else {
		q += ` ORDER BY c.checkpoint_id DESC LIMIT 1`
	}
	var r tupleRow
	err := s.pool.QueryRow(ctx, q, args...).Scan(r.dest()...)
	if errors.Is(err, pgx.ErrNoRows) {
		if ref.CheckpointID == "" {
			return nil, fmt.Errorf("thread %q ns %q has no checkpoint: %w", ref.ThreadID, ref.NS, checkpoint.ErrNotFound)
		}
		return nil, fmt.Errorf("checkpoint %q in thread %q ns %q: %w", ref.CheckpointID, ref.ThreadID, ref.NS, checkpoint.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get checkpoint %q in thread %q ns %q: %w", ref.CheckpointID, ref.ThreadID, ref.NS, connErr(err))
	}
	return r.tuple(s.cipher)
}

// selection is the WHERE clause and arguments of a List query.
type selection struct {
	where []string
	args  []any
}

func (q *selection) arg(v any) string {
	q.args = append(q.args, v)
	return fmt.Sprintf("$%d", len(q.args))
}

func (q *selection) add(cond string) { q.where = append(q.where, cond) }

func (q *selection) clause() string {
	if len(q.where) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(q.where, " AND ")
}

// selectFor turns list options into conditions on weft_checkpoints c.
// Scalar filter values become one JSONB containment test; objects and arrays
// are compared for JSONB equality; a nil value matches a missing or null key.
func selectFor(opts checkpoint.ListOptions) (*selection, error) {
	conds, err := record.CompileFilter(opts.Filter)
	if err != nil {
		return nil, err
	}
	q := &selection{}
	if opts.ThreadID != "" {
		q.add("c.thread_id = " + q.arg(opts.ThreadID))
	}
	if opts.NS != nil {
		q.add("c.checkpoint_ns = " + q.arg(*opts.NS))
	}
	if opts.Before != "" {
		q.add("c.checkpoint_id < " + q.arg(opts.Before))
	}
	if err := q.addFilter(conds); err != nil {
		return nil, err
	}
	return q, nil
}

// addFilter adds the conditions of a compiled metadata filter on
// weft_checkpoints c's metadata.
func (q *selection) addFilter(conds []record.Cond) error {
	contain := map[string]any{}
	extra := map[string]any{}
	for _, c := range conds {
		path := []string{c.Key}
		if !c.TopLevel {
			path = []string{"extra", c.Key}
		}
		switch c.Kind {
		case record.KindNull:
			q.add("coalesce(c.metadata #> " + q.arg(path) + "::text[], 'null'::jsonb) = 'null'::jsonb")
		case record.KindOther:
			q.add("c.metadata #> " + q.arg(path) + "::text[] = " + q.arg(c.JSON) + "::jsonb")
		default:
			if c.TopLevel {
				contain[c.Key] = c.Value
			} else {
				extra[c.Key] = c.Value
			}
		}
	}
	if len(extra) > 0 {
		contain["extra"] = extra
	}
	if len(contain) > 0 {
		b, err := json.Marshal(contain)
		if err != nil {
			return fmt.Errorf("metadata filter: %w", err)
		}
		q.add("c.metadata @> " + q.arg(string(b)) + "::jsonb")
	}
	return nil
}

// listPage is how many tuples List reads per query. List holds no
// connection while the caller handles what it yielded.
const listPage = 100

// List yields the checkpoints opts selects, newest first (ties by thread id,
// then namespace), with their values and pending writes; see
// checkpoint.Saver and checkpoint.ListOptions. It reads pages of 100
// tuples, so a long history never sits in memory whole and the caller may
// use the store while ranging; a checkpoint deleted meanwhile is skipped.
func (s *Saver) List(ctx context.Context, opts checkpoint.ListOptions) iter.Seq2[*checkpoint.Tuple, error] {
	return func(yield func(*checkpoint.Tuple, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(nil, err)
			return
		}
		base, err := selectFor(opts)
		if err != nil {
			yield(nil, fmt.Errorf("list checkpoints: %w", err))
			return
		}
		left := opts.Limit // 0: no limit
		var last *checkpoint.Ref
		for {
			q := &selection{where: append([]string(nil), base.where...), args: append([]any(nil), base.args...)}
			if last != nil {
				id, th, ns := q.arg(last.CheckpointID), q.arg(last.ThreadID), q.arg(last.NS)
				q.add(fmt.Sprintf("(c.checkpoint_id < %s OR (c.checkpoint_id = %s AND (c.thread_id > %s OR (c.thread_id = %s AND c.checkpoint_ns > %s))))", id, id, th, th, ns))
			}
			n := listPage
			if opts.Limit > 0 && left < n {
				n = left
			}
			page, err := s.listPage(ctx, q, n)
			if err != nil {
				yield(nil, fmt.Errorf("list checkpoints (%s): %w", describeOpts(opts), connErr(err)))
				return
			}
			for _, t := range page {
				if err := ctx.Err(); err != nil {
					yield(nil, err)
					return
				}
				if !yield(t, nil) {
					return
				}
			}
			if len(page) < n {
				return
			}
			if opts.Limit > 0 {
				if left -= len(page); left <= 0 {
					return
				}
			}
			last = &page[len(page)-1].Ref
		}
	}
}

func (s *Saver) listPage(ctx context.Context, q *selection, n int) ([]*checkpoint.Tuple, error) {
	sql := `SELECT ` + tupleColumns + ` FROM weft_checkpoints c ` + tupleJoins + q.clause() +
		` ORDER BY c.checkpoint_id DESC, c.thread_id, c.checkpoint_ns LIMIT ` + fmt.Sprint(n)
	rows, err := s.pool.Query(ctx, sql, q.args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*checkpoint.Tuple
	for rows.Next() {
		var r tupleRow
		if err := rows.Scan(r.dest()...); err != nil {
			return nil, err
		}
		t, err := r.tuple(s.cipher)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// ListHeaders returns the headers of the checkpoints List would yield for
// opts, in the same order, without values or writes, in one query.
func (s *Saver) ListHeaders(ctx context.Context, opts checkpoint.ListOptions) ([]checkpoint.Header, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	q, err := selectFor(opts)
	if err != nil {
		return nil, fmt.Errorf("list checkpoint headers: %w", err)
	}
	sql := `SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.ts, c.ts_ns, c.metadata
		FROM weft_checkpoints c` + q.clause() + ` ORDER BY c.checkpoint_id DESC, c.thread_id, c.checkpoint_ns`
	if opts.Limit > 0 {
		sql += fmt.Sprintf(" LIMIT %d", opts.Limit)
	}
	rows, err := s.pool.Query(ctx, sql, q.args...)
	if err != nil {
		return nil, fmt.Errorf("list checkpoint headers (%s): %w", describeOpts(opts), connErr(err))
	}
	defer rows.Close()
	buf := record.NewHeaderBuf(opts.Limit)
	for rows.Next() {
		var (
			thread, ns, id string
			parent         *string
			ts             time.Time
			nanos          int32
			mdJSON         []byte
		)
		if err := rows.Scan(&thread, &ns, &id, &parent, &ts, &nanos, &mdJSON); err != nil {
			return nil, fmt.Errorf("list checkpoint headers: %w", connErr(err))
		}
		md, err := record.DecodeMetadata(mdJSON)
		if err != nil {
			return nil, fmt.Errorf("checkpoint %s in thread %q ns %q: %w", id, thread, ns, err)
		}
		h := checkpoint.Header{Ref: checkpoint.Ref{ThreadID: thread, NS: ns, CheckpointID: id}, TS: timestamp(ts, nanos), Metadata: md}
		if parent != nil && *parent != "" {
			h.Parent = &checkpoint.Ref{ThreadID: thread, NS: ns, CheckpointID: *parent}
		}
		buf.Add(h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list checkpoint headers (%s): %w", describeOpts(opts), connErr(err))
	}
	return buf.Headers(), nil
}

// describeOpts prints list options for error messages.
func describeOpts(o checkpoint.ListOptions) string {
	ns := "all namespaces"
	if o.NS != nil {
		ns = fmt.Sprintf("ns %q", *o.NS)
	}
	th := "all threads"
	if o.ThreadID != "" {
		th = fmt.Sprintf("thread %q", o.ThreadID)
	}
	return fmt.Sprintf("%s, %s, filter %v, before %q, limit %d", th, ns, o.Filter, o.Before, o.Limit)
}

// WriteKinds returns the pending writes of checkpoint ref.CheckpointID as
// Get returns them (by task id, then index), without their values: what
// the studio's timeline marks read (checkpoint.WriteKindsReader). A
// missing checkpoint is an error wrapping checkpoint.ErrNotFound.
func (s *Saver) WriteKinds(ctx context.Context, ref checkpoint.Ref) ([]checkpoint.PendingWrite, error) {
	if ref.ThreadID == "" {
		return nil, fmt.Errorf("write kinds of checkpoint %q: %w", ref.CheckpointID, checkpoint.ErrNoThread)
	}
	// One statement: the checkpoint's existence and its writes in one
	// snapshot. A missing checkpoint gives no row.
	rows, err := s.pool.Query(ctx, `SELECT x.task_id, x.channel, x.task_path FROM weft_checkpoints c
	LEFT JOIN weft_writes x ON x.thread_id = c.thread_id AND x.checkpoint_ns = c.checkpoint_ns AND x.checkpoint_id = c.checkpoint_id
	WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 AND c.checkpoint_id = $3
	ORDER BY x.task_id, x.idx`, ref.ThreadID, ref.NS, ref.CheckpointID)
	if err != nil {
		return nil, fmt.Errorf("write kinds of checkpoint %q in thread %q ns %q: %w", ref.CheckpointID, ref.ThreadID, ref.NS, connErr(err))
	}
	defer rows.Close()
	found := false
	out := []checkpoint.PendingWrite{}
	for rows.Next() {
		found = true
		var task, channel, path *string
		if err := rows.Scan(&task, &channel, &path); err != nil {
			return nil, fmt.Errorf("write kinds of checkpoint %q in thread %q ns %q: %w", ref.CheckpointID, ref.ThreadID, ref.NS, connErr(err))
		}
		if task != nil { // nil: the checkpoint has no writes
			out = append(out, checkpoint.PendingWrite{TaskID: *task, Channel: *channel, TaskPath: *path})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("write kinds of checkpoint %q in thread %q ns %q: %w", ref.CheckpointID, ref.ThreadID, ref.NS, connErr(err))
	}
	if !found {
		return nil, fmt.Errorf("checkpoint %q in thread %q ns %q: %w", ref.CheckpointID, ref.ThreadID, ref.NS, checkpoint.ErrNotFound)
	}
	return out, nil
}
