// Package checkpoint is Weft's checkpoint data model and the small interfaces
// every checkpoint store implements.
//
// It follows LangGraph's checkpointer (see the project's semantics reference,
// §3, §7 and §10) with these deliberate differences:
//
//   - Channel values are opaque bytes: the engine serializes them (it knows
//     each channel's Go type); a saver only stores and returns them. That keeps
//     this package free of the engine's internals and makes deep copies trivial.
//   - Channel versions are int64. The high 32 bits count steps (one more
//     per super-step that bumps the channel); the low 32 bits are random, so
//     two branches forked from one checkpoint never give different values
//     the same version (LangGraph's savers add a random fraction to their
//     string versions for the same reason). VersionStep extracts the count.
//   - Checkpoint ids are UUIDv7 strings, so string order is creation order.
//   - Metadata carries the names of the tasks whose writes produced the
//     checkpoint (Tasks), so a timeline can show "what ran" without loading
//     pending writes.
//
// Optional capabilities (listing threads, pruning, copying, deleting one
// run, statistics, light-weight history, leases that keep one run per
// thread) are separate small interfaces that callers find by type
// assertion, so a minimal saver stays minimal.
package checkpoint

import (
	"context"
	"crypto/rand"
	"errors"
	"iter"
	"sync"
	"time"

	"github.com/google/uuid"
)

// FormatVersion is the checkpoint format this package writes (Checkpoint.V).
// LangGraph's current format is 4; ours started from that shape.
const FormatVersion = 4

// Special write channels. They never hold state; they record what happened to
// a task. Savers store them like any other write but upsert them (a later
// special write of the same kind replaces the earlier one) instead of ignoring
// duplicates.
const (
	Error     = "__error__"      // the task failed; the value is the error text (JSON string)
	Interrupt = "__interrupt__"  // the task interrupted; the value is its interrupts (JSON)
	Resume    = "__resume__"     // resume values the task consumed, by interrupt index (JSON)
	Scheduled = "__scheduled__"  // reserved for scheduled tasks
	NoWrites  = "__no_writes__"  // the task finished and wrote nothing
	Tasks     = "__pregel_tasks" // Send packets for the next step
	Calls     = "__calls__"      // the model and tool calls the task recorded (JSON, kept bounded by the engine)
	Return    = "__return__"     // a call task's result (engine.Call: LangGraph's functional-API tasks)
)

// NullTaskID is the task id of writes that belong to no task: a Command given
// as graph input (update, goto, resume).
const NullTaskID = "00000000-0000-0000-0000-000000000000"

// SpecialIndex maps the special write channels to the fixed Write.Idx they are
// stored under, as LangGraph's WRITES_IDX_MAP does. Ordinary writes use their
// position in the task's batch (0, 1, …).
var SpecialIndex = map[string]int{Error: -1, Scheduled: -2, Interrupt: -3, Resume: -4, Calls: -5}

// Source says why a checkpoint was written.
type Source string

// The sources LangGraph defines. The zero Source is invalid for Put.
const (
	SourceInput  Source = "input"  // created from a graph input
	SourceLoop   Source = "loop"   // created at the end of a super-step
	SourceUpdate Source = "update" // created by a manual state update
	SourceFork   Source = "fork"   // created as a copy of another checkpoint (replay, __copy__)
)

// Ref names one checkpoint, or the latest one of a thread and namespace when
// CheckpointID is empty. The zero Ref names nothing: savers reject an empty
// ThreadID with ErrNoThread.
type Ref struct {
	ThreadID     string `json:"thread_id"`
	NS           string `json:"checkpoint_ns"`           // "" is the root graph; subgraphs use "node:<task id>" joined with "|"
	CheckpointID string `json:"checkpoint_id,omitempty"` // "" means the latest in (ThreadID, NS)
}

// Checkpoint is the state of a graph at the end of a super-step.
//
// ChannelValues holds only channels that have a value (an empty channel is
// absent). A channel absent from ChannelVersions has never been written.
type Checkpoint struct {
	V               int                         `json:"v"`
	ID              string                      `json:"id"`
	TS              time.Time                   `json:"ts"`
	ChannelValues   map[string][]byte           `json:"channel_values"`
	ChannelVersions map[string]int64            `json:"channel_versions"`
	VersionsSeen    map[string]map[string]int64 `json:"versions_seen"`
	// UpdatedChannels lists, sorted, the channels the step that produced this
	// checkpoint updated; nil when unknown (for example after a manual update).
	UpdatedChannels []string `json:"updated_channels"`
}

