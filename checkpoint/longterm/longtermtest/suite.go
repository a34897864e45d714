// Package longtermtest is the conformance suite every longterm.Store
// passes. A store's tests run it with one call:
//
//	func TestConformance(t *testing.T) {
//		longtermtest.Run(t, func(t *testing.T, cfg longterm.Config) longterm.Store { return longterm.NewMemory(cfg) })
//	}
//
// newStore must return a new, empty store configured by cfg (its clock
// and embedder), closing it, if needed, through t.Cleanup. The cases
// follow LangGraph's BaseStore: put, get, delete, search (prefix, filter
// operators, order, limit and offset, semantic query with max pooling),
// list namespaces (prefix and suffix with "*", max depth, limit, offset),
// TTL with refresh on read, and validation errors; and Weft's history of
// changes (longterm.History), which every store here keeps.
package longtermtest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint/longterm"
)

// NewStore makes a fresh store for one case.
type NewStore func(t *testing.T, cfg longterm.Config) longterm.Store

// Clock is a manual clock for TTL cases: Now returns the set time, which
// Advance moves forward.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock set at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// suite holds one case's store and clock.
type suite struct {
	t     *testing.T
	ctx   context.Context
	s     longterm.Store
	clock *Clock
}

// Run runs every case against stores made by newStore.
func Run(t *testing.T, newStore NewStore) {
	cases := []struct {
		name string
		cfg  func(c *Clock) longterm.Config
		fn   func(*suite)
	}{
		{"put_get", plain, putGet},
		{"put_replaces_keeps_created", plain, putReplaces},
		{"value_is_a_copy", plain, valueCopy},
		{"delete", plain, deleteCase},
		{"validation", plain, validation},
		{"search_prefix_order", plain, searchPrefixOrder},
		{"search_limit_offset", plain, searchLimitOffset},
		{"filter_operators", plain, filterOperators},
		{"filter_nested_and_types", plain, filterNested},
		{"filter_long_strings", plain, filterLongStrings},
		{"filter_errors", plain, filterErrors},
		{"list_namespaces", plain, listNamespaces},
		{"ttl_expiry_and_refresh", plain, ttl},
		{"ttl_search_refresh", plain, ttlSearch},
		{"sweep", plain, sweep},
		{"semantic_search", semantic, semanticSearch},
		{"semantic_fields_and_noindex", semantic, semanticFields},
		{"query_without_embedder", plain, queryWithoutEmbedder},
		{"concurrent", plain, concurrent},
		{"history_writers", plain, historyWriters},
		{"history_items_at", plain, historyItemsAt},
		{"history_bounded", plain, historyTrim},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clock := NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
			s := newStore(t, c.cfg(clock))
			c.fn(&suite{t: t, ctx: context.Background(), s: s, clock: clock})
		})
	}
}

func plain(c *Clock) longterm.Config { return longterm.Config{Now: c.Now} }

func semantic(c *Clock) longterm.Config {
	return longterm.Config{Now: c.Now, Embedder: longterm.HashEmbedder{Dims: 512}}
}

func (s *suite) put(ns longterm.Namespace, key string, v map[string]any, opts ...longterm.PutOption) {
	s.t.Helper()
	if err := s.s.Put(s.ctx, ns, key, v, opts...); err != nil {
		s.t.Fatalf("Put(%v, %q): %v", ns, key, err)
	}
}

func (s *suite) get(ns longterm.Namespace, key string, opts ...longterm.ReadOption) *longterm.Item {
	s.t.Helper()
	it, err := s.s.Get(s.ctx, ns, key, opts...)
	if err != nil {
		s.t.Fatalf("Get(%v, %q): %v", ns, key, err)
	}
	return it
}

func (s *suite) search(q longterm.SearchQuery) []longterm.Item {
	s.t.Helper()
	items, err := s.s.Search(s.ctx, q)
	if err != nil {
		s.t.Fatalf("Search(%+v): %v", q, err)
	}
	if items == nil {
		s.t.Fatalf("Search(%+v) returned nil, want a non-nil slice", q)
	}
	return items
}

// keys lists "ns/key" of items, in order.
func keys(items []longterm.Item) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, it.Namespace.String()+"/"+it.Key)
	}
	return out
}

