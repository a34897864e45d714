package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/crypt"

	sqlite3 "modernc.org/sqlite"
	sqlite3lib "modernc.org/sqlite/lib"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

// migrations are the embedded migrations, by version. A file named
// NNNN_name.sql brings the schema to version NNNN.
var migrations = loadMigrations()

// zstdSchema is the first schema whose values may be packed with zstd
// (record.Pack); older ones hold DEFLATE only, which every build reads.
const zstdSchema = 8

// SchemaVersion is the schema version this build writes (PRAGMA user_version
// of its files): the number of the last embedded migration.
var SchemaVersion = migrations[len(migrations)-1].version

func loadMigrations() []migration {
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		panic(err)
	}
	var out []migration
	for _, e := range entries {
		prefix, _, ok := strings.Cut(e.Name(), "_")
		n, err := strconv.Atoi(prefix)
		if !ok || err != nil || n <= 0 {
			panic("sqlite: bad migration file name " + e.Name())
		}
		b, err := migrationFS.ReadFile("migrations/" + e.Name())
		if err != nil {
			panic(err)
		}
		out = append(out, migration{n, e.Name(), string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, m := range out {
		if m.version != i+1 {
			panic(fmt.Sprintf("sqlite: migrations are not numbered 1, 2, …: %s", m.name))
		}
	}
	return out
}

// quickCheckLimit is the largest file Open runs PRAGMA quick_check on (it
// reads every page: about 2.5 ms per MiB here, so at most ~10 ms). Larger
// files are checked for truncation against their header; other damage shows
// as ErrCorrupt on the first read that meets it.
var quickCheckLimit int64 = 4 << 20

// Open opens the checkpoint store in the SQLite file at path, creating the
// file and its schema if it does not exist (unless ReadOnly is given).
//
// It fails, with an error naming path, when path is a directory or its
// directory does not exist, when the file is not an SQLite database
// (ErrNotDatabase), when it belongs to another application (ErrForeignFile),
// when it is truncated or damaged (ErrCorrupt: checked from the header, and
// by PRAGMA quick_check for files up to 4 MiB; a read that meets damage in a
// larger file fails with ErrCorrupt), when it cannot be written
// (an error wrapping checkpoint.ErrReadOnly; use ReadOnly to read it), and
// on encryption key mismatches (crypt.ErrWrongKey, crypt.ErrKeyRequired,
// ErrNotEncrypted). A file written by a newer Weft opens read-only: reads
// work, writes return an error wrapping checkpoint.ErrReadOnly.
func Open(path string, opts ...Option) (*Saver, error) {
	o := options{readers: 4}
	for _, opt := range opts {
		opt(&o)
	}
	if o.readers <= 0 {
		o.readers = 4
	}
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("open checkpoint store %q: want a file path (use package memory for an in-memory store)", path)
	}
	cipher, err := crypt.New(o.key)
	if err != nil {
		return nil, fmt.Errorf("open checkpoint store %s: %w", path, err)
	}
	o.mustExist = o.mustExist || o.readOnly
	if err := precheck(path, o.readOnly, o.mustExist); err != nil {
		return nil, err
	}
	if o.maxValue <= 0 || o.maxValue > checkpoint.MaxValueSize {
		o.maxValue = DefaultMaxValueSize
	}
	s := &Saver{path: path, cipher: cipher, maxValue: o.maxValue, mustExist: o.mustExist}
	s.readStmts.ctx, s.readStmts.stop = context.WithCancel(context.Background())
	if o.readOnly {
		if _, err := os.Lstat(path + "-wal"); errors.Is(err, fs.ErrNotExist) {
			s.cleanWAL = true
		}
		s.readOnly = fmt.Errorf("checkpoint store %s was opened read-only: %w", path, checkpoint.ErrReadOnly)
	} else {
		if s.w, err = sql.Open("sqlite", dsn(path, writerParams)); err != nil {
			return nil, fmt.Errorf("open checkpoint store %s: %w", path, err)
		}
		s.w.SetMaxOpenConns(1)
		s.w.SetMaxIdleConns(1)
		s.w.SetConnMaxLifetime(0)
		s.w.SetConnMaxIdleTime(0)
	}
	params := readerParams
	if o.readOnly {
		params = readOnlyParams
		if s.cleanWAL && !fileWritable(path) {
			// Nobody has the file open (no log), and this process could not
			// remove the -wal and -shm files a read-only connection makes:
			// read it as immutable, which makes none.
			params = immutableParams
			s.cleanWAL = false
		}
	}
	s.readParams = params
	if s.r, err = sql.Open("sqlite", dsn(path, params)); err != nil {
		s.Close()
		return nil, fmt.Errorf("open checkpoint store %s: %w", path, err)
	}
	s.r.SetMaxOpenConns(o.readers)
	s.r.SetMaxIdleConns(o.readers)
	err = s.initRetry(context.Background())
	if err != nil && o.readOnly && sqliteCode(err) == sqlite3lib.SQLITE_CANTOPEN {
		// A WAL file on a read-only file system without its -shm file: SQLite
		// can read it only as immutable (nothing else can be writing there).
		s.r.Close()
		if s.r, err = sql.Open("sqlite", dsn(path, immutableParams)); err == nil {
			s.r.SetMaxOpenConns(o.readers)
			s.r.SetMaxIdleConns(o.readers)
			err = s.init(context.Background())
		}
	}
	if err != nil {
		s.Close()
		if !o.readOnly {
			err = explainUnwritable(path, err)
		}
		return nil, err
	}
	if s.w != nil && s.readOnly == nil {
		if s.wal, err = startWAL(path); err != nil {
			s.Close()
			return nil, fmt.Errorf("open checkpoint store %s: %w", path, err)
		}
	}
	// The file exists now (the schema is written); remember which it is.
	if s.ident, err = os.Stat(path); err != nil {
		s.Close()
		return nil, fmt.Errorf("open checkpoint store %s: %w", path, err)
	}
	return s, nil
}

// fileWritable reports whether this process may open path for writing.
func fileWritable(path string) bool {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

// removeIdleWAL removes the -wal and -shm files a read-only open of path
// made, unless another connection uses them: it opens the file read-write
// and closes it, and SQLite's last connection to close checkpoints an
// (empty) log and deletes both. Failures leave the files, which are
// harmless.
func removeIdleWAL(path string) {
	db, err := sql.Open("sqlite", dsn(path, "mode=rw&_pragma=trusted_schema(0)&_pragma=query_only(1)"))
	if err != nil {
		return
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var n int
	_ = db.QueryRow("SELECT count(*) FROM sqlite_schema").Scan(&n)
}

// initBusyTimeout bounds how long Open retries while another process holds a
// lock SQLite will not wait for (switching a new file to WAL mode, or
// recovering a WAL after a crash, make it answer SQLITE_BUSY at once).
const initBusyTimeout = 10 * time.Second

func (s *Saver) initRetry(ctx context.Context) error {
	deadline := time.Now().Add(initBusyTimeout)
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		err := s.init(ctx)
		if err == nil || sqliteCode(err) != sqlite3lib.SQLITE_BUSY || time.Now().After(deadline) {
			return err
		}
		time.Sleep(wait)
	}
}

// explainUnwritable turns SQLite's "unable to open" and "read-only" errors
// for a writable open into one that says what is not writable.
func explainUnwritable(path string, err error) error {
	switch sqliteCode(err) {
	case sqlite3lib.SQLITE_CANTOPEN, sqlite3lib.SQLITE_READONLY:
	default:
		return err
	}
	if f, ferr := os.OpenFile(path, os.O_RDWR, 0); ferr != nil {
		if !errors.Is(ferr, fs.ErrNotExist) {
			return fmt.Errorf("open checkpoint store %s: %w: the file is not writable (%v); open it with sqlite.ReadOnly() to read it", path, checkpoint.ErrReadOnly, ferr)
		}
	} else {
		f.Close()
	}
	dir := filepath.Dir(path)
	if f, ferr := os.CreateTemp(dir, ".weft-probe-*"); ferr != nil {
		return fmt.Errorf("open checkpoint store %s: %w: its directory %s is not writable (%v); SQLite needs to create the -wal and -shm files there (open it with sqlite.ReadOnly() to read it)", path, checkpoint.ErrReadOnly, dir, ferr)
	} else {
		f.Close()
		os.Remove(f.Name())
	}
	return err
}

const (
	// writerParams are the brief's pragmas: every pooled connection gets them.
	// trusted_schema(0): functions with side effects cannot be called from
	// the schema (Open also refuses triggers and views outright).
	// wal_autocheckpoint: see walCheckpointer.
	writerParams   = "_pragma=busy_timeout(10000)&_pragma=trusted_schema(0)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=wal_autocheckpoint(4000)&_pragma=foreign_keys(1)&_txlock=immediate"
	readerParams   = "_pragma=busy_timeout(10000)&_pragma=trusted_schema(0)&_pragma=foreign_keys(1)&_pragma=query_only(1)&_txlock=deferred"
	readOnlyParams = "mode=ro&" + readerParams
	// immutableParams read a file nothing can change (a read-only file system).
	immutableParams = "mode=ro&immutable=1&" + readerParams
)

// dsn returns the SQLite URI for path with the given query parameters.
func dsn(path, params string) string {
	p := filepath.ToSlash(path)
	if filepath.VolumeName(path) != "" { // C:/x → /C:/x
		p = "/" + p
	}
	r := strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23")
	return "file:" + r.Replace(p) + "?" + params
}

var sqliteMagic = []byte("SQLite format 3\x00")

// precheck looks at path before SQLite does, to give clear errors for what
// SQLite reports vaguely: directories, missing parents, files that are not
// SQLite databases, truncated files.
func precheck(path string, readOnly, mustExist bool) error {
	fi, err := os.Stat(path)
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrNotExist):
		if readOnly {
			return fmt.Errorf("open checkpoint store %s read-only: %w", path, fs.ErrNotExist)
		}
		if mustExist {
			return fmt.Errorf("open checkpoint store %s: %w (it is not created unless asked)", path, fs.ErrNotExist)
		}
		dir := filepath.Dir(path)
		di, err := os.Stat(dir)
		switch {
		case errors.Is(err, syscall.ENOTDIR):
			return fmt.Errorf("cannot create checkpoint store %s: a parent of %s is not a directory", path, dir)
		case errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("cannot create checkpoint store %s: directory %s does not exist: %w", path, dir, fs.ErrNotExist)
		case err != nil:
			return fmt.Errorf("cannot create checkpoint store %s: directory %s: %w", path, dir, err)
		case !di.IsDir():
			return fmt.Errorf("cannot create checkpoint store %s: %s is not a directory", path, dir)
		}
		return nil
	case errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("open checkpoint store %s: a parent directory is a file, not a directory", path)
	default:
		return fmt.Errorf("open checkpoint store %s: %w", path, err)
	}
	if fi.IsDir() {
		return fmt.Errorf("open checkpoint store %s: is a directory, not a file", path)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("open checkpoint store %s: not a regular file (%s)", path, fi.Mode().Type())
	}
	if fi.Size() == 0 {
		if mustExist {
			return fmt.Errorf("open checkpoint store %s: %w (0 bytes); it is left as it is", path, ErrEmptyFile)
		}
		return nil // SQLite treats an empty file as a new database
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open checkpoint store %s: %w", path, err)
	}
	defer f.Close()
	h := make([]byte, 100)
	n, err := io.ReadFull(f, h)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("open checkpoint store %s: reading its header: %w", path, err)
	}
	h = h[:n]
	if !bytes.HasPrefix(h, sqliteMagic) && !(n < len(sqliteMagic) && bytes.HasPrefix(sqliteMagic, h)) {
		return fmt.Errorf("open checkpoint store %s: %w (it does not start with the SQLite header)", path, ErrNotDatabase)
	}
	if n < 100 {
		return fmt.Errorf("open checkpoint store %s: %w: the file is truncated (%d bytes, shorter than the 100-byte header)", path, ErrCorrupt, n)
	}
	pageSize := int64(binary.BigEndian.Uint16(h[16:18]))
	if pageSize == 1 {
		pageSize = 65536
	}
	if pageSize < 512 || pageSize&(pageSize-1) != 0 {
		return fmt.Errorf("open checkpoint store %s: %w: bad page size %d in its header", path, ErrCorrupt, pageSize)
	}
	// The size is read after the header: a checkpoint of another process's
	// write-ahead log only grows the file.
	if fi, err = f.Stat(); err != nil {
		return fmt.Errorf("open checkpoint store %s: %w", path, err)
	}
	if _, err := os.Lstat(path + "-wal"); err == nil {
		// A write-ahead log exists: another process has the file open, or
		// one crashed, or the disk filled up. Pages the header counts may
		// still be in the log (a checkpoint writes page 1 first and grows
		// the file after), and SQLite replays the log on open, so the size
		// says nothing here; quick_check and reads judge the pages.
		return nil
	}
	if fi.Size()%pageSize != 0 {
		return fmt.Errorf("open checkpoint store %s: %w: the file is truncated (%d bytes is not a whole number of %d-byte pages)", path, ErrCorrupt, fi.Size(), pageSize)
	}
	pages := int64(binary.BigEndian.Uint32(h[28:32]))
	if pages > 0 && bytes.Equal(h[24:28], h[92:96]) && pages*pageSize > fi.Size() {
		return fmt.Errorf("open checkpoint store %s: %w: the file is truncated (%d bytes, its header says %d pages of %d bytes, and there is no write-ahead log that could hold the rest)", path, ErrCorrupt, fi.Size(), pages, pageSize)
	}
	return nil
}

