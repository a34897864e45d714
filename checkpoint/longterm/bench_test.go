package longterm_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/weftstudio/weft/checkpoint/longterm"
)

// BenchmarkMemorySearch100k: a filtered search over 100,000 items in 100
// namespaces under one prefix, first page of 10.
func BenchmarkMemorySearch100k(b *testing.B) {
	s := longterm.NewMemory(longterm.Config{})
	ctx := context.Background()
	for i := range 100_000 {
		v := map[string]any{"kind": fmt.Sprintf("k%d", i%10), "n": i, "text": "the user prefers short answers and green tea"}
		if err := s.Put(ctx, longterm.Namespace{"users", fmt.Sprintf("u%d", i%100)}, fmt.Sprintf("k%d", i), v); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name   string
		filter longterm.Filter
		want   int
	}{
		{"common", longterm.Filter{"kind": "k3"}, 10},
		{"range", longterm.Filter{"kind": "k3", "n": map[string]any{"$lt": 50_000}}, 10},
		{"none", longterm.Filter{"kind": "k99"}, 0},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				items, err := s.Search(ctx, longterm.SearchQuery{Prefix: longterm.Namespace{"users"}, Filter: c.filter})
				if err != nil || len(items) != c.want {
					b.Fatalf("%d items, %v; want %d", len(items), err, c.want)
				}
			}
		})
	}
}