func (s *suite) wantKeys(q longterm.SearchQuery, want ...string) {
	s.t.Helper()
	if want == nil {
		want = []string{}
	}
	if got := keys(s.search(q)); !slices.Equal(got, want) {
		s.t.Errorf("Search(%+v) = %q, want %q", q, got, want)
	}
}

func ns(labels ...string) longterm.Namespace { return labels }

func putGet(s *suite) {
	v := map[string]any{"text": "likes tea", "n": 3, "tags": []string{"a", "b"}, "nested": map[string]any{"ok": true}, "none": nil}
	s.put(ns("users", "u1"), "k1", v)
	it := s.get(ns("users", "u1"), "k1")
	if it == nil {
		s.t.Fatal("Get after Put returned nil")
	}
	want := map[string]any{"text": "likes tea", "n": 3.0, "tags": []any{"a", "b"}, "nested": map[string]any{"ok": true}, "none": nil}
	if !reflect.DeepEqual(it.Value, want) {
		s.t.Errorf("value = %#v, want %#v", it.Value, want)
	}
	if !slices.Equal(it.Namespace, ns("users", "u1")) || it.Key != "k1" {
		s.t.Errorf("item at %v/%q, want users.u1/k1", it.Namespace, it.Key)
	}
	now := s.clock.Now()
	if !it.CreatedAt.Equal(now) || !it.UpdatedAt.Equal(now) || it.CreatedAt.Location() != time.UTC {
		s.t.Errorf("created %v updated %v, want both %v in UTC", it.CreatedAt, it.UpdatedAt, now)
	}
	if !it.ExpiresAt.IsZero() || it.TTL != 0 || it.Score != nil {
		s.t.Errorf("item without TTL has ExpiresAt %v TTL %v Score %v", it.ExpiresAt, it.TTL, it.Score)
	}
	if it := s.get(ns("users", "u1"), "other"); it != nil {
		s.t.Errorf("Get of a missing key = %+v, want nil", it)
	}
	if it := s.get(ns("users"), "k1"); it != nil {
		s.t.Errorf("Get in the parent namespace = %+v, want nil", it)
	}
	if it := s.get(ns("users", "u1", "x"), "k1"); it != nil {
		s.t.Errorf("Get in a child namespace = %+v, want nil", it)
	}
	// An empty object is a value.
	s.put(ns("users", "u1"), "empty", map[string]any{})
	if it := s.get(ns("users", "u1"), "empty"); it == nil || it.Value == nil || len(it.Value) != 0 {
		s.t.Errorf("empty object came back as %+v", it)
	}
	var dec struct {
		Text string   `json:"text"`
		Tags []string `json:"tags"`
	}
	if err := s.get(ns("users", "u1"), "k1").Decode(&dec); err != nil || dec.Text != "likes tea" || len(dec.Tags) != 2 {
		s.t.Errorf("Decode = %+v, %v", dec, err)
	}
}

func putReplaces(s *suite) {
	s.put(ns("a"), "k", map[string]any{"v": 1})
	created := s.clock.Now()
	s.clock.Advance(time.Minute)
	s.put(ns("a"), "k", map[string]any{"w": 2})
	it := s.get(ns("a"), "k")
	if !reflect.DeepEqual(it.Value, map[string]any{"w": 2.0}) {
		s.t.Errorf("replaced value = %v, want only w=2", it.Value)
	}
	if !it.CreatedAt.Equal(created) || !it.UpdatedAt.Equal(created.Add(time.Minute)) {
		s.t.Errorf("created %v updated %v, want %v and a minute later", it.CreatedAt, it.UpdatedAt, created)
	}
	// After a delete the key starts over.
	if err := s.s.Delete(s.ctx, ns("a"), "k"); err != nil {
		s.t.Fatal(err)
	}
	s.clock.Advance(time.Minute)
	s.put(ns("a"), "k", map[string]any{"w": 3})
	if it := s.get(ns("a"), "k"); !it.CreatedAt.Equal(s.clock.Now()) {
		s.t.Errorf("created after delete and put = %v, want %v", it.CreatedAt, s.clock.Now())
	}
}