// fileInfo is what init learns from a file before deciding anything.
type fileInfo struct {
	appID, version int64
	tables         []string
	objects        []schemaObject // tables, views, triggers (not indexes)
}

// schemaObject is a row of sqlite_schema.
type schemaObject struct{ kind, name string }

func (o schemaObject) String() string { return fmt.Sprintf("%s %q", o.kind, o.name) }

// weftObjects are the tables, views and triggers the embedded migrations
// create, found by running them on an in-memory database once.
var weftObjects = sync.OnceValues(func() (map[schemaObject]bool, error) {
	db, err := sql.Open("sqlite", "file::memory:")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, m := range migrations {
		if _, err := db.Exec(m.sql); err != nil {
			return nil, fmt.Errorf("migration %s: %w", m.name, err)
		}
	}
	tx, err := db.Begin()
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	objs, err := schemaObjects(context.Background(), tx)
	out := map[schemaObject]bool{}
	for _, o := range objs {
		out[o] = true
	}
	return out, err
})

func schemaObjects(ctx context.Context, tx *sql.Tx) ([]schemaObject, error) {
	rows, err := tx.QueryContext(ctx, "SELECT type, name FROM sqlite_schema WHERE type IN ('table', 'view', 'trigger') AND name NOT LIKE 'sqlite_%' ORDER BY type, name")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []schemaObject
	for rows.Next() {
		var o schemaObject
		if err := rows.Scan(&o.kind, &o.name); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

func inspect(ctx context.Context, tx *sql.Tx) (fileInfo, error) {
	var fi fileInfo
	if err := tx.QueryRowContext(ctx, "PRAGMA application_id").Scan(&fi.appID); err != nil {
		return fi, err
	}
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&fi.version); err != nil {
		return fi, err
	}
	var err error
	if fi.tables, err = userTables(ctx, tx); err != nil {
		return fi, err
	}
	fi.objects, err = schemaObjects(ctx, tx)
	return fi, err
}

// refuse returns why a file cannot be used as a store at all, or nil.
func (s *Saver) refuse(fi fileInfo) error {
	switch {
	case fi.appID == ApplicationID && fi.version < 1:
		// Every Weft schema is numbered from 1 in the transaction that
		// creates it, so a lower number was written by hand or by damage;
		// migrating "from" it would run the wrong migrations.
		return fmt.Errorf("open checkpoint store %s: %w: schema version %d, which no Weft writes (they start at 1)", s.path, ErrCorrupt, fi.version)
	case fi.appID == ApplicationID:
		return s.refuseObjects(fi)
	case fi.appID != 0:
		return fmt.Errorf("open checkpoint store %s: %w (its application_id is 0x%08x, Weft's is 0x%08x)", s.path, ErrForeignFile, uint32(fi.appID), ApplicationID)
	case len(fi.tables) > 0:
		return fmt.Errorf("open checkpoint store %s: %w (it has tables %s)", s.path, ErrForeignFile, strings.Join(fi.tables, ", "))
	case fi.version != 0:
		// Table-less but numbered: another program's file it has begun.
		return fmt.Errorf("open checkpoint store %s: %w (it has no tables but user_version %d, set by another program)", s.path, ErrForeignFile, fi.version)
	case s.w == nil || s.mustExist:
		return fmt.Errorf("open checkpoint store %s: %w (an SQLite database with no tables, perhaps another program's new file); it is left as it is", s.path, ErrEmptyFile)
	}
	return nil // an empty database: init creates the schema
}

// refuseObjects refuses a Weft store holding triggers or views, or tables
// Weft does not know (unless a newer Weft wrote it): a trigger runs on
// Weft's own writes, and a view or table of another program has no place
// in a file Weft may prune, copy and migrate.
func (s *Saver) refuseObjects(fi fileInfo) error {
	known, err := weftObjects()
	if err != nil {
		return fmt.Errorf("open checkpoint store %s: reading the built-in schema: %w", s.path, err)
	}
	var alien []string
	for _, o := range fi.objects {
		if known[o] || (o.kind == "table" && fi.version > int64(SchemaVersion)) {
			continue
		}
		alien = append(alien, o.String())
	}
	if len(alien) == 0 {
		return nil
	}
	return fmt.Errorf("open checkpoint store %s: %w: it holds %s, which Weft did not create (a trigger or view would run code on Weft's reads and writes); remove them with the sqlite3 shell if the file is yours", s.path, ErrForeignFile, strings.Join(alien, ", "))
}

// init checks what the file holds and brings it to a usable state: new files
// get the schema, older schemas are migrated, newer ones make the store
// read-only, foreign files are refused, and the encryption key is checked.
//
// An existing file is first inspected through the read pool, which cannot
// write, so a foreign or damaged file is refused untouched (the writer's
// first connection would switch it to WAL mode).
func (s *Saver) init(ctx context.Context) error {
	if size, err := fileSize(s.path); err == nil && size > 0 {
		tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			return s.wrapOpenErr(err)
		}
		fi, err := inspect(ctx, tx)
		if err == nil && size <= quickCheckLimit {
			err = quickCheck(ctx, tx)
		}
		tx.Rollback()
		if err != nil {
			return s.wrapOpenErr(err)
		}
		if err := s.refuse(fi); err != nil {
			return err
		}
		if fi.version > int64(SchemaVersion) {
			s.readOnly = fmt.Errorf("checkpoint store %s was written by a newer Weft (schema %d; this build knows schema %d and only reads it): %w",
				s.path, fi.version, SchemaVersion, checkpoint.ErrReadOnly)
			if s.w != nil {
				s.w.Close() // never connected: the file stays as it is
				s.w = nil
			}
		}
	}

	db := s.w
	if db == nil {
		db = s.r
	}
	tx, err := db.BeginTx(ctx, nil) // IMMEDIATE on the writer: one process initialises at a time
	if err != nil {
		return s.wrapOpenErr(err)
	}
	defer tx.Rollback()
	// Look again inside the transaction: another process may have created
	// the schema meanwhile.
	fi, err := inspect(ctx, tx)
	if err != nil {
		return s.wrapOpenErr(err)
	}
	if err := s.refuse(fi); err != nil {
		return err
	}
	switch {
	case fi.version > int64(SchemaVersion):
		// read-only, decided above
	case fi.version < int64(SchemaVersion) && s.w == nil:
		return fmt.Errorf("open checkpoint store %s read-only: its schema %d is older than %d; open it writable once to upgrade it", s.path, fi.version, SchemaVersion)
	case fi.version < int64(SchemaVersion):
		for _, m := range migrations[fi.version:] {
			if _, err := tx.ExecContext(ctx, m.sql); err != nil {
				return fmt.Errorf("checkpoint store %s: migration %s: %w", s.path, m.name, s.mapErr(err))
			}
			if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", m.version)); err != nil {
				return fmt.Errorf("checkpoint store %s: migration %s: %w", s.path, m.name, s.mapErr(err))
			}
			if m.version == historySchema && fi.version >= longTermSchema {
				// A store that held long-term items before it kept their
				// history begins it now; a new one holds every change
				// it ever had (no row).
				if _, err := tx.ExecContext(ctx, "INSERT INTO meta (key, value) VALUES (?, ?)", historyBeganKey, time.Now().UnixNano()); err != nil {
					return fmt.Errorf("checkpoint store %s: migration %s: %w", s.path, m.name, s.mapErr(err))
				}
			}
		}
	}
	if err := s.checkKey(ctx, tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return s.wrapOpenErr(err)
	}
	return nil
}

