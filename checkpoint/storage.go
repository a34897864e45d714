package checkpoint

import (
	"context"
	"time"
)

// StorageReporter is an optional Saver capability: where a store's bytes
// go, for a storage console. Sizes are the lengths of what the saver stored
// (values after its compression and encryption, headers and metadata as
// encoded), so they add up to the data the store holds; the database's own
// overhead (pages, indexes, free space) shows only in FileBytes and
// FreeBytes.
type StorageReporter interface {
	// StorageSummary describes the whole store. It reads sizes and counts,
	// never values, so its cost grows with the number of rows, not with
	// their size.
	StorageSummary(ctx context.Context, opts StorageOptions) (*StorageSummary, error)
	// ThreadStorage describes one thread, all namespaces, reading only that
	// thread's rows (and of its values only their sizes). A thread with no
	// checkpoint returns an error wrapping ErrNotFound.
	ThreadStorage(ctx context.Context, threadID string, opts StorageOptions) (*ThreadStorage, error)
}

// StorageOptions bounds the lists of a storage report. Zero values take the
// defaults.
type StorageOptions struct {
	// Top is how many entries the "largest" lists hold (threads, values);
	// 0 (or less) means 10.
	Top int
	// Points is the most points a growth series holds; 0 (or less) means 60.
	Points int
	// Checkpoints is how many of a thread's newest checkpoints
	// ThreadStorage itemises; 0 means 50, a negative number all of them.
	Checkpoints int
	// Deep makes StorageSummary also break the whole store down by channel
	// and by table. That sorts every value row (and, for SQLite, reads
	// every page's header), several times the cost of the summary: seconds
	// on a store of gigabytes. ThreadStorage always breaks its thread down
	// by channel.
	Deep bool
}

// Defaults of StorageOptions.
const (
	DefaultStorageTop         = 10
	DefaultStoragePoints      = 60
	DefaultStorageCheckpoints = 50
)

// WithDefaults returns o with its zero fields set to the defaults.
func (o StorageOptions) WithDefaults() StorageOptions {
	if o.Top <= 0 {
		o.Top = DefaultStorageTop
	}
	if o.Points <= 0 {
		o.Points = DefaultStoragePoints
	}
	if o.Checkpoints == 0 {
		o.Checkpoints = DefaultStorageCheckpoints
	}
	return o
}

// ByteCounts splits stored bytes by what holds them. The zero value is an
// empty store.
type ByteCounts struct {
	// Headers are the checkpoint rows themselves: ids, timestamps, the
	// header (channel versions, versions seen) and the metadata.
	Headers int64 `json:"headers"`
	// Values are the channel values snapshots refer to, one per channel
	// version.
	Values int64 `json:"values"`
	// Writes are the values of pending writes: what each task wrote,
	// kept to resume a step and to show what ran.
	Writes int64 `json:"writes"`
}

// Total returns the sum of the three.
func (b ByteCounts) Total() int64 { return b.Headers + b.Values + b.Writes }

// Add returns b plus o.
func (b ByteCounts) Add(o ByteCounts) ByteCounts {
	return ByteCounts{b.Headers + o.Headers, b.Values + o.Values, b.Writes + o.Writes}
}

// StorageSummary describes a whole store. Counts and sizes are exact unless
// a field says otherwise.
type StorageSummary struct {
	// Engine names the kind of store: "sqlite", "postgres" or "memory".
	Engine string `json:"engine"`
	// Threads, Checkpoints, Values and Writes count rows: threads with at
	// least one checkpoint, checkpoints in every namespace, stored channel
	// values and pending writes.
	Threads     int64      `json:"threads"`
	Checkpoints int64      `json:"checkpoints"`
	Values      int64      `json:"values"`
	Writes      int64      `json:"writes"`
	Bytes       ByteCounts `json:"bytes"`
	// FileBytes is the space the store takes: for SQLite the file and its
	// write-ahead log, for PostgreSQL its tables with their indexes and
	// TOAST; 0 for a store in memory.
	FileBytes int64 `json:"file_bytes"`
	// FreeBytes is space the store holds but no row uses, which Vacuum gives
	// back: SQLite's free pages; for PostgreSQL an estimate from its dead
	// tuples (rows deleted or replaced, not yet vacuumed). 0 in memory.
	FreeBytes int64 `json:"free_bytes"`
	// Tables breaks FileBytes down by table, largest first; nil unless
	// StorageOptions.Deep asked for it (and PostgreSQL always, where it is
	// cheap).
	Tables []TableBytes `json:"tables,omitempty"`
	// LargestThreads are the Top threads holding the most bytes, largest
	// first (ties by thread id).
	LargestThreads []ThreadBytes `json:"largest_threads"`
	// Channels are the bytes of every channel name across the store,
	// largest first (ties by name); nil unless StorageOptions.Deep asked
	// for them.
	Channels []ChannelBytes `json:"channels,omitempty"`
	// LargestValues are the Top largest stored channel values, at most one
	// per thread (each thread's largest), largest first: the values that
	// most deserve a look, found in the same pass as the threads' sizes.
	// ThreadStorage lists a thread's own largest.
	LargestValues []ValueSize `json:"largest_values"`
	// Growth is how the store grew over time, in at most Points spans of
	// equal length, oldest first. It is an estimate: each thread's
	// checkpoints and bytes are spread evenly over the time between its
	// first and last checkpoint (a value's row does not record when it was
	// written, and reading every checkpoint's time would cost as much as
	// the rest of the summary).
	Growth []GrowthPoint `json:"growth"`
}

