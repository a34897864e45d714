package longterm

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"
	"time"
)

// SortItems puts search results in the package's order (CompareItems).
func SortItems(items []Item, scored bool) {
	slices.SortFunc(items, func(a, b Item) int { return CompareItems(a, b, scored) })
}

// CompareItems orders search results: by Score, best first, when scored,
// else by UpdatedAt, newest first; ties by namespace, then key.
func CompareItems(a, b Item, scored bool) int {
	if scored && *a.Score != *b.Score {
		if *a.Score > *b.Score {
			return -1
		}
		return 1
	}
	if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
		return c
	}
	if c := strings.Compare(a.Namespace.String(), b.Namespace.String()); c != 0 {
		return c
	}
	return strings.Compare(a.Key, b.Key)
}

// Memory is a Store in memory, for tests and programs that keep nothing.
// Create it with NewMemory.
type Memory struct {
	cfg Config
	now func() time.Time
	mu  sync.Mutex
	m   map[string]map[string]*memItem // namespace (joined) → key → item
	// hist is each item's history (namespace and key → changes, oldest
	// first, at most HistoryPerItem); seq the last Seq given.
	hist map[[2]string][]memChange
	seq  int64
}

// memChange is a Change with its value kept as JSON, decoded per read.
type memChange struct {
	c   Change
	raw []byte
}

type memItem struct {
	ns      Namespace
	raw     []byte // the value's JSON, decoded afresh for each read
	value   map[string]any
	created time.Time
	updated time.Time
	expires time.Time
	ttl     time.Duration
	vecs    [][]float32
	writer  Writer
}

var (
	_ Store   = (*Memory)(nil)
	_ Sweeper = (*Memory)(nil)
	_ History = (*Memory)(nil)
)

// NewMemory returns an empty in-memory store configured by cfg.
func NewMemory(cfg Config) *Memory {
	return &Memory{cfg: cfg, now: cfg.Clock(), m: map[string]map[string]*memItem{}}
}

// record appends a change; the caller holds s.mu.
func (s *Memory) record(ns Namespace, key string, raw []byte, at time.Time, ttl time.Duration, w Writer) {
	s.seq++
	if s.hist == nil {
		s.hist = map[[2]string][]memChange{}
	}
	k := [2]string{ns.String(), key}
	h := append(s.hist[k], memChange{c: Change{Seq: s.seq, Namespace: slices.Clone(ns), Key: key, At: at, TTL: ttl, Writer: w}, raw: raw})
	if len(h) > HistoryPerItem {
		h = slices.Delete(h, 0, len(h)-HistoryPerItem)
	}
	s.hist[k] = h
}