func valueCopy(s *suite) {
	v := map[string]any{"list": []any{"x"}}
	s.put(ns("a"), "k", v)
	v["list"] = []any{"changed"}
	v["new"] = 1
	it := s.get(ns("a"), "k")
	if !reflect.DeepEqual(it.Value, map[string]any{"list": []any{"x"}}) {
		s.t.Errorf("the store saw a change to the map after Put: %v", it.Value)
	}
	it.Value["list"] = "mutated"
	if again := s.get(ns("a"), "k"); !reflect.DeepEqual(again.Value, map[string]any{"list": []any{"x"}}) {
		s.t.Errorf("changing a read value changed the store: %v", again.Value)
	}
}

func deleteCase(s *suite) {
	s.put(ns("a", "b"), "k", map[string]any{"v": 1})
	s.put(ns("a", "b"), "k2", map[string]any{"v": 2})
	if err := s.s.Delete(s.ctx, ns("a", "b"), "k"); err != nil {
		s.t.Fatal(err)
	}
	if it := s.get(ns("a", "b"), "k"); it != nil {
		s.t.Errorf("Get after Delete = %+v", it)
	}
	if it := s.get(ns("a", "b"), "k2"); it == nil {
		s.t.Error("Delete removed another key")
	}
	if err := s.s.Delete(s.ctx, ns("a", "b"), "missing"); err != nil {
		s.t.Errorf("Delete of a missing key: %v", err)
	}
	if err := s.s.Delete(s.ctx, ns("a", "b"), "k2"); err != nil {
		s.t.Fatal(err)
	}
	got, err := s.s.ListNamespaces(s.ctx, longterm.NamespaceQuery{})
	if err != nil || len(got) != 0 {
		s.t.Errorf("namespaces after deleting every item = %v, %v; want none", got, err)
	}
}

func wantInvalid(t *testing.T, what string, err error, mention string) {
	t.Helper()
	if !errors.Is(err, longterm.ErrInvalid) {
		t.Errorf("%s: error %v, want longterm.ErrInvalid", what, err)
		return
	}
	if !strings.Contains(err.Error(), mention) {
		t.Errorf("%s: error %q does not mention %q", what, err, mention)
	}
}

func validation(s *suite) {
	v := map[string]any{"a": 1}
	wantInvalid(s.t, "empty namespace", s.s.Put(s.ctx, nil, "k", v), "namespace is empty")
	wantInvalid(s.t, "empty label", s.s.Put(s.ctx, ns("a", ""), "k", v), "label 2 is empty")
	wantInvalid(s.t, "dot in label", s.s.Put(s.ctx, ns("a.b"), "k", v), `"a.b"`)
	wantInvalid(s.t, "langgraph root", s.s.Put(s.ctx, ns("langgraph", "x"), "k", v), "langgraph")
	wantInvalid(s.t, "wildcard label", s.s.Put(s.ctx, ns("a", "*"), "k", v), "wildcard")
	wantInvalid(s.t, "empty key", s.s.Put(s.ctx, ns("a"), "", v), "key is empty")
	wantInvalid(s.t, "nil value", s.s.Put(s.ctx, ns("a"), "k", nil), "value is nil")
	wantInvalid(s.t, "unencodable value", s.s.Put(s.ctx, ns("a"), "k", map[string]any{"f": func() {}}), "not JSON")
	if err := s.s.Put(s.ctx, ns("a"), "k", v, longterm.WithTTL(0)); err == nil || !strings.Contains(err.Error(), "TTL") {
		s.t.Errorf("zero TTL: error %v, want one naming the TTL", err)
	}
	_, err := s.s.Get(s.ctx, ns("a"), "")
	wantInvalid(s.t, "Get empty key", err, "key is empty")
	_, err = s.s.Get(s.ctx, nil, "k")
	wantInvalid(s.t, "Get empty namespace", err, "namespace is empty")
	wantInvalid(s.t, "Delete empty namespace", s.s.Delete(s.ctx, ns(), "k"), "namespace is empty")
	_, err = s.s.Search(s.ctx, longterm.SearchQuery{Prefix: ns("a", "")})
	wantInvalid(s.t, "search prefix", err, "label 2 is empty")
	_, err = s.s.Search(s.ctx, longterm.SearchQuery{Limit: -1})
	wantInvalid(s.t, "negative limit", err, "negative")
	_, err = s.s.ListNamespaces(s.ctx, longterm.NamespaceQuery{Prefix: ns("a.b")})
	wantInvalid(s.t, "namespace prefix", err, `"a.b"`)
	_, err = s.s.ListNamespaces(s.ctx, longterm.NamespaceQuery{MaxDepth: -1})
	wantInvalid(s.t, "negative depth", err, "negative")
	// Nothing was stored by the refused puts.
	if got, _ := s.s.ListNamespaces(s.ctx, longterm.NamespaceQuery{}); len(got) != 0 {
		s.t.Errorf("refused puts stored namespaces %v", got)
	}
}