// TableBytes is the space one table of a store takes, indexes included.
type TableBytes struct {
	Table string `json:"table"`
	Bytes int64  `json:"bytes"`
	// Unused is space inside the table's pages that no row fills (SQLite);
	// 0 when unknown.
	Unused int64 `json:"unused,omitempty"`
}

// ThreadBytes is what one thread holds.
type ThreadBytes struct {
	ThreadID    string     `json:"thread_id"`
	Checkpoints int64      `json:"checkpoints"`
	Bytes       ByteCounts `json:"bytes"`
}

// ChannelBytes is what one channel name holds: its stored values and the
// pending writes to it.
type ChannelBytes struct {
	Channel    string `json:"channel"`
	Values     int64  `json:"values"`
	ValueBytes int64  `json:"value_bytes"`
	Writes     int64  `json:"writes"`
	WriteBytes int64  `json:"write_bytes"`
}

// Total returns ValueBytes plus WriteBytes.
func (c ChannelBytes) Total() int64 { return c.ValueBytes + c.WriteBytes }

// ValueSize is the stored size of one channel value.
type ValueSize struct {
	ThreadID string `json:"thread_id"`
	NS       string `json:"checkpoint_ns"`
	Channel  string `json:"channel"`
	Version  int64  `json:"version"`
	Bytes    int64  `json:"bytes"`
}

// GrowthPoint is one point of a growth series: what the checkpoints of one
// span (of time for a store, of steps for a thread) added.
type GrowthPoint struct {
	// From is the span's first step (ThreadStorage) and Start its first
	// checkpoint's time (both series); Steps is the span's width in steps
	// (ThreadStorage only, else 0).
	From        int        `json:"from_step"`
	Steps       int        `json:"steps,omitempty"`
	Start       time.Time  `json:"start"`
	Checkpoints int64      `json:"checkpoints"`
	Bytes       ByteCounts `json:"bytes"`
}

// ThreadStorage describes one thread.
type ThreadStorage struct {
	ThreadID    string     `json:"thread_id"`
	Checkpoints int64      `json:"checkpoints"`
	Values      int64      `json:"values"`
	Writes      int64      `json:"writes"`
	Bytes       ByteCounts `json:"bytes"`
	// Namespaces counts the thread's checkpoint namespaces (1 without
	// subgraphs).
	Namespaces int `json:"namespaces"`
	// Channels are the thread's bytes by channel, largest first.
	Channels []ChannelBytes `json:"channels"`
	// LargestValues are the thread's Top largest values, largest first.
	LargestValues []ValueSize `json:"largest_values"`
	// Growth is what the thread's steps added, in at most Points spans of
	// equal width, first steps first. A step's values are those whose
	// version it created (VersionStep of the version is the step's).
	Growth []GrowthPoint `json:"growth"`
	// Newest itemises the thread's newest checkpoints (Checkpoints of
	// StorageOptions), newest first, in every namespace.
	Newest []CheckpointBytes `json:"newest"`
}

// CheckpointBytes is what one checkpoint added to its thread: its own row,
// the values whose versions first appear in it, and its pending writes.
type CheckpointBytes struct {
	Ref   Ref        `json:"ref"`
	Step  int        `json:"step"`
	TS    time.Time  `json:"ts"`
	Bytes ByteCounts `json:"bytes"`
	// Values counts the values it added, Writes its pending writes.
	Values int64 `json:"values"`
	Writes int64 `json:"writes"`
}

