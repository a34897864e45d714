// Package postgres is a checkpoint.Saver in a PostgreSQL database, on the
// pure-Go driver github.com/jackc/pgx/v5, for many processes sharing threads.
//
// # Storage
//
// LangGraph's Postgres layout (the project's semantics reference, §7), with
// tables prefixed weft_ (see migrations/0001_init.sql): weft_checkpoints (one
// row per checkpoint: parent id, timestamp, a JSONB header with the channel
// versions, versions seen and updated channels, and JSONB metadata),
// weft_blobs (one value per thread, namespace, channel and version),
// weft_writes (pending writes by checkpoint, task id and index), weft_threads
// (the head of each thread and namespace), weft_leases (which run holds each
// thread), weft_node_cache (the node cache NodeCache returns), weft_meta
// (the encryption key check), weft_migrations (the schema versions
// applied), and the long-term store's weft_store and weft_store_vectors
// (LongTerm). Put stores values only for the channels in newVersions;
// reads rebuild a checkpoint's values by joining its channel versions to
// weft_blobs. Metadata filters are JSONB containment (metadata @> …, with a
// GIN index) for scalar values and JSONB equality for objects and arrays.
//
// The schema is created and upgraded by Open from numbered migrations
// embedded in the binary, in one transaction guarded by an advisory lock, so
// processes starting together do not race. A database whose schema is newer
// than this build knows is opened read-only: reads work, writes return
// errors wrapping checkpoint.ErrReadOnly. WithSchema keeps the tables in a
// PostgreSQL schema of their own.
//
// # Concurrency
//
// A Saver is safe for concurrent use and any number of processes may share
// one database. Every Put is one statement, so one round trip and one
// transaction: the function weft_put (migrations/0002_put_function.sql)
// locks the row of its thread and namespace in weft_threads (an upsert, so a
// new thread gets one too), checks the parent, inserts the new values (ON
// CONFLICT DO NOTHING: values are shared per channel version) and the
// checkpoint, and moves the head. The parent check is optimistic concurrency
// for workers that advance threads:
//
//   - A checkpoint of source "loop" (the end of a super-step) must be a child
//     of the head, the newest checkpoint of its thread and namespace. If
//     another writer moved the head since this one loaded its parent, Put
//     stores nothing and returns a *ConflictError, which wraps ErrConflict and
//     names the thread, namespace, parent and current head. Of two workers
//     that loaded the same checkpoint and both finish a step from it, exactly
//     one wins; the other can reload the thread and run the step again.
//   - Sources "input", "update" and "fork" may branch from any checkpoint:
//     the engine writes them when a run starts from a checkpoint the caller
//     chose (new input with engine.WithCheckpoint, UpdateState, replay),
//     which legitimately makes a second child of an old checkpoint, and the
//     saver cannot tell that from a stale worker. Such a checkpoint becomes
//     the head, so a worker still advancing the old branch gets ErrConflict
//     at its next step. WithStrictInput checks input checkpoints like loop
//     ones, for deployments where nobody branches with new input.
//   - A checkpoint with no parent (the first of a thread or of a subgraph
//     namespace), one of a thread or namespace that has no checkpoint yet, and
//     a checkpoint id stored before (a retried Put) are never conflicts.
//
// A task's pending writes (PutWrites with a task id other than
// checkpoint.NullTaskID) to a stored checkpoint that is no longer the head
// are refused with a *ConflictError too: they are a losing worker's, whose
// step another worker already finished (weft_put_writes,
// migrations/0004_leases.sql, waits on the head's lock, so a Put in progress
// decides). Writes of no task (a Command given as input) may go to any
// checkpoint. DeleteThread, Prune and PruneOlderThan take the heads' locks
// too, so they never interleave with a Put to the same thread; CopyThread
// reads its source in one snapshot.
//
// Before any of that, a run claims its thread with a lease (weft_leases,
// checkpoint.Leaser): a second process gets checkpoint.ErrLeaseHeld before
// it runs a node, so the conflicts above only catch a holder that stalled
// past its lease.
//
// The head is the greatest checkpoint id. Writers mint each id after its
// parent's (checkpoint.NewIDAfter, as the engine does), so along a chain
// the id order is the chain's order whatever the writers' clocks say. Put
// refuses a child whose id sorts before its parent's head rather than store
// a checkpoint that would never be the latest (checkpoint.ErrIDBeforeParent).
// A branch started from an older checkpoint is minted after the head as
// well (the engine reads the head first), so it becomes the head whatever
// the clocks.
//
// # Reading
//
// Get and each page of List are one query: the checkpoint row, its values
// (joined through its channel versions) and its pending writes as arrays.
// List reads pages of 100 and holds no connection while the caller handles
// them. ListHeaders reads no values.
//
// # Limits
//
// PostgreSQL text cannot hold the byte 0, so thread ids, namespaces, channel
// names and task ids with a NUL byte are refused, and so is metadata whose
// strings contain \u0000 (JSONB refuses it). Statements are
// prepared and cached per connection (pgx's default); behind a pooler in
// transaction mode, add default_query_exec_mode=exec to the DSN.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/crypt"
)

