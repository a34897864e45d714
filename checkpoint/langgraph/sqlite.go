package langgraph

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/weftstudio/weft/checkpoint"

	_ "modernc.org/sqlite" // the project's SQLite driver
)

// sqliteParams open a file read-only: a LangGraph process may be writing
// it, so mode=ro (which reads its WAL) rather than immutable=1, and
// query_only so not even a pragma writes.
const (
	sqliteParams    = "mode=ro&_pragma=busy_timeout(10000)&_pragma=trusted_schema(0)&_pragma=query_only(1)"
	immutableParams = "mode=ro&immutable=1&_pragma=trusted_schema(0)&_pragma=query_only(1)"
)

// IsSQLiteStore reports whether the tables of the SQLite database db are a
// LangGraph SqliteSaver's: checkpoints and writes with its columns.
func IsSQLiteStore(ctx context.Context, db *sql.DB) bool {
	want := map[string][]string{
		"checkpoints": {"thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "type", "checkpoint", "metadata"},
		"writes":      {"thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx", "channel", "type", "value"},
	}
	for table, cols := range want {
		have := map[string]bool{}
		rows, err := db.QueryContext(ctx, "SELECT name FROM pragma_table_info(?)", table)
		if err != nil {
			return false
		}
		for rows.Next() {
			var n string
			if rows.Scan(&n) == nil {
				have[n] = true
			}
		}
		rows.Close()
		for _, c := range cols {
			if !have[c] {
				return false
			}
		}
	}
	return true
}

// OpenSQLite opens a LangGraph SqliteSaver file (Python or JS) read-only.
func OpenSQLite(ctx context.Context, path string, opts ...Option) (*Reader, error) {
	_, walErr := os.Lstat(path + "-wal") // before the read-only connection makes one
	db, err := openRO(ctx, path)
	if err != nil {
		return nil, err
	}
	if !IsSQLiteStore(ctx, db) {
		db.Close()
		return nil, fmt.Errorf("%s is not a LangGraph SqliteSaver store (no checkpoints and writes tables with its columns)", path)
	}
	b := &sqliteBackend{db: db, path: path, cleanWAL: errors.Is(walErr, fs.ErrNotExist)}
	r := &Reader{where: path, b: b}
	b.r = r
	for _, o := range opts {
		o(r)
	}
	if r.aesKey == nil {
		if r.aesKey, err = KeyFromEnv(); err != nil {
			db.Close()
			return nil, err
		}
	}
	// Python's serde writes msgpack; LangGraph.js writes JSON.
	var typ sql.NullString
	err = db.QueryRowContext(ctx, "SELECT type FROM checkpoints LIMIT 1").Scan(&typ)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		r.kind = PythonSQLite // an empty store: nothing to tell them apart by
	case err != nil:
		db.Close()
		return nil, fmt.Errorf("reading %s: %w", path, err)
	case strings.HasPrefix(typ.String, "json"):
		r.kind = JSSQLite
	default:
		r.kind = PythonSQLite
	}
	return r, nil
}

