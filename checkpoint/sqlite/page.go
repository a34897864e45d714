package sqlite

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/internal/record"
)

// page is a batch of checkpoints read in one read transaction, in two
// halves. readPage runs the queries and keeps the rows as stored (it only
// picks the channel versions out of the headers, to know which values to
// read); assemble decodes them into tuples. List reads the next page on
// another goroutine while the caller's goroutine assembles this one: the
// driver's per-row work and the decoding then use both cores.
type page struct {
	rows   []storedCheckpoint
	groups []*group
	arena  record.Arena        // the rows' bytes: the driver reuses its buffers
	tuples []*checkpoint.Tuple // made by assemble, in the order of rows
	err    error               // a page that could not be read
}

// storedCheckpoint is a checkpoints row as read.
type storedCheckpoint struct {
	ref                checkpoint.Ref
	parent, ts, md, hd []byte
	group              *group
}

// group is the rows of one page that share a thread and namespace: their
// values and writes are fetched with one query each.
type group struct {
	thread, ns string
	ids        []string // of its checkpoints, in page order
	versions   []int64  // every version its checkpoints name, unsorted
	values     []storedValue
	writes     []storedWrite
	// Set by assemble:
	tuples []*checkpoint.Tuple
	byID   map[string]int // checkpoint id → index in tuples
}

// storedValue and storedWrite are rows as read, their bytes in the page's
// arena.
type storedValue struct {
	channel []byte
	version int64
	value   []byte
}

type storedWrite struct {
	id, task, channel, path, value []byte
	packed                         int64 // idx*2 + (value IS NULL), see sqlGroupWrites
}