// Metadata describes how a checkpoint came to be. Extra holds the user's own
// keys (JSON-compatible values); nil and empty mean none.
type Metadata struct {
	Source  Source            `json:"source"`
	Step    int               `json:"step"`
	Parents map[string]string `json:"parents"` // namespace → checkpoint id of each ancestor graph; empty at the root
	RunID   string            `json:"run_id,omitempty"`
	// Tasks are the names of the tasks whose writes this checkpoint applied,
	// sorted; empty for input and update checkpoints with no task.
	Tasks []string       `json:"tasks,omitempty"`
	Extra map[string]any `json:"extra,omitempty"`
}

// PendingWrite is one write a task made during the super-step that started
// from a checkpoint. Value is the serialized value (nil for a write of no
// value, such as a plain edge trigger).
type PendingWrite struct {
	TaskID   string `json:"task_id"`
	Channel  string `json:"channel"`
	Value    []byte `json:"value"`
	TaskPath string `json:"task_path,omitempty"` // the task's path, e.g. "pull:a" or "push:0:worker"
}

// Write is one value a task wrote, as given to PutWrites.
type Write struct {
	Channel string
	Value   []byte
}

// Tuple is a stored checkpoint with everything needed to resume from it.
type Tuple struct {
	Ref        Ref        `json:"config"` // CheckpointID is always set
	Checkpoint Checkpoint `json:"checkpoint"`
	Metadata   Metadata   `json:"metadata"`
	Parent     *Ref       `json:"parent_config,omitempty"` // nil for the first checkpoint of a branch
	// PendingWrites are the writes made by tasks of the step that started from
	// this checkpoint, ordered by task id then index (so a task's special
	// writes, whose indexes are negative, come first). Savers return an
	// empty, non-nil slice when there are none.
	PendingWrites []PendingWrite `json:"pending_writes"`
}

// ListOptions selects checkpoints for Saver.List. Zero values select
// everything: all threads, all namespaces, no filter, no limit.
type ListOptions struct {
	ThreadID string  // "" lists every thread
	NS       *string // nil lists every namespace; a pointer to "" only the root
	// Filter keeps checkpoints whose metadata has every key equal: the keys
	// "source", "step" and "run_id" name those fields, any other key names
	// an Extra key. Values compare as JSON (42 equals 42.0, objects equal
	// whatever their key order); a nil value matches a missing or null key.
	// A value that cannot be encoded as JSON makes List fail.
	Filter map[string]any
	Before string // keep only checkpoint ids lower than this; "" keeps all
	Limit  int    // 0 (or less) means no limit
}

// Saver stores checkpoints and pending writes. Implementations are safe for
// concurrent use.
type Saver interface {
	// Get returns the checkpoint ref names (the latest of the thread and
	// namespace when ref.CheckpointID is ""), or ErrNotFound.
	Get(ctx context.Context, ref Ref) (*Tuple, error)
	// List yields matching checkpoints newest first. Stop ranging to stop
	// reading; an error ends the sequence.
	List(ctx context.Context, opts ListOptions) iter.Seq2[*Tuple, error]
	// Put stores cp as a child of parent (parent.CheckpointID may be "" for the
	// first checkpoint) and returns the stored checkpoint's Ref.
	//
	// Only channels named in newVersions are (re)written: their values are
	// taken from cp.ChannelValues (absent means empty). Every other channel's
	// value is the one stored earlier for its version in cp.ChannelVersions, so
	// a step that changes 5 of 50 channels stores 5 values.
	//
	// Put keeps nothing it is given: the caller may modify or reuse cp, md
	// and newVersions once it returns.
	Put(ctx context.Context, parent Ref, cp Checkpoint, md Metadata, newVersions map[string]int64) (Ref, error)
	// PutWrites stores a task's writes against the checkpoint ref names.
	// Ordinary writes are kept once per (taskID, index): writing them again is
	// a no-op. Special writes (see SpecialIndex) replace earlier ones.
	PutWrites(ctx context.Context, ref Ref, writes []Write, taskID, taskPath string) error
	// DeleteThread removes every checkpoint and write of a thread, in all
	// namespaces. Deleting a missing thread is not an error.
	DeleteThread(ctx context.Context, threadID string) error
}

