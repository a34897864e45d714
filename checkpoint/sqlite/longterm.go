package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/weftstudio/weft/checkpoint/longterm"
)

// LongTerm is the long-term store (package longterm) in the checkpoint
// store's own file, tables store_items, store_fields and store_vectors
// (migrations/0004_longterm.sql), and the history of its changes,
// store_history (0006_store_history.sql), written through the Saver's
// connections: a Put is committed with its history row when it returns
// and survives a crash of the process as checkpoints do. Get it from
// (*Saver).LongTerm; it lives as long as the Saver. It implements
// longterm.Store, longterm.Sweeper and longterm.History.
//
// Filters run inside SQLite (json_type and json_extract on the stored
// JSON); a semantic query reads the candidates' vectors and scores them
// exactly in Go. Reading a store opened read-only works; its TTLs are then
// not refreshed, and writes return an error wrapping checkpoint.ErrReadOnly.
type LongTerm struct {
	s   *Saver
	cfg longterm.Config
	now func() time.Time

	once  sync.Once
	err   error
	get   *sql.Stmt // on the read pool
	put   *sql.Stmt // on the writer
	delV  *sql.Stmt
	addV  *sql.Stmt
	delI  *sql.Stmt
	delF  *sql.Stmt
	addF  *sql.Stmt
	touch *sql.Stmt
	hist  *sql.Stmt
	trim  *sql.Stmt
}

var (
	_ longterm.Store   = (*LongTerm)(nil)
	_ longterm.Sweeper = (*LongTerm)(nil)
	_ longterm.History = (*LongTerm)(nil)
)

const (
	// longTermSchema is the schema that added the long-term store;
	// historySchema the one that added its history.
	longTermSchema = 4
	historySchema  = 6
	// historyBeganKey is the meta row holding when an upgraded store
	// began its history (Unix nanoseconds); absent in a store made with it.
	historyBeganKey = "store_history_began"
)

// LongTerm returns the long-term store kept in s's file, configured by cfg
// (its embedder for semantic search, the clock). Each call returns a new
// handle on the same items. It fails for an encrypted store: the store's
// filters read the values inside SQLite, so they would have to be kept in
// the clear.
func (s *Saver) LongTerm(cfg longterm.Config) (*LongTerm, error) {
	if s.cipher != nil {
		return nil, fmt.Errorf("long-term store in %s: the checkpoint store is encrypted, and long-term items are not (their filters run in SQLite); open an unencrypted store for them", s.path)
	}
	return &LongTerm{s: s, cfg: cfg, now: cfg.Clock()}, nil
}

const (
	ltColumns = "prefix, key, value, created_at, updated_at, expires_at, ttl, " + writerColumns
	// writerColumns are a longterm.Writer's, in store_items and
	// store_history.
	writerColumns = "thread_id, ns, checkpoint_id, step, task_id, node"
	// ltSelect reads ltColumns, the value as JSON text.
	ltSelect = "i.prefix, i.key, json(i.value), i.created_at, i.updated_at, i.expires_at, i.ttl, i.thread_id, i.ns, i.checkpoint_id, i.step, i.task_id, i.node"
)