func searchPrefixOrder(s *suite) {
	s.put(ns("docs", "a"), "1", map[string]any{"i": 1})
	s.clock.Advance(time.Second)
	s.put(ns("docs", "b"), "2", map[string]any{"i": 2})
	s.clock.Advance(time.Second)
	s.put(ns("docs"), "3", map[string]any{"i": 3})
	s.put(ns("docsx"), "4", map[string]any{"i": 4}) // same time as 3: ties by namespace
	s.put(ns("docs"), "0", map[string]any{"i": 0})  // and by key
	s.put(ns("other"), "5", map[string]any{"i": 5})
	s.wantKeys(longterm.SearchQuery{Prefix: ns("docs")}, "docs/0", "docs/3", "docs.b/2", "docs.a/1")
	s.wantKeys(longterm.SearchQuery{Prefix: ns("docs", "a")}, "docs.a/1")
	s.wantKeys(longterm.SearchQuery{Prefix: ns("docs", "a", "deeper")})
	s.wantKeys(longterm.SearchQuery{Prefix: ns("doc")})
	s.wantKeys(longterm.SearchQuery{}, "docs/0", "docs/3", "docsx/4", "other/5", "docs.b/2", "docs.a/1")
	// An update moves an item to the front.
	s.clock.Advance(time.Second)
	s.put(ns("docs", "a"), "1", map[string]any{"i": 10})
	s.wantKeys(longterm.SearchQuery{Prefix: ns("docs")}, "docs.a/1", "docs/0", "docs/3", "docs.b/2")
	items := s.search(longterm.SearchQuery{Prefix: ns("docs", "a")})
	if len(items) != 1 || items[0].Value["i"] != 10.0 || items[0].Score != nil || !items[0].UpdatedAt.Equal(s.clock.Now()) {
		s.t.Errorf("search item = %+v", items)
	}
}

func searchLimitOffset(s *suite) {
	for i := range 25 {
		s.put(ns("n"), fmt.Sprintf("k%02d", i), map[string]any{"i": i})
	}
	if got := s.search(longterm.SearchQuery{Prefix: ns("n")}); len(got) != longterm.DefaultSearchLimit {
		s.t.Errorf("default limit returned %d items, want %d", len(got), longterm.DefaultSearchLimit)
	}
	s.wantKeys(longterm.SearchQuery{Prefix: ns("n"), Limit: 3, Offset: 5}, "n/k05", "n/k06", "n/k07")
	s.wantKeys(longterm.SearchQuery{Prefix: ns("n"), Limit: 5, Offset: 23}, "n/k23", "n/k24")
	s.wantKeys(longterm.SearchQuery{Prefix: ns("n"), Offset: 30})
}

