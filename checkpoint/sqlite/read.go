package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"iter"
	"sort"
	"strings"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/internal/record"
)

// pageSize is how many checkpoints List loads per read transaction.
const pageSize = 256

// row is one checkpoints row.
type row struct {
	thread, ns, id string
	parent         sql.NullString
	ts             string
	md, header     []byte
}

// cursor is the position after the last row of a page, for keyset paging in
// the order checkpoint_id DESC, thread_id, checkpoint_ns.
type cursor struct{ id, thread, ns string }

// selectRows builds the query for the checkpoints opts selects, after c, at
// most limit rows (limit ≤ 0: no limit).
func selectRows(opts checkpoint.ListOptions, conds []record.Cond, withHeader bool, c *cursor, limit int) (string, []any) {
	var b strings.Builder
	var args []any
	b.WriteString("SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, ts, metadata")
	if withHeader {
		b.WriteString(", checkpoint")
	}
	b.WriteString(" FROM checkpoints WHERE 1")
	if opts.ThreadID != "" {
		b.WriteString(" AND thread_id = ?")
		args = append(args, opts.ThreadID)
	}
	if opts.NS != nil {
		b.WriteString(" AND checkpoint_ns = ?")
		args = append(args, *opts.NS)
	}
	if opts.Before != "" {
		b.WriteString(" AND checkpoint_id < ?")
		args = append(args, opts.Before)
	}
	for _, cond := range conds {
		clause, a := condSQL(cond)
		b.WriteString(" AND ")
		b.WriteString(clause)
		args = append(args, a...)
	}
	if c != nil {
		b.WriteString(" AND (checkpoint_id < ? OR (checkpoint_id = ? AND (thread_id > ? OR (thread_id = ? AND checkpoint_ns > ?))))")
		args = append(args, c.id, c.id, c.thread, c.thread, c.ns)
	}
	b.WriteString(" ORDER BY checkpoint_id DESC, thread_id, checkpoint_ns")
	if limit > 0 {
		b.WriteString(" LIMIT ?")
		args = append(args, limit)
	}
	return b.String(), args
}

// condSQL returns the SQL test of one metadata filter condition.
func condSQL(c record.Cond) (string, []any) {
	path, ok := record.SQLPath(c)
	if !ok {
		// A key a JSON path cannot name: look it up among extra's members.
		var test string
		switch c.Kind {
		case record.KindNull:
			return "NOT EXISTS (SELECT 1 FROM json_each(metadata, '$.extra') WHERE key = ? AND type <> 'null')", []any{c.Key}
		case record.KindString:
			test = "type = 'text' AND atom = ?"
		case record.KindNumber:
			test = "type IN ('integer', 'real') AND atom = ?"
		case record.KindBool:
			if c.Value.(bool) {
				return "EXISTS (SELECT 1 FROM json_each(metadata, '$.extra') WHERE key = ? AND type = 'true')", []any{c.Key}
			}
			return "EXISTS (SELECT 1 FROM json_each(metadata, '$.extra') WHERE key = ? AND type = 'false')", []any{c.Key}
		default:
			test = "type IN ('object', 'array') AND value = json(?)"
		}
		return "EXISTS (SELECT 1 FROM json_each(metadata, '$.extra') WHERE key = ? AND " + test + ")", []any{c.Key, condArg(c)}
	}
	switch c.Kind {
	case record.KindNull:
		return "coalesce(json_type(metadata, ?), 'null') = 'null'", []any{path}
	case record.KindString:
		return "(json_type(metadata, ?) = 'text' AND json_extract(metadata, ?) = ?)", []any{path, path, c.Value}
	case record.KindNumber:
		return "(json_type(metadata, ?) IN ('integer', 'real') AND json_extract(metadata, ?) = ?)", []any{path, path, c.Value}
	case record.KindBool:
		if c.Value.(bool) {
			return "json_type(metadata, ?) = 'true'", []any{path}
		}
		return "json_type(metadata, ?) = 'false'", []any{path}
	default:
		return "(json_type(metadata, ?) IN ('object', 'array') AND json_extract(metadata, ?) = json(?))", []any{path, path, c.JSON}
	}
}