// OwnedPutter is an optional Saver capability for callers that hand over the
// value bytes of cp.ChannelValues: PutOwned is Put that may keep those slices
// instead of copying them. Everything else (the maps and slices of cp, md,
// newVersions) stays the caller's, to reuse once PutOwned returns, as with
// Put. The engine uses it: every stored value is encoded afresh, while the
// maps describing a checkpoint are rebuilt in place step after step.
type OwnedPutter interface {
	PutOwned(ctx context.Context, parent Ref, cp Checkpoint, md Metadata, newVersions map[string]int64) (Ref, error)
}

// Op is one write of a batch: a Put of Checkpoint as a child of Ref when
// Checkpoint is non-nil, otherwise a PutWrites of Writes against Ref.
type Op struct {
	Ref         Ref
	Checkpoint  *Checkpoint
	Metadata    Metadata
	NewVersions map[string]int64
	Writes      []Write
	TaskID      string
	TaskPath    string
}

// BatchWriter is an optional Saver capability: store several Puts and
// PutWrites, in order, as one atomic unit — all of them or none. The engine
// uses it to write what piled up while a background writer was busy in one
// transaction. The caller does not modify the ops afterwards, and keeps
// nothing the saver could not keep too.
type BatchWriter interface {
	WriteBatch(ctx context.Context, ops []Op) error
}

// InProcess is an optional Saver capability: its calls finish without I/O
// (an in-memory store), so a caller gains nothing by making them in the
// background, and the engine makes them inline even with async durability.
type InProcess interface {
	InProcess() bool
}

// ThreadInfo summarises one thread for ThreadLister.
type ThreadInfo struct {
	ThreadID    string
	Checkpoints int       // number of checkpoints in the root namespace; -1 when the store cannot say without reading the thread's whole history (a LangGraph server)
	Latest      Ref       // the newest root checkpoint
	LatestMeta  Metadata  // its metadata
	UpdatedAt   time.Time // its timestamp
	// Busy is true when the store reports a run in progress on the thread
	// as part of the listing (a LangGraph server's "busy" status); false
	// when none is or the store does not say: Weft's own stores tell it
	// through leases (Leaser).
	Busy bool
	// Err is why the newest root checkpoint's metadata or timestamp could
	// not be read (a damaged row); nil when they could. The thread is
	// still listed, with ThreadID, Checkpoints and Latest right and what
	// could not be read left zero, so one damaged row hides no other
	// thread.
	Err error
}

// ThreadLister is an optional Saver capability: list threads, newest first.
// A limit of 0 means no limit.
type ThreadLister interface {
	ListThreads(ctx context.Context, limit int) ([]ThreadInfo, error)
}

// Pruner is an optional Saver capability: keep only the newest keepLatest
// checkpoints of each namespace of each given thread (0 deletes them all),
// together with their writes; other threads are untouched.
type Pruner interface {
	Prune(ctx context.Context, threadIDs []string, keepLatest int) error
}

// Copier is an optional Saver capability: copy every checkpoint and write of
// one thread (all namespaces) to another thread id, keeping ids and order.
type Copier interface {
	CopyThread(ctx context.Context, srcThreadID, dstThreadID string) error
}

// RunStart is a checkpoint a run started from, with the pending writes it
// held then (as Get returned them before the run): what RunDeleter puts
// back. A run's tasks store their writes on the checkpoint the run starts
// from, which is not the run's own (it has another run id, or none), so
// deleting the run's checkpoints alone would leave them, and a later resume
// would take those tasks as done.
type RunStart struct {
	Ref    Ref            // the checkpoint; CheckpointID must be set
	Writes []PendingWrite // its writes before the run; nil or empty when it had none
}

// RunDeleted says what RunDeleter.DeleteRun removed.
type RunDeleted struct {
	Checkpoints int // checkpoints of the run, in every namespace
	Writes      int // pending writes: those of the run's checkpoints and those the run added to its starts
	Restored    int // special writes of the starts the run had replaced, put back
	Values      int // channel values no remaining checkpoint uses
}