func (l *LongTerm) prepare(ctx context.Context) error {
	l.once.Do(func() {
		prep := func(db *sql.DB, q string) *sql.Stmt {
			if l.err != nil || db == nil {
				return nil
			}
			st, err := db.PrepareContext(ctx, q)
			if err != nil {
				l.err = fmt.Errorf("long-term store in %s: %w", l.s.path, l.s.mapErr(err))
			}
			return st
		}
		l.get = prep(l.s.r, "SELECT "+ltSelect+" FROM store_items i WHERE prefix = ? AND key = ? AND (expires_at IS NULL OR expires_at > ?)")
		l.put = prep(l.s.w, `INSERT INTO store_items (`+ltColumns+`) VALUES (?, ?, jsonb(?), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (prefix, key) DO UPDATE SET value = excluded.value,
    created_at = CASE WHEN store_items.expires_at IS NOT NULL AND store_items.expires_at <= excluded.updated_at THEN excluded.created_at ELSE store_items.created_at END,
    updated_at = excluded.updated_at, expires_at = excluded.expires_at, ttl = excluded.ttl,
    thread_id = excluded.thread_id, ns = excluded.ns, checkpoint_id = excluded.checkpoint_id,
    step = excluded.step, task_id = excluded.task_id, node = excluded.node`)
		l.hist = prep(l.s.w, "INSERT INTO store_history (prefix, key, value, at, ttl, "+writerColumns+") VALUES (?, ?, jsonb(?), ?, ?, ?, ?, ?, ?, ?, ?)")
		l.trim = prep(l.s.w, fmt.Sprintf(`DELETE FROM store_history WHERE prefix = ?1 AND key = ?2 AND seq <=
    (SELECT seq FROM store_history WHERE prefix = ?1 AND key = ?2 ORDER BY seq DESC LIMIT 1 OFFSET %d)`, longterm.HistoryPerItem))
		l.delV = prep(l.s.w, "DELETE FROM store_vectors WHERE prefix = ? AND key = ?")
		l.addV = prep(l.s.w, "INSERT INTO store_vectors (prefix, key, idx, vector) VALUES (?, ?, ?, ?)")
		l.delI = prep(l.s.w, "DELETE FROM store_items WHERE prefix = ? AND key = ?")
		l.delF = prep(l.s.w, "DELETE FROM store_fields WHERE prefix = ? AND key = ?")
		l.addF = prep(l.s.w, "INSERT OR IGNORE INTO store_fields (path, value, prefix, key) VALUES (?, ?, ?, ?)")
		l.touch = prep(l.s.w, "UPDATE store_items SET expires_at = ? + ttl WHERE prefix = ? AND key = ? AND ttl IS NOT NULL AND expires_at > ?")
	})
	return l.err
}

func (l *LongTerm) wrap(op string, err error) error {
	if err == nil || errors.Is(err, longterm.ErrInvalid) || errors.Is(err, longterm.ErrNoEmbedder) {
		return err
	}
	return fmt.Errorf("long-term store in %s: %s: %w", l.s.path, op, err)
}

type ltRow struct {
	prefix, key, value string
	created, updated   int64
	expires, ttl       sql.NullInt64
	w                  longterm.Writer
}

func (r *ltRow) scan(sc interface{ Scan(...any) error }) error {
	return sc.Scan(&r.prefix, &r.key, &r.value, &r.created, &r.updated, &r.expires, &r.ttl,
		&r.w.ThreadID, &r.w.NS, &r.w.CheckpointID, &r.w.Step, &r.w.TaskID, &r.w.Node)
}

// writerArgs are w's values for writerColumns.
func writerArgs(w longterm.Writer) []any {
	return []any{w.ThreadID, w.NS, w.CheckpointID, w.Step, w.TaskID, w.Node}
}

func (r *ltRow) item() (longterm.Item, error) {
	v, err := longterm.DecodeValue([]byte(r.value))
	if err != nil {
		return longterm.Item{}, fmt.Errorf("item %s/%s: %w", r.prefix, r.key, err)
	}
	it := longterm.Item{Namespace: longterm.ParseNamespace(r.prefix), Key: r.key, Value: v,
		CreatedAt: time.Unix(0, r.created).UTC(), UpdatedAt: time.Unix(0, r.updated).UTC(), Writer: r.w}
	if r.expires.Valid {
		it.ExpiresAt = time.Unix(0, r.expires.Int64).UTC()
	}
	if r.ttl.Valid {
		it.TTL = time.Duration(r.ttl.Int64)
	}
	return it, nil
}

