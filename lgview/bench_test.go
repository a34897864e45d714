package lgview

import (
	"context"
	"os"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/langgraph"
)

// BenchmarkBigStoreTimeline opens the longest thread ("long") of a large
// LangGraph store (WEFT_LG_BENCH_STORE, as langgraph's BenchmarkBigStore
// reads it) as the studio's timeline does, on a view that has read
// nothing yet: its headers a page at a time (2,000, then twice as many
// each page), then LangGraph's state at its head. Skipped without the
// variable: the store is too big for the repository.
//
//	WEFT_LG_BENCH_STORE=/tmp/bench.sqlite go test ./lgview -run '^$' -bench BigStoreTimeline -benchtime 3x -benchmem
func BenchmarkBigStoreTimeline(b *testing.B) {
	ctx := context.Background()
	r := benchReader(b)
	root := ""
	for b.Loop() {
		s, err := Open(ctx, r, Options{Sample: -1})
		if err != nil {
			b.Fatal(err)
		}
		hl := s.Saver().(checkpoint.HeaderLister)
		n, before := 0, ""
		for limit := 2000; ; limit = min(limit*2, 32000) {
			hs, err := hl.ListHeaders(ctx, checkpoint.ListOptions{ThreadID: "long", NS: &root, Limit: limit, Before: before})
			if err != nil {
				b.Fatal(err)
			}
			n += len(hs)
			if len(hs) < limit {
				break
			}
			before = hs[len(hs)-1].Ref.CheckpointID
		}
		if _, err := s.State(ctx, checkpoint.Ref{ThreadID: "long"}, true); err != nil {
			b.Fatal(err)
		}
		if n < 10000 {
			b.Fatalf("%d headers", n)
		}
		s.Close()
	}
}

// BenchmarkBigStoreClick is a click on a checkpoint of that thread once
// its timeline is open: LangGraph's state at a checkpoint halfway down,
// from the thread the view keeps (its first read is BigStoreTimeline's).
//
//	WEFT_LG_BENCH_STORE=/tmp/bench.sqlite go test ./lgview -run '^$' -bench BigStoreClick -benchmem
func BenchmarkBigStoreClick(b *testing.B) {
	ctx := context.Background()
	r := benchReader(b)
	s, err := Open(ctx, r, Options{Sample: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	root := ""
	hs, err := s.Saver().(checkpoint.HeaderLister).ListHeaders(ctx, checkpoint.ListOptions{ThreadID: "long", NS: &root})
	if err != nil || len(hs) < 10000 {
		b.Fatal(len(hs), err)
	}
	mid := hs[len(hs)/2].Ref
	for b.Loop() {
		st, err := s.State(ctx, mid, true)
		if err != nil || st.Ref.CheckpointID != mid.CheckpointID {
			b.Fatal(err)
		}
	}
}

// benchReader opens the big store WEFT_LG_BENCH_STORE names, closed when
// the benchmark ends; without it the benchmark is skipped.
func benchReader(b *testing.B) *langgraph.Reader {
	b.Helper()
	where := os.Getenv("WEFT_LG_BENCH_STORE")
	if where == "" {
		b.Skip("WEFT_LG_BENCH_STORE names no store (see checkpoint/langgraph/testdata/make-bench.mjs)")
	}
	r, err := langgraph.OpenSQLite(context.Background(), where)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Close() })
	return r
}
