package langgraph

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weftstudio/weft/checkpoint"
)

// pgColumns are the columns a LangGraph PostgresSaver's tables have (both
// libraries; Python adds checkpoint_writes.task_path).
var pgColumns = map[string][]string{
	"checkpoints":       {"thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "checkpoint", "metadata"},
	"checkpoint_blobs":  {"thread_id", "checkpoint_ns", "channel", "version", "type", "blob"},
	"checkpoint_writes": {"thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx", "channel", "type", "blob"},
}

// pgLayout reports whether the database behind q has a PostgresSaver's
// tables in its search path, and whether it is Python's (task_path).
func pgLayout(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}) (isLG, python bool, err error) {
	rows, err := q.Query(ctx, `SELECT table_name, column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name IN ('checkpoints', 'checkpoint_blobs', 'checkpoint_writes', 'checkpoint_migrations')`)
	if err != nil {
		return false, false, err
	}
	defer rows.Close()
	have := map[string]map[string]bool{}
	for rows.Next() {
		var t, c string
		if err := rows.Scan(&t, &c); err != nil {
			return false, false, err
		}
		if have[t] == nil {
			have[t] = map[string]bool{}
		}
		have[t][c] = true
	}
	if err := rows.Err(); err != nil {
		return false, false, err
	}
	if !have["checkpoint_migrations"]["v"] {
		return false, false, nil
	}
	for t, cols := range pgColumns {
		for _, c := range cols {
			if !have[t][c] {
				return false, false, nil
			}
		}
	}
	return true, have["checkpoint_writes"]["task_path"], nil
}

// IsPostgresStore reports whether the database at dsn is a LangGraph
// PostgresSaver's, and which library's.
func IsPostgresStore(ctx context.Context, dsn string) (isLG bool, kind Kind, err error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return false, "", err
	}
	defer conn.Close(ctx)
	ok, py, err := pgLayout(ctx, conn)
	if err != nil || !ok {
		return false, "", err
	}
	if py {
		return true, PythonPostgres, nil
	}
	return true, JSPostgres, nil
}

// OpenPostgres opens a LangGraph PostgresSaver database read-only: every
// query runs in a READ ONLY transaction.
func OpenPostgres(ctx context.Context, dsn string, opts ...Option) (*Reader, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	// Every session defaults to read-only too, so even a query outside the
	// reader's transactions could not write.
	cfg.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	ok, py, err := pgLayout(ctx, pool)
	if err != nil {
		pool.Close()
		return nil, err
	}
	if !ok {
		pool.Close()
		return nil, fmt.Errorf("the database is not a LangGraph PostgresSaver store (no checkpoints, checkpoint_blobs, checkpoint_writes and checkpoint_migrations tables with its columns)")
	}
	r := &Reader{kind: JSPostgres, where: dsn, b: &pgBackend{pool: pool, python: py}}
	if py {
		r.kind = PythonPostgres
	}
	for _, o := range opts {
		o(r)
	}
	if r.aesKey == nil {
		if r.aesKey, err = KeyFromEnv(); err != nil {
			pool.Close()
			return nil, err
		}
	}
	return r, nil
}

type pgBackend struct {
	pool   *pgxpool.Pool
	python bool
}

func (p *pgBackend) close() error { p.pool.Close(); return nil }

// read runs fn in a read-only transaction.
func (p *pgBackend) read(ctx context.Context, fn func(pgx.Tx) error) error {
	tx, err := p.pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly, IsoLevel: pgx.RepeatableRead})
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

func (p *pgBackend) threads(ctx context.Context) ([]threadRow, error) {
	var out []threadRow
	err := p.read(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `
			SELECT c.thread_id, c.n, c.latest, m.metadata::text
			FROM (SELECT thread_id, count(*) AS n, max(checkpoint_id) AS latest
			      FROM checkpoints WHERE checkpoint_ns = '' GROUP BY thread_id) c
			JOIN checkpoints m ON m.thread_id = c.thread_id AND m.checkpoint_ns = '' AND m.checkpoint_id = c.latest`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var t threadRow
			var meta string
			if err := rows.Scan(&t.id, &t.count, &t.latest, &meta); err != nil {
				return err
			}
			t.meta, t.metaType = []byte(meta), "json"
			out = append(out, t)
		}
		return rows.Err()
	})
	return out, err
}

func (p *pgBackend) thread(ctx context.Context, threadID string) (*rawThread, error) {
	var t *rawThread
	err := p.read(ctx, func(tx pgx.Tx) error {
		var err error
		t, err = p.rows(ctx, tx, "thread_id = $1", "thread_id = $1", threadID)
		return err
	})
	return t, err
}