// Get returns the item at ns and key, or nil; see longterm.Store.
func (l *LongTerm) Get(ctx context.Context, ns longterm.Namespace, key string, opts ...longterm.ReadOption) (*longterm.Item, error) {
	if err := longterm.CheckKey(ns, key); err != nil {
		return nil, err
	}
	if err := l.prepare(ctx); err != nil {
		return nil, err
	}
	now := l.now().UnixNano()
	var r ltRow
	err := r.scan(l.get.QueryRowContext(ctx, ns.String(), key, now))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, l.wrap("get", l.s.mapErr(err))
	}
	it, err := r.item()
	if err != nil {
		return nil, l.wrap("get", err)
	}
	if r.ttl.Valid && longterm.Refresh(opts) && l.s.w != nil && l.s.readOnly == nil {
		if err := l.s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.StmtContext(ctx, l.touch).ExecContext(ctx, now, r.prefix, r.key, now)
			return err
		}); err != nil {
			return nil, l.wrap("refreshing the TTL", err)
		}
		it.ExpiresAt = time.Unix(0, now+r.ttl.Int64).UTC()
	}
	return &it, nil
}

// Put stores value at ns and key; see longterm.Store.
func (l *LongTerm) Put(ctx context.Context, ns longterm.Namespace, key string, value map[string]any, opts ...longterm.PutOption) error {
	pp, err := l.cfg.PreparePut(ctx, ns, key, value, opts)
	if err != nil {
		return l.wrap("put", err)
	}
	o, raw, v, vecs := pp.Options, pp.Raw, pp.Value, pp.Vectors
	fields := indexFields(v)
	if err := l.prepare(ctx); err != nil {
		return err
	}
	if err := l.s.writable(ctx); err != nil {
		return l.wrap("put", err)
	}
	prefix := ns.String()
	wargs := writerArgs(longterm.WriterOf(ctx))
	return l.wrap("put", l.s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		now := l.now().UnixNano()
		var expires, ttl any
		if o.TTL > 0 {
			expires, ttl = now+int64(o.TTL), int64(o.TTL)
		}
		if _, err := tx.StmtContext(ctx, l.put).ExecContext(ctx, append([]any{prefix, key, string(raw), now, now, expires, ttl}, wargs...)...); err != nil {
			return err
		}
		if _, err := tx.StmtContext(ctx, l.hist).ExecContext(ctx, append([]any{prefix, key, string(raw), now, ttl}, wargs...)...); err != nil {
			return err
		}
		// The item keeps its newest HistoryPerItem changes.
		if _, err := tx.StmtContext(ctx, l.trim).ExecContext(ctx, prefix, key); err != nil {
			return err
		}
		if _, err := tx.StmtContext(ctx, l.delV).ExecContext(ctx, prefix, key); err != nil {
			return err
		}
		for i, vec := range vecs {
			if _, err := tx.StmtContext(ctx, l.addV).ExecContext(ctx, prefix, key, i, longterm.EncodeVector(vec)); err != nil {
				return err
			}
		}
		if _, err := tx.StmtContext(ctx, l.delF).ExecContext(ctx, prefix, key); err != nil {
			return err
		}
		if len(fields) > 0 {
			add := tx.StmtContext(ctx, l.addF)
			for _, f := range fields {
				if _, err := add.ExecContext(ctx, f.path, f.value, prefix, key); err != nil {
					return err
				}
			}
		}
		return nil
	}))
}

// indexedString is how many bytes of a string store_fields keeps.
const indexedString = 256

// field is a row of store_fields.
type field struct {
	path  string
	value any // float64 or string
}

// indexFields lists the scalar fields of v outside arrays, at most 8
// objects deep, skipping names a filter cannot give (a quote or a
// backslash).
func indexFields(v map[string]any) []field {
	var out []field
	var walk func(path string, m map[string]any, depth int)
	walk = func(path string, m map[string]any, depth int) {
		for k, x := range m {
			if k == "" || strings.ContainsAny(k, "\"\\") {
				continue
			}
			p := path + `."` + k + `"`
			switch x := x.(type) {
			case float64:
				out = append(out, field{p, x})
			case string:
				if len(x) > indexedString {
					x = x[:indexedString]
				}
				out = append(out, field{p, x})
			case map[string]any:
				if depth < 8 {
					walk(p, x, depth+1)
				}
			}
		}
	}
	walk("$", v, 1)
	return out
}