// PrunePolicy says what PolicyPruner.PruneBy deletes: of the chosen threads,
// every checkpoint that is neither among the KeepLatest newest of its
// namespace nor newer than OlderThan, with its pending writes and the values
// no remaining checkpoint refers to. The zero value deletes nothing (it
// names no thread).
type PrunePolicy struct {
	// Threads are the threads to prune; AllThreads prunes every thread
	// instead. With neither, nothing is pruned.
	Threads    []string
	AllThreads bool
	// KeepLatest is how many newest checkpoints of each namespace of each
	// thread stay whatever their age; 0 keeps none. A negative value is an
	// error.
	KeepLatest int
	// OlderThan, when not zero, spares checkpoints written at or after it:
	// only older ones are deleted. The zero time spares none.
	OlderThan time.Time
	// Progress, when not nil, is called as threads are done (done of
	// total), from the calling goroutine.
	Progress func(done, total int)
	// Hold, when not nil, is called before each thread is pruned and must
	// keep runs off the thread until release is called (after the thread
	// is pruned, or failed to be): HoldForPrune, for example. A thread it
	// refuses with an error wrapping ErrLeaseHeld (a run elsewhere is
	// advancing it; pruning under it could delete the checkpoint it is
	// about to extend) is skipped and named in PruneResult.Skipped; any
	// other error stops the prune before that thread, wrapped. nil prunes
	// without asking.
	Hold func(ctx context.Context, threadID string) (release func(), err error)
}

// PruneResult says what a prune deleted: rows, and their stored bytes as
// StorageReporter counts them. The file shrinks only after Vacuum.
type PruneResult struct {
	Threads     int        `json:"threads"` // threads that lost at least one checkpoint
	Checkpoints int64      `json:"checkpoints"`
	Values      int64      `json:"values"`
	Writes      int64      `json:"writes"`
	Bytes       ByteCounts `json:"bytes"`
	// Skipped are the threads not pruned because a run held them
	// (PrunePolicy.Hold refused them), in the order met; nil when none.
	Skipped []SkippedThread `json:"skipped,omitempty"`
}

// SkippedThread is a thread a prune left alone.
type SkippedThread struct {
	ThreadID string `json:"thread_id"`
	// Reason says why, naming the run that holds it and since when.
	Reason string `json:"reason"`
}

// PolicyPruner is an optional Saver capability: prune by count and age
// (PrunePolicy), and say what went. Each thread is pruned in a transaction
// of its own, so other writers wait for one thread at most, and readers
// never wait.
type PolicyPruner interface {
	PruneBy(ctx context.Context, p PrunePolicy) (PruneResult, error)
}

// VacuumOptions tunes Vacuum. The zero value is an ordinary vacuum with no
// progress reports.
type VacuumOptions struct {
	// Full asks for the most thorough rewrite the store has: PostgreSQL's
	// VACUUM FULL, which gives space back to the operating system but locks
	// each table against readers while it rewrites it. SQLite's VACUUM is
	// always a full rewrite and ignores it.
	Full bool
	// Progress, when not nil, is called now and then while the vacuum
	// runs, possibly from another goroutine but never twice at once, and
	// once at the end with Done == Total. It must not block.
	Progress func(VacuumProgress)
}

// VacuumProgress reports how far a vacuum is.
type VacuumProgress struct {
	Phase string // what it is doing, for people: "rewriting", "checkpointing the log", "weft_blobs"…
	// Done of Total units (bytes or pages); Total 0 means unknown.
	Done, Total int64
}

// VacuumResult says what a vacuum gave back.
type VacuumResult struct {
	// BytesBefore and BytesAfter are StorageSummary.FileBytes before and
	// after; Reclaimed is the difference (0 when the store grew).
	BytesBefore int64         `json:"bytes_before"`
	BytesAfter  int64         `json:"bytes_after"`
	Reclaimed   int64         `json:"reclaimed"`
	Took        time.Duration `json:"took_ns"`
}

// Vacuumer is an optional Saver capability: rewrite the store to give the
// space of deleted rows back. Readers keep reading while it runs (SQLite in
// WAL mode, PostgreSQL's plain VACUUM); writers may wait.
type Vacuumer interface {
	Vacuum(ctx context.Context, opts VacuumOptions) (VacuumResult, error)
}
