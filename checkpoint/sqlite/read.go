package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/internal/record"
)

// pageSize is how many checkpoints List loads per read transaction.
const pageSize = 256

// interner returns one string per distinct byte sequence it is given, so
// names repeated across rows (threads, namespaces, channels, tasks) are
// allocated once per page.
type interner map[string]string

func (in interner) get(b []byte) string {
	if v, ok := in[string(b)]; ok { // no allocation for the lookup
		return v
	}
	v := string(b)
	in[v] = v
	return v
}

// cursor is the position after the last row of a page, for keyset paging in
// the order checkpoint_id DESC, thread_id, checkpoint_ns.
type cursor struct{ id, thread, ns string }

// selectRows builds the query for the checkpoints opts selects, after c, at
// most limit rows (limit ≤ 0: no limit). It selects thread_id and
// checkpoint_ns only when opts does not fix them (see fixedRef).
func selectRows(opts checkpoint.ListOptions, conds []record.Cond, withHeader bool, c *cursor, limit int) (string, []any) {
	var b strings.Builder
	var args []any
	b.WriteString("SELECT ")
	if opts.ThreadID == "" || opts.NS == nil {
		b.WriteString("thread_id, checkpoint_ns, ")
	}
	b.WriteString("checkpoint_id, parent_checkpoint_id, ts, metadata")
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

// fixedRef returns the thread and namespace every row of a query for opts
// has, or nil when they vary.
func fixedRef(opts checkpoint.ListOptions) *checkpoint.Ref {
	if opts.ThreadID == "" || opts.NS == nil {
		return nil
	}
	return &checkpoint.Ref{ThreadID: opts.ThreadID, NS: *opts.NS}
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

// Get returns the checkpoint ref names, or the latest of its thread and
// namespace when ref.CheckpointID is ""; see checkpoint.Saver. It returns an
// error wrapping checkpoint.ErrNotFound when there is none.
func (s *Saver) Get(ctx context.Context, ref checkpoint.Ref) (*checkpoint.Tuple, error) {
	if ref.ThreadID == "" {
		return nil, fmt.Errorf("get checkpoint %q: %w", ref.CheckpointID, checkpoint.ErrNoThread)
	}
	key := snapKey{ref.ThreadID, ref.NS, ref.CheckpointID}
	hit, version, keep := s.cachedGet(ctx, key)
	if hit != nil {
		return hit, nil
	}
	q, args := sqlGetLatest, []any{ref.ThreadID, ref.NS}
	if ref.CheckpointID != "" {
		q, args = sqlGetByID, append(args, ref.CheckpointID)
	}
	p, err := s.getPage(ctx, q, args, &checkpoint.Ref{ThreadID: ref.ThreadID, NS: ref.NS})
	if err == nil {
		err = s.assemble(p, interner{})
	}
	if err != nil {
		if ref.CheckpointID == "" {
			return nil, fmt.Errorf("get the latest checkpoint of thread %q ns %q from %s: %w", ref.ThreadID, ref.NS, s.path, err)
		}
		return nil, fmt.Errorf("get checkpoint %q in thread %q ns %q from %s: %w", ref.CheckpointID, ref.ThreadID, ref.NS, s.path, err)
	}
	if len(p.tuples) == 0 {
		if ref.CheckpointID == "" {
			return nil, fmt.Errorf("thread %q ns %q has no checkpoint: %w", ref.ThreadID, ref.NS, checkpoint.ErrNotFound)
		}
		return nil, fmt.Errorf("checkpoint %q in thread %q ns %q: %w", ref.CheckpointID, ref.ThreadID, ref.NS, checkpoint.ErrNotFound)
	}
	if keep {
		s.keep(key, version, p.tuples[0])
	}
	return p.tuples[0], nil
}

// getPage reads one checkpoint, its values and its writes with q (sqlGet…)
// as one page. One statement reads one snapshot of the database, so no
// transaction is needed: Get, what the studio and GetState call most, is one
// round through the driver instead of a transaction of three queries.
func (s *Saver) getPage(ctx context.Context, q string, args []any, fixed *checkpoint.Ref) (*page, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	st, err := s.stmt(ctx, nil, q)
	if err != nil {
		return nil, s.mapErr(err)
	}
	if st == nil { // the statement cache is full
		if st, err = s.r.PrepareContext(ctx, q); err != nil {
			return nil, s.mapErr(err)
		}
		defer st.Close()
	}
	rows, err := st.QueryContext(context.WithoutCancel(ctx), args...) // see read
	if err != nil {
		return nil, s.mapErr(err)
	}
	defer rows.Close()
	p := &page{}
	var a, b, c, d, e, f sql.RawBytes
	var kind int
	var last storedWrite
	for rows.Next() {
		if err := rows.Scan(&kind, &a, &b, &c, &d, &e, &f); err != nil {
			return nil, s.mapErr(err)
		}
		switch kind {
		case 0: // id, parent, ts, metadata, header
			if err := p.addCheckpoint(fixed, nil, nil, nil, a, b, c, d, e, 1); err != nil {
				return nil, err
			}
		case 1: // channel, version, value
			if len(p.groups) == 0 {
				return nil, errors.New("the values query returned a value before the checkpoint")
			}
			version, err := strconv.ParseInt(string(b), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("value of channel %q: version %q: %w", a, b, err)
			}
			g := p.groups[0]
			g.values = append(g.values, storedValue{p.arena.Copy(a), version, p.arena.Copy(c)})
		case 2: // checkpoint id, task id, packed index, channel, value, path
			if len(p.groups) == 0 {
				return nil, errors.New("the writes query returned a write before the checkpoint")
			}
			packed, err := strconv.ParseInt(string(c), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("write of task %q: index %q: %w", b, c, err)
			}
			last = p.addWrite(p.groups[0], last, a, b, packed, d, e, f)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, s.mapErr(err)
	}
	return p, nil
}

// maxCachedStmts bounds the read statement cache; List and ListHeaders build
// their SQL from the shape of the options, so a handful of texts is usual.
const maxCachedStmts = 128

// stmt returns q prepared for tx, from a cache of statements prepared on the
// read pool (database/sql prepares each once per connection). With a nil tx
// it returns the pool's statement itself, or nil when the cache is full.
func (s *Saver) stmt(ctx context.Context, tx *sql.Tx, q string) (*sql.Stmt, error) {
	s.readStmts.Lock()
	st := s.readStmts.m[q]
	s.readStmts.Unlock()
	switch {
	case st != nil && tx == nil:
		return st, nil
	case st != nil:
		return tx.StmtContext(ctx, st), nil
	case tx != nil:
		// Preparing on the pool takes a connection of the pool's own, which
		// a caller holding one in tx could wait for forever: with every
		// connection in a transaction that asks the same, none comes back.
		// So tx prepares its own, and the pool's is made by a goroutine that
		// holds none (and that Close stops and waits for).
		s.readStmts.Lock()
		if !s.readStmts.closed {
			s.readStmts.bg.Add(1)
			go func() {
				defer s.readStmts.bg.Done()
				s.cacheStmt(s.readStmts.ctx, q)
			}()
		}
		s.readStmts.Unlock()
		return tx.PrepareContext(ctx, q)
	}
	return s.cacheStmt(ctx, q)
}

// cacheStmt prepares q on the read pool and keeps it, unless the cache is
// full (then it returns nil: the caller prepares a one-off). A failure is
// returned, and only means the next use prepares again.
func (s *Saver) cacheStmt(ctx context.Context, q string) (*sql.Stmt, error) {
	s.readStmts.Lock()
	full := len(s.readStmts.m) >= maxCachedStmts
	s.readStmts.Unlock()
	if full {
		return nil, nil
	}
	st, err := s.r.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	s.readStmts.Lock()
	defer s.readStmts.Unlock()
	if had := s.readStmts.m[q]; had != nil || s.readStmts.closed || len(s.readStmts.m) >= maxCachedStmts {
		st.Close() // another caller cached it first, or the saver closed meanwhile
		return had, nil
	}
	if s.readStmts.m == nil {
		s.readStmts.m = map[string]*sql.Stmt{}
	}
	s.readStmts.m[q] = st
	return st, nil
}

// read runs fn in a read transaction on the read pool. ctx governs the
// transaction; fn gets a context without cancellation for its statements,
// which read one bounded page (a cancelable context costs the driver a
// goroutine and a progress handler per statement and per row step).
func (s *Saver) read(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.inTx(ctx, s.r, &sql.TxOptions{ReadOnly: true}, fn)
}

// inTx runs fn in a transaction of db and commits it, or rolls it back when
// fn fails. fn's context has no cancellation (see read and write).
func (s *Saver) inTx(ctx context.Context, db *sql.DB, opts *sql.TxOptions, fn func(ctx context.Context, tx *sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, opts)
	if err != nil {
		return s.mapErr(err)
	}
	defer tx.Rollback()
	if err := fn(context.WithoutCancel(ctx), tx); err != nil {
		return s.mapErr(err)
	}
	if err := tx.Commit(); err != nil {
		return s.mapErr(err)
	}
	if db == s.w {
		s.wal.committed()
	}
	return nil
}

// narrowNS returns opts with NS set when opts names a thread but no namespace
// and the thread has checkpoints in one namespace only (the usual case): the
// primary key then yields the rows in order, where several namespaces need a
// sort. empty reports that the thread has no checkpoints at all.
func (s *Saver) narrowNS(ctx context.Context, opts checkpoint.ListOptions) (_ checkpoint.ListOptions, empty bool, _ error) {
	if opts.ThreadID == "" || opts.NS != nil {
		return opts, false, nil
	}
	var lo, hi sql.NullString
	err := s.read(ctx, func(ctx context.Context, tx *sql.Tx) error {
		st, err := s.stmt(ctx, tx, `SELECT
 (SELECT checkpoint_ns FROM checkpoints WHERE thread_id = ?1 ORDER BY checkpoint_ns LIMIT 1),
 (SELECT checkpoint_ns FROM checkpoints WHERE thread_id = ?1 ORDER BY checkpoint_ns DESC LIMIT 1)`)
		if err != nil {
			return err
		}
		return st.QueryRowContext(ctx, opts.ThreadID).Scan(&lo, &hi)
	})
	switch {
	case err != nil:
		return opts, false, err
	case !lo.Valid:
		return opts, true, nil
	case lo.String == hi.String:
		opts.NS = &lo.String
	}
	return opts, false, nil
}

// List yields the checkpoints opts selects, newest first (ties by thread id,
// then namespace); see checkpoint.Saver and checkpoint.ListOptions. It reads
// pages of checkpoints, each in its own read transaction with one query for
// the page's values and one for its writes, and holds no connection while the
// caller ranges. A page is read on a goroutine of its own while the caller's
// goroutine decodes and consumes the one before (see page).
func (s *Saver) List(ctx context.Context, opts checkpoint.ListOptions) iter.Seq2[*checkpoint.Tuple, error] {
	return func(yield func(*checkpoint.Tuple, error) bool) {
		conds, err := record.CompileFilter(opts.Filter)
		if err != nil {
			yield(nil, fmt.Errorf("list checkpoints in %s: %w", s.path, err))
			return
		}
		req := opts
		opts, empty, err := s.narrowNS(ctx, opts)
		if err != nil {
			yield(nil, fmt.Errorf("list checkpoints (%s) in %s: %w", describeOpts(req), s.path, err))
			return
		}
		if empty {
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		pages := make(chan *page, 1)
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer close(pages)
			s.readPages(ctx, opts, conds, pages)
		}()
		defer func() {
			cancel()
			for range pages { // let the reader finish its page and stop
			}
			<-done
		}()
		in := make(interner, 64)
		for p := range pages {
			err := p.err
			if err == nil {
				err = s.assemble(p, in)
			}
			if err != nil {
				yield(nil, fmt.Errorf("list checkpoints (%s) in %s: %w", describeOpts(req), s.path, err))
				return
			}
			for _, t := range p.tuples {
				if !yield(t, nil) {
					return
				}
			}
		}
	}
}

// readPages reads the pages of a listing in order and sends them to out,
// stopping after the last, after a page that failed (its err set) or once
// ctx is done.
func (s *Saver) readPages(ctx context.Context, opts checkpoint.ListOptions, conds []record.Cond, out chan<- *page) {
	remaining := opts.Limit
	var after *cursor
	in := make(interner, 64)
	for {
		n := pageSize
		if remaining > 0 && remaining < n {
			n = remaining
		}
		q, args := selectRows(opts, conds, true, after, n)
		var p *page
		err := s.read(ctx, func(ctx context.Context, tx *sql.Tx) error {
			var err error
			p, err = s.readPage(ctx, tx, q, args, fixedRef(opts), len(conds) == 0, n, in)
			return err
		})
		if err != nil {
			p = &page{err: err}
		}
		out <- p // the consumer receives until out closes, even after it stops
		if err != nil || ctx.Err() != nil || len(p.rows) < n {
			return
		}
		if remaining > 0 {
			if remaining -= len(p.rows); remaining == 0 {
				return
			}
		}
		last := p.rows[len(p.rows)-1].ref
		after = &cursor{last.CheckpointID, last.ThreadID, last.NS}
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
// opts, in the same order, without values or writes, in one query. Rows
// are stepped on the calling goroutine and decoded on another, a batch at
// a time: a long thread's headers (100,000 in the studio's timeline) cost
// about as much to step through as to decode, so the two overlap.
func (s *Saver) ListHeaders(ctx context.Context, opts checkpoint.ListOptions) ([]checkpoint.Header, error) {
	conds, err := record.CompileFilter(opts.Filter)
	if err != nil {
		return nil, fmt.Errorf("list checkpoint headers in %s: %w", s.path, err)
	}
	req := opts
	opts, empty, err := s.narrowNS(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("list checkpoint headers (%s) in %s: %w", describeOpts(req), s.path, err)
	}
	if empty {
		return []checkpoint.Header{}, nil
	}
	q, args := selectRows(opts, conds, false, nil, opts.Limit)
	var out []checkpoint.Header
	err = s.read(ctx, func(ctx context.Context, tx *sql.Tx) error {
		st, err := s.stmt(ctx, tx, q)
		if err != nil {
			return err
		}
		rows, err := st.QueryContext(ctx, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		fixed := fixedRef(opts)
		batches := make(chan *rawHeaders, 2)
		decoded := make(chan error, 1)
		var failed atomic.Bool // a batch failed to decode: the listing is an error whatever follows
		go func() {
			buf := record.NewHeaderBuf(opts.Limit)
			in := make(interner, 64)
			var err error
			for b := range batches {
				if err == nil {
					if err = b.decode(fixed, in, buf); err != nil {
						failed.Store(true)
					}
				}
			}
			out = buf.Headers()
			decoded <- err
		}()
		_, err = scanHeaders(rows, fixed != nil, batches, failed.Load)
		close(batches)
		if derr := <-decoded; err == nil {
			err = derr
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list checkpoint headers (%s) in %s: %w", describeOpts(req), s.path, err)
	}
	return out, nil
}

// rawHeaders is a batch of header rows as stored: each row's columns are
// slices of one arena, copied out of the driver's buffers, which the next
// row reuses.
type rawHeaders struct {
	arena []byte
	rows  [][6][]byte // thread, ns, id, parent, ts, metadata
}

func newRawHeaders(arena int) *rawHeaders {
	return &rawHeaders{arena: make([]byte, 0, arena), rows: make([][6][]byte, 0, headerBatch)}
}

// headerBatch is how many rows a rawHeaders holds.
const headerBatch = 512

// scanHeaders steps rows, sending them to out in batches, and returns how
// many it stepped. With fixed (a listing of one thread and namespace) the
// rows hold no thread or ns. It stops early, without error, once stop
// returns true (checked between batches): the decoder's error ends the
// listing, and stepping the rest of 100,000 rows would only delay it.
func scanHeaders(rows *sql.Rows, fixed bool, out chan<- *rawHeaders, stop func() bool) (int, error) {
	var thread, ns, id, parent, ts, md sql.RawBytes
	dest := []any{&thread, &ns, &id, &parent, &ts, &md}
	if fixed {
		dest = dest[2:]
	}
	b := newRawHeaders(headerBatch * 256) // a header's columns take some 200 bytes
	n := 0
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return n, err
		}
		var r [6][]byte
		for k, col := range [6]sql.RawBytes{thread, ns, id, parent, ts, md} {
			start := len(b.arena)
			b.arena = append(b.arena, col...)
			r[k] = b.arena[start:len(b.arena):len(b.arena)]
		}
		b.rows = append(b.rows, r)
		n++
		if len(b.rows) == headerBatch {
			out <- b
			if stop() {
				return n, nil
			}
			b = newRawHeaders(cap(b.arena))
		}
	}
	if len(b.rows) > 0 {
		out <- b
	}
	return n, rows.Err()
}

// decode turns a batch into headers, added to buf.
func (b *rawHeaders) decode(fixed *checkpoint.Ref, in interner, buf *record.HeaderBuf) error {
	for _, r := range b.rows {
		var h checkpoint.Header
		if fixed != nil {
			h.Ref = *fixed
		} else {
			h.Ref = checkpoint.Ref{ThreadID: in.get(r[0]), NS: in.get(r[1])}
		}
		h.Ref.CheckpointID = string(r[2])
		var err error
		if h.TS, err = record.ParseTSBytes(r[4]); err != nil {
			return fmt.Errorf("checkpoint %q in thread %q: %w", h.Ref.CheckpointID, h.Ref.ThreadID, err)
		}
		if h.Metadata, err = record.DecodeMetadataWith(r[5], in.get); err != nil {
			return fmt.Errorf("checkpoint %q in thread %q: %w", h.Ref.CheckpointID, h.Ref.ThreadID, err)
		}
		if len(r[3]) > 0 {
			h.Parent = &checkpoint.Ref{ThreadID: h.Ref.ThreadID, NS: h.Ref.NS, CheckpointID: string(r[3])}
		}
		buf.Add(h)
	}
	return nil
}

// Values are read by ranges of versions: a page's checkpoints use runs of
// consecutive versions (every step bumps the versions of the channels it
// changes to max+1), and a range scan of the primary key is much cheaper per
// row than a lookup. Rows in a range that no checkpoint of the page uses are
// skipped. CROSS JOIN keeps SQLite from scanning the table first: it cannot
// tell how few rows json_each yields.
//
// Every column costs the driver a few allocations per row, so NULL values
// (an empty channel reads the same as a missing row) are filtered out
// rather than flagged, and a write's index and NULL flag share one integer:
// idx*2 + (value IS NULL).
const (
	sqlGroupBlobs = `SELECT b.channel, b.version, b.value
FROM json_each(?3) AS r
CROSS JOIN blobs AS b ON b.thread_id = ?1 AND b.checkpoint_ns = ?2
 AND b.version BETWEEN r.value ->> 0 AND r.value ->> 1
WHERE b.value IS NOT NULL`
	// Get's one statement: the checkpoint (kind 0), the values its header
	// names (1: exact key lookups, CROSS JOIN keeping that order; a header
	// that is not JSON reads as none and fails to decode later) and its
	// writes (2), in one snapshot.
	sqlGetOne = `SELECT 0, checkpoint_id, parent_checkpoint_id, ts, metadata, checkpoint, NULL FROM c
UNION ALL
SELECT 1, b.channel, b.version, b.value, NULL, NULL, NULL
FROM c CROSS JOIN json_each(CASE WHEN json_valid(c.checkpoint) THEN c.checkpoint ELSE '{}' END, '$.channel_versions') AS v
CROSS JOIN blobs AS b ON b.thread_id = ?1 AND b.checkpoint_ns = ?2 AND b.version = v.value AND b.channel = v.key
WHERE b.value IS NOT NULL
UNION ALL
SELECT 2, w.checkpoint_id, w.task_id, w.idx * 2 + (w.value IS NULL), w.channel, w.value, w.task_path
FROM c CROSS JOIN writes AS w ON w.thread_id = ?1 AND w.checkpoint_ns = ?2 AND w.checkpoint_id = c.checkpoint_id`
	sqlGetLatest = `WITH c AS MATERIALIZED (SELECT checkpoint_id, parent_checkpoint_id, ts, metadata, checkpoint FROM checkpoints
WHERE thread_id = ?1 AND checkpoint_ns = ?2 ORDER BY checkpoint_id DESC LIMIT 1)
` + sqlGetOne
	sqlGetByID = `WITH c AS MATERIALIZED (SELECT checkpoint_id, parent_checkpoint_id, ts, metadata, checkpoint FROM checkpoints
WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3)
` + sqlGetOne
	// Writes of the checkpoints listed in ?3.
	sqlGroupWrites = `SELECT w.checkpoint_id, w.task_id, w.idx * 2 + (w.value IS NULL), w.channel, w.value, w.task_path
FROM json_each(?3) AS k
CROSS JOIN writes AS w ON w.thread_id = ?1 AND w.checkpoint_ns = ?2 AND w.checkpoint_id = k.value`
	// Writes of the checkpoints with ids in [?3, ?4]: used when the page
	// holds every checkpoint of the group in that range (no filter).
	sqlGroupWritesRange = `SELECT w.checkpoint_id, w.task_id, w.idx * 2 + (w.value IS NULL), w.channel, w.value, w.task_path
FROM writes AS w WHERE w.thread_id = ?1 AND w.checkpoint_ns = ?2 AND w.checkpoint_id BETWEEN ?3 AND ?4`
)

// maxVersionGap is the largest run of unused steps a range may span.
const maxVersionGap = 4

// versionRanges returns the sorted runs [lo, hi] covering versions. Gaps
// are measured in steps (checkpoint.VersionStep), not in raw versions: the
// low bits of a version tell branches apart and are not contiguous, so a
// range that spans a few steps reads the values of a whole stretch of
// history in one scan (values of other branches in it are skipped).
func versionRanges(versions []int64) [][2]int64 {
	slices.Sort(versions)
	var out [][2]int64
	for _, v := range versions {
		if n := len(out); n > 0 && checkpoint.VersionStep(v) <= checkpoint.VersionStep(out[n-1][1])+maxVersionGap+1 {
			out[n-1][1] = max(out[n-1][1], v)
			continue
		}
		out = append(out, [2]int64{v, v})
	}
	return out
}

// WriteKinds returns the pending writes of checkpoint ref.CheckpointID as
// Get returns them, in order, without their values: the writes table is
// read for task ids, indexes, channels and paths alone, so a step whose
// writes hold megabytes costs a few rows (checkpoint.WriteKindsReader,
// what the studio's timeline marks read). A missing checkpoint is an error
// wrapping checkpoint.ErrNotFound.
func (s *Saver) WriteKinds(ctx context.Context, ref checkpoint.Ref) ([]checkpoint.PendingWrite, error) {
	if ref.ThreadID == "" {
		return nil, fmt.Errorf("write kinds of checkpoint %q: %w", ref.CheckpointID, checkpoint.ErrNoThread)
	}
	var out []checkpoint.PendingWrite
	var idxs []int
	found := false
	err := s.read(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?)",
			ref.ThreadID, ref.NS, ref.CheckpointID).Scan(&found); err != nil || !found {
			return err
		}
		rows, err := tx.QueryContext(ctx, "SELECT task_id, idx, channel, task_path FROM writes WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
			ref.ThreadID, ref.NS, ref.CheckpointID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var w checkpoint.PendingWrite
			var idx int
			if err := rows.Scan(&w.TaskID, &idx, &w.Channel, &w.TaskPath); err != nil {
				return err
			}
			out, idxs = append(out, w), append(idxs, idx)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("write kinds of checkpoint %q in thread %q ns %q from %s: %w", ref.CheckpointID, ref.ThreadID, ref.NS, s.path, s.mapErr(err))
	}
	if !found {
		return nil, fmt.Errorf("checkpoint %q in thread %q ns %q: %w", ref.CheckpointID, ref.ThreadID, ref.NS, checkpoint.ErrNotFound)
	}
	sortWrites(out, idxs)
	if out == nil {
		out = []checkpoint.PendingWrite{}
	}
	return out, nil
}