// Delete removes the item at ns and key; see longterm.Store.
func (l *LongTerm) Delete(ctx context.Context, ns longterm.Namespace, key string) error {
	if err := longterm.CheckKey(ns, key); err != nil {
		return err
	}
	if err := l.prepare(ctx); err != nil {
		return err
	}
	prefix := ns.String()
	wargs := writerArgs(longterm.WriterOf(ctx))
	return l.wrap("delete", l.s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.StmtContext(ctx, l.delI).ExecContext(ctx, prefix, key)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n > 0 { // deleting what is not there changes nothing
			if _, err := tx.StmtContext(ctx, l.hist).ExecContext(ctx, append([]any{prefix, key, nil, l.now().UnixNano(), nil}, wargs...)...); err != nil {
				return err
			}
		}
		if _, err := tx.StmtContext(ctx, l.delF).ExecContext(ctx, prefix, key); err != nil {
			return err
		}
		_, err = tx.StmtContext(ctx, l.delV).ExecContext(ctx, prefix, key)
		return err
	}))
}

// where returns the SQL condition (on table alias t) and arguments for a
// namespace prefix, liveness at now, and a filter.
func where(t string, prefix longterm.Namespace, now int64, conds []longterm.Condition) (string, []any, error) {
	var b strings.Builder
	args := []any{now}
	fmt.Fprintf(&b, "(%[1]s.expires_at IS NULL OR %[1]s.expires_at > ?)", t)
	if len(prefix) > 0 {
		p := prefix.String()
		// Labels hold no '.', and '/' follows '.': the children of p are
		// the keys from "p." up to "p/".
		fmt.Fprintf(&b, " AND (%[1]s.prefix = ? OR (%[1]s.prefix >= ? AND %[1]s.prefix < ?))", t)
		args = append(args, p, p+".", p+"/")
	}
	for _, c := range conds {
		var path strings.Builder
		path.WriteString("$")
		for _, k := range c.Path {
			path.WriteString(`."` + k + `"`)
		}
		jt := fmt.Sprintf("json_type(%s.value, '%s')", t, path.String())
		jx := fmt.Sprintf("json_extract(%s.value, '%s')", t, path.String())
		eq := func(v any) (string, []any, error) {
			switch x := v.(type) {
			case nil:
				return jt + " = 'null'", nil, nil
			case bool:
				if x {
					return jt + " = 'true'", nil, nil
				}
				return jt + " = 'false'", nil, nil
			case float64:
				return jt + " IN ('integer', 'real') AND " + jx + " = ?", []any{x}, nil
			case string:
				return jt + " = 'text' AND " + jx + " = ?", []any{x}, nil
			case []any, map[string]any:
				kind := "array"
				if _, ok := x.(map[string]any); ok {
					kind = "object"
				}
				raw, err := json.Marshal(x)
				return jt + " = '" + kind + "' AND " + jx + " = ?", []any{string(raw)}, err
			}
			return "", nil, fmt.Errorf("filter value %v of type %T", v, v)
		}
		var expr string
		var a []any
		var err error
		switch c.Op {
		case "$eq":
			expr, a, err = eq(c.Value)
		case "$ne":
			expr, a, err = eq(c.Value)
			expr = "NOT COALESCE(" + expr + ", 0)"
		default:
			op := map[string]string{"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}[c.Op]
			switch x := c.Value.(type) {
			case float64:
				expr, a = jt+" IN ('integer', 'real') AND "+jx+" "+op+" ?", []any{x}
			case string:
				expr, a = jt+" = 'text' AND "+jx+" "+op+" ?", []any{x}
			default:
				err = fmt.Errorf("filter %s wants a number or a string", c.Op)
			}
		}
		if err != nil {
			return "", nil, err
		}
		b.WriteString(" AND (" + expr + ")")
		args = append(args, a...)
	}
	return b.String(), args, nil
}

// Search returns the items matching q; see longterm.Store.
func (l *LongTerm) Search(ctx context.Context, q longterm.SearchQuery) ([]longterm.Item, error) {
	plan, err := longterm.PrepareSearch(ctx, l.cfg.Embedder, q)
	if err != nil {
		return nil, err
	}
	limit, conds, qv := plan.Limit, plan.Conditions, plan.Vector
	now := l.now().UnixNano()
	var out []longterm.Item
	var touch [][2]string
	err = l.s.read(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		if qv != nil {
			out, err = l.semantic(ctx, tx, q, conds, qv, now, limit)
		} else {
			out, err = l.scan(ctx, tx, q, conds, now, limit)
		}
		for _, it := range out {
			if it.TTL > 0 && !q.NoRefresh {
				touch = append(touch, [2]string{it.Namespace.String(), it.Key})
			}
		}
		return err
	})
	if err != nil {
		return nil, l.wrap("search", err)
	}
	if len(touch) > 0 && l.s.w != nil && l.s.readOnly == nil {
		if err := l.prepare(ctx); err != nil {
			return nil, err
		}
		if err := l.s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
			st := tx.StmtContext(ctx, l.touch)
			for _, k := range touch {
				if _, err := st.ExecContext(ctx, now, k[0], k[1], now); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return nil, l.wrap("search: refreshing TTLs", err)
		}
		for i := range out {
			if out[i].TTL > 0 {
				out[i].ExpiresAt = time.Unix(0, now+int64(out[i].TTL)).UTC()
			}
		}
	}
	if out == nil {
		out = []longterm.Item{}
	}
	return out, nil
}

