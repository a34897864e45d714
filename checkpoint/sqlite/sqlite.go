// Package sqlite is Weft's default checkpoint store: a checkpoint.Saver in
// one SQLite file, on the pure-Go driver modernc.org/sqlite.
//
// # Storage
//
// Three tables (see migrations/0001_init.sql): checkpoints (one row per
// checkpoint: parent id, timestamp, metadata JSON and a header JSON with the
// channel versions, versions seen and updated channels), blobs (one value per
// thread, namespace, channel and version) and writes (pending writes, keyed by
// checkpoint, task id and index). Put stores values only for the channels in
// newVersions, so a step that changes 5 of 50 channels writes 5 blobs; reads
// rebuild a checkpoint's values by joining its channel versions to blobs.
// A checkpoint and its blobs are written in one transaction, so whatever a
// call committed survives a crash of the process. A fourth table, leases
// (migrations/0002_leases.sql), records which run holds each thread
// (checkpoint.Leaser). The long-term store's tables
// (migrations/0004_longterm.sql) share the file; see LongTerm. The table
// node_cache (migrations/0005_node_cache.sql) holds the node cache
// NodeCache returns.
//
// The file carries PRAGMA application_id 0x57656674 ("Weft") and PRAGMA
// user_version = the schema version (SchemaVersion), so Open recognises its
// own files, refuses foreign ones, and opens files written by a newer Weft
// read-only.
//
// # Concurrency
//
// The file is in WAL mode. A Saver writes through a single connection (SQLite
// allows one writer at a time; transactions begin IMMEDIATE and wait up to 10 s
// for another process's writer) and reads through a small pool, so reads never
// wait for writes. Several processes may share one file: a run claims its
// thread with a lease first, and a writer that lost a race anyway is refused
// as PostgreSQL refuses it (checkpoint.ErrConflict: a loop checkpoint whose
// parent is not the thread's newest, or a task's writes to a superseded
// checkpoint).
//
// # Encryption
//
// With WithEncryptionKey every blob and write value is sealed with AES-GCM
// (package crypt); metadata, ids and versions stay readable. The file records
// a key check, so a wrong key fails at Open with crypt.ErrWrongKey and a
// missing one with crypt.ErrKeyRequired.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/crypt"
	"github.com/weftstudio/weft/checkpoint/internal/record"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// ApplicationID is the value of PRAGMA application_id in every Weft
// checkpoint store: "Weft" in ASCII.
const ApplicationID = 0x57656674

// Errors Open returns, besides crypt.ErrWrongKey, crypt.ErrKeyRequired and
// checkpoint.ErrReadOnly. Compare with errors.Is; messages name the path.
var (
	// ErrNotDatabase: the file is not an SQLite database at all.
	ErrNotDatabase = errors.New("not a SQLite database")
	// ErrForeignFile: the file is an SQLite database of another application.
	ErrForeignFile = errors.New("is a SQLite database but not a Weft checkpoint store")
	// ErrCorrupt: the file is damaged (truncated or overwritten).
	ErrCorrupt = errors.New("checkpoint store is corrupt")
	// ErrValueTooLarge: a value to store is larger than
	// checkpoint.MaxValueSize (or WithMaxValueSize), or a stored value is,
	// or inflates to, more than checkpoint.MaxValueSize; reading, the error
	// names the channel and version. It is checkpoint.ErrValueTooLarge.
	ErrValueTooLarge = record.ErrTooLarge
	// ErrEmptyFile: the file is empty (0 bytes, or an SQLite database with
	// no tables) and Open was not asked to create a store (MustExist,
	// ReadOnly).
	ErrEmptyFile = errors.New("the file is empty, not a Weft checkpoint store")
	// ErrFileGone: the store's file was deleted, moved or replaced by
	// another file while the store was open; what is written would be lost
	// or land in a file nobody opens under that name. Writes and Check
	// return it.
	ErrFileGone = errors.New("the checkpoint store's file is gone")
	// ErrNotEncrypted: an encryption key was given for a store that already
	// holds unencrypted data.
	ErrNotEncrypted = errors.New("checkpoint store is not encrypted")
)

