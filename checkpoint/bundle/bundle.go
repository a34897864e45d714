// Package bundle exports a thread of a checkpoint store as one versioned
// JSON document and imports it into another store: every checkpoint of
// every namespace (subgraph runs included) with its metadata, parent link,
// channel versions and pending writes. The studio's File menu and the weft
// command line share it.
//
// Values are stored as embedded JSON when the stored bytes are JSON (the
// engine's usual encoding) and as base64 otherwise (for example values a
// saver keeps encrypted), so a bundle is readable and exact.
package bundle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/weftstudio/weft/checkpoint"
)

// Format is the value of a bundle's "format" field.
const Format = "weft.thread-bundle"

// Version is the bundle version this package writes; Import reads it and
// older ones.
const Version = 1

// Bundle is the JSON document: one thread, checkpoints oldest first.
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
	PendingWrites   []Write                     `json:"pending_writes,omitempty"`
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
	var c bytes.Buffer
	if len(b) > 0 && json.Compact(&c, b) == nil && bytes.Equal(c.Bytes(), b) {
		return Value{JSON: json.RawMessage(b)}
	}
	return Value{Base64: b}
}

// Bytes returns the stored bytes.
func (v Value) Bytes() []byte {
	if v.JSON != nil {
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

// Export writes thread threadID of saver to w as an indented JSON bundle.
// A thread with no checkpoint is an error wrapping checkpoint.ErrNotFound.
func Export(ctx context.Context, saver checkpoint.Saver, threadID string, w io.Writer) error {
	b, err := Read(ctx, saver, threadID)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(b); err != nil {
		return fmt.Errorf("export thread %q: %w", threadID, err)
	}
	return nil
}

// Read collects thread threadID of saver as a Bundle.
func Read(ctx context.Context, saver checkpoint.Saver, threadID string) (*Bundle, error) {
	if threadID == "" {
		return nil, fmt.Errorf("export: %w", checkpoint.ErrNoThread)
	}
	b := &Bundle{Format: Format, Version: Version, ThreadID: threadID, ExportedAt: time.Now().UTC()}
	for tp, err := range saver.List(ctx, checkpoint.ListOptions{ThreadID: threadID}) {
		if err != nil {
			return nil, fmt.Errorf("export thread %q: %w", threadID, err)
		}
		c := Checkpoint{NS: tp.Ref.NS, ID: tp.Ref.CheckpointID, V: tp.Checkpoint.V, TS: tp.Checkpoint.TS,
			Metadata: tp.Metadata, ChannelVersions: tp.Checkpoint.ChannelVersions,
			VersionsSeen: tp.Checkpoint.VersionsSeen, UpdatedChannels: tp.Checkpoint.UpdatedChannels,
			Values: map[string]Value{}}
		if tp.Parent != nil {
			c.ParentID = tp.Parent.CheckpointID
		}
		for k, v := range tp.Checkpoint.ChannelValues {
			c.Values[k] = valueOf(v)
		}
		for _, pw := range tp.PendingWrites {
			c.PendingWrites = append(c.PendingWrites, Write{TaskID: pw.TaskID, TaskPath: pw.TaskPath, Channel: pw.Channel, Value: valueOf(pw.Value)})
		}
		b.Checkpoints = append(b.Checkpoints, c)
	}
	if len(b.Checkpoints) == 0 {
		return nil, fmt.Errorf("export thread %q: %w", threadID, checkpoint.ErrNotFound)
	}
	// Ids are UUIDv7, so id order is creation order: parents come first.
	slices.SortStableFunc(b.Checkpoints, func(x, y Checkpoint) int { return strings.Compare(x.ID, y.ID) })
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
	slices.SortStableFunc(b.Checkpoints, func(x, y Checkpoint) int { return strings.Compare(x.ID, y.ID) })
	ops := make([]checkpoint.Op, 0, 2*len(b.Checkpoints))
	for _, c := range b.Checkpoints {
		cp := checkpoint.Checkpoint{V: c.V, ID: c.ID, TS: c.TS, ChannelVersions: c.ChannelVersions,
			VersionsSeen: c.VersionsSeen, UpdatedChannels: c.UpdatedChannels, ChannelValues: map[string][]byte{}}
		if cp.V == 0 {
			cp.V = checkpoint.FormatVersion
		}
		for k, v := range c.Values {
			cp.ChannelValues[k] = v.Bytes()
		}
		newVersions := make(map[string]int64, len(c.ChannelVersions))
		for k, v := range c.ChannelVersions {
			newVersions[k] = v
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