// Search plans. A search without a query reads, in order of preference:
//   - the prefix's range of the primary key, sorted, when the prefix holds
//     fewer than narrowPrefix items;
//   - the candidates of its most selective condition from store_fields,
//     when one has fewer than fewCandidates;
//   - the first walkBudget rows of the newest updates (store_items_updated),
//     when they hold the page: a filter many items meet finds it there;
//   - the candidates of one condition (an equality if there is one);
//   - every item under the prefix, sorted, for a filter store_fields
//     cannot answer.
var (
	narrowPrefix  = 2000
	fewCandidates = 2000
	walkBudget    = 4000
)

// driver is the store_fields condition of a Condition: rows whose value
// is op arg (op2 arg2 too, when op2 is set) hold every item that meets it
// (a superset, for strings longer than indexedString).
type driver struct {
	path, op, op2 string
	arg, arg2     any
}

func (d driver) sql() (string, []any) {
	q := "f.path = ? AND f.value " + d.op + " ?"
	args := []any{d.path, d.arg}
	if d.op2 != "" {
		q += " AND f.value " + d.op2 + " ?"
		args = append(args, d.arg2)
	}
	return q, args
}

// drivers returns the conditions store_fields can answer: $eq of a number
// or a string, and the orderings. SQLite orders every number before every
// text, which bounds each range to its type.
func drivers(conds []longterm.Condition) []driver {
	var out []driver
	for _, c := range conds {
		var path strings.Builder
		path.WriteString("$")
		for _, k := range c.Path {
			path.WriteString(`."` + k + `"`)
		}
		p := path.String()
		switch v := c.Value.(type) {
		case float64:
			switch c.Op {
			case "$eq":
				out = append(out, driver{path: p, op: "=", arg: v})
			case "$gt", "$gte":
				out = append(out, driver{path: p, op: map[string]string{"$gt": ">", "$gte": ">="}[c.Op], arg: v, op2: "<", arg2: ""})
			case "$lt", "$lte":
				out = append(out, driver{path: p, op: map[string]string{"$lt": "<", "$lte": "<="}[c.Op], arg: v})
			}
		case string:
			t := v
			if len(t) > indexedString {
				t = t[:indexedString]
			}
			// Cut strings compare at most equal to their cut bound.
			switch c.Op {
			case "$eq":
				out = append(out, driver{path: p, op: "=", arg: t})
			case "$gt", "$gte":
				out = append(out, driver{path: p, op: ">=", arg: t})
			case "$lt", "$lte":
				out = append(out, driver{path: p, op: ">=", arg: "", op2: "<=", arg2: t})
			}
		}
	}
	return out
}