// openRO opens path read-only, falling back to immutable=1 where SQLite
// cannot make the -shm file mode=ro needs (a read-only folder).
func openRO(ctx context.Context, path string) (*sql.DB, error) {
	var firstErr error
	for _, params := range []string{sqliteParams, immutableParams} {
		db, err := sql.Open("sqlite", sqliteDSN(path, params))
		if err == nil {
			err = db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(new(int))
			if err == nil {
				return db, nil
			}
			db.Close()
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, fmt.Errorf("opening %s read-only: %w", path, firstErr)
}

func sqliteDSN(path, params string) string {
	p := filepath.ToSlash(path)
	if filepath.VolumeName(path) != "" {
		p = "/" + p
	}
	r := strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23")
	return "file:" + r.Replace(p) + "?" + params
}

type sqliteBackend struct {
	db   *sql.DB
	path string
	// r decodes the large rows read (see inlineDecode).
	r *Reader
	// cleanWAL: no write-ahead log existed when the store was opened, so
	// the -wal and -shm files its read-only connections made are this
	// process's to remove.
	cleanWAL bool
}

// close closes the store. When nothing else had it open, the -wal and
// -shm files SQLite made for the read-only connections are removed the way
// SQLite removes them, by the last connection to close: one query_only
// connection that reads the schema (SQLite keeps them while any other
// process, such as LangGraph, has the file open). Weft's own read-only
// opening does the same (checkpoint/sqlite).
func (s *sqliteBackend) close() error {
	err := s.db.Close()
	if s.cleanWAL {
		if db, oerr := sql.Open("sqlite", sqliteDSN(s.path, "mode=rw&_pragma=trusted_schema(0)&_pragma=query_only(1)")); oerr == nil {
			db.SetMaxOpenConns(1)
			var n int
			_ = db.QueryRow("SELECT count(*) FROM sqlite_schema").Scan(&n)
			db.Close()
		}
	}
	return err
}

func (s *sqliteBackend) threads(ctx context.Context) ([]threadRow, error) {
	rows, err := s.db.QueryContext(ctx, `
		SELECT c.thread_id, c.n, c.latest, m.type, m.metadata
		FROM (SELECT thread_id, count(*) AS n, max(checkpoint_id) AS latest
		      FROM checkpoints WHERE checkpoint_ns = '' GROUP BY thread_id) c
		JOIN checkpoints m ON m.thread_id = c.thread_id AND m.checkpoint_ns = '' AND m.checkpoint_id = c.latest`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []threadRow
	for rows.Next() {
		var t threadRow
		var typ sql.NullString
		if err := rows.Scan(&t.id, &t.count, &t.latest, &typ, &t.meta); err != nil {
			return nil, err
		}
		t.metaType = typ.String
		out = append(out, t)
	}
	return out, rows.Err()
}

func (s *sqliteBackend) thread(ctx context.Context, threadID string) (*rawThread, error) {
	return s.read(ctx, "thread_id = ?", threadID)
}

// checkpoints reads the checkpoint id of namespace ns (its newest when id
// is "") and its parent, with their writes: what Get needs, without the
// rest of a long thread.
func (s *sqliteBackend) checkpoints(ctx context.Context, threadID, ns, id string) (*rawThread, error) {
	if id == "" {
		err := s.db.QueryRowContext(ctx, `SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ?
			ORDER BY checkpoint_id DESC LIMIT 1`, threadID, ns).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return &rawThread{}, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return s.read(ctx, `thread_id = ? AND checkpoint_ns = ? AND checkpoint_id IN (?,
		(SELECT parent_checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?))`,
		threadID, ns, id, threadID, ns, id)
}

// read reads the checkpoints that where selects, and their writes. The
// two tables are read at once, on two connections: a long thread's rows
// are tens of megabytes, and walking SQLite's pages is half the time such a
// thread takes to open. Reading them one after the other, as before, was
// no more consistent while LangGraph writes: neither is one snapshot, and
// a write whose checkpoint was not read is left out either way.
func (s *sqliteBackend) read(ctx context.Context, where string, args ...any) (*rawThread, error) {
	type keyed struct {
		ns, id string
		w      rawWrite
	}
	var writes []keyed
	var werr error
	vc := newValueCache()
	done := make(chan struct{})
	go func() {
		defer close(done)
		wrows, err := s.db.QueryContext(ctx, `SELECT checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value
			FROM writes WHERE `+where+` ORDER BY checkpoint_ns, checkpoint_id, task_id, idx`, args...)
		if err != nil {
			werr = err
			return
		}
		defer wrows.Close()
		var value sql.RawBytes // the driver's, valid until Next: see inlineDecode
		for wrows.Next() {
			var k keyed
			var typ sql.NullString
			if err := wrows.Scan(&k.ns, &k.id, &k.w.task, &k.w.idx, &k.w.channel, &typ, &value); err != nil {
				werr = err
				return
			}
			k.w.typ = typ.String
			if len(value) >= inlineDecode {
				v, err := vc.decode(s.r, k.w.typ, value)
				k.w.pre = &decoded{v, err}
			} else if value != nil {
				k.w.value = bytes.Clone(value)
			}
			writes = append(writes, k)
		}
		werr = wrows.Err()
	}()
	t, err := s.readCheckpoints(ctx, vc, where, args...)
	<-done
	if err != nil {
		return nil, err
	}
	if werr != nil {
		return nil, werr
	}
	index := make(map[[2]string]int, len(t.cps))
	for i, c := range t.cps {
		index[[2]string{c.ns, c.id}] = i
	}
	for _, k := range writes {
		if i, ok := index[[2]string{k.ns, k.id}]; ok {
			t.cps[i].writes = append(t.cps[i].writes, k.w)
		}
	}
	return t, nil
}

// inlineDecode is the size from which a row's body or a write's value is
// decoded as it is read, from the driver's buffer, instead of copied and
// decoded with the rest of the thread: a thread whose rows hold hundreds of
// megabytes would otherwise hold every row's bytes twice (the driver's copy
// and database/sql's) until the whole thread is decoded. Smaller rows are
// copied, so that a long thread's many rows are decoded on every CPU.
var inlineDecode = 1 << 20 // a variable, so that tests decode every row both ways

// readCheckpoints reads the checkpoint rows that where selects; the large
// ones are decoded through vc as they are read.
func (s *sqliteBackend) readCheckpoints(ctx context.Context, vc *valueCache, where string, args ...any) (*rawThread, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata
		FROM checkpoints WHERE `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	t := &rawThread{vc: vc}
	var body sql.RawBytes
	for rows.Next() {
		var c rawCheckpoint
		var parent, typ sql.NullString
		if err := rows.Scan(&c.ns, &c.id, &parent, &typ, &body, &c.meta); err != nil {
			return nil, err
		}
		c.parent, c.typ, c.metaType = parent.String, typ.String, typ.String
		if len(body) >= inlineDecode {
			v, err := s.r.decodeBody(vc, c.typ, body, false)
			c.pre = &decoded{v, err}
		} else {
			c.cp = bytes.Clone(body)
		}
		t.cps = append(t.cps, c)
	}
	return t, rows.Err()
}

func (s *sqliteBackend) stats(ctx context.Context) (checkpoint.Stats, error) {
	var st checkpoint.Stats
	err := s.db.QueryRowContext(ctx, `SELECT (SELECT count(DISTINCT thread_id) FROM checkpoints), (SELECT count(*) FROM checkpoints),
		(SELECT count(*) FROM writes), (SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size())`).
		Scan(&st.Threads, &st.Checkpoints, &st.Writes, &st.Bytes)
	return st, err
}

// sizes reads a storage report's sizes (sizer): every checkpoint row of
// the thread (of all threads when threadID is ""), whose body it walks for
// the values inside, and the lengths of the writes. deep adds the tables'
// pages (dbstat, when this SQLite has it).
func (s *sqliteBackend) sizes(ctx context.Context, threadID string, deep bool) (*sizeScan, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	where, args := "", []any{}
	if threadID != "" {
		where, args = " WHERE thread_id = ?", []any{threadID}
	}
	sc := &sizeScan{}
	rows, err := tx.QueryContext(ctx, `SELECT thread_id, checkpoint_ns, checkpoint_id, ifnull(parent_checkpoint_id, ''), length(checkpoint_id) + ifnull(length(parent_checkpoint_id), 0), type, checkpoint, metadata
		FROM checkpoints`+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var c cpSize
		var ids int64
		var typ sql.NullString
		// RawBytes: the driver's own buffers, valid until Next, so a
		// store's bodies are walked without being copied (measure keeps
		// no reference to them).
		var body, meta sql.RawBytes
		if err := rows.Scan(&c.thread, &c.ns, &c.id, &c.parent, &ids, &typ, &body, &meta); err != nil {
			return nil, err
		}
		c.step = metaStep(meta)
		measure(&c, typ.String, body)
		c.header += ids + int64(len(meta))
		sc.cps = append(sc.cps, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	wrows, err := tx.QueryContext(ctx, `SELECT thread_id, checkpoint_ns, checkpoint_id, channel, ifnull(length(value), 0) FROM writes`+where, args...)
	if err != nil {
		return nil, err
	}
	defer wrows.Close()
	for wrows.Next() {
		var w writeSize
		if err := wrows.Scan(&w.thread, &w.ns, &w.id, &w.channel, &w.bytes); err != nil {
			return nil, err
		}
		sc.writes = append(sc.writes, w)
	}
	if err := wrows.Err(); err != nil {
		return nil, err
	}
	var pages, free, size int64
	if err := tx.QueryRowContext(ctx, "SELECT page_count, freelist_count, page_size FROM pragma_page_count(), pragma_freelist_count(), pragma_page_size()").
		Scan(&pages, &free, &size); err != nil {
		return nil, err
	}
	sc.fileBytes, sc.freeBytes = pages*size, free*size
	if fi, err := os.Stat(s.path + "-wal"); err == nil {
		sc.fileBytes += fi.Size()
	}
	if deep {
		if trows, err := tx.QueryContext(ctx, `SELECT coalesce(m.tbl_name, d.name), sum(d.pgsize), sum(d.unused)
			FROM dbstat AS d LEFT JOIN sqlite_schema AS m ON m.name = d.name GROUP BY 1 ORDER BY 2 DESC, 1`); err == nil {
			defer trows.Close()
			for trows.Next() {
				var t checkpoint.TableBytes
				if err := trows.Scan(&t.Table, &t.Bytes, &t.Unused); err != nil {
					return nil, err
				}
				sc.tables = append(sc.tables, t)
			}
			if err := trows.Err(); err != nil {
				return nil, err
			}
		}
	}
	return sc, nil
}

// measure sets c's header, in-row values and versions from a checkpoint
// body of serde type typ; a body it cannot walk counts whole as header.
func measure(c *cpSize, typ string, body []byte) {
	vals, versions, err := measureBody(typ, body)
	if err != nil {
		c.header, c.unmeasured = int64(len(body)), true
		return
	}
	c.inRow, c.versions = vals, versions
	c.header = int64(len(body))
	for _, v := range vals {
		c.header -= v.bytes
	}
}

// metaStep reads metadata's step (0 when it has none or cannot be read:
// the report's growth by step is all it is for).
func metaStep(meta []byte) int {
	var m struct {
		Step *float64 `json:"step"`
	}
	if json.Unmarshal(meta, &m) != nil || m.Step == nil {
		return 0
	}
	return int(*m.Step)
}