// Changes returns the changes q asks for, newest first.
func (s *Memory) Changes(ctx context.Context, q ChangeQuery) ([]Change, error) {
	limit, err := CheckChanges(q)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var all []memChange
	for _, h := range s.hist {
		for i := len(h) - 1; i >= 0; i-- {
			if q.Match(h[i].c) {
				all = append(all, h[i])
				if q.Latest {
					break // the item's newest that matches
				}
			}
		}
	}
	slices.SortFunc(all, func(a, b memChange) int { return cmp.Compare(b.c.Seq, a.c.Seq) })
	out := []Change{}
	for _, mc := range all[:min(limit, len(all))] {
		c := mc.c
		c.Namespace = slices.Clone(c.Namespace)
		if mc.raw != nil {
			if c.Value, err = DecodeValue(mc.raw); err != nil {
				return nil, err
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// HistoryBegan returns the zero time: a Memory keeps every change it had.
func (s *Memory) HistoryBegan(ctx context.Context) (time.Time, error) { return time.Time{}, nil }

func (s *Memory) live(it *memItem, now time.Time) bool {
	return it.expires.IsZero() || now.Before(it.expires)
}

func (it *memItem) out(key string) (Item, error) {
	v, err := DecodeValue(it.raw)
	if err != nil {
		return Item{}, err
	}
	return Item{Namespace: slices.Clone(it.ns), Key: key, Value: v, CreatedAt: it.created, UpdatedAt: it.updated,
		ExpiresAt: it.expires, TTL: it.ttl, Writer: it.writer}, nil
}

// Get returns the item at ns and key, or nil.
func (s *Memory) Get(ctx context.Context, ns Namespace, key string, opts ...ReadOption) (*Item, error) {
	if err := CheckKey(ns, key); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now().UTC()
	it := s.m[ns.String()][key]
	if it == nil || !s.live(it, now) {
		return nil, nil
	}
	if it.ttl > 0 && Refresh(opts) {
		it.expires = now.Add(it.ttl)
	}
	out, err := it.out(key)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// Put stores value at ns and key.
func (s *Memory) Put(ctx context.Context, ns Namespace, key string, value map[string]any, opts ...PutOption) error {
	if err := CheckNamespace(ns); err != nil {
		return err
	}
	if err := CheckKey(ns, key); err != nil {
		return err
	}
	o, err := ApplyPut(opts)
	if err != nil {
		return err
	}
	raw, v, err := Canonical(value)
	if err != nil {
		return err
	}
	fields := s.cfg.EmbedFields(o)
	vecs, err := Embed(ctx, s.cfg.Embedder, v, fields)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now().UTC()
	k := ns.String()
	if s.m[k] == nil {
		s.m[k] = map[string]*memItem{}
	}
	w := WriterOf(ctx)
	it := &memItem{ns: slices.Clone(ns), raw: raw, value: v, created: now, updated: now, ttl: o.TTL, vecs: vecs, writer: w}
	if old := s.m[k][key]; old != nil && s.live(old, now) {
		it.created = old.created
	}
	if o.TTL > 0 {
		it.expires = now.Add(o.TTL)
	}
	s.m[k][key] = it
	s.record(ns, key, raw, now, o.TTL, w)
	return nil
}

// Delete removes the item at ns and key.
func (s *Memory) Delete(ctx context.Context, ns Namespace, key string) error {
	if err := CheckKey(ns, key); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := ns.String()
	if _, ok := s.m[k][key]; ok {
		s.record(ns, key, nil, s.now().UTC(), 0, WriterOf(ctx))
	}
	delete(s.m[k], key)
	if len(s.m[k]) == 0 {
		delete(s.m, k)
	}
	return nil
}

// Search returns the items matching q.
func (s *Memory) Search(ctx context.Context, q SearchQuery) ([]Item, error) {
	plan, err := PrepareSearch(ctx, s.cfg.Embedder, q)
	if err != nil {
		return nil, err
	}
	limit, conds, qv := plan.Limit, plan.Conditions, plan.Vector
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now().UTC()
	type hit struct {
		it    *memItem
		nsKey string
		key   string
		score float64
	}
	var hits []hit
	for nsKey, keys := range s.m {
		var first *memItem
		for _, it := range keys {
			first = it
			break
		}
		if first == nil || !HasPrefix(first.ns, q.Prefix) {
			continue // one namespace per map: its items share the answer
		}
		for key, it := range keys {
			if !s.live(it, now) || !Matches(conds, it.value) {
				continue
			}
			h := hit{it: it, nsKey: nsKey, key: key}
			if qv != nil {
				sc, ok := BestScore(qv, it.vecs)
				if !ok {
					continue
				}
				h.score = sc
			}
			hits = append(hits, h)
		}
	}
	// CompareItems' order, on the namespace's joined key kept with each hit.
	slices.SortFunc(hits, func(a, b hit) int {
		if qv != nil && a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		if c := b.it.updated.Compare(a.it.updated); c != 0 {
			return c
		}
		if c := strings.Compare(a.nsKey, b.nsKey); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
	out := []Item{}
	for i := q.Offset; i < len(hits) && len(out) < limit; i++ {
		h := hits[i]
		if h.it.ttl > 0 && !q.NoRefresh {
			h.it.expires = now.Add(h.it.ttl)
		}
		it, err := h.it.out(h.key)
		if err != nil {
			return nil, err
		}
		if qv != nil {
			sc := h.score
			it.Score = &sc
		}
		out = append(out, it)
	}
	return out, nil
}

// ListNamespaces returns the namespaces holding live items.
func (s *Memory) ListNamespaces(ctx context.Context, q NamespaceQuery) ([]Namespace, error) {
	s.mu.Lock()
	now := s.now().UTC()
	var all []Namespace
	for _, keys := range s.m {
		for _, it := range keys {
			if s.live(it, now) {
				all = append(all, it.ns)
				break
			}
		}
	}
	s.mu.Unlock()
	return ListNamespaces(all, q)
}

// Sweep deletes the expired items.
func (s *Memory) Sweep(ctx context.Context) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now().UTC()
	n := 0
	for k, keys := range s.m {
		for key, it := range keys {
			if !s.live(it, now) {
				delete(keys, key)
				n++
			}
		}
		if len(keys) == 0 {
			delete(s.m, k)
		}
	}
	return n, nil
}