func (l *LongTerm) count(ctx context.Context, tx *sql.Tx, q string, args []any, limit int) (int, error) {
	st, err := l.prep(ctx, tx, "SELECT count(*) FROM ("+q+" LIMIT ?)")
	if err != nil {
		return 0, err
	}
	var n int
	err = st.QueryRowContext(ctx, append(args, limit)...).Scan(&n)
	return n, err
}

func (l *LongTerm) scan(ctx context.Context, tx *sql.Tx, q longterm.SearchQuery, conds []longterm.Condition, now int64, limit int) ([]longterm.Item, error) {
	w, args, err := where("i", q.Prefix, now, conds)
	if err != nil {
		return nil, err
	}
	const order = " ORDER BY i.updated_at DESC, i.prefix, i.key LIMIT ? OFFSET ?"
	page := []any{limit, q.Offset}
	if len(q.Prefix) > 0 {
		p := q.Prefix.String()
		n, err := l.count(ctx, tx, "SELECT 1 FROM store_items WHERE prefix = ? OR (prefix >= ? AND prefix < ?)", []any{p, p + ".", p + "/"}, narrowPrefix)
		if err != nil {
			return nil, err
		}
		if n < narrowPrefix {
			return l.rows(ctx, tx, "SELECT "+ltSelect+" FROM store_items i WHERE "+w+order, append(args, page...))
		}
	}
	best, bestN := -1, fewCandidates
	ds := drivers(conds)
	for i, d := range ds {
		dq, dargs := d.sql()
		n, err := l.count(ctx, tx, "SELECT 1 FROM store_fields f WHERE "+dq, dargs, bestN)
		if err != nil {
			return nil, err
		}
		if n < bestN {
			best, bestN = i, n
		}
	}
	if best >= 0 {
		dq, dargs := ds[best].sql()
		// CROSS JOIN keeps store_fields the outer loop.
		return l.rows(ctx, tx, "SELECT "+ltSelect+" FROM store_fields f CROSS JOIN store_items i ON i.prefix = f.prefix AND i.key = f.key WHERE "+
			dq+" AND "+w+order, append(append(dargs, args...), page...))
	}
	if q.Offset+limit <= walkBudget/4 {
		out, err := l.rows(ctx, tx, "SELECT "+ltSelect+" FROM (SELECT * FROM store_items INDEXED BY store_items_updated ORDER BY updated_at DESC, prefix, key LIMIT ?) i WHERE "+w+order,
			append(append([]any{walkBudget}, args...), page...))
		if err != nil || len(out) == limit {
			return out, err
		}
		var total int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM (SELECT 1 FROM store_items LIMIT ?)", walkBudget+1).Scan(&total); err != nil {
			return nil, err
		}
		if total <= walkBudget {
			return out, nil // the walk saw every item
		}
	}
	if len(ds) > 0 {
		// Every condition has many candidates but the newest items meet
		// too few together: the candidates of one condition are still
		// fewer than every item. An equality is likely the narrower.
		d := ds[0]
		for _, x := range ds {
			if x.op == "=" {
				d = x
				break
			}
		}
		dq, dargs := d.sql()
		return l.rows(ctx, tx, "SELECT "+ltSelect+" FROM store_fields f CROSS JOIN store_items i ON i.prefix = f.prefix AND i.key = f.key WHERE "+
			dq+" AND "+w+order, append(append(dargs, args...), page...))
	}
	return l.rows(ctx, tx, "SELECT "+ltSelect+" FROM store_items i NOT INDEXED WHERE "+w+order, append(args, page...))
}

