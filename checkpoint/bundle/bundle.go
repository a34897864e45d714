// Package bundle exports a thread of a checkpoint store as one versioned
// JSON document and imports it into another store: every checkpoint of
// every namespace (subgraph runs included) with its metadata, parent link,
// channel versions and pending writes. The studio's File menu and the weft
// command line share it.
//
// Values are stored as embedded JSON when the stored bytes are JSON (the
// engine's usual encoding) and as base64 otherwise (for example values a
// saver keeps encrypted), so a bundle is readable and exact.
//
// Since version 2 a value is written once per namespace, channel and
// version, as a store keeps it: a checkpoint whose channel has a value
// another checkpoint of the bundle carries lists the channel in
// shared_values instead of repeating it (a 12 MB topic carried through ten
// checkpoints is in the bundle once), and Export streams the checkpoints as
// the store lists them, newest first. Import reads versions 1 and 2, in any
// order of checkpoints.
package bundle

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"iter"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/weftstudio/weft/checkpoint"
)

// Format is the value of a bundle's "format" field.
const Format = "weft.thread-bundle"

// Version is the bundle version this package writes; Import reads it and
// older ones.
const Version = 2

// Bundle is the JSON document: one thread's checkpoints, in any order
// (Read returns them oldest first; Export writes them newest first).
type Bundle struct {
	Format      string       `json:"format"`
	Version     int          `json:"version"`
	ThreadID    string       `json:"thread_id"`
	ExportedAt  time.Time    `json:"exported_at"`
	Checkpoints []Checkpoint `json:"checkpoints"`
}

// Checkpoint is one stored checkpoint with its pending writes. ParentID is
// "" for the first checkpoint of a namespace's branch.
type Checkpoint struct {
	NS              string                      `json:"ns"`
	ID              string                      `json:"id"`
	ParentID        string                      `json:"parent_id,omitempty"`
	V               int                         `json:"v"`
	TS              time.Time                   `json:"ts"`
	Metadata        checkpoint.Metadata         `json:"metadata"`
	ChannelVersions map[string]int64            `json:"channel_versions"`
	VersionsSeen    map[string]map[string]int64 `json:"versions_seen"`
	UpdatedChannels []string                    `json:"updated_channels,omitempty"`
	Values          map[string]Value            `json:"values"`
	// Shared are the channels whose value is not repeated here: it is the
	// one the first checkpoint of the bundle carrying a value for the same
	// namespace, channel and version (in ChannelVersions) has in Values.
	// Absent before version 2.
	Shared        []string `json:"shared_values,omitempty"`
	PendingWrites []Write  `json:"pending_writes,omitempty"`
}

// valueKey names a stored value as a store keeps it: once per namespace,
// channel and version.
type valueKey struct {
	ns, ch string
	ver    int64
}

// sharer decides, checkpoint by checkpoint in the order they are written,
// which values are written and which are shared with the first checkpoint
// that carried the same bytes for the same key. It keeps a hash per key,
// not the bytes, so writing a bundle holds one checkpoint's values at a
// time; a key whose bytes differ from its first carrier's (no store writes
// that, but a bundle need not come from one) is written out in full.
type sharer map[valueKey]digest

// digest identifies a value's bytes: their length and two 64-bit hashes
// seeded at random for the process (values cannot be crafted to collide
// without the seeds), an order of magnitude cheaper than SHA-256, which
// was a third of a large export's time once values were no longer
// re-encoded. Only bytes under one key are compared, and a store keeps
// one value per key anyway.
type digest struct {
	n    int
	a, b uint64
}

var seedA, seedB = maphash.MakeSeed(), maphash.MakeSeed()

func digestOf(b []byte) digest {
	return digest{len(b), maphash.Bytes(seedA, b), maphash.Bytes(seedB, b)}
}

// shared reports whether b, ch's value in a checkpoint of namespace ns at
// version ver, can be left to the first carrier of that key, recording b
// as the carrier when there is none.
func (s sharer) shared(ns, ch string, ver int64, b []byte) bool {
	if ver == 0 || b == nil {
		return false // no version to share by, or no bytes
	}
	k := valueKey{ns, ch, ver}
	h := digestOf(b)
	first, ok := s[k]
	if !ok {
		s[k] = h
		return false
	}
	return first == h
}