func filterOperators(s *suite) {
	p := ns("f")
	s.put(p, "a", map[string]any{"n": 1, "s": "apple", "b": true})
	s.put(p, "b", map[string]any{"n": 2.5, "s": "banana", "b": false})
	s.put(p, "c", map[string]any{"n": 10, "s": "cherry"})
	s.put(p, "d", map[string]any{"n": "10", "s": 3})
	q := func(f longterm.Filter, want ...string) {
		s.t.Helper()
		s.wantKeys(longterm.SearchQuery{Prefix: p, Filter: f, Limit: 100}, want...)
	}
	q(nil, "f/a", "f/b", "f/c", "f/d")
	q(longterm.Filter{"n": 1}, "f/a")
	q(longterm.Filter{"n": 10}, "f/c") // the string "10" is not the number 10
	q(longterm.Filter{"n": "10"}, "f/d")
	q(longterm.Filter{"n": map[string]any{"$eq": 2.5}}, "f/b")
	q(longterm.Filter{"n": map[string]any{"$ne": 1}}, "f/b", "f/c", "f/d")
	q(longterm.Filter{"n": map[string]any{"$gt": 1}}, "f/b", "f/c") // "10" is no number
	q(longterm.Filter{"n": map[string]any{"$gte": 1}}, "f/a", "f/b", "f/c")
	q(longterm.Filter{"n": map[string]any{"$lt": 10}}, "f/a", "f/b")
	q(longterm.Filter{"n": map[string]any{"$lte": 10}}, "f/a", "f/b", "f/c")
	q(longterm.Filter{"n": map[string]any{"$gt": 1, "$lt": 10}}, "f/b")
	q(longterm.Filter{"s": map[string]any{"$gt": "apple"}}, "f/b", "f/c")
	q(longterm.Filter{"s": map[string]any{"$lte": "banana"}}, "f/a", "f/b")
	q(longterm.Filter{"b": true}, "f/a")
	q(longterm.Filter{"b": false}, "f/b")
	q(longterm.Filter{"b": 1})                                                // true is not 1
	q(longterm.Filter{"b": map[string]any{"$ne": true}}, "f/b", "f/c", "f/d") // $ne matches a missing field
	q(longterm.Filter{"missing": map[string]any{"$gt": 0}})
	q(longterm.Filter{"n": 1, "s": "apple"}, "f/a")
	q(longterm.Filter{"n": 1, "s": "banana"})
}

func filterNested(s *suite) {
	p := ns("f")
	s.put(p, "a", map[string]any{"author": map[string]any{"name": "Ada", "age": 36}, "tags": []any{"x", "y"}, "z": nil})
	s.put(p, "b", map[string]any{"author": map[string]any{"name": "Alan", "age": 41}, "tags": []any{"y", "x"}})
	s.put(p, "c", map[string]any{"author": "Ada", "tags": []any{"x"}})
	q := func(f longterm.Filter, want ...string) {
		s.t.Helper()
		s.wantKeys(longterm.SearchQuery{Prefix: p, Filter: f, Limit: 100}, want...)
	}
	q(longterm.Filter{"author": map[string]any{"name": "Ada"}}, "f/a")
	q(longterm.Filter{"author": map[string]any{"age": map[string]any{"$gt": 40}}}, "f/b")
	q(longterm.Filter{"author": "Ada"}, "f/c")
	q(longterm.Filter{"tags": []any{"x", "y"}}, "f/a") // arrays compare whole, in order
	q(longterm.Filter{"tags": []string{"x"}}, "f/c")
	q(longterm.Filter{"z": nil}, "f/a") // null matches a present null, not a missing field
	q(longterm.Filter{"author": map[string]any{"name": "Ada", "age": 36}}, "f/a")
}

// Strings longer than a store may index whole compare in full.
func filterLongStrings(s *suite) {
	p := ns("f")
	long := strings.Repeat("m", 300)
	s.put(p, "long", map[string]any{"s": long})
	s.put(p, "longer", map[string]any{"s": long + "z"})
	s.put(p, "short", map[string]any{"s": "m"})
	s.put(p, "after", map[string]any{"s": "n"})
	q := func(f longterm.Filter, want ...string) {
		s.t.Helper()
		s.wantKeys(longterm.SearchQuery{Filter: f, Limit: 100}, want...)
	}
	q(longterm.Filter{"s": long}, "f/long")
	q(longterm.Filter{"s": long + "z"}, "f/longer")
	q(longterm.Filter{"s": map[string]any{"$gt": long}}, "f/after", "f/longer")
	q(longterm.Filter{"s": map[string]any{"$gte": long}}, "f/after", "f/long", "f/longer")
	q(longterm.Filter{"s": map[string]any{"$lt": long + "z"}}, "f/long", "f/short")
	q(longterm.Filter{"s": map[string]any{"$lte": long}}, "f/long", "f/short")
	q(longterm.Filter{"s": map[string]any{"$gte": "m", "$lt": "n"}}, "f/long", "f/longer", "f/short")
}

