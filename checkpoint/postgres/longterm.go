package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weftstudio/weft/checkpoint/longterm"
)

// LongTerm is the long-term store (package longterm) in the checkpoint
// store's database, tables weft_store and weft_store_vectors
// (migrations/0006_longterm.sql) and the history of its changes,
// weft_store_history (0008_store_history.sql), on the Saver's pool. Get it
// from (*Saver).LongTerm; it lives as long as the Saver. It implements
// longterm.Store, longterm.Sweeper and longterm.History.
//
// Filters run in PostgreSQL: equality with a scalar is JSONB containment
// (the GIN index weft_store_value), the rest compare the value at the
// field's path. A semantic query reads the candidates' vectors and scores
// them exactly in Go (no pgvector). On a store opened read-only reads work
// and refresh no TTL; writes return an error wrapping
// checkpoint.ErrReadOnly.
type LongTerm struct {
	s   *Saver
	cfg longterm.Config
	now func() time.Time
}

var (
	_ longterm.Store   = (*LongTerm)(nil)
	_ longterm.Sweeper = (*LongTerm)(nil)
	_ longterm.History = (*LongTerm)(nil)
)

// LongTerm returns the long-term store kept in s's database, configured by
// cfg. It fails for an encrypted store: filters read the values inside
// PostgreSQL, so they would have to be kept in the clear.
func (s *Saver) LongTerm(cfg longterm.Config) (*LongTerm, error) {
	if s.cipher != nil {
		return nil, errors.New("long-term store: the checkpoint store is encrypted, and long-term items are not (their filters run in PostgreSQL); use an unencrypted store for them")
	}
	return &LongTerm{s: s, cfg: cfg, now: cfg.Clock()}, nil
}

const (
	pgCols = "prefix, key, value, created_at, updated_at, expires_at, ttl, " + pgWriterCols
	// pgWriterCols are a longterm.Writer's, in weft_store and
	// weft_store_history.
	pgWriterCols = "thread_id, ns, checkpoint_id, step, task_id, node"
	// historyBeganKey is the weft_meta row saying when an upgraded
	// store began its history.
	historyBeganKey = "store_history_began"
)

func (l *LongTerm) wrap(op string, err error) error {
	if err == nil || errors.Is(err, longterm.ErrInvalid) || errors.Is(err, longterm.ErrNoEmbedder) {
		return err
	}
	return fmt.Errorf("long-term store: %s: %w", op, connErr(err))
}

func (l *LongTerm) refreshes() bool { return l.s.readOnly == nil }

type pgRow struct {
	prefix, key      string
	value            []byte
	created, updated int64
	expires, ttl     *int64
	w                longterm.Writer
}

func (r *pgRow) scan(sc interface{ Scan(...any) error }) error {
	return sc.Scan(&r.prefix, &r.key, &r.value, &r.created, &r.updated, &r.expires, &r.ttl,
		&r.w.ThreadID, &r.w.NS, &r.w.CheckpointID, &r.w.Step, &r.w.TaskID, &r.w.Node)
}

func (r *pgRow) item() (longterm.Item, error) {
	v, err := longterm.DecodeValue(r.value)
	if err != nil {
		return longterm.Item{}, fmt.Errorf("item %s/%s: %w", r.prefix, r.key, err)
	}
	it := longterm.Item{Namespace: longterm.ParseNamespace(r.prefix), Key: r.key, Value: v,
		CreatedAt: time.Unix(0, r.created).UTC(), UpdatedAt: time.Unix(0, r.updated).UTC(), Writer: r.w}
	if r.expires != nil {
		it.ExpiresAt = time.Unix(0, *r.expires).UTC()
	}
	if r.ttl != nil {
		it.TTL = time.Duration(*r.ttl)
	}
	return it, nil
}

// Get returns the item at ns and key, or nil; see longterm.Store.
func (l *LongTerm) Get(ctx context.Context, ns longterm.Namespace, key string, opts ...longterm.ReadOption) (*longterm.Item, error) {
	if err := longterm.CheckKey(ns, key); err != nil {
		return nil, err
	}
	now := l.now().UnixNano()
	var r pgRow
	err := r.scan(l.s.pool.QueryRow(ctx, "SELECT "+pgCols+" FROM weft_store WHERE prefix = $1 AND key = $2 AND (expires_at IS NULL OR expires_at > $3)", ns.String(), key, now))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, l.wrap("get", err)
	}
	it, err := r.item()
	if err != nil {
		return nil, l.wrap("get", err)
	}
	if r.ttl != nil && longterm.Refresh(opts) && l.refreshes() {
		if _, err := l.s.pool.Exec(ctx, "UPDATE weft_store SET expires_at = $1 + ttl WHERE prefix = $2 AND key = $3 AND ttl IS NOT NULL AND expires_at > $1", now, r.prefix, r.key); err != nil {
			return nil, l.wrap("refreshing the TTL", err)
		}
		it.ExpiresAt = time.Unix(0, now+*r.ttl).UTC()
	}
	return &it, nil
}

