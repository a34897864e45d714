// Package memory is an in-memory checkpoint.Saver, for tests, examples and
// runs that need no history after the process ends.
//
// It stores data in the same shape as the SQLite saver, so both behave the
// same: a checkpoint header, one value per (thread, namespace, channel,
// version), and writes keyed by (task id, index). Headers are kept in a
// compact binary form (header.go) so that a store of many threads costs the
// garbage collector little. Values are copied in and out: mutating anything
// passed to Put or PutWrites, or returned by Get or List, never changes what
// is stored.
//
// Besides checkpoint.Saver it implements every optional capability:
// ThreadLister, Pruner, Copier, RunDeleter, StatsReporter, HeaderLister and Leaser (its
// leases hold within this process, like its data). A Saver is safe for
// concurrent use.
package memory

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/crypt"
	"github.com/weftstudio/weft/checkpoint/internal/record"
)

// Saver is an in-memory checkpoint store. Create one with New; the zero
// Saver is not usable.
type Saver struct {
	mu      sync.RWMutex
	threads map[string]*thread
	names   names               // of channels and nodes, for stored headers
	oneTask map[string][]string // shared Tasks of single-task steps; never modified
	cipher  *crypt.Cipher
	err     error // a configuration error every method returns
	leases  leases
}

var (
	_ checkpoint.Saver         = (*Saver)(nil)
	_ checkpoint.ThreadLister  = (*Saver)(nil)
	_ checkpoint.Pruner        = (*Saver)(nil)
	_ checkpoint.Copier        = (*Saver)(nil)
	_ checkpoint.StatsReporter = (*Saver)(nil)
	_ checkpoint.HeaderLister  = (*Saver)(nil)
	_ checkpoint.OwnedPutter   = (*Saver)(nil)
	_ checkpoint.InProcess     = (*Saver)(nil)
)

// Option configures New.
type Option func(*Saver)

// WithEncryptionKey makes the saver keep every channel value and write value
// encrypted with AES-GCM under key (16, 24 or 32 bytes; see package crypt).
// A nil or empty key means no encryption. An invalid key makes every method
// of the Saver return an error wrapping crypt.ErrBadKey, so data is never
// kept in the clear by mistake.
func WithEncryptionKey(key []byte) Option {
	return func(s *Saver) {
		c, err := crypt.New(key)
		if err != nil {
			s.err = fmt.Errorf("memory checkpoint saver: %w", err)
			return
		}
		s.cipher = c
	}
}

// New returns an empty in-memory saver.
func New(opts ...Option) *Saver {
	s := &Saver{threads: map[string]*thread{}, oneTask: map[string][]string{}}
	for _, o := range opts {
		o(s)
	}
	return s
}

// thread holds a thread's namespaces. Most threads only have the root one,
// kept apart so that they need no map.
type thread struct {
	root   *space
	nested map[string]*space // subgraph namespaces; nil when none
}

func (t *thread) get(ns string) *space {
	if ns == "" {
		return t.root
	}
	return t.nested[ns]
}

func (t *thread) set(ns string, sp *space) {
	switch {
	case ns == "":
		t.root = sp
	case t.nested == nil:
		t.nested = map[string]*space{ns: sp}
	default:
		t.nested[ns] = sp
	}
}

func (t *thread) remove(ns string) {
	if ns == "" {
		t.root = nil
	} else {
		delete(t.nested, ns)
	}
}

func (t *thread) empty() bool { return t.root == nil && len(t.nested) == 0 }

// all yields every namespace with its space; the callback may remove the
// one it is given.
func (t *thread) all() iter.Seq2[string, *space] {
	return func(yield func(string, *space) bool) {
		if t.root != nil && !yield("", t.root) {
			return
		}
		for ns, sp := range t.nested {
			if !yield(ns, sp) {
				return
			}
		}
	}
}

type blobKey struct {
	channel string
	version int64
}

// verBlob is one stored value of a channel.
type verBlob struct {
	version int64
	value   []byte // sealed; nil for an empty channel
}

// blobs holds a space's channel values: per channel, sorted by version. A
// line of steps appends (versions grow with the step); only a fork inserts.
// Arrays may be shared with a copied thread, so they are never changed in
// place except by appending past every sharer's length (see CopyThread).
type blobs map[string]*chanValues

type chanValues struct{ vs []verBlob }

func cmpVersion(e verBlob, v int64) int { return cmp.Compare(e.version, v) }