// readPage runs a checkpoints query built by selectRows (with the header
// column) and the queries for the values and writes of its rows. fixed,
// when not nil, gives the thread and namespace the query did not select.
// dense says the page holds every checkpoint of each of its threads and
// namespaces between its oldest and newest ids (true when no metadata filter
// skips any), so writes can be read by id range. sizeHint is how many rows
// the query may return at most. in interns the names of the headers; it must
// not be shared with another goroutine.
func (s *Saver) readPage(ctx context.Context, tx *sql.Tx, q string, args []any, fixed *checkpoint.Ref, dense bool, sizeHint int, in interner) (*page, error) {
	st, err := s.stmt(ctx, tx, q)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	p := &page{}
	var thread, ns, id, parent, ts, md, header sql.RawBytes
	dest := []any{&thread, &ns, &id, &parent, &ts, &md, &header}
	if fixed != nil {
		dest = dest[2:]
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		if err := p.addCheckpoint(fixed, in, thread, ns, id, parent, ts, md, header, sizeHint); err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(p.rows) == 0 {
		return p, nil
	}
	blobs, err := s.stmt(ctx, tx, sqlGroupBlobs)
	if err != nil {
		return nil, err
	}
	for _, g := range p.groups {
		if err := p.readValues(ctx, blobs, g); err != nil {
			return nil, err
		}
		if err := s.readWrites(ctx, tx, p, g, dense); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// addCheckpoint keeps one checkpoints row, as read, in its thread and
// namespace's group; fixed, when not nil, gives the thread and namespace
// (thread and ns are then not read).
func (p *page) addCheckpoint(fixed *checkpoint.Ref, in interner, thread, ns, id, parent, ts, md, header []byte, sizeHint int) error {
	r := storedCheckpoint{parent: p.arena.Copy(parent), ts: p.arena.Copy(ts), md: p.arena.Copy(md), hd: p.arena.Copy(header)}
	if fixed != nil {
		r.ref = *fixed
	} else {
		r.ref = checkpoint.Ref{ThreadID: in.get(thread), NS: in.get(ns)}
	}
	r.ref.CheckpointID = string(id)
	for _, x := range p.groups {
		if x.thread == r.ref.ThreadID && x.ns == r.ref.NS {
			r.group = x
			break
		}
	}
	if r.group == nil {
		r.group = &group{thread: r.ref.ThreadID, ns: r.ref.NS}
		p.groups = append(p.groups, r.group)
	}
	g := r.group
	g.ids = append(g.ids, r.ref.CheckpointID)
	var err error
	if g.versions, err = record.AppendHeaderVersions(g.versions, header); err != nil {
		return fmt.Errorf("thread %q ns %q: checkpoint %s: %w", r.ref.ThreadID, r.ref.NS, r.ref.CheckpointID, err)
	}
	if p.rows == nil {
		p.rows = make([]storedCheckpoint, 0, sizeHint)
	}
	p.rows = append(p.rows, r)
	return nil
}

// readValues reads the stored values a group's checkpoints name.
func (p *page) readValues(ctx context.Context, st *sql.Stmt, g *group) error {
	if len(g.versions) == 0 {
		return nil
	}
	param, err := json.Marshal(versionRanges(g.versions))
	if err != nil {
		return err
	}
	rs, err := st.QueryContext(ctx, g.thread, g.ns, string(param))
	if err != nil {
		return err
	}
	defer rs.Close()
	g.values = make([]storedValue, 0, len(g.versions)) // versions repeat: more than enough, usually
	var channel, raw sql.RawBytes                      // reused from row to row by Scan
	var version int64
	for rs.Next() {
		if err := rs.Scan(&channel, &version, &raw); err != nil {
			return err
		}
		g.values = append(g.values, storedValue{p.arena.Copy(channel), version, p.arena.Copy(raw)})
	}
	return rs.Err()
}

// readWrites reads the pending writes of a group's checkpoints.
func (s *Saver) readWrites(ctx context.Context, tx *sql.Tx, p *page, g *group, dense bool) error {
	var rs *sql.Rows
	if dense {
		lo, hi := g.ids[0], g.ids[0]
		for _, id := range g.ids {
			lo, hi = min(lo, id), max(hi, id)
		}
		st, err := s.stmt(ctx, tx, sqlGroupWritesRange)
		if err != nil {
			return err
		}
		if rs, err = st.QueryContext(ctx, g.thread, g.ns, lo, hi); err != nil {
			return err
		}
	} else {
		param, err := json.Marshal(g.ids)
		if err != nil {
			return err
		}
		st, err := s.stmt(ctx, tx, sqlGroupWrites)
		if err != nil {
			return err
		}
		if rs, err = st.QueryContext(ctx, g.thread, g.ns, string(param)); err != nil {
			return err
		}
	}
	defer rs.Close()
	// Declared once: Scan reuses a RawBytes' buffer from row to row.
	var id, task, channel, raw, path sql.RawBytes
	var packed int64
	var last storedWrite
	g.writes = make([]storedWrite, 0, 2*len(g.ids)) // a task or two per step, a write or two each
	for rs.Next() {
		if err := rs.Scan(&id, &task, &packed, &channel, &raw, &path); err != nil {
			return err
		}
		// Rows come grouped by checkpoint and task (the primary key's
		// order): the previous row's copies usually serve again.
		last = p.addWrite(g, last, id, task, packed, channel, raw, path)
	}
	return rs.Err()
}

// addWrite keeps one writes row, as read, in g and returns it; last is the
// row added before it, whose copies serve again for equal bytes.
func (p *page) addWrite(g *group, last storedWrite, id, task []byte, packed int64, channel, raw, path []byte) storedWrite {
	w := storedWrite{packed: packed, value: p.arena.Copy(raw)}
	w.id = reuse(&p.arena, last.id, id)
	w.task = reuse(&p.arena, last.task, task)
	w.channel = reuse(&p.arena, last.channel, channel)
	w.path = reuse(&p.arena, last.path, path)
	g.writes = append(g.writes, w)
	return w
}

// reuse returns prev when it holds the same bytes as b, else a copy of b.
func reuse(a *record.Arena, prev, b []byte) []byte {
	if prev != nil && string(prev) == string(b) {
		return prev
	}
	if b == nil {
		return []byte{} // NOT NULL columns: never nil
	}
	return a.Copy(b)
}

// assemble decodes what readPage kept as stored into the page's tuples:
// metadata, channel values and pending writes. in interns names; it must not
// be shared with another goroutine.
func (s *Saver) assemble(p *page, in interner) error {
	p.tuples = make([]*checkpoint.Tuple, len(p.rows))
	for i, row := range p.rows {
		r := row.ref
		t := &checkpoint.Tuple{Ref: r, PendingWrites: []checkpoint.PendingWrite{}}
		when, err := record.ParseTSBytes(row.ts)
		if err != nil {
			return fmt.Errorf("checkpoint %q in thread %q: %w", r.CheckpointID, r.ThreadID, err)
		}
		if t.Checkpoint, err = record.DecodeHeaderWith(row.hd, r.CheckpointID, when, in.get); err != nil {
			return fmt.Errorf("thread %q ns %q: %w", r.ThreadID, r.NS, err)
		}
		if t.Metadata, err = record.DecodeMetadataWith(row.md, in.get); err != nil {
			return fmt.Errorf("checkpoint %q in thread %q: %w", r.CheckpointID, r.ThreadID, err)
		}
		if len(row.parent) > 0 {
			t.Parent = &checkpoint.Ref{ThreadID: r.ThreadID, NS: r.NS, CheckpointID: string(row.parent)}
		}
		p.tuples[i] = t
		g := row.group
		if g.byID == nil {
			g.byID = make(map[string]int, len(g.ids))
		}
		g.byID[r.CheckpointID] = len(g.tuples)
		g.tuples = append(g.tuples, t)
	}
	for _, g := range p.groups {
		if err := s.assembleValues(g); err != nil {
			return err
		}
		if err := s.assembleWrites(g, in); err != nil {
			return err
		}
	}
	return nil
}

// unpack decompresses a stored value. It accepts every value up to
// checkpoint.MaxValueSize, the limit writers keep, however well it
// compressed: a ratio of inflated to stored size would refuse honest
// repetitive text (a run of one byte packs about 1000×). A value over the
// limit is refused before decoding (zstd: the size its frame states) or
// after decompressing at most MaxValueSize+1 bytes (DEFLATE, schema 7 and
// older), so a crafted one takes no more memory than an honest one may.
func unpack(b []byte) ([]byte, error) {
	out, err := record.Unpack(b, checkpoint.MaxValueSize)
	if errors.Is(err, record.ErrTooLarge) {
		return nil, fmt.Errorf("%w (checkpoint.MaxValueSize), which no Weft writes: a damaged or crafted store", err)
	}
	return out, err
}

// cmpValue orders stored values by version, then channel: the order of
// the blobs primary key.
func cmpValue(a storedValue, version int64, channel string) int {
	if c := cmp.Compare(a.version, version); c != 0 {
		return c
	}
	return compareBytes(a.channel, channel)
}

// compareBytes is strings.Compare(string(b), s) without converting b, which
// would allocate in a comparison function.
func compareBytes(b []byte, s string) int {
	for i := 0; i < len(b) && i < len(s); i++ {
		if b[i] != s[i] {
			return cmp.Compare(b[i], s[i])
		}
	}
	return cmp.Compare(len(b), len(s))
}

// assembleValues fills the channel values of a group's tuples. Rows are
// found by binary search (they come in key order, checked below): cheaper
// than a map of a few thousand entries, and rows of other branches that a
// version range also read are never decoded.
func (s *Saver) assembleValues(g *group) error {
	if len(g.values) == 0 {
		return nil
	}
	byKey := func(a, b storedValue) int {
		return cmp.Or(cmp.Compare(a.version, b.version), bytes.Compare(a.channel, b.channel))
	}
	if !slices.IsSortedFunc(g.values, byKey) {
		slices.SortFunc(g.values, byKey)
	}
	given := make([]bool, len(g.values)) // decoded and handed to a tuple: the next needs a copy
	for _, t := range g.tuples {
		for ch, v := range t.Checkpoint.ChannelVersions {
			i, ok := slices.BinarySearchFunc(g.values, v, func(a storedValue, v int64) int { return cmpValue(a, v, ch) })
			if !ok {
				continue // an empty channel: no value stored
			}
			row := &g.values[i]
			if given[i] {
				t.Checkpoint.ChannelValues[ch] = record.CloneBytes(row.value)
				continue
			}
			b := row.value
			if s.cipher != nil {
				plain, err := s.cipher.Open(b)
				if err != nil {
					return fmt.Errorf("value of channel %q version %d in thread %q ns %q: %w", ch, v, g.thread, g.ns, err)
				}
				b = plain
			}
			b, err := unpack(b)
			if err != nil {
				return fmt.Errorf("value of channel %q version %d in thread %q ns %q in %s: %w", ch, v, g.thread, g.ns, s.path, err)
			}
			row.value, given[i] = record.NonNil(b), true
			t.Checkpoint.ChannelValues[ch] = row.value
		}
	}
	return nil
}

// assembleWrites fills the pending writes of a group's tuples.
func (s *Saver) assembleWrites(g *group, in interner) error {
	idxs := make([][]int, len(g.tuples))
	var prev storedWrite
	i, ok := 0, false
	taskID := ""
	for j, row := range g.writes {
		// Consecutive rows share their checkpoint and task slices (see
		// readWrites): compare those, not the bytes.
		if j == 0 || !sameSlice(row.id, prev.id) {
			i, ok = g.byID[string(row.id)]
		}
		if j == 0 || !sameSlice(row.task, prev.task) {
			taskID = string(row.task) // unique to a step: not worth interning
		}
		prev = row
		if !ok {
			continue // in the id range but not on the page
		}
		idx, isNull := int(row.packed>>1), row.packed&1 == 1
		w := checkpoint.PendingWrite{TaskID: taskID, Channel: in.get(row.channel), TaskPath: in.get(row.path)}
		if !isNull {
			v := row.value
			if s.cipher != nil {
				plain, err := s.cipher.Open(v)
				if err != nil {
					return fmt.Errorf("write %d of task %q to checkpoint %q in thread %q: %w", idx, w.TaskID, row.id, g.thread, err)
				}
				v = plain
			}
			v, err := unpack(v)
			if err != nil {
				return fmt.Errorf("write %d of task %q to checkpoint %q in thread %q in %s: %w", idx, w.TaskID, row.id, g.thread, s.path, err)
			}
			w.Value = record.NonNil(v)
		}
		t := g.tuples[i]
		t.PendingWrites = append(t.PendingWrites, w)
		idxs[i] = append(idxs[i], idx)
	}
	// The primary key scan yields each checkpoint's writes by task id and
	// index already; make sure of it without relying on the plan.
	for i, t := range g.tuples {
		sortWrites(t.PendingWrites, idxs[i])
	}
	return nil
}

// sameSlice reports whether a and b are the same slice (as reuse returns).
func sameSlice(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// sortWrites orders ws (with their indexes) by task id, then index.
func sortWrites(ws []checkpoint.PendingWrite, idxs []int) {
	sorted := true
	for i := 1; i < len(ws) && sorted; i++ {
		sorted = ws[i-1].TaskID < ws[i].TaskID || ws[i-1].TaskID == ws[i].TaskID && idxs[i-1] <= idxs[i]
	}
	if sorted {
		return
	}
	type pair struct {
		w   checkpoint.PendingWrite
		idx int
	}
	ps := make([]pair, len(ws))
	for i := range ws {
		ps[i] = pair{ws[i], idxs[i]}
	}
	slices.SortStableFunc(ps, func(a, b pair) int {
		return cmp.Or(cmp.Compare(a.w.TaskID, b.w.TaskID), cmp.Compare(a.idx, b.idx))
	})
	for i, p := range ps {
		ws[i], idxs[i] = p.w, p.idx
	}
}