// Saver is a checkpoint store in one SQLite file. Create it with Open and
// release it with Close. It is safe for concurrent use and implements every
// optional capability: checkpoint.ThreadLister, Pruner, Copier, RunDeleter,
// StatsReporter, HeaderLister and Leaser.
type Saver struct {
	path   string
	w      *sql.DB // one connection; nil when read-only
	r      *sql.DB // read pool
	cipher *crypt.Cipher
	// maxValue is the largest value written, in bytes: at most
	// checkpoint.MaxValueSize, the largest read.
	maxValue int
	// readOnly is non-nil when writes are refused; it wraps
	// checkpoint.ErrReadOnly and says why.
	readOnly error
	// mustExist: the store must not be created (MustExist, ReadOnly).
	mustExist bool
	// cleanWAL: a read-only open found no write-ahead log; the one SQLite
	// made for it is removed at Close if no other process uses it.
	cleanWAL bool
	// ident is the file as opened, to notice it deleted or replaced.
	ident os.FileInfo
	// checked is when (UnixNano) the path last proved to be ident; gone
	// latches the error once it did not.
	checked atomic.Int64
	gone    atomic.Pointer[error]

	stmtOnce sync.Once
	stmtErr  error
	stmts    writeStmts
	// wal checkpoints the write-ahead log off the writer; nil when the
	// store is read-only.
	wal *walCheckpointer

	readStmts struct {
		sync.Mutex
		m      map[string]*sql.Stmt
		closed bool // Close ran: statements prepared since are not kept
		// bg counts the goroutines preparing a statement for the pool (see
		// stmt); Close cancels them through stop and waits, so none opens a
		// connection, and with it the store's -wal and -shm files, after
		// Close has returned.
		bg   sync.WaitGroup
		stop context.CancelFunc
		ctx  context.Context
	}
	// readParams are the read pool's connection parameters, which the
	// snapshot cache's connection shares.
	readParams string
	snap       snapCache
}

var (
	_ checkpoint.Saver            = (*Saver)(nil)
	_ checkpoint.ThreadLister     = (*Saver)(nil)
	_ checkpoint.Pruner           = (*Saver)(nil)
	_ checkpoint.Copier           = (*Saver)(nil)
	_ checkpoint.StatsReporter    = (*Saver)(nil)
	_ checkpoint.HeaderLister     = (*Saver)(nil)
	_ checkpoint.WriteKindsReader = (*Saver)(nil)
)

// Option configures Open.
type Option func(*options)

type options struct {
	readOnly  bool
	mustExist bool
	key       []byte
	readers   int
	maxValue  int
}

// DefaultMaxValueSize is the largest channel value or pending write a
// store takes, unless WithMaxValueSize lowers it: checkpoint.MaxValueSize.
const DefaultMaxValueSize = checkpoint.MaxValueSize

// WithMaxValueSize lowers the largest value, in bytes, Put, PutWrites and
// WriteBatch store: a larger one is an error wrapping ErrValueTooLarge
// naming its channel, and nothing is stored. It never raises the limit
// past checkpoint.MaxValueSize, and reads always accept values up to
// checkpoint.MaxValueSize, so a store written with any limit is readable
// by every other. 0 or less keeps DefaultMaxValueSize.
func WithMaxValueSize(n int) Option { return func(o *options) { o.maxValue = n } }

// ReadOnly opens the store read-only (SQLite mode=ro): every write returns an
// error wrapping checkpoint.ErrReadOnly, and the file must already exist.
func ReadOnly() Option { return func(o *options) { o.readOnly = true } }

// MustExist opens only a file that already is a Weft checkpoint store:
// a missing file is an error wrapping fs.ErrNotExist, and a 0-byte file or
// an SQLite database with no tables (another program's new file) is an
// error wrapping ErrEmptyFile, left as it is. Without it, Open creates the
// store in a missing or empty file. ReadOnly implies it.
func MustExist() Option { return func(o *options) { o.mustExist = true } }