// ErrConflict is wrapped by the error Put or PutWrites returns when another
// writer advanced the same thread and namespace first: the checkpoint's
// parent, or the checkpoint a task's writes are for, is no longer the
// newest checkpoint there. Nothing was stored; reload the thread and run
// the step again, or give up. errors.As with *ConflictError gives the
// details. It is checkpoint.ErrConflict, which the SQLite saver returns
// too.
var ErrConflict = checkpoint.ErrConflict

// ConflictError describes a refused Put or PutWrites; it wraps ErrConflict.
type ConflictError = checkpoint.ConflictError

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one numbered schema change.
type migration struct {
	version int
	name    string
	sql     string
}

// loadMigrations returns the embedded migrations in order. File names are
// NNNN_name.sql, numbered from 1 without gaps.
func loadMigrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	out := make([]migration, 0, len(names))
	for i, name := range names {
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v != i+1 {
			return nil, fmt.Errorf("embedded migration %s: want a name starting %04d_", base, i+1)
		}
		b, err := migrationFiles.ReadFile(name)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: base, sql: string(b)})
	}
	return out, nil
}

// SchemaVersion is the newest schema version this build knows: the number of
// embedded migrations.
var SchemaVersion = countMigrations()

// countMigrations returns the number of embedded migrations; it panics when
// they are misnamed, which the tests catch.
func countMigrations() int {
	m, err := loadMigrations()
	if err != nil {
		panic(err)
	}
	return len(m)
}

// migrateLockKey is the first key of the advisory lock that serializes
// migrations; the second is a hash of the schema name.
const migrateLockKey = 0x57656674 // "Weft"

// Saver is a checkpoint store in a PostgreSQL database. Create it with Open
// and release it with Close. It is safe for concurrent use by many goroutines
// and processes, and implements every optional capability:
// checkpoint.ThreadLister, Pruner, Copier, RunDeleter, StatsReporter,
// HeaderLister and Leaser, plus PruneOlderThan.
type Saver struct {
	pool   *pgxpool.Pool
	schema string
	cipher *crypt.Cipher // nil: values are stored in the clear
	// strictInput also checks the parent of input checkpoints.
	strictInput bool
	// readOnly is non-nil when writes are refused; it wraps
	// checkpoint.ErrReadOnly and says why.
	readOnly error
	notify   notifier // tells watchers of writes (watch.go)
}

var (
	_ checkpoint.Saver            = (*Saver)(nil)
	_ checkpoint.ThreadLister     = (*Saver)(nil)
	_ checkpoint.Pruner           = (*Saver)(nil)
	_ checkpoint.Copier           = (*Saver)(nil)
	_ checkpoint.StatsReporter    = (*Saver)(nil)
	_ checkpoint.HeaderLister     = (*Saver)(nil)
	_ checkpoint.WriteKindsReader = (*Saver)(nil)
	_ checkpoint.Leaser           = (*Saver)(nil)
)

// Option configures Open.
type Option func(*options)

type options struct {
	schema   string
	maxConns int32
	readOnly bool
	key      []byte
	strict   bool
	// upTo stops migrating at this schema version (0: the newest); tests
	// use it to build an old schema.
	upTo int
}

// WithSchema keeps the store's tables in the PostgreSQL schema name, created
// if missing, instead of the first schema of the connection's search_path
// (normally public). An empty name keeps the default.
func WithSchema(name string) Option { return func(o *options) { o.schema = name } }

// WithMaxConns caps the connection pool at n connections; 0 or less keeps
// pgxpool's default (the larger of 4 and the number of CPUs), or the DSN's
// pool_max_conns.
func WithMaxConns(n int) Option { return func(o *options) { o.maxConns = int32(n) } }