func fileSize(path string) (int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

func userTables(ctx context.Context, tx *sql.Tx) ([]string, error) {
	rows, err := tx.QueryContext(ctx, "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

func quickCheck(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, "PRAGMA quick_check(5)")
	if err != nil {
		return err
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var msg string
		if err := rows.Scan(&msg); err != nil {
			return err
		}
		if msg == "ok" {
			continue
		}
		n := len(problems)
		for _, line := range strings.Split(msg, "\n") {
			if line != "" && !strings.HasPrefix(line, "*** in database") {
				problems = append(problems, line)
			}
		}
		if len(problems) == n {
			problems = append(problems, msg)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: PRAGMA quick_check: %s", ErrCorrupt, strings.Join(problems, "; "))
	}
	return nil
}

const keyCheckName = "key_check"

// checkKey compares the store's key check with the configured key, and
// records one when a key is given for a store without data.
func (s *Saver) checkKey(ctx context.Context, tx *sql.Tx) error {
	var check []byte
	err := tx.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = ?", keyCheckName).Scan(&check)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		check = nil
	case err != nil:
		return s.wrapOpenErr(err)
	}
	if check != nil {
		if err := s.cipher.VerifyKeyCheck(check); err != nil {
			if errors.Is(err, crypt.ErrKeyRequired) {
				return fmt.Errorf("open checkpoint store %s: %w (set %s or pass WithEncryptionKey)", s.path, err, crypt.EnvVar)
			}
			return fmt.Errorf("open checkpoint store %s: %w", s.path, err)
		}
		return nil
	}
	if s.cipher == nil {
		return nil
	}
	var hasData bool
	err = tx.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM checkpoints) OR EXISTS (SELECT 1 FROM writes) OR EXISTS (SELECT 1 FROM blobs)").Scan(&hasData)
	if err != nil {
		return s.wrapOpenErr(err)
	}
	if hasData {
		return fmt.Errorf("open checkpoint store %s with an encryption key: %w: it already holds unencrypted data (open it without a key)", s.path, ErrNotEncrypted)
	}
	if s.w == nil || s.readOnly != nil {
		return nil // nothing to read yet, and nothing may be written
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO meta(key, value) VALUES (?, ?)", keyCheckName, s.cipher.KeyCheck()); err != nil {
		return s.wrapOpenErr(err)
	}
	return nil
}

// sqliteCode returns the primary SQLite result code of err, or 0.
func sqliteCode(err error) int {
	var se *sqlite3.Error
	if errors.As(err, &se) {
		return se.Code() & 0xff
	}
	return 0
}

// mapErr adds this package's sentinel errors to SQLite errors that mean the
// file is not a database, is corrupt, or cannot be written.
func (s *Saver) mapErr(err error) error {
	switch sqliteCode(err) {
	case sqlite3lib.SQLITE_NOTADB:
		return fmt.Errorf("%w: %w", ErrNotDatabase, err)
	case sqlite3lib.SQLITE_CORRUPT:
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	case sqlite3lib.SQLITE_READONLY:
		return fmt.Errorf("%w (read-only file system or file permissions; open it with sqlite.ReadOnly() to read it): %w", checkpoint.ErrReadOnly, err)
	case sqlite3lib.SQLITE_CANTOPEN:
		return fmt.Errorf("cannot open the file (missing, unreadable, or its directory is not writable for the -wal and -shm files): %w", err)
	}
	return err
}

func (s *Saver) wrapOpenErr(err error) error {
	if errors.Is(err, ErrCorrupt) || errors.Is(err, ErrNotDatabase) {
		return fmt.Errorf("open checkpoint store %s: %w", s.path, err)
	}
	return fmt.Errorf("open checkpoint store %s: %w", s.path, s.mapErr(err))
}