// fill sets c's values from vals, sharing what s says can be shared.
func (s sharer) fill(c *Checkpoint, vals map[string][]byte) {
	c.Values = make(map[string]Value, len(vals))
	c.Shared = nil
	for _, k := range slices.Sorted(maps.Keys(vals)) {
		if s.shared(c.NS, k, c.ChannelVersions[k], vals[k]) {
			c.Shared = append(c.Shared, k)
		} else {
			c.Values[k] = valueOf(vals[k])
		}
	}
}

// Write is one pending write of a task.
type Write struct {
	TaskID   string `json:"task_id"`
	TaskPath string `json:"task_path,omitempty"`
	Channel  string `json:"channel"`
	Value    Value  `json:"value"`
}

// Value is stored bytes: JSON when they are JSON, else Base64. Both empty
// means no bytes (nil).
type Value struct {
	JSON   json.RawMessage `json:"json,omitempty"`
	Base64 []byte          `json:"base64,omitempty"`
}

func valueOf(b []byte) Value {
	if b == nil {
		return Value{}
	}
	// Only compact JSON is embedded: the document is indented, and Bytes
	// compacts it back, so the stored bytes come back exactly.
	if isCompactJSON(b) {
		return Value{JSON: json.RawMessage(b)}
	}
	return Value{Base64: b}
}

// Bytes returns the stored bytes.
func (v Value) Bytes() []byte {
	if v.JSON != nil {
		if isCompactJSON(v.JSON) {
			return []byte(v.JSON) // as Export writes it: nothing to compact
		}
		var c bytes.Buffer
		if json.Compact(&c, v.JSON) == nil {
			return c.Bytes()
		}
		return []byte(v.JSON)
	}
	return v.Base64
}

// ErrThreadExists is returned by Import when the store already has the
// thread; import it under another id with Rename.
var ErrThreadExists = errors.New("the store already has a thread with this id")