func filterErrors(s *suite) {
	s.put(ns("f"), "a", map[string]any{"n": 1})
	for _, c := range []struct {
		f    longterm.Filter
		want string
	}{
		{longterm.Filter{"n": map[string]any{"$in": []any{1}}}, `"$in"`},
		{longterm.Filter{"$gt": 1}, `"$gt"`},
		{longterm.Filter{"n": map[string]any{"$gt": true}}, "number or a string"},
		{longterm.Filter{"n": map[string]any{"$gt": 1, "x": 2}}, "mixes"},
		{longterm.Filter{"n": map[string]any{}}, "empty object"},
	} {
		_, err := s.s.Search(s.ctx, longterm.SearchQuery{Filter: c.f})
		wantInvalid(s.t, fmt.Sprintf("filter %v", c.f), err, c.want)
	}
}

func listNamespaces(s *suite) {
	for _, n := range []longterm.Namespace{
		ns("a", "b", "c"), ns("a", "b", "d"), ns("a", "x"), ns("b", "b", "c"), ns("a-b"), ns("a"),
	} {
		s.put(n, "k", map[string]any{"v": 1})
	}
	list := func(q longterm.NamespaceQuery, want ...string) {
		s.t.Helper()
		got, err := s.s.ListNamespaces(s.ctx, q)
		if err != nil {
			s.t.Fatalf("ListNamespaces(%+v): %v", q, err)
		}
		var gs []string
		for _, n := range got {
			gs = append(gs, n.String())
		}
		if !slices.Equal(gs, want) {
			s.t.Errorf("ListNamespaces(%+v) = %q, want %q", q, gs, want)
		}
	}
	// Sorted label by label: "a" and its children before "a-b".
	list(longterm.NamespaceQuery{}, "a", "a.b.c", "a.b.d", "a.x", "a-b", "b.b.c")
	list(longterm.NamespaceQuery{Prefix: ns("a")}, "a", "a.b.c", "a.b.d", "a.x")
	list(longterm.NamespaceQuery{Prefix: ns("a", "b")}, "a.b.c", "a.b.d")
	list(longterm.NamespaceQuery{Prefix: ns("*", "b")}, "a.b.c", "a.b.d", "b.b.c")
	list(longterm.NamespaceQuery{Suffix: ns("c")}, "a.b.c", "b.b.c")
	list(longterm.NamespaceQuery{Suffix: ns("b", "*")}, "a.b.c", "a.b.d", "b.b.c")
	list(longterm.NamespaceQuery{Prefix: ns("a"), Suffix: ns("d")}, "a.b.d")
	list(longterm.NamespaceQuery{MaxDepth: 2}, "a", "a.b", "a.x", "a-b", "b.b")
	list(longterm.NamespaceQuery{MaxDepth: 1}, "a", "a-b", "b")
	list(longterm.NamespaceQuery{Limit: 2, Offset: 1}, "a.b.c", "a.b.d")
	list(longterm.NamespaceQuery{Offset: 10})
	list(longterm.NamespaceQuery{Prefix: ns("a", "b", "c", "d")})
}

