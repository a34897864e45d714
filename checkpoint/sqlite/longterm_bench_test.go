package sqlite_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/weftstudio/weft/checkpoint/longterm"
)

func benchLongTerm(b *testing.B) *longtermStore {
	lt, err := openTemp(b).LongTerm(longterm.Config{})
	if err != nil {
		b.Fatal(err)
	}
	return &longtermStore{lt}
}

type longtermStore struct{ longterm.Store }

func benchValue(i int) map[string]any {
	return map[string]any{"kind": fmt.Sprintf("k%d", i%10), "n": i, "text": "the user prefers short answers and green tea"}
}

// BenchmarkLongTermPut: one Put of a small document, committed.
func BenchmarkLongTermPut(b *testing.B) {
	s := benchLongTerm(b)
	ctx := context.Background()
	ns := longterm.Namespace{"users", "u1", "memories"}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := s.Put(ctx, ns, fmt.Sprintf("k%d", i%1000), benchValue(i)); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkLongTermGet: one Get of a small document among 1,000.
func BenchmarkLongTermGet(b *testing.B) {
	s := benchLongTerm(b)
	ctx := context.Background()
	ns := longterm.Namespace{"users", "u1", "memories"}
	for i := range 1000 {
		if err := s.Put(ctx, ns, fmt.Sprintf("k%d", i), benchValue(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		it, err := s.Get(ctx, ns, fmt.Sprintf("k%d", i%1000))
		if err != nil || it == nil {
			b.Fatal(it, err)
		}
		i++
	}
}

// BenchmarkLongTermSearch100k: a filtered search over 100,000 items in 100
// namespaces under one prefix, first page of 10.
func BenchmarkLongTermSearch100k(b *testing.B) {
	s := benchLongTerm(b)
	ctx := context.Background()
	for i := range 100_000 {
		if err := s.Put(ctx, longterm.Namespace{"users", fmt.Sprintf("u%d", i%100)}, fmt.Sprintf("k%d", i), benchValue(i)); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name   string
		prefix longterm.Namespace
		filter longterm.Filter
		want   int
	}{
		{"common", longterm.Namespace{"users"}, longterm.Filter{"kind": "k3"}, 10},
		{"range", longterm.Namespace{"users"}, longterm.Filter{"kind": "k3", "n": map[string]any{"$lt": 50_000}}, 10},
		{"rare", longterm.Namespace{"users"}, longterm.Filter{"n": map[string]any{"$gte": 99_995}}, 5},
		{"none", longterm.Namespace{"users"}, longterm.Filter{"kind": "k99"}, 0},
		{"one_namespace", longterm.Namespace{"users", "u7"}, longterm.Filter{"kind": "k7", "n": map[string]any{"$lt": 500}}, 5},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				items, err := s.Search(ctx, longterm.SearchQuery{Prefix: c.prefix, Filter: c.filter})
				if err != nil || len(items) != c.want {
					b.Fatalf("%d items, %v; want %d", len(items), err, c.want)
				}
			}
		})
	}
}

// BenchmarkLongTermVectorSearch10k: a semantic search (exact cosine over
// every candidate's vector, 256 dimensions, HashEmbedder) over 10,000
// items of one prefix, first page of 10; with a filter too.
func BenchmarkLongTermVectorSearch10k(b *testing.B) {
	lt, err := openTemp(b).LongTerm(longterm.Config{Embedder: longterm.HashEmbedder{Dims: 256}, Fields: []string{"text"}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	words := []string{"tea", "kelp", "tide", "green", "short", "answers", "crab", "pool", "rock", "shell"}
	for i := range 10_000 {
		v := benchValue(i)
		v["text"] = fmt.Sprintf("the user likes %s and %s, note %d", words[i%10], words[(i/10)%10], i)
		if err := lt.Put(ctx, longterm.Namespace{"users", fmt.Sprintf("u%d", i%10)}, fmt.Sprintf("k%d", i), v); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name   string
		filter longterm.Filter
	}{{"all", nil}, {"filtered", longterm.Filter{"kind": "k3"}}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				items, err := lt.Search(ctx, longterm.SearchQuery{Prefix: longterm.Namespace{"users"}, Query: "green tea", Filter: c.filter})
				if err != nil || len(items) != 10 || items[0].Score == nil {
					b.Fatal(len(items), err)
				}
			}
		})
	}
}