// Export writes thread threadID of saver to w as an indented JSON bundle,
// one checkpoint at a time as the store lists them (newest first), each
// value once (see Checkpoint.Shared). It asks the store for pages of about
// 64 MB of values (see WholeListing): memory holds about a page or one
// checkpoint, and the bundle's size follows the thread's distinct values,
// not its checkpoints times its values. A thread with no checkpoint is an
// error wrapping checkpoint.ErrNotFound, and nothing is written.
func Export(ctx context.Context, saver checkpoint.Saver, threadID string, w io.Writer, opts ...ExportOption) error {
	var o exportOptions
	for _, opt := range opts {
		opt(&o)
	}
	if threadID == "" {
		return fmt.Errorf("export: %w", checkpoint.ErrNoThread)
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	sh := sharer{}
	n := 0
	for tp, err := range o.list(ctx, saver, threadID) {
		if err != nil {
			if n > 0 {
				bw.Flush() // what was written is cut short; the error says why
			}
			return fmt.Errorf("export thread %q: %w", threadID, err)
		}
		if n == 0 {
			head, err := json.MarshalIndent(struct {
				Format     string    `json:"format"`
				Version    int       `json:"version"`
				ThreadID   string    `json:"thread_id"`
				ExportedAt time.Time `json:"exported_at"`
			}{Format, Version, threadID, time.Now().UTC()}, "", "  ")
			if err != nil {
				return fmt.Errorf("export thread %q: %w", threadID, err)
			}
			bw.Write(head[:len(head)-2]) // without "\n}"
			bw.WriteString(",\n  \"checkpoints\": [\n    ")
		} else {
			bw.WriteString(",\n    ")
		}
		c := checkpointOf(tp)
		sh.fill(&c, tp.Checkpoint.ChannelValues)
		if err := writeCheckpoint(bw, &c, "    "); err != nil {
			return fmt.Errorf("export thread %q, checkpoint %s: %w", threadID, c.ID, err)
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("export thread %q: %w", threadID, checkpoint.ErrNotFound)
	}
	bw.WriteString("\n  ]\n}\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("export thread %q: %w", threadID, err)
	}
	return nil
}

// ExportOption changes how Export reads the thread.
type ExportOption func(*exportOptions)

type exportOptions struct{ whole bool }

// WholeListing makes Export list the thread in one call instead of pages
// of about 64 MB, for a saver whose List reads the whole thread whatever
// its limit (a LangGraph store): pages would read it again each.
func WholeListing() ExportOption { return func(o *exportOptions) { o.whole = true } }

func (o exportOptions) list(ctx context.Context, saver checkpoint.Saver, threadID string) iter.Seq2[*checkpoint.Tuple, error] {
	if o.whole {
		return saver.List(ctx, checkpoint.ListOptions{ThreadID: threadID})
	}
	return listPaged(ctx, saver, threadID)
}

// pageBytes is about how much of a thread's values Export asks the store
// for at a time: a store reads a page of checkpoints with all their values
// before handing over the first (SQLite's holds 256), and the writing
// assistant on a 12 MB topic has 6 checkpoints of 835 MB in all. A
// variable for tests.
var pageBytes = 64 << 20

// maxPage is the most checkpoints Export asks for at a time.
const maxPage = 256

// listPaged lists thread threadID of saver newest first as List does, a
// page at a time: the first page is one checkpoint, and each next one as
// many as fit in pageBytes at the size of the last page's, at most twice
// as many, so memory holds about pageBytes or one checkpoint, and a long
// thread of small checkpoints costs few pages. Pages follow each other by
// checkpoint id (ListOptions.Before), which stores keep unique in a thread.
func listPaged(ctx context.Context, saver checkpoint.Saver, threadID string) iter.Seq2[*checkpoint.Tuple, error] {
	return func(yield func(*checkpoint.Tuple, error) bool) {
		limit, before := 1, ""
		for {
			n, size := 0, 0
			for tp, err := range saver.List(ctx, checkpoint.ListOptions{ThreadID: threadID, Before: before, Limit: limit}) {
				if err != nil {
					yield(nil, err)
					return
				}
				n++
				size += tupleSize(tp)
				before = tp.Ref.CheckpointID
				if !yield(tp, nil) {
					return
				}
			}
			if n < limit {
				return
			}
			limit = max(1, min(2*limit, maxPage, pageBytes/max(1, size/n)))
		}
	}
}

// tupleSize is the bytes of tp's values and pending writes.
func tupleSize(tp *checkpoint.Tuple) int {
	n := 0
	for _, b := range tp.Checkpoint.ChannelValues {
		n += len(b)
	}
	for _, pw := range tp.PendingWrites {
		n += len(pw.Value)
	}
	return n
}

// checkpointOf is tp in a bundle, without its values (sharer.fill).
func checkpointOf(tp *checkpoint.Tuple) Checkpoint {
	c := Checkpoint{NS: tp.Ref.NS, ID: tp.Ref.CheckpointID, V: tp.Checkpoint.V, TS: tp.Checkpoint.TS,
		Metadata: tp.Metadata, ChannelVersions: tp.Checkpoint.ChannelVersions,
		VersionsSeen: tp.Checkpoint.VersionsSeen, UpdatedChannels: tp.Checkpoint.UpdatedChannels}
	if tp.Parent != nil {
		c.ParentID = tp.Parent.CheckpointID
	}
	for _, pw := range tp.PendingWrites {
		c.PendingWrites = append(c.PendingWrites, Write{TaskID: pw.TaskID, TaskPath: pw.TaskPath, Channel: pw.Channel, Value: valueOf(pw.Value)})
	}
	return c
}

// writeCheckpoint writes c as json.MarshalIndent(c, prefix, "  ") lays it
// out, except that embedded JSON values are written as they are: the
// encoder would check, compact and re-indent every value (most of a large
// export's time), and Value.Bytes compacts them back anyway.
func writeCheckpoint(w *bufio.Writer, c *Checkpoint, prefix string) error {
	vals, writes := c.Values, c.PendingWrites
	head := *c
	head.Values, head.PendingWrites = nil, nil
	b, err := json.MarshalIndent(head, prefix, "  ")
	if err != nil {
		return err
	}
	// The head ends "\n<prefix>}"; its "values": null is where they go.
	b = b[:len(b)-len(prefix)-2]
	before, after, ok := bytes.Cut(b, []byte(`"values": null`))
	if !ok {
		return errors.New("unexpected checkpoint layout")
	}
	in := prefix + "  "
	w.Write(before)
	w.WriteString(`"values": {`)
	for i, k := range slices.Sorted(maps.Keys(vals)) {
		if i > 0 {
			w.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		fmt.Fprintf(w, "\n%s  %s: ", in, kb)
		if err := writeValue(w, vals[k]); err != nil {
			return fmt.Errorf("channel %q: %w", k, err)
		}
	}
	if len(vals) > 0 {
		fmt.Fprintf(w, "\n%s", in)
	}
	w.WriteByte('}')
	w.Write(after)
	if len(writes) > 0 {
		fmt.Fprintf(w, ",\n%s\"pending_writes\": [", in)
		for i, pw := range writes {
			if i > 0 {
				w.WriteByte(',')
			}
			v := pw.Value
			pw.Value = Value{}
			wb, err := json.Marshal(pw)
			if err != nil {
				return err
			}
			// {"task_id":…,"channel":…,"value":{}} with the value put in.
			wb = bytes.TrimSuffix(wb, []byte(`"value":{}}`))
			fmt.Fprintf(w, "\n%s  %s\"value\": ", in, wb)
			if err := writeValue(w, v); err != nil {
				return fmt.Errorf("pending write to %q: %w", pw.Channel, err)
			}
			w.WriteByte('}')
		}
		fmt.Fprintf(w, "\n%s]", in)
	}
	_, err = fmt.Fprintf(w, "\n%s}", prefix)
	return err
}

// writeValue writes v as {"json": RAW} with RAW as stored (valueOf
// embeds only compact JSON), or as the encoder writes a base64 value.
func writeValue(w *bufio.Writer, v Value) error {
	if v.JSON != nil {
		w.WriteString(`{"json": `)
		w.Write(v.JSON)
		w.WriteByte('}')
		return nil
	}
	vb, err := json.Marshal(v)
	w.Write(vb)
	return err
}

// Read collects thread threadID of saver as a Bundle, checkpoints oldest
// first, each value once (Checkpoint.Shared). It holds the thread's
// distinct values, once each.
func Read(ctx context.Context, saver checkpoint.Saver, threadID string) (*Bundle, error) {
	if threadID == "" {
		return nil, fmt.Errorf("export: %w", checkpoint.ErrNoThread)
	}
	b := &Bundle{Format: Format, Version: Version, ThreadID: threadID, ExportedAt: time.Now().UTC()}
	// Values are kept once per key and bytes while listing (newest first)
	// and shared in id order once the checkpoints are sorted.
	type held struct {
		key  valueKey
		hash digest
	}
	distinct := map[held][]byte{}
	vals := map[string]map[string]held{}
	for tp, err := range listPaged(ctx, saver, threadID) {
		if err != nil {
			return nil, fmt.Errorf("export thread %q: %w", threadID, err)
		}
		c := checkpointOf(tp)
		m := make(map[string]held, len(tp.Checkpoint.ChannelValues))
		for k, v := range tp.Checkpoint.ChannelValues {
			h := held{valueKey{c.NS, k, c.ChannelVersions[k]}, digestOf(v)}
			if _, ok := distinct[h]; !ok {
				distinct[h] = v
			}
			m[k] = h
		}
		vals[c.ID] = m
		b.Checkpoints = append(b.Checkpoints, c)
	}
	if len(b.Checkpoints) == 0 {
		return nil, fmt.Errorf("export thread %q: %w", threadID, checkpoint.ErrNotFound)
	}
	// Ids are UUIDv7, so id order is creation order: parents come first.
	slices.SortStableFunc(b.Checkpoints, func(x, y Checkpoint) int { return strings.Compare(x.ID, y.ID) })
	sh := sharer{}
	for i := range b.Checkpoints {
		c := &b.Checkpoints[i]
		bs := make(map[string][]byte, len(vals[c.ID]))
		for k, h := range vals[c.ID] {
			bs[k] = distinct[h]
		}
		sh.fill(c, bs)
	}
	return b, nil
}

// Option changes how Import works.
type Option func(*options)

type options struct{ rename string }

// Rename imports the thread under id instead of the bundle's thread id
// ("" keeps the bundle's).
func Rename(id string) Option { return func(o *options) { o.rename = id } }

// Import reads a bundle from r and stores its thread in saver, returning
// the thread id it was stored under. It refuses (ErrThreadExists) a thread
// id the store already has, unless Rename gives a free one; a bundle of an
// unknown format or a newer version is an error, and nothing is written.
// The thread is stored as one unit: a bundle failing part-way (a damaged
// checkpoint, a value over the store's limit, a full disk) leaves nothing
// of it in the store.
func Import(ctx context.Context, saver checkpoint.Saver, r io.Reader, opts ...Option) (string, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	var b Bundle
	dec := json.NewDecoder(r)
	if err := dec.Decode(&b); err != nil {
		return "", fmt.Errorf("import: not a thread bundle: %w", err)
	}
	if b.Format != Format {
		return "", fmt.Errorf("import: not a thread bundle (format %q, want %q)", b.Format, Format)
	}
	if b.Version < 1 || b.Version > Version {
		return "", fmt.Errorf("import: bundle version %d is not supported (this Weft reads up to %d)", b.Version, Version)
	}
	if len(b.Checkpoints) == 0 {
		return "", fmt.Errorf("import: the bundle of thread %q holds no checkpoints", b.ThreadID)
	}
	thread := b.ThreadID
	if o.rename != "" {
		thread = o.rename
	}
	if thread == "" {
		return "", fmt.Errorf("import: %w", checkpoint.ErrNoThread)
	}
	if exists, err := hasThread(ctx, saver, thread); err != nil {
		return "", fmt.Errorf("import thread %q: %w", thread, err)
	} else if exists {
		return "", fmt.Errorf("import thread %q: %w", thread, ErrThreadExists)
	}
	if err := validate(b.Checkpoints); err != nil {
		return "", fmt.Errorf("import thread %q: %w; nothing was imported", thread, err)
	}
	// The first carrier of each value, in the bundle's order, serves the
	// checkpoints that share it; its bytes are decoded once.
	type carrier struct {
		id    string
		bytes []byte
	}
	carriers := map[valueKey]carrier{}
	for _, c := range b.Checkpoints {
		for k, v := range c.Values {
			if key := (valueKey{c.NS, k, c.ChannelVersions[k]}); key.ver != 0 {
				if _, ok := carriers[key]; !ok {
					carriers[key] = carrier{c.ID, v.Bytes()}
				}
			}
		}
	}
	slices.SortStableFunc(b.Checkpoints, func(x, y Checkpoint) int { return strings.Compare(x.ID, y.ID) })
	ops := make([]checkpoint.Op, 0, 2*len(b.Checkpoints))
	stored := map[valueKey][]byte{}
	for _, c := range b.Checkpoints {
		cp := checkpoint.Checkpoint{V: c.V, ID: c.ID, TS: c.TS, ChannelVersions: c.ChannelVersions,
			VersionsSeen: c.VersionsSeen, UpdatedChannels: c.UpdatedChannels, ChannelValues: map[string][]byte{}}
		if cp.V == 0 {
			cp.V = checkpoint.FormatVersion
		}
		for k, v := range c.Values {
			if cr := carriers[valueKey{c.NS, k, c.ChannelVersions[k]}]; cr.id == c.ID {
				cp.ChannelValues[k] = cr.bytes // decoded once above
			} else {
				cp.ChannelValues[k] = v.Bytes()
			}
		}
		for _, k := range c.Shared {
			v, ok := carriers[valueKey{c.NS, k, c.ChannelVersions[k]}]
			if _, dup := c.Values[k]; dup || !ok {
				return "", fmt.Errorf("import thread %q: checkpoint %s shares the value of channel %q at version %d, which no checkpoint of the bundle carries: %w; nothing was imported", thread, c.ID, k, c.ChannelVersions[k], ErrBadHistory)
			}
			cp.ChannelValues[k] = v.bytes
		}
		// A value an earlier checkpoint of this import stored, same key
		// and bytes, is not written again: Put takes it from the store by
		// its version (rewriting a 12 MB value at every checkpoint cost a
		// compression each).
		newVersions := make(map[string]int64, len(c.ChannelVersions))
		for k, v := range c.ChannelVersions {
			key := valueKey{c.NS, k, v}
			b, has := cp.ChannelValues[k]
			if prev, ok := stored[key]; ok && has && bytes.Equal(prev, b) {
				continue
			}
			newVersions[k] = v
			if has {
				stored[key] = b
			}
		}
		parent := checkpoint.Ref{ThreadID: thread, NS: c.NS, CheckpointID: c.ParentID}
		ops = append(ops, checkpoint.Op{Ref: parent, Checkpoint: &cp, Metadata: c.Metadata, NewVersions: newVersions})
		ref := checkpoint.Ref{ThreadID: thread, NS: c.NS, CheckpointID: c.ID}
		// Pending writes, one batch per task in stored order.
		for i := 0; i < len(c.PendingWrites); {
			j := i
			var ws []checkpoint.Write
			for ; j < len(c.PendingWrites) && c.PendingWrites[j].TaskID == c.PendingWrites[i].TaskID; j++ {
				ws = append(ws, checkpoint.Write{Channel: c.PendingWrites[j].Channel, Value: c.PendingWrites[j].Value.Bytes()})
			}
			ops = append(ops, checkpoint.Op{Ref: ref, Writes: ws, TaskID: c.PendingWrites[i].TaskID, TaskPath: c.PendingWrites[i].TaskPath})
			i = j
		}
	}
	if err := store(ctx, saver, thread, ops); err != nil {
		if ce := (*checkpoint.ConflictError)(nil); errors.As(err, &ce) {
			// No other writer is involved: the bundle itself has two
			// branches a store would not write.
			return "", fmt.Errorf("import thread %q: checkpoint %s continues a step from %s, which is no longer the newest of namespace %q once %s is stored: the bundle holds two branches that each went on running, which no store writes (%w); nothing was imported",
				thread, ce.CheckpointID, ce.ParentID, ce.NS, ce.HeadID, ErrBadHistory)
		}
		return "", fmt.Errorf("import thread %q: %w; nothing was imported", thread, err)
	}
	return thread, nil
}

// store writes ops as one unit: in one transaction when the saver offers
// checkpoint.BatchWriter, else one by one, deleting the (new) thread again
// if one fails, so a bundle failing part-way leaves nothing behind.
func store(ctx context.Context, saver checkpoint.Saver, thread string, ops []checkpoint.Op) error {
	if bw, ok := saver.(checkpoint.BatchWriter); ok {
		return bw.WriteBatch(ctx, ops)
	}
	for _, op := range ops {
		var err error
		if op.Checkpoint != nil {
			_, err = saver.Put(ctx, op.Ref, *op.Checkpoint, op.Metadata, op.NewVersions)
		} else {
			err = saver.PutWrites(ctx, op.Ref, op.Writes, op.TaskID, op.TaskPath)
		}
		if err != nil {
			if derr := saver.DeleteThread(context.WithoutCancel(ctx), thread); derr != nil {
				return fmt.Errorf("%w (and removing what was written failed: %v)", err, derr)
			}
			return err
		}
	}
	return nil
}

// hasThread reports whether the store holds any checkpoint of thread.
func hasThread(ctx context.Context, saver checkpoint.Saver, thread string) (bool, error) {
	for _, err := range saver.List(ctx, checkpoint.ListOptions{ThreadID: thread, Limit: 1}) {
		if err != nil {
			return false, err
		}
		return true, nil
	}
	return false, nil
}