func ttl(s *suite) {
	s.put(ns("t"), "k", map[string]any{"v": 1}, longterm.WithTTL(10*time.Minute))
	s.put(ns("t"), "forever", map[string]any{"v": 2})
	it := s.get(ns("t"), "k", longterm.NoRefresh())
	if it == nil || it.TTL != 10*time.Minute || !it.ExpiresAt.Equal(s.clock.Now().Add(10*time.Minute)) {
		s.t.Fatalf("item with TTL = %+v, want TTL 10m expiring in 10m", it)
	}
	s.clock.Advance(8 * time.Minute)
	// A read without refresh leaves the expiry.
	s.get(ns("t"), "k", longterm.NoRefresh())
	s.clock.Advance(time.Minute)
	// A read refreshes: the item now lives 10 minutes from here.
	if it := s.get(ns("t"), "k"); it == nil || !it.ExpiresAt.Equal(s.clock.Now().Add(10*time.Minute)) {
		s.t.Fatalf("refreshing read = %+v, want expiry %v", it, s.clock.Now().Add(10*time.Minute))
	}
	s.clock.Advance(9 * time.Minute)
	if it := s.get(ns("t"), "k", longterm.NoRefresh()); it == nil {
		s.t.Fatal("item expired although a read refreshed it 9 minutes ago")
	}
	s.clock.Advance(time.Minute)
	if it := s.get(ns("t"), "k"); it != nil {
		s.t.Errorf("item read at its expiry: %+v, want nil", it)
	}
	s.wantKeys(longterm.SearchQuery{Prefix: ns("t")}, "t/forever")
	got, _ := s.s.ListNamespaces(s.ctx, longterm.NamespaceQuery{})
	if len(got) != 1 {
		s.t.Errorf("namespaces = %v, want t (the item without TTL)", got)
	}
	s.clock.Advance(1000 * time.Hour)
	if s.get(ns("t"), "forever") == nil {
		s.t.Error("item without TTL expired")
	}
	// A put over an expired item starts it over; a put without TTL
	// removes an item's TTL.
	s.put(ns("t"), "k", map[string]any{"v": 3}, longterm.WithTTL(time.Minute))
	if it := s.get(ns("t"), "k"); it == nil || !it.CreatedAt.Equal(s.clock.Now()) {
		s.t.Errorf("put over an expired item = %+v, want created now", it)
	}
	s.put(ns("t"), "k", map[string]any{"v": 4})
	s.clock.Advance(time.Hour)
	if it := s.get(ns("t"), "k"); it == nil || it.TTL != 0 || !it.ExpiresAt.IsZero() {
		s.t.Errorf("put without TTL kept the old TTL: %+v", it)
	}
	// Only an expired namespace: gone from the list.
	s.put(ns("gone"), "k", map[string]any{"v": 1}, longterm.WithTTL(time.Minute))
	s.clock.Advance(2 * time.Minute)
	got, _ = s.s.ListNamespaces(s.ctx, longterm.NamespaceQuery{Prefix: ns("gone")})
	if len(got) != 0 {
		s.t.Errorf("namespace of expired items listed: %v", got)
	}
}

func ttlSearch(s *suite) {
	s.put(ns("t"), "a", map[string]any{"v": 1}, longterm.WithTTL(10*time.Minute))
	s.put(ns("t"), "b", map[string]any{"v": 2}, longterm.WithTTL(10*time.Minute))
	s.clock.Advance(9 * time.Minute)
	// Only a is returned, so only a is refreshed.
	s.wantKeys(longterm.SearchQuery{Prefix: ns("t"), Filter: longterm.Filter{"v": 1}}, "t/a")
	s.wantKeys(longterm.SearchQuery{Prefix: ns("t"), Filter: longterm.Filter{"v": 2}, NoRefresh: true}, "t/b")
	s.clock.Advance(2 * time.Minute)
	s.wantKeys(longterm.SearchQuery{Prefix: ns("t")}, "t/a")
}

func sweep(s *suite) {
	sw, ok := s.s.(longterm.Sweeper)
	if !ok {
		s.t.Skip("the store does not implement longterm.Sweeper")
	}
	s.put(ns("t"), "a", map[string]any{"v": 1}, longterm.WithTTL(time.Minute))
	s.put(ns("t"), "b", map[string]any{"v": 2}, longterm.WithTTL(time.Hour))
	s.put(ns("t"), "c", map[string]any{"v": 3})
	s.clock.Advance(2 * time.Minute)
	n, err := sw.Sweep(s.ctx)
	if err != nil || n != 1 {
		s.t.Errorf("Sweep = %d, %v; want 1 (only a expired)", n, err)
	}
	if n, _ := sw.Sweep(s.ctx); n != 0 {
		s.t.Errorf("second Sweep removed %d", n)
	}
	s.wantKeys(longterm.SearchQuery{Prefix: ns("t")}, "t/b", "t/c")
}