// RunDeleter is an optional Saver capability: undo one run, as LangGraph's
// server does on a cancel with action rollback.
//
// DeleteRun deletes every checkpoint of threadID whose Metadata.RunID is
// runID, in every namespace (subgraph checkpoints too), with their pending
// writes and the channel values only they used, and sets the pending writes
// of each start back to start.Writes: a write the store holds that is not
// listed (same task id, channel, value and task path) is deleted, and a
// listed special write (SpecialIndex) the store no longer holds (the run
// replaced it) is stored again. An ordinary listed write the store lacks is
// left out: no run removes one. Starts that are among the deleted
// checkpoints are skipped. A run with no checkpoints deletes none and still
// resets its starts; no starts resets nothing.
//
// It refuses, deleting nothing, when a checkpoint of another run (or of
// none) descends from one of the run's checkpoints — its parent, or one of
// its Metadata.Parents, is one of them: an error wrapping ErrRunContinued
// naming that checkpoint. An empty threadID is ErrNoThread, an empty runID
// an error (it would select every checkpoint without a run), a start of
// another thread or without a checkpoint id an error, a start that is not
// stored an error wrapping ErrNotFound; all of them delete nothing.
//
// Savers backed by a database do it in one transaction: a crash leaves
// the thread as it was or as the run never happened.
type RunDeleter interface {
	DeleteRun(ctx context.Context, threadID, runID string, starts ...RunStart) (RunDeleted, error)
}

// Stats describes a store's size. Zero fields are unknown.
type Stats struct {
	Threads     int
	Checkpoints int
	Writes      int
	Blobs       int
	Bytes       int64 // bytes on disk, or of values held in memory
}

// StatsReporter is an optional Saver capability.
type StatsReporter interface {
	Stats(ctx context.Context) (Stats, error)
}

// ThreadQuery selects a page of threads for ThreadSearcher. The zero value
// is every thread, newest first, in one page.
type ThreadQuery struct {
	// Limit is the most threads a page holds; 0 (or less) means no limit.
	Limit int
	// After continues a listing after this thread, the last of the page
	// before (its ThreadID and Latest.CheckpointID are used); nil starts at
	// the newest thread. A thread that got a new checkpoint between two
	// pages moves to the top and is not shown again, as in any keyset
	// listing.
	After *ThreadInfo
	// Search keeps threads whose id contains it, ignoring ASCII case; ""
	// keeps every thread.
	Search string
	// Filter keeps threads whose latest root checkpoint's metadata matches
	// it, as ListOptions.Filter matches a checkpoint's (the same keys and
	// comparison; a nil value matches a missing or null key): {"graph":
	// "agent"} lists the threads whose latest run was of graph "agent",
	// whatever older checkpoints or subgraphs recorded. It applies before
	// After and Limit: a page holds up to Limit matching threads, and More
	// says whether more matching threads follow. Nil or empty keeps every
	// thread; a value that cannot be encoded as JSON is an error naming its
	// key.
	Filter map[string]any
}

// ThreadPage is one page of threads, newest first by their latest root
// checkpoint (ties by thread id), as ThreadLister orders them.
type ThreadPage struct {
	Threads []ThreadInfo
	// More reports that threads follow this page: ask again with After set
	// to the page's last thread.
	More bool
}

// ThreadSearcher is an optional Saver capability: list threads a page at a
// time, optionally searching their ids and filtering them by their latest
// metadata (the graph that last ran), at a cost that grows with the page
// rather than with the store (a studio opening a store of 10,000 threads
// shows the first page at once).
type ThreadSearcher interface {
	SearchThreads(ctx context.Context, q ThreadQuery) (ThreadPage, error)
}

// Header is a checkpoint without its channel values and writes: what a
// timeline needs to draw a long history quickly.
type Header struct {
	Ref      Ref
	Parent   *Ref
	TS       time.Time
	Metadata Metadata
}

// HeaderLister is an optional Saver capability: list checkpoint headers
// newest first, with the same options as List, without loading values.
type HeaderLister interface {
	ListHeaders(ctx context.Context, opts ListOptions) ([]Header, error)
}

// WriteKindsReader is an optional Saver capability: the pending writes of
// the checkpoint ref names (ref.CheckpointID must be given) as Get returns
// them, each with its task id, channel and path but no value (Value nil):
// what a timeline's marks (a question, a failure) need, without reading
// values that may be hundreds of megabytes. A missing checkpoint is an
// error wrapping ErrNotFound.
type WriteKindsReader interface {
	WriteKinds(ctx context.Context, ref Ref) ([]PendingWrite, error)
}

