package langgraph

import (
	"context"
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
	t := &rawThread{blobs: map[blobKey]rawBlob{}}
	err := p.read(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT checkpoint_ns, checkpoint_id, coalesce(parent_checkpoint_id, ''), checkpoint::text, metadata::text
			FROM checkpoints WHERE thread_id = $1`, threadID)
		if err != nil {
			return err
		}
		index := map[[2]string]int{}
		for rows.Next() {
			var c rawCheckpoint
			var cp, meta string
			if err := rows.Scan(&c.ns, &c.id, &c.parent, &cp, &meta); err != nil {
				rows.Close()
				return err
			}
			c.cp, c.meta, c.metaType = []byte(cp), []byte(meta), "json"
			index[[2]string{c.ns, c.id}] = len(t.cps)
			t.cps = append(t.cps, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		rows, err = tx.Query(ctx, `SELECT checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs WHERE thread_id = $1`, threadID)
		if err != nil {
			return err
		}
		for rows.Next() {
			var k blobKey
			var b rawBlob
			if err := rows.Scan(&k.ns, &k.channel, &k.version, &b.typ, &b.data); err != nil {
				rows.Close()
				return err
			}
			t.blobs[k] = b
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		path := "''"
		if p.python {
			path = "coalesce(task_path, '')"
		}
		rows, err = tx.Query(ctx, `SELECT checkpoint_ns, checkpoint_id, task_id, idx, channel, coalesce(type, ''), blob, `+path+`
			FROM checkpoint_writes WHERE thread_id = $1 ORDER BY checkpoint_ns, checkpoint_id, task_id, idx`, threadID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var ns, id string
			var w rawWrite
			if err := rows.Scan(&ns, &id, &w.task, &w.idx, &w.channel, &w.typ, &w.value, &w.path); err != nil {
				return err
			}
			if i, ok := index[[2]string{ns, id}]; ok {
				t.cps[i].writes = append(t.cps[i].writes, w)
			}
		}
		return rows.Err()
	})
	return t, err
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