// Put stores value at ns and key; see longterm.Store.
func (l *LongTerm) Put(ctx context.Context, ns longterm.Namespace, key string, value map[string]any, opts ...longterm.PutOption) error {
	pp, err := l.cfg.PreparePut(ctx, ns, key, value, opts)
	if err != nil {
		return l.wrap("put", err)
	}
	o, raw, vecs := pp.Options, pp.Raw, pp.Vectors
	if err := l.s.writable(ctx); err != nil {
		return l.wrap("put", err)
	}
	prefix := ns.String()
	now := l.now().UnixNano()
	var expires, ttl *int64
	if o.TTL > 0 {
		e, d := now+int64(o.TTL), int64(o.TTL)
		expires, ttl = &e, &d
	}
	w := longterm.WriterOf(ctx)
	return l.wrap("put", pgx.BeginFunc(ctx, l.s.pool, func(tx pgx.Tx) error {
		// One statement writes the item and its history row.
		if _, err := tx.Exec(ctx, `WITH h AS (INSERT INTO weft_store_history (prefix, key, value, at, ttl, `+pgWriterCols+`)
    VALUES ($1, $2, $3::jsonb, $4, $6, $7, $8, $9, $10, $11, $12))
INSERT INTO weft_store (`+pgCols+`) VALUES ($1, $2, $3::jsonb, $4, $4, $5, $6, $7, $8, $9, $10, $11, $12)
ON CONFLICT (prefix, key) DO UPDATE SET value = excluded.value,
    created_at = CASE WHEN weft_store.expires_at IS NOT NULL AND weft_store.expires_at <= excluded.updated_at THEN excluded.created_at ELSE weft_store.created_at END,
    updated_at = excluded.updated_at, expires_at = excluded.expires_at, ttl = excluded.ttl,
    thread_id = excluded.thread_id, ns = excluded.ns, checkpoint_id = excluded.checkpoint_id,
    step = excluded.step, task_id = excluded.task_id, node = excluded.node`,
			prefix, key, string(raw), now, expires, ttl, w.ThreadID, w.NS, w.CheckpointID, w.Step, w.TaskID, w.Node); err != nil {
			return err
		}
		// The item keeps its newest HistoryPerItem changes.
		if _, err := tx.Exec(ctx, `DELETE FROM weft_store_history WHERE prefix = $1 AND key = $2 AND seq <=
    (SELECT seq FROM weft_store_history WHERE prefix = $1 AND key = $2 ORDER BY seq DESC LIMIT 1 OFFSET $3)`, prefix, key, longterm.HistoryPerItem); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "DELETE FROM weft_store_vectors WHERE prefix = $1 AND key = $2", prefix, key); err != nil {
			return err
		}
		for i, vec := range vecs {
			if _, err := tx.Exec(ctx, "INSERT INTO weft_store_vectors (prefix, key, idx, vector) VALUES ($1, $2, $3, $4)", prefix, key, i, longterm.EncodeVector(vec)); err != nil {
				return err
			}
		}
		return nil
	}))
}

// Delete removes the item at ns and key (its vectors go with it); see
// longterm.Store.
func (l *LongTerm) Delete(ctx context.Context, ns longterm.Namespace, key string) error {
	if err := longterm.CheckKey(ns, key); err != nil {
		return err
	}
	if err := l.s.writable(ctx); err != nil {
		return l.wrap("delete", err)
	}
	w := longterm.WriterOf(ctx)
	// The history row only when there was an item: deleting what is not
	// there changes nothing.
	_, err := l.s.pool.Exec(ctx, `WITH d AS (DELETE FROM weft_store WHERE prefix = $1 AND key = $2 RETURNING prefix, key)
INSERT INTO weft_store_history (prefix, key, value, at, ttl, `+pgWriterCols+`)
    SELECT prefix, key, NULL, $3, NULL, $4, $5, $6, $7, $8, $9 FROM d`,
		ns.String(), key, l.now().UnixNano(), w.ThreadID, w.NS, w.CheckpointID, w.Step, w.TaskID, w.Node)
	return l.wrap("delete", err)
}

