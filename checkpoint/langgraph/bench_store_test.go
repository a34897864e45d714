package langgraph

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
)

// BenchmarkBigStore reads a large LangGraph store (WEFT_LG_BENCH_STORE: a
// SqliteSaver file, as testdata/make-bench.mjs writes it, or a postgres://
// DSN) as the commands and the studio do: the thread list, the whole
// timeline of its longest thread ("long"), one checkpoint of it (Get) and
// LangGraph's state there (which reads the thread), and the storage
// summary. Without the variable it is skipped: the store is too big for
// the repository.
//
//	WEFT_LG_BENCH_STORE=/tmp/bench.sqlite go test ./checkpoint/langgraph -run '^$' -bench BigStore -benchtime 3x
func BenchmarkBigStore(b *testing.B) {
	where := os.Getenv("WEFT_LG_BENCH_STORE")
	if where == "" {
		b.Skip("WEFT_LG_BENCH_STORE names no store (see testdata/make-bench.mjs)")
	}
	ctx := context.Background()
	var r *Reader
	var err error
	if strings.HasPrefix(where, "postgres://") || strings.HasPrefix(where, "postgresql://") {
		r, err = OpenPostgres(ctx, where)
	} else {
		r, err = OpenSQLite(ctx, where)
	}
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	th, err := r.ReadThread(ctx, "long")
	if err != nil {
		b.Fatal(err)
	}
	mid := th.Checkpoints[len(th.Checkpoints)/2].ID
	b.Logf("%s: thread long has %d checkpoints", r.Kind(), len(th.Checkpoints))

	b.Run("threads", func(b *testing.B) {
		for b.Loop() {
			ts, err := r.ListThreads(ctx, 0)
			if err != nil || len(ts) < 2 {
				b.Fatal(len(ts), err)
			}
		}
	})
	b.Run("timeline", func(b *testing.B) {
		for b.Loop() {
			t, err := r.ReadThread(ctx, "long")
			if err != nil {
				b.Fatal(err)
			}
			if h := t.History(r.Kind().JS()); len(h) != len(th.Checkpoints) {
				b.Fatalf("%d snapshots", len(h))
			}
		}
	})
	b.Run("get", func(b *testing.B) {
		for b.Loop() {
			if _, err := r.Get(ctx, checkpoint.Ref{ThreadID: "long", CheckpointID: mid}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("state-at", func(b *testing.B) {
		for b.Loop() {
			t, err := r.ReadThread(ctx, "long")
			if err != nil {
				b.Fatal(err)
			}
			if _, err := t.StateAt(mid, r.Kind().JS()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("storage", func(b *testing.B) {
		for b.Loop() {
			if _, err := r.StorageReport(ctx, checkpoint.StorageOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