func (b blobs) get(ch string, v int64) ([]byte, bool) {
	if c := b[ch]; c != nil {
		return c.get(v)
	}
	return nil, false
}

// channel returns a channel's values, adding an empty entry if need be.
func (b blobs) channel(ch string) *chanValues {
	c := b[ch]
	if c == nil {
		c = &chanValues{}
		b[ch] = c
	}
	return c
}

func (c *chanValues) get(v int64) ([]byte, bool) {
	i, ok := slices.BinarySearchFunc(c.vs, v, cmpVersion)
	if !ok {
		return nil, false
	}
	return c.vs[i].value, true
}

// add stores the value for version v, which must not be stored yet.
func (c *chanValues) add(v int64, value []byte) {
	if n := len(c.vs); n == 0 || c.vs[n-1].version < v {
		c.vs = append(c.vs, verBlob{v, value})
		return
	}
	i, _ := slices.BinarySearchFunc(c.vs, v, cmpVersion)
	c.vs = slices.Insert(slices.Clip(c.vs), i, verBlob{v, value}) // Clip: a copy, never a shared array
}

// count returns the number of stored values and their total size.
func (b blobs) count() (n int, size int64) {
	for _, c := range b {
		n += len(c.vs)
		for _, e := range c.vs {
			size += int64(len(e.value))
		}
	}
	return n, size
}

// storedWrite is one pending write. A checkpoint's writes are few (one
// slice per checkpoint, searched linearly), so a slice beats a map here.
type storedWrite struct {
	taskID   string
	idx      int
	channel  string
	value    []byte // sealed; nil for a write of no value
	taskPath string
}

// space holds one namespace of one thread.
type space struct {
	cps   []*stored    // ascending by id: ids are UUIDv7, so Put mostly appends
	hdrs  record.Arena // the space's headers (see header.go)
	blobs blobs
	// orphans holds writes to checkpoints not stored (yet); a Put of the
	// checkpoint takes them over.
	orphans map[string][]storedWrite
	// lastMD is the metadata last stored, whose Parents and Extra the next
	// checkpoint shares when equal (a run passes the same ones every step).
	lastMD    checkpoint.Metadata
	hasLastMD bool
}

func cmpID(r *stored, id string) int { return strings.Compare(r.id, id) }

// get returns the checkpoint with the given id, or nil.
func (sp *space) get(id string) *stored {
	if i, ok := slices.BinarySearchFunc(sp.cps, id, cmpID); ok {
		return sp.cps[i]
	}
	return nil
}

// latest returns the newest checkpoint, or nil.
func (sp *space) latest() *stored {
	if len(sp.cps) == 0 {
		return nil
	}
	return sp.cps[len(sp.cps)-1]
}

// put stores rec, replacing a checkpoint with the same id (whose writes it
// keeps) or taking over orphan writes to it.
func (sp *space) put(rec *stored) {
	if n := len(sp.cps); n == 0 || sp.cps[n-1].id < rec.id {
		sp.cps = append(sp.cps, rec)
	} else if i, ok := slices.BinarySearchFunc(sp.cps, rec.id, cmpID); ok {
		rec.writes = sp.cps[i].writes
		sp.cps[i] = rec
		return
	} else {
		sp.cps = slices.Insert(sp.cps, i, rec)
	}
	if ws, ok := sp.orphans[rec.id]; ok {
		rec.writes = ws
		delete(sp.orphans, rec.id)
	}
}

// stored is one checkpoint. The header is kept encoded (see header.go): one
// pointer-free allocation instead of a map per channel and node.
type stored struct {
	id       string
	parentID string
	ts       time.Time
	hdr      []byte              // see header.go
	md       checkpoint.Metadata // as the SQLite saver would return it; never mutated
	writes   []storedWrite       // pending writes; this record's own, never shared
}

func newSpace() *space {
	return &space{blobs: blobs{}}
}

func (s *Saver) space(threadID, ns string, create bool) *space {
	t := s.threads[threadID]
	if t == nil {
		if !create {
			return nil
		}
		t = &thread{}
		s.threads[threadID] = t
	}
	sp := t.get(ns)
	if sp == nil && create {
		sp = newSpace()
		t.set(ns, sp)
	}
	return sp
}

func (s *Saver) check(ctx context.Context) error {
	if s.err != nil {
		return s.err
	}
	return ctx.Err()
}