// pgWhere builds the condition (on table alias t) for a namespace prefix,
// liveness at now and a filter, numbering its parameters after args.
func pgWhere(t string, prefix longterm.Namespace, now int64, conds []longterm.Condition, args []any) (string, []any, error) {
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	var b strings.Builder
	n := arg(now)
	fmt.Fprintf(&b, "(%[1]s.expires_at IS NULL OR %[1]s.expires_at > %[2]s)", t, n)
	if len(prefix) > 0 {
		p := prefix.String()
		fmt.Fprintf(&b, " AND (%[1]s.prefix = %[2]s OR (%[1]s.prefix >= %[3]s AND %[1]s.prefix < %[4]s))", t, arg(p), arg(p+"."), arg(p+"/"))
	}
	for _, c := range conds {
		path := arg(c.Path)
		at := fmt.Sprintf("(%s.value #> %s::text[])", t, path)
		text := fmt.Sprintf("(%s.value #>> %s::text[])", t, path)
		eq := func(v any) (string, error) {
			raw, err := json.Marshal(v)
			if err != nil {
				return "", err
			}
			switch v.(type) {
			case []any, map[string]any:
				return at + " = " + arg(string(raw)) + "::jsonb", nil
			}
			// A scalar: containment, which the GIN index answers, and
			// the type, as containment also finds a scalar in an array.
			var doc any = v
			for i := len(c.Path) - 1; i >= 0; i-- {
				doc = map[string]any{c.Path[i]: doc}
			}
			rawDoc, err := json.Marshal(doc)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%s.value @> %s::jsonb AND jsonb_typeof(%s) = jsonb_typeof(%s::jsonb)", t, arg(string(rawDoc)), at, arg(string(raw))), nil
		}
		var expr string
		var err error
		switch c.Op {
		case "$eq":
			expr, err = eq(c.Value)
		case "$ne":
			expr, err = eq(c.Value)
			expr = "NOT COALESCE((" + expr + "), false)"
		default:
			op := map[string]string{"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}[c.Op]
			switch x := c.Value.(type) {
			case float64:
				expr = fmt.Sprintf("CASE WHEN jsonb_typeof(%s) = 'number' THEN %s::float8 %s %s::float8 ELSE false END", at, text, op, arg(x))
			case string:
				expr = fmt.Sprintf(`CASE WHEN jsonb_typeof(%s) = 'string' THEN %s COLLATE "C" %s %s::text ELSE false END`, at, text, op, arg(x))
			default:
				err = fmt.Errorf("filter %s wants a number or a string", c.Op)
			}
		}
		if err != nil {
			return "", nil, err
		}
		b.WriteString(" AND (" + expr + ")")
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
	w, args, err := pgWhere("i", q.Prefix, now, conds, nil)
	if err != nil {
		return nil, err
	}
	var out []longterm.Item
	if qv != nil {
		out, err = l.semantic(ctx, w, args, qv, q.Offset, limit)
	} else {
		out, err = l.rows(ctx, "SELECT "+pgCols+" FROM weft_store i WHERE "+w+fmt.Sprintf(" ORDER BY updated_at DESC, prefix, key LIMIT %d OFFSET %d", limit, q.Offset), args)
	}
	if err != nil {
		return nil, l.wrap("search", err)
	}
	if !q.NoRefresh && l.refreshes() {
		var prefixes, keys []string
		for _, it := range out {
			if it.TTL > 0 {
				prefixes, keys = append(prefixes, it.Namespace.String()), append(keys, it.Key)
			}
		}
		if len(keys) > 0 {
			if _, err := l.s.pool.Exec(ctx, `UPDATE weft_store s SET expires_at = $1 + ttl FROM unnest($2::text[], $3::text[]) AS k(prefix, key)
WHERE s.prefix = k.prefix AND s.key = k.key AND s.ttl IS NOT NULL AND s.expires_at > $1`, now, prefixes, keys); err != nil {
				return nil, l.wrap("search: refreshing TTLs", err)
			}
			for i := range out {
				if out[i].TTL > 0 {
					out[i].ExpiresAt = time.Unix(0, now+int64(out[i].TTL)).UTC()
				}
			}
		}
	}
	if out == nil {
		out = []longterm.Item{}
	}
	return out, nil
}

func (l *LongTerm) rows(ctx context.Context, query string, args []any) ([]longterm.Item, error) {
	rows, err := l.s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []longterm.Item
	for rows.Next() {
		var r pgRow
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

func (l *LongTerm) semantic(ctx context.Context, w string, args []any, qv []float32, offset, limit int) ([]longterm.Item, error) {
	rows, err := l.s.pool.Query(ctx, "SELECT i.prefix, i.key, i.updated_at, v.vector FROM weft_store i JOIN weft_store_vectors v ON v.prefix = i.prefix AND v.key = i.key WHERE "+w, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var rank longterm.Ranking
	if err := rank.AddRows(qv, rows); err != nil {
		return nil, err
	}
	return longterm.Fetch(rank.Page(offset, limit), func(ns longterm.Namespace, key string) (longterm.Item, error) {
		var r pgRow
		if err := r.scan(l.s.pool.QueryRow(ctx, "SELECT "+pgCols+" FROM weft_store WHERE prefix = $1 AND key = $2", ns.String(), key)); err != nil {
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
	lit := q.Literal()
	w, args, err := pgWhere("i", lit, l.now().UnixNano(), nil, nil)
	if err != nil {
		return nil, err
	}
	rows, err := l.s.pool.Query(ctx, "SELECT DISTINCT prefix FROM weft_store i WHERE "+w, args...)
	if err != nil {
		return nil, l.wrap("list namespaces", err)
	}
	var all []longterm.Namespace
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			rows.Close()
			return nil, l.wrap("list namespaces", err)
		}
		all = append(all, longterm.ParseNamespace(p))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, l.wrap("list namespaces", err)
	}
	return longterm.ListNamespaces(all, q)
}

// Sweep deletes the expired items (their vectors go with them); see
// longterm.Sweeper.
func (l *LongTerm) Sweep(ctx context.Context) (int, error) {
	if err := l.s.writable(ctx); err != nil {
		return 0, l.wrap("sweep", err)
	}
	tag, err := l.s.pool.Exec(ctx, "DELETE FROM weft_store WHERE expires_at IS NOT NULL AND expires_at <= $1", l.now().UnixNano())
	if err != nil {
		return 0, l.wrap("sweep", err)
	}
	return int(tag.RowsAffected()), nil
}

// Changes returns the changes q asks for, newest first; see
// longterm.History.
func (l *LongTerm) Changes(ctx context.Context, q longterm.ChangeQuery) ([]longterm.Change, error) {
	limit, err := longterm.CheckChanges(q)
	if err != nil {
		return nil, err
	}
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	var b strings.Builder
	b.WriteString("SELECT h.seq, h.prefix, h.key, h.value, h.at, h.ttl, h.thread_id, h.ns, h.checkpoint_id, h.step, h.task_id, h.node FROM weft_store_history h WHERE true")
	switch p := q.Prefix.String(); {
	case q.Key != "":
		fmt.Fprintf(&b, " AND h.prefix = %s AND h.key = %s", arg(p), arg(q.Key))
	case len(q.Prefix) > 0:
		fmt.Fprintf(&b, " AND (h.prefix = %s OR (h.prefix >= %s AND h.prefix < %s))", arg(p), arg(p+"."), arg(p+"/"))
	}
	until := int64(math.MaxInt64)
	if !q.Until.IsZero() {
		until = q.Until.UnixNano()
	}
	u := arg(until)
	fmt.Fprintf(&b, " AND h.at <= %s", u)
	if q.Latest {
		// The item's newest change of those at or before Until.
		fmt.Fprintf(&b, " AND h.seq = (SELECT max(seq) FROM weft_store_history x WHERE x.prefix = h.prefix AND x.key = h.key AND x.at <= %s)", u)
	}
	fmt.Fprintf(&b, " ORDER BY h.seq DESC LIMIT %s", arg(limit))
	rows, err := l.s.pool.Query(ctx, b.String(), args...)
	if err != nil {
		return nil, l.wrap("changes", err)
	}
	defer rows.Close()
	out := []longterm.Change{}
	for rows.Next() {
		var c longterm.Change
		var prefix string
		var value []byte
		var at int64
		var ttl *int64
		w := &c.Writer
		if err := rows.Scan(&c.Seq, &prefix, &c.Key, &value, &at, &ttl, &w.ThreadID, &w.NS, &w.CheckpointID, &w.Step, &w.TaskID, &w.Node); err != nil {
			return nil, l.wrap("changes", err)
		}
		c.Namespace, c.At = longterm.ParseNamespace(prefix), time.Unix(0, at).UTC()
		if ttl != nil {
			c.TTL = time.Duration(*ttl)
		}
		if value != nil {
			if c.Value, err = longterm.DecodeValue(value); err != nil {
				return nil, l.wrap("changes", fmt.Errorf("change %d of %s/%s: %w", c.Seq, prefix, c.Key, err))
			}
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, l.wrap("changes", err)
	}
	return out, nil
}

// HistoryBegan returns when the store began keeping changes (zero for a
// store made with its history); see longterm.History.
func (l *LongTerm) HistoryBegan(ctx context.Context) (time.Time, error) {
	var raw []byte
	err := l.s.pool.QueryRow(ctx, "SELECT value FROM weft_meta WHERE key = $1", historyBeganKey).Scan(&raw)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return time.Time{}, nil
	case err != nil:
		return time.Time{}, l.wrap("history", err)
	}
	ns, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return time.Time{}, l.wrap("history", fmt.Errorf("weft_meta %s holds %q, not a time", historyBeganKey, raw))
	}
	return time.Unix(0, ns).UTC(), nil
}
