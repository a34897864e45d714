package longtermtest

import (
	"errors"
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/weftstudio/weft/checkpoint/longterm"
)

func (s *suite) history() longterm.History {
	s.t.Helper()
	h, ok := s.s.(longterm.History)
	if !ok {
		s.t.Fatalf("%T does not implement longterm.History", s.s)
	}
	return h
}

func (s *suite) changes(q longterm.ChangeQuery) []longterm.Change {
	s.t.Helper()
	cs, err := s.history().Changes(s.ctx, q)
	if err != nil {
		s.t.Fatalf("Changes(%+v): %v", q, err)
	}
	return cs
}

// changeKeys lists "ns/key=v" (or "ns/key deleted") of changes, in order.
func changeKeys(cs []longterm.Change) []string {
	out := []string{}
	for _, c := range cs {
		k := c.Namespace.String() + "/" + c.Key
		if c.Deleted() {
			out = append(out, k+" deleted")
		} else {
			out = append(out, k+"="+fmtValue(c.Value["v"]))
		}
	}
	return out
}

func fmtValue(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return "?"
}

func historyWriters(s *suite) {
	w := longterm.Writer{ThreadID: "t-1", NS: "node:abc", CheckpointID: "cp-7", Step: 3, TaskID: "task-9", Node: "remember"}
	began, err := s.history().HistoryBegan(s.ctx)
	if err != nil || !began.IsZero() {
		s.t.Fatalf("HistoryBegan = %v, %v; want the zero time for a store made with its history", began, err)
	}
	s.put(ns("users", "u1"), "a", map[string]any{"v": 1})
	s.clock.Advance(time.Second)
	wctx := longterm.WithWriter(s.ctx, w)
	if err := s.s.Put(wctx, ns("users", "u1"), "b", map[string]any{"v": 2}, longterm.WithTTL(time.Hour)); err != nil {
		s.t.Fatal(err)
	}
	if it := s.get(ns("users", "u1"), "a"); it == nil || !it.Writer.IsZero() {
		s.t.Errorf("Get(a) = %+v: want an item with the zero Writer (put outside a run)", it)
	}
	if it := s.get(ns("users", "u1"), "b"); it == nil || it.Writer != w {
		s.t.Errorf("Get(b) = %+v: want Writer %+v", it, w)
	}
	found := s.search(longterm.SearchQuery{Prefix: ns("users")})
	if len(found) != 2 || found[0].Key != "b" || found[0].Writer != w || !found[1].Writer.IsZero() {
		s.t.Errorf("Search = %+v: want b (by %+v) then a (by nobody)", found, w)
	}
	s.clock.Advance(time.Second)
	w2 := w
	w2.TaskID, w2.Step = "task-10", 4
	if err := s.s.Delete(longterm.WithWriter(s.ctx, w2), ns("users", "u1"), "a"); err != nil {
		s.t.Fatal(err)
	}
	if err := s.s.Delete(s.ctx, ns("users", "u1"), "never-there"); err != nil {
		s.t.Fatal(err)
	}
	cs := s.changes(longterm.ChangeQuery{})
	if got, want := changeKeys(cs), []string{"users.u1/a deleted", "users.u1/b=2", "users.u1/a=1"}; !slices.Equal(got, want) {
		s.t.Fatalf("Changes = %q, want %q (newest first; deleting a missing item is no change)", got, want)
	}
	if !(cs[0].Seq > cs[1].Seq && cs[1].Seq > cs[2].Seq) {
		s.t.Errorf("Seq = %d, %d, %d: want them decreasing, newest first", cs[0].Seq, cs[1].Seq, cs[2].Seq)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, want := range []struct {
		at  time.Time
		w   longterm.Writer
		ttl time.Duration
	}{{t0.Add(2 * time.Second), w2, 0}, {t0.Add(time.Second), w, time.Hour}, {t0, longterm.Writer{}, 0}} {
		if c := cs[i]; !c.At.Equal(want.at) || c.Writer != want.w || c.TTL != want.ttl {
			s.t.Errorf("change %d = at %v by %+v ttl %v; want at %v by %+v ttl %v", i, c.At, c.Writer, c.TTL, want.at, want.w, want.ttl)
		}
	}
	if !reflect.DeepEqual(cs[1].Value, map[string]any{"v": 2.0}) {
		s.t.Errorf("change of b has value %v", cs[1].Value)
	}
	if got := changeKeys(s.changes(longterm.ChangeQuery{Prefix: ns("users", "u1"), Key: "a"})); !slices.Equal(got, []string{"users.u1/a deleted", "users.u1/a=1"}) {
		s.t.Errorf("Changes of a = %q", got)
	}
	if got := changeKeys(s.changes(longterm.ChangeQuery{Limit: 1})); !slices.Equal(got, []string{"users.u1/a deleted"}) {
		s.t.Errorf("Changes limit 1 = %q", got)
	}
	if _, err := s.history().Changes(s.ctx, longterm.ChangeQuery{Key: "a"}); err == nil {
		s.t.Error("Changes of a key without its namespace: want an error")
	}
}

func historyItemsAt(s *suite) {
	h := s.history()
	t0 := s.clock.Now()
	s.put(ns("m", "x"), "a", map[string]any{"v": 1})
	s.put(ns("other"), "z", map[string]any{"v": 9})
	s.clock.Advance(time.Minute)
	t1 := s.clock.Now()
	s.put(ns("m", "x"), "a", map[string]any{"v": 2})
	s.put(ns("m", "y"), "b", map[string]any{"v": 3}, longterm.WithTTL(90*time.Second))
	s.clock.Advance(time.Minute)
	t2 := s.clock.Now()
	if err := s.s.Delete(s.ctx, ns("m", "x"), "a"); err != nil {
		s.t.Fatal(err)
	}
	s.clock.Advance(time.Minute)
	t3 := s.clock.Now()
	at := func(t time.Time, prefix longterm.Namespace) []string {
		s.t.Helper()
		items, err := longterm.SearchAt(s.ctx, h, longterm.SearchQuery{Prefix: prefix}, t)
		if err != nil {
			s.t.Fatal(err)
		}
		out := []string{}
		for _, it := range items {
			out = append(out, it.Namespace.String()+"/"+it.Key+"="+fmtValue(it.Value["v"]))
		}
		return out
	}
	for _, c := range []struct {
		name   string
		t      time.Time
		prefix longterm.Namespace
		want   []string
	}{
		{"before anything", t0.Add(-time.Second), nil, []string{}},
		{"first puts", t0, ns("m"), []string{"m.x/a=1"}},
		{"first puts, every namespace", t0.Add(30 * time.Second), nil, []string{"other/z=9", "m.x/a=1"}},
		{"a replaced, b put", t1, ns("m"), []string{"m.y/b=3", "m.x/a=2"}},
		{"a deleted", t2, ns("m"), []string{"m.y/b=3"}},
		{"b's TTL ran out", t3, ns("m"), []string{}},
	} {
		if got := at(c.t, c.prefix); !slices.Equal(got, c.want) {
			s.t.Errorf("%s: items at %v under %q = %q, want %q", c.name, c.t, c.prefix, got, c.want)
		}
	}
	if got := changeKeys(s.changes(longterm.ChangeQuery{Prefix: ns("m"), Until: t2, Latest: true})); !slices.Equal(got, []string{"m.x/a deleted", "m.y/b=3"}) {
		s.t.Errorf("latest changes under m until t2 = %q, want a's delete then b", got)
	}
	// A filter and a page, as Search takes them, on the past.
	for _, c := range []struct {
		name string
		q    longterm.SearchQuery
		want []string
	}{
		{"filter", longterm.SearchQuery{Filter: longterm.Filter{"v": map[string]any{"$gte": 2}}}, []string{"m.y/b=3", "m.x/a=2", "other/z=9"}},
		{"filter and limit", longterm.SearchQuery{Filter: longterm.Filter{"v": map[string]any{"$gte": 2}}, Limit: 2}, []string{"m.y/b=3", "m.x/a=2"}},
		{"filter leaves one out", longterm.SearchQuery{Filter: longterm.Filter{"v": map[string]any{"$lt": 3}}}, []string{"m.x/a=2"}},
		{"offset", longterm.SearchQuery{Offset: 2}, []string{"other/z=9"}},
		{"offset past the end", longterm.SearchQuery{Offset: 5}, []string{}},
	} {
		items, err := longterm.SearchAt(s.ctx, h, c.q, t1)
		if err != nil {
			s.t.Fatal(err)
		}
		got := []string{}
		for _, it := range items {
			got = append(got, it.Namespace.String()+"/"+it.Key+"="+fmtValue(it.Value["v"]))
		}
		if !slices.Equal(got, c.want) {
			s.t.Errorf("%s: search at t1 = %q, want %q", c.name, got, c.want)
		}
	}
	if _, err := longterm.SearchAt(s.ctx, h, longterm.SearchQuery{Query: "tea"}, t1); !errors.Is(err, longterm.ErrInvalid) {
		s.t.Errorf("a semantic search at a past time: %v, want ErrInvalid", err)
	}
}

func historyTrim(s *suite) {
	n := longterm.HistoryPerItem + 7
	for i := range n {
		s.put(ns("h"), "a", map[string]any{"v": i})
		s.clock.Advance(time.Millisecond)
	}
	s.put(ns("h"), "b", map[string]any{"v": 1})
	cs := s.changes(longterm.ChangeQuery{Prefix: ns("h"), Key: "a", Limit: 1000})
	if len(cs) != longterm.HistoryPerItem || cs[0].Value["v"] != float64(n-1) || cs[len(cs)-1].Value["v"] != float64(n-longterm.HistoryPerItem) {
		s.t.Fatalf("after %d puts, a has %d changes (newest %v, oldest %v); want the newest %d", n, len(cs), cs[0].Value, cs[len(cs)-1].Value, longterm.HistoryPerItem)
	}
	if got := changeKeys(s.changes(longterm.ChangeQuery{Prefix: ns("h"), Key: "b"})); !slices.Equal(got, []string{"h/b=1"}) {
		s.t.Errorf("b's history = %q", got)
	}
}