// rows reads the checkpoints that where selects (its arguments args), the
// blobs that blobWhere selects, and the checkpoints' writes.
func (p *pgBackend) rows(ctx context.Context, tx pgx.Tx, where, blobWhere string, args ...any) (*rawThread, error) {
	t := &rawThread{blobs: map[blobKey]rawBlob{}}
	rows, err := tx.Query(ctx, `SELECT checkpoint_ns, checkpoint_id, coalesce(parent_checkpoint_id, ''), checkpoint::text, metadata::text
		FROM checkpoints WHERE `+where, args...)
	if err != nil {
		return nil, err
	}
	index := map[[2]string]int{}
	for rows.Next() {
		var c rawCheckpoint
		var cp, meta string
		if err := rows.Scan(&c.ns, &c.id, &c.parent, &cp, &meta); err != nil {
			rows.Close()
			return nil, err
		}
		c.cp, c.meta, c.metaType = []byte(cp), []byte(meta), "json"
		index[[2]string{c.ns, c.id}] = len(t.cps)
		t.cps = append(t.cps, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(t.cps) == 0 {
		return t, nil
	}
	rows, err = tx.Query(ctx, `SELECT checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs WHERE `+blobWhere, args...)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var k blobKey
		var b rawBlob
		if err := rows.Scan(&k.ns, &k.channel, &k.version, &b.typ, &b.data); err != nil {
			rows.Close()
			return nil, err
		}
		t.blobs[k] = b
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	path := "''"
	if p.python {
		path = "coalesce(task_path, '')"
	}
	rows, err = tx.Query(ctx, `SELECT checkpoint_ns, checkpoint_id, task_id, idx, channel, coalesce(type, ''), blob, `+path+`
		FROM checkpoint_writes WHERE `+where+` ORDER BY checkpoint_ns, checkpoint_id, task_id, idx`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var ns, id string
		var w rawWrite
		if err := rows.Scan(&ns, &id, &w.task, &w.idx, &w.channel, &w.typ, &w.value, &w.path); err != nil {
			return nil, err
		}
		if i, ok := index[[2]string{ns, id}]; ok {
			t.cps[i].writes = append(t.cps[i].writes, w)
		}
	}
	return t, rows.Err()
}

// checkpoints reads the checkpoint id of namespace ns (its newest when id
// is "") and its parent, with their writes and the blobs of their channel
// versions, through the tables' primary keys: what Get needs, without the
// rest of a long thread. LangGraph.js' blobs may be a sibling fork's
// (Checkpoint.Shared); which channels are is asked of the database (see
// sharedChannels), which sends back only their names.
func (p *pgBackend) checkpoints(ctx context.Context, threadID, ns, id string) (*rawThread, error) {
	var t *rawThread
	err := p.read(ctx, func(tx pgx.Tx) error {
		if id == "" {
			err := tx.QueryRow(ctx, `SELECT checkpoint_id FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2
				ORDER BY checkpoint_id DESC LIMIT 1`, threadID, ns).Scan(&id)
			if errors.Is(err, pgx.ErrNoRows) {
				t = &rawThread{}
				return nil
			}
			if err != nil {
				return err
			}
		}
		var err error
		// The blobs of the two checkpoints' versions: (channel, version)
		// pairs of their channel_versions, looked up by primary key.
		t, err = p.rows(ctx, tx, `thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id IN ($3,
				(SELECT parent_checkpoint_id FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3))`,
			`thread_id = $1 AND checkpoint_ns = $2 AND (channel, version) IN (
				SELECT v.key, v.value FROM checkpoints c, jsonb_each_text(c.checkpoint->'channel_versions') v
				WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 AND c.checkpoint_id IN ($3,
					(SELECT parent_checkpoint_id FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3)))`,
			threadID, ns, id)
		if err != nil || p.python || len(t.cps) == 0 {
			// Python's versions carry a random fraction: forks never
			// share one.
			return err
		}
		sh, err := sharedChannels(ctx, tx, threadID, ns, id)
		t.shared = map[string][]string{id: sh}
		return err
	})
	return t, err
}

// sharedChannels returns, sorted, the channels whose blob checkpoint id
// reads from another branch (Checkpoint.Shared; nil when none): for each
// channel, the oldest checkpoint of id's own line that has its version
// (found by walking parents while the version stays) is its introducer,
// and the blob is another branch's when an older checkpoint of the
// namespace has the same version. The database walks and compares; only
// the names come back.
func sharedChannels(ctx context.Context, tx pgx.Tx, threadID, ns, id string) ([]string, error) {
	// Only a fork can read a sibling's blob: a namespace where no
	// checkpoint has two children (most threads) needs no walk, which on a
	// long line costs one step per checkpoint a channel stayed unchanged.
	var forked bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2 AND parent_checkpoint_id IS NOT NULL
		GROUP BY parent_checkpoint_id HAVING count(*) > 1)`, threadID, ns).Scan(&forked); err != nil || !forked {
		return nil, err
	}
	rows, err := tx.Query(ctx, `WITH RECURSIVE
		vers AS (SELECT v.key AS ch, v.value AS ver FROM checkpoints c, jsonb_each_text(c.checkpoint->'channel_versions') v
			WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 AND c.checkpoint_id = $3),
		line AS (
			SELECT vers.ch, vers.ver, $3::text AS id, c.parent_checkpoint_id AS parent
			FROM vers, checkpoints c WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 AND c.checkpoint_id = $3
			UNION ALL
			SELECT line.ch, line.ver, p.checkpoint_id, p.parent_checkpoint_id
			FROM line JOIN checkpoints p ON p.thread_id = $1 AND p.checkpoint_ns = $2 AND p.checkpoint_id = line.parent
			WHERE p.checkpoint->'channel_versions'->>line.ch = line.ver),
		intro AS (SELECT ch, ver, min(id) AS id FROM line GROUP BY ch, ver)
		SELECT i.ch FROM intro i WHERE EXISTS (SELECT 1 FROM checkpoints o
			WHERE o.thread_id = $1 AND o.checkpoint_ns = $2 AND o.checkpoint_id < i.id
			AND o.checkpoint->'channel_versions'->>i.ch = i.ver)
		ORDER BY i.ch COLLATE "C"`, threadID, ns, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var ch string
		if err := rows.Scan(&ch); err != nil {
			return nil, err
		}
		out = append(out, ch)
	}
	return out, rows.Err()
}

func (p *pgBackend) stats(ctx context.Context) (checkpoint.Stats, error) {
	var st checkpoint.Stats
	err := p.read(ctx, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT (SELECT count(DISTINCT thread_id) FROM checkpoints), (SELECT count(*) FROM checkpoints),
			(SELECT count(*) FROM checkpoint_writes), (SELECT count(*) FROM checkpoint_blobs),
			pg_total_relation_size('checkpoints') + pg_total_relation_size('checkpoint_blobs') + pg_total_relation_size('checkpoint_writes')`).
			Scan(&st.Threads, &st.Checkpoints, &st.Writes, &st.Blobs, &st.Bytes)
	})
	return st, err
}