func semanticSearch(s *suite) {
	p := ns("mem")
	s.put(p, "tea", map[string]any{"text": "the user likes green tea in the morning"})
	s.put(p, "code", map[string]any{"text": "the user writes Go code at night"})
	s.put(p, "cat", map[string]any{"text": "the user has a cat named Tom", "kind": "pet"})
	s.put(ns("other"), "tea2", map[string]any{"text": "green tea"})
	items := s.search(longterm.SearchQuery{Prefix: p, Query: "green tea"})
	if got := keys(items); len(got) != 3 || got[0] != "mem/tea" {
		s.t.Fatalf("semantic search order = %q, want mem/tea first of 3", got)
	}
	for i, it := range items {
		if it.Score == nil {
			s.t.Fatalf("item %d has no score", i)
		}
		if i > 0 && *it.Score > *items[i-1].Score {
			s.t.Errorf("scores not descending: %v then %v", *items[i-1].Score, *it.Score)
		}
	}
	if *items[0].Score <= 0 || *items[0].Score > 1.000001 {
		s.t.Errorf("best score %v, want in (0, 1]", *items[0].Score)
	}
	s.wantKeys(longterm.SearchQuery{Prefix: p, Query: "cat named tom", Limit: 1}, "mem/cat")
	s.wantKeys(longterm.SearchQuery{Prefix: p, Query: "green tea", Filter: longterm.Filter{"kind": "pet"}}, "mem/cat")
	s.wantKeys(longterm.SearchQuery{Prefix: p, Query: "go code night", Limit: 1, Offset: 0}, "mem/code")
	if got := keys(s.search(longterm.SearchQuery{Prefix: p, Query: "green tea", Offset: 1})); len(got) != 2 || slices.Contains(got, "mem/tea") {
		s.t.Errorf("offset 1 = %q, want the two after mem/tea", got)
	}
	// A replaced value is embedded again.
	s.put(p, "code", map[string]any{"text": "green tea with green tea leaves"})
	s.wantKeys(longterm.SearchQuery{Prefix: p, Query: "green tea leaves", Limit: 1}, "mem/code")
	// A deleted item takes its vectors with it.
	if err := s.s.Delete(s.ctx, p, "code"); err != nil {
		s.t.Fatal(err)
	}
	if got := keys(s.search(longterm.SearchQuery{Prefix: p, Query: "green tea leaves"})); slices.Contains(got, "mem/code") {
		s.t.Errorf("deleted item found by a query: %q", got)
	}
}

func semanticFields(s *suite) {
	p := ns("mem")
	// Per-item fields, arrays one text per element (max pooling).
	s.put(p, "multi", map[string]any{"title": "weather", "notes": []any{"rain tomorrow", "the user likes jazz music"}}, longterm.IndexFields("notes"))
	s.put(p, "title", map[string]any{"title": "jazz music", "notes": []any{"nothing"}}, longterm.IndexFields("title"))
	s.put(p, "none", map[string]any{"title": "jazz music"}, longterm.NoIndex())
	s.put(p, "missing", map[string]any{"other": "jazz"}, longterm.IndexFields("title"))
	items := s.search(longterm.SearchQuery{Prefix: p, Query: "jazz music"})
	got := keys(items)
	if len(got) != 2 || !slices.Contains(got, "mem/multi") || !slices.Contains(got, "mem/title") {
		s.t.Errorf("query over fields = %q, want mem/multi and mem/title (none unindexed, missing has no field)", got)
	}
	for _, it := range items {
		if it.Key == "multi" && *it.Score < 0.5 {
			s.t.Errorf("multi scored %v: its best element should count", *it.Score)
		}
	}
	// Unindexed items still show without a query.
	s.wantKeys(longterm.SearchQuery{Prefix: p, Filter: longterm.Filter{"title": "jazz music"}}, "mem/none", "mem/title")
}

func queryWithoutEmbedder(s *suite) {
	s.put(ns("a"), "k", map[string]any{"text": "x"})
	_, err := s.s.Search(s.ctx, longterm.SearchQuery{Query: "x"})
	if !errors.Is(err, longterm.ErrNoEmbedder) {
		s.t.Errorf("query without embedder: %v, want longterm.ErrNoEmbedder", err)
	}
}

func concurrent(s *suite) {
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				n := ns("c", fmt.Sprint(w))
				if err := s.s.Put(s.ctx, n, fmt.Sprint(i), map[string]any{"i": i}); err != nil {
					errs <- err
					return
				}
				if _, err := s.s.Get(s.ctx, n, fmt.Sprint(i)); err != nil {
					errs <- err
					return
				}
				if _, err := s.s.Search(s.ctx, longterm.SearchQuery{Prefix: n, Limit: 1}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		s.t.Error(err)
	}
	items := s.search(longterm.SearchQuery{Prefix: ns("c"), Limit: 1000})
	if len(items) != 100 {
		s.t.Errorf("after concurrent puts: %d items, want 100", len(items))
	}
}