// Watcher is an optional Saver capability: Watch tells of changes to the
// store, made by this process or any other sharing it (a worker, the CLI, a
// server, another studio), by a value on the returned channel soon after
// they are committed. Values coalesce: a reader that falls behind gets one
// value for many changes, never a backlog, and a value may come without a
// change, so a reader reads the store to learn what changed. The channel is
// closed when ctx ends or the watch fails for good (the store went away).
// An error means the store cannot be watched (the caller can still read
// it).
type Watcher interface {
	Watch(ctx context.Context) (<-chan struct{}, error)
}

// Errors savers return. Compare with errors.Is.
var (
	ErrNotFound = errors.New("checkpoint not found")
	ErrNoThread = errors.New("checkpoint ref has no thread id")
	// ErrNoCheckpoint is returned when an operation needs a checkpoint id and
	// got none: Put of a Checkpoint with an empty ID, or PutWrites to a Ref
	// with an empty CheckpointID.
	ErrNoCheckpoint = errors.New("checkpoint id is empty")
	// ErrIDBeforeParent is returned by Put of a child of a thread's head
	// whose id sorts before the head: the id order of a thread is its
	// chain's order (see NewIDAfter), and such a child would never be the
	// head. Ids minted by NewIDAfter never get it.
	ErrIDBeforeParent = errors.New("checkpoint id does not sort after its parent's")
	// ErrRunContinued is returned by RunDeleter.DeleteRun when a
	// checkpoint of another run descends from the run's: deleting the run
	// would leave that checkpoint without its parent.
	ErrRunContinued = errors.New("another run continued from the run's checkpoints")
	// ErrReadOnly is returned by writes to a store opened read-only, for
	// example a file written by a newer version of Weft.
	ErrReadOnly = errors.New("checkpoint store is read-only")
	// ErrValueTooLarge is returned when a channel value or pending write to
	// store is larger than MaxValueSize (nothing was stored; the message
	// names the channel, the size and the limit), and when a stored value
	// is, or decompresses to, more than MaxValueSize: a damaged or crafted
	// store, since no saver writes one.
	ErrValueTooLarge = errors.New("value is larger than the limit")
)

// MaxValueSize is the largest channel value or pending write, in bytes, a
// Weft saver stores and gives back. It is one limit for every saver and
// every command: Put and PutWrites refuse a larger value (an error wrapping
// ErrValueTooLarge) before storing anything, and reads accept every value
// up to it however well it compresses, so what a run wrote, state, history,
// export and resume read. Reads refuse a stored value that is, or inflates
// to, more: decompressing a crafted value takes at most this much memory.
const MaxValueSize = 64 << 20

// VersionStep returns the step count of a channel version (its high 32
// bits), for display and for savers that read versions in ranges.
func VersionStep(v int64) int64 { return v >> 32 }

// NewID returns a new checkpoint id: a UUIDv7, so ids sort by creation time.
// Within one process ids are strictly increasing even within a millisecond.
func NewID() string { return NewIDAfter("", time.Now()) }

// NewIDAfter returns a new checkpoint id for a checkpoint written at now
// whose parent has id parent ("" for none): a UUIDv7 of now when that sorts
// after parent, else parent's time plus one tick (its 60 time bits plus
// one; parent a UUIDv6 or v7). A writer whose clock is behind the one that
// wrote the parent (another host, a restored VM, NTP stepping back) so
// still writes a child that sorts after its parent, and the order of a
// thread's checkpoints by id is the order of its chain whatever the clocks.
// A parent that is not a UUIDv6 or v7 gets an id of now.
//
// Within a process ids also only grow (as google/uuid's NewV7 does): two
// ids minted in the same 256 ns, or after the clock stepped back, still
// sort in the order they were made, so "newest first" across threads is
// the order they were written.
func NewIDAfter(parent string, now time.Time) string {
	ns := now.UnixNano()
	ms := ns / 1e6
	t := uint64(ms)<<12 | uint64(ns-ms*1e6)>>8 // 48 bits of ms, 12 of its fraction
	p, perr := uuid.Parse(parent)
	known := parent != "" && perr == nil && (p.Version() == 6 || p.Version() == 7)
	if known && p.Version() == 7 {
		t = max(t, timeBits(p)+1)
	}
	idClock.Lock()
	t = max(t, idClock.last+1)
	idClock.last = t
	idClock.Unlock()
	var u uuid.UUID
	putTimeBits(&u, t, 0x70)
	if _, err := idRandom.Read(u[8:]); err != nil {
		panic(err)
	}
	u[8] = 0x80 | u[8]&0x3f
	id := u.String()
	if !known || id > parent {
		return id
	}
	// A UUIDv6 parent (LangGraph's) whose time sorts after now: the next
	// tick of its own version.
	putTimeBits(&u, timeBits(p)+1, p[6]&0xf0)
	return u.String()
}