// prep prepares q on tx's own connection. Not the Saver's statement cache:
// preparing there takes a second connection of the read pool while tx holds
// one, and as many concurrent searches as the pool has connections would
// wait on each other for good.
func (l *LongTerm) prep(ctx context.Context, tx *sql.Tx, q string) (*sql.Stmt, error) {
	return tx.PrepareContext(ctx, q)
}

func (l *LongTerm) rows(ctx context.Context, tx *sql.Tx, query string, args []any) ([]longterm.Item, error) {
	st, err := l.prep(ctx, tx, query)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []longterm.Item
	for rows.Next() {
		var r ltRow
		if err := r.scan(rows); err != nil {
			return nil, err
		}
		it, err := r.item()
		if err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, rows.Err()
}

func (l *LongTerm) semantic(ctx context.Context, tx *sql.Tx, q longterm.SearchQuery, conds []longterm.Condition, qv []float32, now int64, limit int) ([]longterm.Item, error) {
	w, args, err := where("i", q.Prefix, now, conds)
	if err != nil {
		return nil, err
	}
	st, err := l.prep(ctx, tx, "SELECT i.prefix, i.key, i.updated_at, v.vector FROM store_items i JOIN store_vectors v ON v.prefix = i.prefix AND v.key = i.key WHERE "+w)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	var rank longterm.Ranking
	// The driver's bytes, not copies: a vector is a kilobyte or more.
	var prefix, key, blob sql.RawBytes
	var updated int64
	for err == nil && rows.Next() {
		if err = rows.Scan(&prefix, &key, &updated, &blob); err == nil {
			err = rank.AddBytes(qv, prefix, key, updated, blob)
		}
	}
	if err == nil {
		err = rows.Err()
	}
	rows.Close() // before the page's reads on the same connection
	if err != nil {
		return nil, err
	}
	page := rank.Page(q.Offset, limit)
	if len(page) == 0 {
		return nil, nil
	}
	get, err := l.prep(ctx, tx, "SELECT "+ltSelect+" FROM store_items i WHERE prefix = ? AND key = ?")
	if err != nil {
		return nil, err
	}
	return longterm.Fetch(page, func(ns longterm.Namespace, key string) (longterm.Item, error) {
		var r ltRow
		if err := r.scan(get.QueryRowContext(ctx, ns.String(), key)); err != nil {
			return longterm.Item{}, err
		}
		return r.item()
	})
}

// ListNamespaces returns the namespaces holding live items; see
// longterm.Store.
func (l *LongTerm) ListNamespaces(ctx context.Context, q longterm.NamespaceQuery) ([]longterm.Namespace, error) {
	if _, err := longterm.CheckNamespaceQuery(q); err != nil {
		return nil, err
	}
	// A literal head of the prefix narrows the scan to a key range.
	lit := q.Literal()
	w, args, err := where("i", lit, l.now().UnixNano(), nil)
	if err != nil {
		return nil, err
	}
	var all []longterm.Namespace
	err = l.each(ctx, "SELECT DISTINCT prefix FROM store_items i WHERE "+w, args, func(rows *sql.Rows) error {
		var p string
		if err := rows.Scan(&p); err != nil {
			return err
		}
		all = append(all, longterm.ParseNamespace(p))
		return nil
	})
	if err != nil {
		return nil, l.wrap("list namespaces", err)
	}
	return longterm.ListNamespaces(all, q)
}

// each runs query with args in a read of its own, on its transaction's
// connection, and calls scan at each row.
func (l *LongTerm) each(ctx context.Context, query string, args []any, scan func(*sql.Rows) error) error {
	return l.s.read(ctx, func(ctx context.Context, tx *sql.Tx) error {
		st, err := l.prep(ctx, tx, query)
		if err != nil {
			return err
		}
		rows, err := st.QueryContext(ctx, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := scan(rows); err != nil {
				return err
			}
		}
		return rows.Err()
	})
}

// Sweep deletes the expired items and their vectors; see longterm.Sweeper.
func (l *LongTerm) Sweep(ctx context.Context) (int, error) {
	var n int64
	err := l.s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		now := l.now().UnixNano()
		for _, t := range []string{"store_vectors", "store_fields"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+t+` WHERE (prefix, key) IN
    (SELECT prefix, key FROM store_items WHERE expires_at IS NOT NULL AND expires_at <= ?)`, now); err != nil {
				return err
			}
		}
		res, err := tx.ExecContext(ctx, "DELETE FROM store_items WHERE expires_at IS NOT NULL AND expires_at <= ?", now)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), l.wrap("sweep", err)
}