// WithEncryptionKey encrypts every stored channel value and pending write
// value with AES-GCM under key (16, 24 or 32 bytes; see package crypt);
// metadata, ids, versions and timestamps stay in the clear, so the store can
// still be listed and filtered without the key. A nil or empty key means no
// encryption; crypt.KeyFromEnv reads one from WEFT_ENCRYPTION_KEY. A store
// without data records a key check on Open; later Opens then fail with
// crypt.ErrWrongKey for another key and crypt.ErrKeyRequired for none, and a
// store already holding unencrypted data refuses a key with
// ErrNotEncrypted. An invalid key fails Open with crypt.ErrBadKey.
func WithEncryptionKey(key []byte) Option {
	return func(o *options) { o.key = append([]byte(nil), key...) }
}

// WithStrictInput makes Put refuse, like a loop checkpoint, an input
// checkpoint whose parent is not the head of its thread and namespace, so
// that of two workers starting runs on one thread at once the second gets
// ErrConflict before it stores anything. Use it only where nobody branches
// with new input from an older checkpoint (engine.WithCheckpoint with new
// input, or UpdateState with engine.AsInput on an older checkpoint): those
// legitimate branches get ErrConflict too. Without it, a stale input
// checkpoint is stored as a branch and its worker meets the conflict at its
// first step instead.
func WithStrictInput() Option { return func(o *options) { o.strict = true } }

// ErrNotEncrypted is wrapped by Open's error when an encryption key is given
// for a store that already holds unencrypted data.
var ErrNotEncrypted = errors.New("checkpoint store is not encrypted")

// ReadOnly opens the store without creating or upgrading its schema: every
// write returns an error wrapping checkpoint.ErrReadOnly. The schema must
// already exist.
func ReadOnly() Option { return func(o *options) { o.readOnly = true } }

// Open connects to the database dsn names (a postgres:// URL or key=value
// string, as pgx accepts; pool settings such as pool_max_conns may be part of
// it), creates or upgrades the store's schema, and returns the store. It
// fails if the server cannot be reached. When the database holds a schema
// newer than this build knows, the store is opened read-only (see
// ReadOnlyReason).
func Open(ctx context.Context, dsn string, opts ...Option) (*Saver, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("open postgres checkpoint store: bad DSN: %w", err)
	}
	cipher, err := crypt.New(o.key)
	if err != nil {
		return nil, fmt.Errorf("open postgres checkpoint store: %w", err)
	}
	if o.maxConns > 0 {
		cfg.MaxConns = o.maxConns
	}
	if o.schema != "" {
		cfg.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{o.schema}.Sanitize()
	}
	where := describeTarget(cfg, o.schema)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres checkpoint store %s: %w", where, err)
	}
	s := &Saver{pool: pool, schema: o.schema, cipher: cipher, strictInput: o.strict}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres checkpoint store %s: %w", where, err)
	}
	if o.readOnly {
		s.readOnly = fmt.Errorf("postgres checkpoint store %s was opened read-only: %w", where, checkpoint.ErrReadOnly)
		v, err := s.schemaVersion(ctx, pool)
		if err == nil && v == 0 {
			err = errors.New("the database has no Weft checkpoint schema")
		}
		if err == nil {
			err = s.checkKey(ctx, pool, false)
		}
		if err != nil {
			pool.Close()
			return nil, fmt.Errorf("open postgres checkpoint store %s read-only: %w", where, err)
		}
		return s, nil
	}
	if err := s.migrate(ctx, o.upTo); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres checkpoint store %s: %w", where, err)
	}
	return s, nil
}

// describeTarget names a database for error messages without its password.
func describeTarget(cfg *pgxpool.Config, schema string) string {
	c := cfg.ConnConfig
	s := fmt.Sprintf("%s@%s:%d/%s", c.User, c.Host, c.Port, c.Database)
	if schema != "" {
		s += " schema " + strconv.Quote(schema)
	}
	return s
}