// idClock is the 60 time bits of the last id this process minted.
var idClock struct {
	sync.Mutex
	last uint64
}

// timeBits returns the 60 time bits of a UUIDv6 or v7, in sort order.
func timeBits(p uuid.UUID) uint64 {
	return uint64(p[0])<<52 | uint64(p[1])<<44 | uint64(p[2])<<36 | uint64(p[3])<<28 | uint64(p[4])<<20 | uint64(p[5])<<12 | uint64(p[6]&0x0f)<<8 | uint64(p[7])
}

// putTimeBits writes t as u's 60 time bits under version ver (0x60, 0x70).
func putTimeBits(u *uuid.UUID, t uint64, ver byte) {
	u[0], u[1], u[2], u[3], u[4], u[5] = byte(t>>52), byte(t>>44), byte(t>>36), byte(t>>28), byte(t>>20), byte(t>>12)
	u[6], u[7] = ver|byte(t>>8)&0x0f, byte(t)
}

// idRandom serves the random bits of ids from a buffer filled from
// crypto/rand 512 bytes at a time: one system call per 32 ids rather than
// one per id, which was a visible share of a checkpoint's cost.
var idRandom pooledRandom

type pooledRandom struct {
	mu  sync.Mutex
	buf [512]byte
	off int // bytes of buf already served; starts exhausted
}

func (r *pooledRandom) Read(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for n < len(p) {
		if r.off == 0 || r.off == len(r.buf) {
			if _, err := rand.Read(r.buf[:]); err != nil {
				return n, err
			}
			r.off = 0
		}
		k := copy(p[n:], r.buf[r.off:])
		clear(r.buf[r.off : r.off+k]) // served bits are not kept
		r.off += k
		n += k
	}
	return n, nil
}

// Clone returns a deep copy of cp: mutating the copy never changes cp.
func (cp Checkpoint) Clone() Checkpoint {
	out := cp
	if cp.ChannelValues != nil {
		out.ChannelValues = make(map[string][]byte, len(cp.ChannelValues))
		for k, v := range cp.ChannelValues {
			out.ChannelValues[k] = cloneBytes(v)
		}
	}
	out.ChannelVersions = cloneVersions(cp.ChannelVersions)
	if cp.VersionsSeen != nil {
		out.VersionsSeen = make(map[string]map[string]int64, len(cp.VersionsSeen))
		for k, v := range cp.VersionsSeen {
			out.VersionsSeen[k] = cloneVersions(v)
		}
	}
	if cp.UpdatedChannels != nil {
		out.UpdatedChannels = append([]string{}, cp.UpdatedChannels...)
	}
	return out
}

// Clone returns a deep copy of md (Extra values are copied as JSON-shaped data:
// maps and slices are copied, other values shared since they are immutable).
func (md Metadata) Clone() Metadata {
	out := md
	if md.Parents != nil {
		out.Parents = make(map[string]string, len(md.Parents))
		for k, v := range md.Parents {
			out.Parents[k] = v
		}
	}
	if md.Tasks != nil {
		out.Tasks = append([]string{}, md.Tasks...)
	}
	if md.Extra != nil {
		out.Extra = cloneJSON(md.Extra).(map[string]any)
	}
	return out
}

// Clone returns a deep copy of t.
func (t *Tuple) Clone() *Tuple {
	if t == nil {
		return nil
	}
	out := &Tuple{Ref: t.Ref, Checkpoint: t.Checkpoint.Clone(), Metadata: t.Metadata.Clone()}
	if t.Parent != nil {
		p := *t.Parent
		out.Parent = &p
	}
	if t.PendingWrites != nil {
		out.PendingWrites = make([]PendingWrite, len(t.PendingWrites))
		for i, w := range t.PendingWrites {
			w.Value = cloneBytes(w.Value)
			out.PendingWrites[i] = w
		}
	}
	return out
}

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}

func cloneVersions(m map[string]int64) map[string]int64 {
	if m == nil {
		return nil
	}
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func cloneJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = cloneJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneJSON(e)
		}
		return out
	default:
		return v
	}
}