// sizes reads a storage report's sizes (sizer): every checkpoint row of
// the thread (of all threads when threadID is "") as JSON text, walked for
// the values Python keeps inline, and the lengths of blobs and writes.
// Tables and their space are always read (cheap here).
func (p *pgBackend) sizes(ctx context.Context, threadID string, _ bool) (*sizeScan, error) {
	sc := &sizeScan{}
	where, args := "", []any{}
	if threadID != "" {
		where, args = " WHERE thread_id = $1", []any{threadID}
	}
	err := p.read(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT thread_id, checkpoint_ns, checkpoint_id, coalesce(parent_checkpoint_id, ''), octet_length(checkpoint_id) + coalesce(octet_length(parent_checkpoint_id), 0),
			checkpoint::text, metadata::text FROM checkpoints`+where, args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var c cpSize
			var ids int64
			var body, meta string
			if err := rows.Scan(&c.thread, &c.ns, &c.id, &c.parent, &ids, &body, &meta); err != nil {
				rows.Close()
				return err
			}
			c.step = metaStep([]byte(meta))
			measure(&c, "json", []byte(body))
			c.header += ids + int64(len(meta))
			sc.cps = append(sc.cps, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		rows, err = tx.Query(ctx, `SELECT thread_id, checkpoint_ns, channel, version, coalesce(octet_length(blob), 0) FROM checkpoint_blobs`+where, args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var b blobSize
			if err := rows.Scan(&b.thread, &b.ns, &b.channel, &b.version, &b.bytes); err != nil {
				rows.Close()
				return err
			}
			sc.blobs = append(sc.blobs, b)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		rows, err = tx.Query(ctx, `SELECT thread_id, checkpoint_ns, checkpoint_id, channel, coalesce(octet_length(blob), 0) FROM checkpoint_writes`+where, args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var w writeSize
			if err := rows.Scan(&w.thread, &w.ns, &w.id, &w.channel, &w.bytes); err != nil {
				rows.Close()
				return err
			}
			sc.writes = append(sc.writes, w)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		// The dead tuples' share of each table estimates the space a
		// vacuum would give back.
		rows, err = tx.Query(ctx, `SELECT c.relname, pg_total_relation_size(c.oid),
				coalesce(st.n_dead_tup * pg_relation_size(c.oid) / greatest(st.n_live_tup + st.n_dead_tup, 1), 0)::bigint
			FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			LEFT JOIN pg_stat_user_tables st ON st.relid = c.oid
			WHERE n.nspname = current_schema() AND c.relkind = 'r'
			  AND c.relname IN ('checkpoints', 'checkpoint_blobs', 'checkpoint_writes', 'checkpoint_migrations')
			ORDER BY 2 DESC, 1`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var t checkpoint.TableBytes
			var free int64
			if err := rows.Scan(&t.Table, &t.Bytes, &free); err != nil {
				return err
			}
			sc.tables = append(sc.tables, t)
			sc.fileBytes += t.Bytes
			sc.freeBytes += free
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return sc, nil
}