// schemaVersion returns the highest applied migration, 0 when there is none.
func (s *Saver) schemaVersion(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) (int, error) {
	var exists bool
	if err := q.QueryRow(ctx, `SELECT to_regclass('weft_migrations') IS NOT NULL`).Scan(&exists); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	if !exists {
		return 0, nil
	}
	var v int
	if err := q.QueryRow(ctx, `SELECT coalesce(max(v), 0) FROM weft_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	if v < 0 {
		// Weft numbers migrations from 1; migrating "from" a negative
		// number would run the wrong ones.
		return 0, fmt.Errorf("read schema version: weft_migrations says %d, which no Weft writes (they start at 1)", v)
	}
	return v, nil
}

// migrate applies the embedded migrations the database lacks (up to
// version upTo, if not 0), in one transaction under an advisory lock, or
// marks the store read-only when the database is newer than this build.
func (s *Saver) migrate(ctx context.Context, upTo int) error {
	ms, err := loadMigrations()
	if err != nil {
		return err
	}
	known := len(ms)
	if upTo > 0 && upTo < len(ms) {
		ms = ms[:upTo]
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, migrateLockKey, s.schema); err != nil {
		return fmt.Errorf("migrate: take the migration lock: %w", err)
	}
	if s.schema != "" {
		if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{s.schema}.Sanitize()); err != nil {
			return fmt.Errorf("migrate: create schema %q: %w", s.schema, err)
		}
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS weft_migrations (
		v          INTEGER PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("migrate: create weft_migrations: %w", err)
	}
	current, err := s.schemaVersion(ctx, tx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if current > known {
		s.readOnly = fmt.Errorf("postgres checkpoint store has schema version %d, newer than this build of Weft knows (%d); upgrade Weft to write to it: %w",
			current, known, checkpoint.ErrReadOnly)
		return s.checkKey(ctx, tx, false)
	}
	for _, m := range ms[min(current, len(ms)):] {
		if _, err := tx.Exec(ctx, m.sql); err != nil {
			return fmt.Errorf("migrate: apply %s: %w", m.name, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO weft_migrations (v, name) VALUES ($1, $2)`, m.version, m.name); err != nil {
			return fmt.Errorf("migrate: record %s: %w", m.name, err)
		}
	}
	if err := s.checkKey(ctx, tx, true); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("migrate: commit: %w", err)
	}
	return nil
}

// keyCheckName is the weft_meta row holding the encryption key check.
const keyCheckName = "key_check"

// querier is what checkKey needs of a pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// checkKey compares the store's key check with the configured key, and,
// when record is set, records one for a key given to a store without data.
func (s *Saver) checkKey(ctx context.Context, q querier, record bool) error {
	var hasMeta bool
	if err := q.QueryRow(ctx, `SELECT to_regclass('weft_meta') IS NOT NULL`).Scan(&hasMeta); err != nil {
		return fmt.Errorf("read the encryption key check: %w", err)
	}
	var check []byte
	if hasMeta {
		err := q.QueryRow(ctx, `SELECT value FROM weft_meta WHERE key = $1`, keyCheckName).Scan(&check)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("read the encryption key check: %w", err)
		}
	}
	if check != nil {
		if err := s.cipher.VerifyKeyCheck(check); err != nil {
			if errors.Is(err, crypt.ErrKeyRequired) {
				return fmt.Errorf("%w (set %s or pass WithEncryptionKey)", err, crypt.EnvVar)
			}
			return fmt.Errorf("the store's values are encrypted with another key: %w", err)
		}
		return nil
	}
	if s.cipher == nil {
		return nil
	}
	var hasData bool
	if err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM weft_checkpoints) OR EXISTS (SELECT 1 FROM weft_writes)
		OR EXISTS (SELECT 1 FROM weft_blobs)`).Scan(&hasData); err != nil {
		return fmt.Errorf("read the encryption key check: %w", err)
	}
	if hasData {
		return fmt.Errorf("an encryption key was given: %w: it already holds unencrypted data (open it without a key)", ErrNotEncrypted)
	}
	if !record {
		return nil // nothing to read yet, and nothing may be written
	}
	if !hasMeta {
		return errors.New("an encryption key was given, but the schema is too old to record its key check")
	}
	if _, err := q.Exec(ctx, `INSERT INTO weft_meta (key, value) VALUES ($1, $2)`, keyCheckName, s.cipher.KeyCheck()); err != nil {
		return fmt.Errorf("record the encryption key check: %w", err)
	}
	return nil
}

// ReadOnlyReason returns nil if the store accepts writes, or an error
// wrapping checkpoint.ErrReadOnly that says why it does not.
func (s *Saver) ReadOnlyReason() error { return s.readOnly }

// Schema returns the PostgreSQL schema given to WithSchema, or "" for the
// connection's default.
func (s *Saver) Schema() string { return s.schema }

// Pool returns the store's connection pool, for callers that want to run
// their own queries on the same database. Closing it closes the store.
func (s *Saver) Pool() *pgxpool.Pool { return s.pool }

// Close closes the store's connections, waiting for queries in progress.
// Calls after Close fail.
func (s *Saver) Close() { s.stopNotify(); s.pool.Close() }

// writable returns the reason writes are refused, or nil.
func (s *Saver) writable(ctx context.Context) error {
	if s.readOnly != nil {
		return s.readOnly
	}
	return ctx.Err()
}