func condArg(c record.Cond) any {
	if c.Kind == record.KindOther {
		return c.JSON
	}
	return c.Value
}

// queryRows runs a checkpoints query built by selectRows.
func (s *Saver) queryRows(ctx context.Context, tx *sql.Tx, q string, args []any, withHeader bool) ([]row, error) {
	st, err := s.stmt(ctx, tx, q)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []row
	for rows.Next() {
		var r row
		var md, header sql.RawBytes
		dest := []any{&r.thread, &r.ns, &r.id, &r.parent, &r.ts, &md}
		if withHeader {
			dest = append(dest, &header)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		r.md = append([]byte(nil), md...)
		if withHeader {
			r.header = append([]byte(nil), header...)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Get returns the checkpoint ref names, or the latest of its thread and
// namespace when ref.CheckpointID is ""; see checkpoint.Saver. It returns an
// error wrapping checkpoint.ErrNotFound when there is none.
func (s *Saver) Get(ctx context.Context, ref checkpoint.Ref) (*checkpoint.Tuple, error) {
	if ref.ThreadID == "" {
		return nil, fmt.Errorf("get checkpoint %q: %w", ref.CheckpointID, checkpoint.ErrNoThread)
	}
	var q string
	var args []any
	if ref.CheckpointID == "" {
		q = "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, ts, metadata, checkpoint FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? ORDER BY checkpoint_id DESC LIMIT 1"
		args = []any{ref.ThreadID, ref.NS}
	} else {
		q = "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, ts, metadata, checkpoint FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"
		args = []any{ref.ThreadID, ref.NS, ref.CheckpointID}
	}
	var tuples []*checkpoint.Tuple
	err := s.read(ctx, func(tx *sql.Tx) error {
		rows, err := s.queryRows(ctx, tx, q, args, true)
		if err != nil {
			return err
		}
		tuples, err = s.load(ctx, tx, rows)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("get checkpoint %q in thread %q ns %q from %s: %w", ref.CheckpointID, ref.ThreadID, ref.NS, s.path, err)
	}
	if len(tuples) == 0 {
		if ref.CheckpointID == "" {
			return nil, fmt.Errorf("thread %q ns %q has no checkpoint: %w", ref.ThreadID, ref.NS, checkpoint.ErrNotFound)
		}
		return nil, fmt.Errorf("checkpoint %q in thread %q ns %q: %w", ref.CheckpointID, ref.ThreadID, ref.NS, checkpoint.ErrNotFound)
	}
	return tuples[0], nil
}

// maxCachedStmts bounds the read statement cache; List and ListHeaders build
// their SQL from the shape of the options, so a handful of texts is usual.
const maxCachedStmts = 128

// stmt returns q prepared for tx, from a cache of statements prepared on the
// read pool (database/sql prepares each once per connection).
func (s *Saver) stmt(ctx context.Context, tx *sql.Tx, q string) (*sql.Stmt, error) {
	s.readStmts.Lock()
	st := s.readStmts.m[q]
	if st == nil && len(s.readStmts.m) < maxCachedStmts {
		var err error
		if st, err = s.r.PrepareContext(ctx, q); err != nil {
			s.readStmts.Unlock()
			return nil, err
		}
		if s.readStmts.m == nil {
			s.readStmts.m = map[string]*sql.Stmt{}
		}
		s.readStmts.m[q] = st
	}
	s.readStmts.Unlock()
	if st == nil { // cache full: a one-off statement, closed with tx
		return tx.PrepareContext(ctx, q)
	}
	return tx.StmtContext(ctx, st), nil
}

// read runs fn in a read transaction on the read pool.
func (s *Saver) read(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return s.mapErr(err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return s.mapErr(err)
	}
	return s.mapErr(tx.Commit())
}

// List yields the checkpoints opts selects, newest first (ties by thread id,
// then namespace); see checkpoint.Saver and checkpoint.ListOptions. It reads
// pages of checkpoints, each in its own read transaction with one query for
// the page's values and one for its writes, and holds no connection while the
// caller ranges.
func (s *Saver) List(ctx context.Context, opts checkpoint.ListOptions) iter.Seq2[*checkpoint.Tuple, error] {
	return func(yield func(*checkpoint.Tuple, error) bool) {
		conds, err := record.CompileFilter(opts.Filter)
		if err != nil {
			yield(nil, fmt.Errorf("list checkpoints in %s: %w", s.path, err))
			return
		}
		remaining := opts.Limit
		var after *cursor
		for {
			n := pageSize
			if remaining > 0 && remaining < n {
				n = remaining
			}
			q, args := selectRows(opts, conds, true, after, n)
			var page []*checkpoint.Tuple
			err := s.read(ctx, func(tx *sql.Tx) error {
				rows, err := s.queryRows(ctx, tx, q, args, true)
				if err != nil {
					return err
				}
				page, err = s.load(ctx, tx, rows)
				return err
			})
			if err != nil {
				yield(nil, fmt.Errorf("list checkpoints (%s) in %s: %w", describeOpts(opts), s.path, err))
				return
			}
			for _, t := range page {
				if !yield(t, nil) {
					return
				}
			}
			if len(page) < n {
				return
			}
			if remaining > 0 {
				if remaining -= len(page); remaining == 0 {
					return
				}
			}
			last := page[len(page)-1].Ref
			after = &cursor{last.CheckpointID, last.ThreadID, last.NS}
		}
	}
}

func describeOpts(o checkpoint.ListOptions) string {
	ns := "any"
	if o.NS != nil {
		ns = fmt.Sprintf("%q", *o.NS)
	}
	return fmt.Sprintf("thread %q, ns %s, before %q, limit %d, filter %v", o.ThreadID, ns, o.Before, o.Limit, o.Filter)
}

// ListHeaders returns the headers of the checkpoints List would yield for
// opts, in the same order, reading neither values nor writes.
func (s *Saver) ListHeaders(ctx context.Context, opts checkpoint.ListOptions) ([]checkpoint.Header, error) {
	conds, err := record.CompileFilter(opts.Filter)
	if err != nil {
		return nil, fmt.Errorf("list checkpoint headers in %s: %w", s.path, err)
	}
	q, args := selectRows(opts, conds, false, nil, opts.Limit)
	var out []checkpoint.Header
	err = s.read(ctx, func(tx *sql.Tx) error {
		st, err := s.stmt(ctx, tx, q)
		if err != nil {
			return err
		}
		rows, err := st.QueryContext(ctx, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var h checkpoint.Header
			var parent sql.NullString
			var ts string
			var md sql.RawBytes
			if err := rows.Scan(&h.Ref.ThreadID, &h.Ref.NS, &h.Ref.CheckpointID, &parent, &ts, &md); err != nil {
				return err
			}
			if h.TS, err = record.ParseTS(ts); err != nil {
				return fmt.Errorf("checkpoint %q in thread %q: %w", h.Ref.CheckpointID, h.Ref.ThreadID, err)
			}
			if h.Metadata, err = record.DecodeMetadata(md); err != nil {
				return fmt.Errorf("checkpoint %q in thread %q: %w", h.Ref.CheckpointID, h.Ref.ThreadID, err)
			}
			if parent.Valid && parent.String != "" {
				h.Parent = &checkpoint.Ref{ThreadID: h.Ref.ThreadID, NS: h.Ref.NS, CheckpointID: parent.String}
			}
			out = append(out, h)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("list checkpoint headers (%s) in %s: %w", describeOpts(opts), s.path, err)
	}
	if out == nil {
		out = []checkpoint.Header{}
	}
	return out, nil
}

// group is the rows of one page that share a thread and namespace: their
// values and writes are fetched with one query each.
type group struct {
	thread, ns string
	tuples     []*checkpoint.Tuple
	byID       map[string]int // checkpoint id → index in tuples
	versions   map[string][]int64
}

// CROSS JOIN keeps SQLite from scanning the table first: it cannot tell how
// few rows json_each yields.
const (
	sqlGroupBlobs = `SELECT c.key, v.value, b.value, b.value IS NULL
FROM json_each(?3) AS c CROSS JOIN json_each(c.value) AS v
CROSS JOIN blobs AS b ON b.thread_id = ?1 AND b.checkpoint_ns = ?2 AND b.channel = c.key AND b.version = v.value`
	sqlGroupWrites = `SELECT w.checkpoint_id, w.task_id, w.idx, w.channel, w.value, w.value IS NULL, w.task_path
FROM json_each(?3) AS k
CROSS JOIN writes AS w ON w.thread_id = ?1 AND w.checkpoint_ns = ?2 AND w.checkpoint_id = k.value`
)

type valueKey struct {
	channel string
	version int64
}

// blobValue is a fetched value; owned reports that a tuple already holds the
// slice, so the next one needs a copy.
type blobValue struct {
	b     []byte
	owned bool
}

// load turns checkpoints rows into tuples: it decodes the headers, then per
// thread and namespace of the page fetches every referenced value with one
// query and every pending write with another.
func (s *Saver) load(ctx context.Context, tx *sql.Tx, rows []row) ([]*checkpoint.Tuple, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	tuples := make([]*checkpoint.Tuple, len(rows))
	var groups []*group
	for i, r := range rows {
		ts, err := record.ParseTS(r.ts)
		if err != nil {
			return nil, fmt.Errorf("checkpoint %q in thread %q: %w", r.id, r.thread, err)
		}
		cp, err := record.DecodeHeader(r.header, r.id, ts)
		if err != nil {
			return nil, fmt.Errorf("thread %q ns %q: %w", r.thread, r.ns, err)
		}
		md, err := record.DecodeMetadata(r.md)
		if err != nil {
			return nil, fmt.Errorf("checkpoint %q in thread %q: %w", r.id, r.thread, err)
		}
		t := &checkpoint.Tuple{
			Ref:           checkpoint.Ref{ThreadID: r.thread, NS: r.ns, CheckpointID: r.id},
			Checkpoint:    cp,
			Metadata:      md,
			PendingWrites: []checkpoint.PendingWrite{},
		}
		if r.parent.Valid && r.parent.String != "" {
			t.Parent = &checkpoint.Ref{ThreadID: r.thread, NS: r.ns, CheckpointID: r.parent.String}
		}
		tuples[i] = t
		var g *group
		for _, x := range groups {
			if x.thread == r.thread && x.ns == r.ns {
				g = x
				break
			}
		}
		if g == nil {
			g = &group{thread: r.thread, ns: r.ns, byID: map[string]int{}, versions: map[string][]int64{}}
			groups = append(groups, g)
		}
		g.byID[r.id] = len(g.tuples)
		g.tuples = append(g.tuples, t)
		for ch, v := range cp.ChannelVersions {
			if vs := g.versions[ch]; len(vs) == 0 || vs[len(vs)-1] != v {
				g.versions[ch] = append(vs, v) // consecutive checkpoints often share a version
			}
		}
	}
	blobs, err := s.stmt(ctx, tx, sqlGroupBlobs)
	if err != nil {
		return nil, err
	}
	writes, err := s.stmt(ctx, tx, sqlGroupWrites)
	if err != nil {
		return nil, err
	}
	for _, g := range groups {
		if err := s.loadValues(ctx, blobs, g); err != nil {
			return nil, err
		}
		if err := s.loadWrites(ctx, writes, g); err != nil {
			return nil, err
		}
	}
	return tuples, nil
}

// loadValues fills the channel values of a group's tuples.
func (s *Saver) loadValues(ctx context.Context, st *sql.Stmt, g *group) error {
	if len(g.versions) == 0 {
		return nil
	}
	param, err := json.Marshal(g.versions)
	if err != nil {
		return err
	}
	rs, err := st.QueryContext(ctx, g.thread, g.ns, string(param))
	if err != nil {
		return err
	}
	defer rs.Close()
	values := map[valueKey]*blobValue{}
	for rs.Next() {
		var k valueKey
		var v []byte
		var isNull bool
		if err := rs.Scan(&k.channel, &k.version, &v, &isNull); err != nil {
			return err
		}
		if isNull {
			continue
		}
		if v == nil {
			v = []byte{}
		}
		if s.cipher != nil {
			plain, err := s.cipher.Open(v)
			if err != nil {
				return fmt.Errorf("value of channel %q version %d in thread %q ns %q: %w", k.channel, k.version, g.thread, g.ns, err)
			}
			v = plain
		}
		values[k] = &blobValue{b: v}
	}
	if err := rs.Err(); err != nil {
		return err
	}
	for _, t := range g.tuples {
		for ch, v := range t.Checkpoint.ChannelVersions {
			bv := values[valueKey{ch, v}]
			if bv == nil {
				continue
			}
			if bv.owned {
				t.Checkpoint.ChannelValues[ch] = record.CloneBytes(bv.b)
			} else {
				t.Checkpoint.ChannelValues[ch] = bv.b
				bv.owned = true
			}
		}
	}
	return nil
}

// loadWrites fills the pending writes of a group's tuples.
func (s *Saver) loadWrites(ctx context.Context, st *sql.Stmt, g *group) error {
	ids := make([]string, len(g.tuples))
	for i, t := range g.tuples {
		ids[i] = t.Ref.CheckpointID
	}
	param, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	rs, err := st.QueryContext(ctx, g.thread, g.ns, string(param))
	if err != nil {
		return err
	}
	defer rs.Close()
	idxs := make([][]int, len(g.tuples))
	for rs.Next() {
		var id string
		var idx int
		var w checkpoint.PendingWrite
		var isNull bool
		if err := rs.Scan(&id, &w.TaskID, &idx, &w.Channel, &w.Value, &isNull, &w.TaskPath); err != nil {
			return err
		}
		switch {
		case isNull:
			w.Value = nil
		case w.Value == nil:
			w.Value = []byte{}
		}
		if s.cipher != nil && w.Value != nil {
			plain, err := s.cipher.Open(w.Value)
			if err != nil {
				return fmt.Errorf("write %d of task %q to checkpoint %q in thread %q: %w", idx, w.TaskID, id, g.thread, err)
			}
			w.Value = plain
		}
		i := g.byID[id]
		g.tuples[i].PendingWrites = append(g.tuples[i].PendingWrites, w)
		idxs[i] = append(idxs[i], idx)
	}
	if err := rs.Err(); err != nil {
		return err
	}
	// The primary key scan yields each checkpoint's writes by task id and
	// index already; make sure of it without relying on the plan.
	for i, t := range g.tuples {
		sortWrites(t.PendingWrites, idxs[i])
	}
	return nil
}

// sortWrites orders ws (with their indexes) by task id, then index.
func sortWrites(ws []checkpoint.PendingWrite, idxs []int) {
	less := func(a, b int) bool {
		if ws[a].TaskID != ws[b].TaskID {
			return ws[a].TaskID < ws[b].TaskID
		}
		return idxs[a] < idxs[b]
	}
	sorted := true
	for i := 1; i < len(ws) && sorted; i++ {
		sorted = !less(i, i-1)
	}
	if sorted {
		return
	}
	sort.Sort(writeSorter{ws, idxs})
}

type writeSorter struct {
	ws   []checkpoint.PendingWrite
	idxs []int
}

func (s writeSorter) Len() int { return len(s.ws) }
func (s writeSorter) Less(a, b int) bool {
	if s.ws[a].TaskID != s.ws[b].TaskID {
		return s.ws[a].TaskID < s.ws[b].TaskID
	}
	return s.idxs[a] < s.idxs[b]
}
func (s writeSorter) Swap(a, b int) {
	s.ws[a], s.ws[b] = s.ws[b], s.ws[a]
	s.idxs[a], s.idxs[b] = s.idxs[b], s.idxs[a]
}