// Changes returns the changes q asks for, newest first; see
// longterm.History.
func (l *LongTerm) Changes(ctx context.Context, q longterm.ChangeQuery) ([]longterm.Change, error) {
	limit, err := longterm.CheckChanges(q)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	var args []any
	b.WriteString("SELECT h.seq, h.prefix, h.key, json(h.value), h.at, h.ttl, h.thread_id, h.ns, h.checkpoint_id, h.step, h.task_id, h.node FROM store_history h WHERE 1")
	switch p := q.Prefix.String(); {
	case q.Key != "":
		b.WriteString(" AND h.prefix = ? AND h.key = ?")
		args = append(args, p, q.Key)
	case len(q.Prefix) > 0:
		b.WriteString(" AND (h.prefix = ? OR (h.prefix >= ? AND h.prefix < ?))")
		args = append(args, p, p+".", p+"/")
	}
	until := int64(math.MaxInt64)
	if !q.Until.IsZero() {
		until = q.Until.UnixNano()
		b.WriteString(" AND h.at <= ?")
		args = append(args, until)
	}
	if q.Latest {
		// The item's newest change of those at or before Until.
		b.WriteString(" AND h.seq = (SELECT max(seq) FROM store_history x WHERE x.prefix = h.prefix AND x.key = h.key AND x.at <= ?)")
		args = append(args, until)
	}
	b.WriteString(" ORDER BY h.seq DESC LIMIT ?")
	args = append(args, limit)
	out := []longterm.Change{}
	err = l.each(ctx, b.String(), args, func(rows *sql.Rows) error {
		var c longterm.Change
		var prefix string
		var value sql.NullString
		var at int64
		var ttl sql.NullInt64
		w := &c.Writer
		if err := rows.Scan(&c.Seq, &prefix, &c.Key, &value, &at, &ttl, &w.ThreadID, &w.NS, &w.CheckpointID, &w.Step, &w.TaskID, &w.Node); err != nil {
			return err
		}
		c.Namespace, c.At, c.TTL = longterm.ParseNamespace(prefix), time.Unix(0, at).UTC(), time.Duration(ttl.Int64)
		if value.Valid {
			var err error
			if c.Value, err = longterm.DecodeValue([]byte(value.String)); err != nil {
				return fmt.Errorf("change %d of %s/%s: %w", c.Seq, prefix, c.Key, err)
			}
		}
		out = append(out, c)
		return nil
	})
	if err != nil {
		return nil, l.wrap("changes", l.s.mapErr(err))
	}
	return out, nil
}

// HistoryBegan returns when the store began keeping changes (zero for a
// store made with its history); see longterm.History.
func (l *LongTerm) HistoryBegan(ctx context.Context) (time.Time, error) {
	var ns int64
	err := l.s.read(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = ?", historyBeganKey).Scan(&ns)
	})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return time.Time{}, nil
	case err != nil:
		return time.Time{}, l.wrap("history", l.s.mapErr(err))
	}
	return time.Unix(0, ns).UTC(), nil
}