// InProcess reports true: every call completes in memory, so the engine
// calls the saver inline rather than from a background writer
// (checkpoint.InProcess).
func (s *Saver) InProcess() bool { return true }

// Put stores cp as a child of parent; see checkpoint.Saver. Only channels in
// newVersions get a stored value (absent from cp.ChannelValues means empty);
// a value already stored for that channel and version is kept. Nothing
// passed in is kept: the caller may reuse it.
func (s *Saver) Put(ctx context.Context, parent checkpoint.Ref, cp checkpoint.Checkpoint, md checkpoint.Metadata, newVersions map[string]int64) (checkpoint.Ref, error) {
	return s.put(ctx, parent, cp, md, newVersions, false)
}

// PutOwned is Put that keeps the value bytes of cp.ChannelValues instead of
// copying them (see checkpoint.OwnedPutter). Stored data is still copied on
// the way out, so readers cannot change it either.
func (s *Saver) PutOwned(ctx context.Context, parent checkpoint.Ref, cp checkpoint.Checkpoint, md checkpoint.Metadata, newVersions map[string]int64) (checkpoint.Ref, error) {
	return s.put(ctx, parent, cp, md, newVersions, true)
}

func (s *Saver) put(ctx context.Context, parent checkpoint.Ref, cp checkpoint.Checkpoint, md checkpoint.Metadata, newVersions map[string]int64, owned bool) (checkpoint.Ref, error) {
	if err := s.check(ctx); err != nil {
		return checkpoint.Ref{}, err
	}
	if err := record.CheckPut(parent, &cp, &md); err != nil {
		return checkpoint.Ref{}, err
	}
	for ch, v := range newVersions {
		if err := record.CheckValue(ch, v, len(cp.ChannelValues[ch])); err != nil {
			return checkpoint.Ref{}, fmt.Errorf("put checkpoint %q in thread %q ns %q: %w", cp.ID, parent.ThreadID, parent.NS, err)
		}
	}
	// Metadata goes through JSON only when Extra holds values JSON would
	// change (numbers other than float64, structs), so it reads back exactly
	// as the SQLite saver returns it.
	var mdJSON *checkpoint.Metadata
	if !jsonNative(md.Extra) {
		md := md // only this copy escapes (to encoding/json)
		b, err := record.EncodeMetadata(&md)
		if err == nil {
			var m checkpoint.Metadata
			m, err = record.DecodeMetadata(b)
			mdJSON = &m
		}
		if err != nil {
			return checkpoint.Ref{}, fmt.Errorf("put checkpoint %q in thread %q: %w", cp.ID, parent.ThreadID, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sp := s.space(parent.ThreadID, parent.NS, true)
	if h := sp.latest(); h != nil && parent.CheckpointID == h.id && cp.ID < h.id {
		return checkpoint.Ref{}, fmt.Errorf("put checkpoint %q in thread %q ns %q: %w: its parent %s is the head", cp.ID, parent.ThreadID, parent.NS, checkpoint.ErrIDBeforeParent, h.id)
	}
	rec := &stored{id: cp.ID, parentID: parent.CheckpointID, ts: cp.TS.UTC(), hdr: s.names.encodeHeader(&sp.hdrs, &cp)}
	if mdJSON != nil {
		rec.md = *mdJSON
	} else {
		rec.md = sp.keepMetadata(&md, s.oneTask)
	}
	// A value already stored for a (channel, version) is kept.
	for ch, v := range newVersions {
		cv := sp.blobs.channel(ch)
		if _, ok := cv.get(v); ok {
			continue
		}
		var val []byte
		if b, ok := cp.ChannelValues[ch]; ok {
			if !owned {
				b = record.CloneBytes(record.NonNil(b))
			}
			val = s.cipher.Seal(record.NonNil(b))
		}
		cv.add(v, val)
	}
	sp.put(rec)
	return checkpoint.Ref{ThreadID: parent.ThreadID, NS: parent.NS, CheckpointID: cp.ID}, nil
}

// keepMetadata returns a private copy of md (whose Extra is JSON-native),
// sharing Parents and Extra with the previous checkpoint's when they are
// equal: stored metadata is never mutated, and reads copy it. The caller
// holds s.mu.
func (sp *space) keepMetadata(md *checkpoint.Metadata, oneTask map[string][]string) checkpoint.Metadata {
	out := *md
	if len(md.Tasks) == 1 {
		// Most steps run one task: share one slice per task name.
		t, ok := oneTask[md.Tasks[0]]
		if !ok {
			t = []string{md.Tasks[0]}
			oneTask[md.Tasks[0]] = t
		}
		out.Tasks = t
	} else {
		out.Tasks = slices.Clone(md.Tasks)
	}
	prev := &sp.lastMD
	if sp.hasLastMD && maps.Equal(prev.Parents, md.Parents) {
		out.Parents = prev.Parents
	} else {
		out.Parents = maps.Clone(md.Parents)
		if out.Parents == nil {
			out.Parents = map[string]string{}
		}
	}
	switch {
	case len(md.Extra) == 0:
		out.Extra = nil
	case sp.hasLastMD && jsonEqual(prev.Extra, md.Extra):
		out.Extra = prev.Extra
	default:
		out.Extra = md.Clone().Extra
	}
	sp.lastMD, sp.hasLastMD = out, true
	return out
}

// PutWrites stores a task's writes against ref; see checkpoint.Saver.
func (s *Saver) PutWrites(ctx context.Context, ref checkpoint.Ref, writes []checkpoint.Write, taskID, taskPath string) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	if err := record.CheckWrites(ref, taskID); err != nil {
		return err
	}
	for _, w := range writes {
		if err := record.CheckWrite(w.Channel, len(w.Value)); err != nil {
			return fmt.Errorf("put %d writes of task %q to checkpoint %q in thread %q ns %q: %w", len(writes), taskID, ref.CheckpointID, ref.ThreadID, ref.NS, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sp := s.space(ref.ThreadID, ref.NS, true)
	rec := sp.get(ref.CheckpointID)
	var ws []storedWrite
	if rec != nil {
		ws = rec.writes
	} else {
		ws = sp.orphans[ref.CheckpointID]
	}
	ws = slices.Grow(ws, len(writes))
	// Without encryption the call's values share one copy (each capped so
	// none can grow into the next); stored values are never modified.
	var buf []byte
	if s.cipher == nil {
		n := 0
		for _, w := range writes {
			n += len(w.Value)
		}
		buf = make([]byte, 0, n)
	}
next:
	for i, w := range writes {
		idx, special := record.WriteIndex(i, w.Channel)
		var val []byte
		switch {
		case w.Value == nil:
		case s.cipher == nil:
			start := len(buf)
			buf = append(buf, w.Value...)
			val = buf[start:len(buf):len(buf)]
		default:
			val = s.cipher.Seal(record.CloneBytes(w.Value))
		}
		sw := storedWrite{taskID, idx, w.Channel, val, taskPath}
		for j := range ws {
			if ws[j].taskID == taskID && ws[j].idx == idx {
				if special {
					ws[j] = sw
				}
				continue next
			}
		}
		ws = append(ws, sw)
	}
	if rec != nil {
		rec.writes = ws
	} else {
		if sp.orphans == nil {
			sp.orphans = map[string][]storedWrite{}
		}
		sp.orphans[ref.CheckpointID] = ws
	}
	return nil
}

// Get returns the checkpoint ref names, or the latest of its thread and
// namespace when ref.CheckpointID is ""; see checkpoint.Saver. It returns an
// error wrapping checkpoint.ErrNotFound when there is none.
func (s *Saver) Get(ctx context.Context, ref checkpoint.Ref) (*checkpoint.Tuple, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	if ref.ThreadID == "" {
		return nil, fmt.Errorf("get checkpoint %q: %w", ref.CheckpointID, checkpoint.ErrNoThread)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	sp := s.space(ref.ThreadID, ref.NS, false)
	var rec *stored
	switch {
	case sp == nil:
	case ref.CheckpointID == "":
		rec = sp.latest()
	default:
		rec = sp.get(ref.CheckpointID)
	}
	if rec == nil {
		if ref.CheckpointID == "" {
			return nil, fmt.Errorf("thread %q ns %q has no checkpoint: %w", ref.ThreadID, ref.NS, checkpoint.ErrNotFound)
		}
		return nil, fmt.Errorf("checkpoint %q in thread %q ns %q: %w", ref.CheckpointID, ref.ThreadID, ref.NS, checkpoint.ErrNotFound)
	}
	return s.tuple(ref.ThreadID, ref.NS, rec, sp)
}

// tuple builds the tuple of a stored checkpoint. The caller holds s.mu.
func (s *Saver) tuple(threadID, ns string, rec *stored, sp *space) (*checkpoint.Tuple, error) {
	id := rec.id
	cp, err := s.names.decodeHeader(rec.hdr, id, rec.ts)
	if err != nil {
		return nil, fmt.Errorf("thread %q ns %q: %w", threadID, ns, err)
	}
	for ch, v := range cp.ChannelVersions {
		sealed, ok := sp.blobs.get(ch, v)
		if !ok || sealed == nil {
			continue
		}
		val, err := s.open(sealed)
		if err != nil {
			return nil, fmt.Errorf("checkpoint %q in thread %q ns %q, channel %q: %w", id, threadID, ns, ch, err)
		}
		cp.ChannelValues[ch] = val
	}
	t := &checkpoint.Tuple{
		Ref:           checkpoint.Ref{ThreadID: threadID, NS: ns, CheckpointID: id},
		Checkpoint:    cp,
		Metadata:      rec.md.Clone(),
		PendingWrites: []checkpoint.PendingWrite{},
	}
	if rec.parentID != "" {
		t.Parent = &checkpoint.Ref{ThreadID: threadID, NS: ns, CheckpointID: rec.parentID}
	}
	ws := slices.Clone(rec.writes)
	slices.SortFunc(ws, func(a, b storedWrite) int {
		return cmp.Or(cmp.Compare(a.taskID, b.taskID), cmp.Compare(a.idx, b.idx))
	})
	for _, w := range ws {
		val, err := s.open(w.value)
		if err != nil {
			return nil, fmt.Errorf("write %d of task %q to checkpoint %q in thread %q: %w", w.idx, w.taskID, id, threadID, err)
		}
		t.PendingWrites = append(t.PendingWrites, checkpoint.PendingWrite{TaskID: w.taskID, Channel: w.channel, Value: val, TaskPath: w.taskPath})
	}
	return t, nil
}

// open returns a private copy of a stored value's plaintext.
func (s *Saver) open(sealed []byte) ([]byte, error) {
	if s.cipher == nil {
		return record.CloneBytes(sealed), nil
	}
	return s.cipher.Open(sealed) // Open allocates a new slice
}

type key struct{ thread, ns, id string }

// selectKeys returns the keys of the checkpoints opts selects, newest first
// (ties by thread id, then namespace). The caller holds s.mu.
func (s *Saver) selectKeys(opts checkpoint.ListOptions, conds []record.Cond) []key {
	var keys []key
	addThread := func(tid string, t *thread) {
		for ns, sp := range t.all() {
			if opts.NS != nil && *opts.NS != ns {
				continue
			}
			for _, rec := range sp.cps {
				if opts.Before != "" && rec.id >= opts.Before {
					break
				}
				if len(conds) > 0 && !record.MatchMetadata(&rec.md, conds) {
					continue
				}
				keys = append(keys, key{tid, ns, rec.id})
			}
		}
	}
	if opts.ThreadID != "" {
		if t := s.threads[opts.ThreadID]; t != nil {
			addThread(opts.ThreadID, t)
		}
	} else {
		for tid, t := range s.threads {
			addThread(tid, t)
		}
	}
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(b.id, a.id), cmp.Compare(a.thread, b.thread), cmp.Compare(a.ns, b.ns))
	})
	if opts.Limit > 0 && len(keys) > opts.Limit {
		keys = keys[:opts.Limit]
	}
	return keys
}

// List yields the checkpoints opts selects, newest first (ties by thread id,
// then namespace); see checkpoint.Saver and checkpoint.ListOptions. A
// checkpoint deleted while the caller ranges is skipped.
func (s *Saver) List(ctx context.Context, opts checkpoint.ListOptions) iter.Seq2[*checkpoint.Tuple, error] {
	return func(yield func(*checkpoint.Tuple, error) bool) {
		if err := s.check(ctx); err != nil {
			yield(nil, err)
			return
		}
		conds, err := record.CompileFilter(opts.Filter)
		if err != nil {
			yield(nil, err)
			return
		}
		s.mu.RLock()
		keys := s.selectKeys(opts, conds)
		s.mu.RUnlock()
		for _, k := range keys {
			if err := ctx.Err(); err != nil {
				yield(nil, err)
				return
			}
			s.mu.RLock()
			var t *checkpoint.Tuple
			if sp := s.space(k.thread, k.ns, false); sp != nil {
				if rec := sp.get(k.id); rec != nil {
					t, err = s.tuple(k.thread, k.ns, rec, sp)
				}
			}
			s.mu.RUnlock()
			if err != nil {
				yield(nil, err)
				return
			}
			if t != nil && !yield(t, nil) {
				return
			}
		}
	}
}

// ListHeaders returns the headers of the checkpoints List would yield for
// opts, in the same order, without values or writes.
func (s *Saver) ListHeaders(ctx context.Context, opts checkpoint.ListOptions) ([]checkpoint.Header, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	conds, err := record.CompileFilter(opts.Filter)
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	keys := s.selectKeys(opts, conds)
	out := make([]checkpoint.Header, 0, len(keys))
	for _, k := range keys {
		rec := s.threads[k.thread].get(k.ns).get(k.id) // present: s.mu is held since selectKeys
		h := checkpoint.Header{Ref: checkpoint.Ref{ThreadID: k.thread, NS: k.ns, CheckpointID: k.id}, TS: rec.ts, Metadata: rec.md.Clone()}
		if rec.parentID != "" {
			h.Parent = &checkpoint.Ref{ThreadID: k.thread, NS: k.ns, CheckpointID: rec.parentID}
		}
		out = append(out, h)
	}
	return out, nil
}

// DeleteThread removes every checkpoint, value and write of threadID in all
// namespaces. Deleting a missing thread is not an error; an empty threadID
// returns an error wrapping checkpoint.ErrNoThread.
func (s *Saver) DeleteThread(ctx context.Context, threadID string) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	if threadID == "" {
		return fmt.Errorf("delete thread: %w", checkpoint.ErrNoThread)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.threads, threadID)
	return nil
}

// Prune keeps only the newest keepLatest checkpoints of each namespace of each
// given thread, with their writes and the values they reference; everything
// else of those threads goes (keepLatest 0 deletes the threads). Other
// threads are untouched; missing threads and an empty list are no-ops. A
// negative keepLatest is an error.
func (s *Saver) Prune(ctx context.Context, threadIDs []string, keepLatest int) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	if keepLatest < 0 {
		return fmt.Errorf("prune threads %q: keepLatest %d is negative", threadIDs, keepLatest)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, tid := range threadIDs {
		t := s.threads[tid]
		if t == nil {
			continue
		}
		for ns, sp := range t.all() {
			if err := pruneSpace(sp, &s.names, keepLatest); err != nil {
				return fmt.Errorf("prune thread %q ns %q: %w", tid, ns, err)
			}
			if len(sp.cps) == 0 && len(sp.orphans) == 0 && len(sp.blobs) == 0 {
				t.remove(ns)
			}
		}
		if t.empty() {
			delete(s.threads, tid)
		}
	}
	return nil
}

func pruneSpace(sp *space, nm *names, keep int) error {
	if drop := len(sp.cps) - keep; drop > 0 {
		sp.cps = slices.Clone(sp.cps[drop:])
	}
	sp.orphans = nil // writes to checkpoints not kept
	used := map[blobKey]bool{}
	for _, rec := range sp.cps {
		cp, err := nm.decodeHeader(rec.hdr, rec.id, rec.ts)
		if err != nil {
			return err
		}
		for ch, v := range cp.ChannelVersions {
			used[blobKey{ch, v}] = true
		}
	}
	for ch, c := range sp.blobs {
		kept := make([]verBlob, 0, len(c.vs))
		for _, e := range c.vs {
			if used[blobKey{ch, e.version}] {
				kept = append(kept, e)
			}
		}
		if len(kept) == 0 {
			delete(sp.blobs, ch)
		} else {
			sp.blobs[ch] = &chanValues{kept}
		}
	}
	return nil
}

// CopyThread copies every checkpoint, value and write of srcThreadID, in all
// namespaces, to dstThreadID, keeping checkpoint ids, parents and order.
// Checkpoints and writes already in dstThreadID with the same ids are
// replaced; others are kept. A missing source copies nothing. Empty thread
// ids return an error wrapping checkpoint.ErrNoThread.
func (s *Saver) CopyThread(ctx context.Context, srcThreadID, dstThreadID string) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	if srcThreadID == "" || dstThreadID == "" {
		return fmt.Errorf("copy thread %q to %q: %w", srcThreadID, dstThreadID, checkpoint.ErrNoThread)
	}
	if srcThreadID == dstThreadID {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	src := s.threads[srcThreadID]
	if src == nil {
		return nil
	}
	// Stored slices are never mutated in place, so the copy may share them.
	for ns, sp := range src.all() {
		dst := s.space(dstThreadID, ns, true)
		for ch, c := range sp.blobs {
			d := dst.blobs.channel(ch)
			if len(d.vs) == 0 {
				// Clip: appending to either thread's slice then copies,
				// leaving the other's untouched.
				d.vs = slices.Clip(c.vs)
				continue
			}
			for _, e := range c.vs {
				if _, ok := d.get(e.version); !ok {
					d.add(e.version, e.value)
				}
			}
		}
		// Records are copied (each thread's writes are its own); the rest of
		// a record is never modified, so the copies share it.
		for _, rec := range sp.cps {
			c := *rec
			c.writes = nil
			if old := dst.get(rec.id); old != nil {
				c.writes = old.writes
			}
			dst.put(&c)
			c.writes = mergeWrites(c.writes, rec.writes)
		}
		for id, ws := range sp.orphans {
			if rec := dst.get(id); rec != nil {
				rec.writes = mergeWrites(rec.writes, ws)
				continue
			}
			if dst.orphans == nil {
				dst.orphans = map[string][]storedWrite{}
			}
			dst.orphans[id] = mergeWrites(dst.orphans[id], ws)
		}
	}
	return nil
}

// ListThreads returns the threads that have root-namespace checkpoints,
// newest first by their latest root checkpoint (ties by thread id); limit 0
// (or less) means no limit.
func (s *Saver) ListThreads(ctx context.Context, limit int) ([]checkpoint.ThreadInfo, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []checkpoint.ThreadInfo
	for tid, t := range s.threads {
		sp := t.root
		if sp == nil || len(sp.cps) == 0 {
			continue
		}
		rec := sp.latest()
		out = append(out, checkpoint.ThreadInfo{
			ThreadID:    tid,
			Checkpoints: len(sp.cps),
			Latest:      checkpoint.Ref{ThreadID: tid, CheckpointID: rec.id},
			LatestMeta:  rec.md.Clone(),
			UpdatedAt:   rec.ts,
		})
	}
	slices.SortFunc(out, func(a, b checkpoint.ThreadInfo) int {
		return cmp.Or(cmp.Compare(b.Latest.CheckpointID, a.Latest.CheckpointID), cmp.Compare(a.ThreadID, b.ThreadID))
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Stats counts threads (with at least one checkpoint), checkpoints, writes
// and stored values; Bytes is the size of the stored values and write values
// (encrypted size when encryption is on).
func (s *Saver) Stats(ctx context.Context) (checkpoint.Stats, error) {
	if err := s.check(ctx); err != nil {
		return checkpoint.Stats{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var st checkpoint.Stats
	for _, t := range s.threads {
		n := 0
		for _, sp := range t.all() {
			n += len(sp.cps)
			nb, size := sp.blobs.count()
			st.Blobs += nb
			st.Bytes += size
			count := func(ws []storedWrite) {
				st.Writes += len(ws)
				for _, w := range ws {
					st.Bytes += int64(len(w.value))
				}
			}
			for _, rec := range sp.cps {
				count(rec.writes)
			}
			for _, ws := range sp.orphans {
				count(ws)
			}
		}
		st.Checkpoints += n
		if n > 0 {
			st.Threads++
		}
	}
	return st, nil
}

// mergeWrites returns dst with every write of src added, replacing a write
// of dst with the same task and index. It never modifies dst in place, since
// dst may be shared with another thread by an earlier CopyThread.
func mergeWrites(dst, src []storedWrite) []storedWrite {
	out := slices.Clone(dst)
next:
	for _, w := range src {
		for j := range out {
			if out[j].taskID == w.taskID && out[j].idx == w.idx {
				out[j] = w
				continue next
			}
		}
		out = append(out, w)
	}
	return out
}

// jsonEqual reports whether two JSON-native values (see jsonNative) are
// equal.
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) || (x == nil) != (y == nil) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !jsonEqual(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) || (x == nil) != (y == nil) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case nil, string, bool, float64:
		return a == b
	}
	return false
}

func jsonNative(v any) bool {
	switch x := v.(type) {
	case nil, string, bool, float64:
		return true
	case map[string]any:
		for _, e := range x {
			if !jsonNative(e) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range x {
			if !jsonNative(e) {
				return false
			}
		}
		return true
	}
	return false
}