// WithEncryptionKey encrypts every stored value with AES-GCM under key (16, 24
// or 32 bytes). A nil or empty key means no encryption; crypt.KeyFromEnv reads
// one from WEFT_ENCRYPTION_KEY. A new or empty store records the key check on
// Open; a store holding unencrypted data refuses a key (ErrNotEncrypted).
func WithEncryptionKey(key []byte) Option {
	return func(o *options) { o.key = append([]byte(nil), key...) }
}

// WithReadConns sets how many read connections the store may open at once;
// 0 or less keeps the default, 4.
func WithReadConns(n int) Option { return func(o *options) { o.readers = n } }

// Path returns the file the store was opened on.
func (s *Saver) Path() string { return s.path }

// ReadOnlyReason returns nil if the store accepts writes, or an error
// wrapping checkpoint.ErrReadOnly that says why it does not.
func (s *Saver) ReadOnlyReason() error { return s.readOnly }

// Close closes the store's connections. Calls after Close fail.
func (s *Saver) Close() error {
	errs := []error{s.closeSnap(), s.wal.close()}
	s.readStmts.Lock()
	s.readStmts.closed = true
	s.readStmts.Unlock()
	if s.readStmts.stop != nil {
		s.readStmts.stop()
	}
	s.readStmts.bg.Wait()
	s.readStmts.Lock()
	for _, st := range s.readStmts.m {
		errs = append(errs, st.Close())
	}
	s.readStmts.m = nil
	s.readStmts.Unlock()
	for _, st := range slices.Concat([]*sql.Stmt{s.stmts.putCheckpoint, s.stmts.putLoop, s.stmts.replaceWrite, s.stmts.head, s.stmts.acquireLease, s.stmts.releaseLease}, s.stmts.putBlobs[:], s.stmts.putWrites[:]) {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	if s.w != nil {
		errs = append(errs, s.w.Close())
	}
	if s.r != nil {
		errs = append(errs, s.r.Close())
	}
	if s.cleanWAL {
		removeIdleWAL(s.path)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close checkpoint store %s: %w", s.path, err)
	}
	return nil
}

// writable returns the reason writes are refused, or nil.
func (s *Saver) writable(ctx context.Context) error {
	if s.readOnly != nil {
		return s.readOnly
	}
	if s.ident != nil && time.Now().UnixNano()-s.checked.Load() >= int64(fileCheckEvery) {
		if err := s.Check(ctx); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// fileCheckEvery is how often, at most, writes check that the store's file
// is still there: a stat costs about a microsecond, a few percent of a
// small Put.
const fileCheckEvery = 20 * time.Millisecond

// Check reports whether the file at the store's path is still the file it
// opened: nil if so, an error wrapping ErrFileGone naming the path if it
// was deleted, moved away or replaced. Once it is gone every write fails
// with that error. Writes check by themselves, at most every 20 ms (a stat
// call), so a run fails at its next step instead of writing into a deleted
// file; long-running programs (a server, a worker, the studio) call Check
// now and then to stop, or warn, while idle.
func (s *Saver) Check(context.Context) error {
	if s.ident == nil {
		return nil
	}
	if p := s.gone.Load(); p != nil {
		return *p
	}
	fi, err := os.Stat(s.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		err = fmt.Errorf("checkpoint store %s: %w: the file was deleted or moved while this process had it open; nothing written from now on would be kept, so writes stop here", s.path, ErrFileGone)
	case err != nil:
		return fmt.Errorf("checkpoint store %s: checking its file: %w", s.path, err)
	case !os.SameFile(s.ident, fi):
		err = fmt.Errorf("checkpoint store %s: %w: another file was put in its place while this process had it open; writes stop here (reopen the store to use the new file)", s.path, ErrFileGone)
	default:
		s.checked.Store(time.Now().UnixNano())
		return nil
	}
	s.gone.Store(&err)
	return err
}
