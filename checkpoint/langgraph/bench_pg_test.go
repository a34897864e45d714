package langgraph

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/weftstudio/weft/checkpoint"
)

// longThread adds to the PostgresSaver database at dsn a thread "long" of
// n checkpoints in the layout of Python's (python) or LangGraph.js' saver:
// each step increments "n" and sets "log" to a new line of about 200 bytes
// (a new blob per step), with one write per checkpoint.
func longThread(tb testing.TB, dsn string, python bool, n int) {
	tb.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(ctx)
	ver := func(i int) any {
		if python {
			return fmt.Sprintf("%032d.0.%d", i, 1000+i)
		}
		return i
	}
	verText := func(i int) string { return fmt.Sprint(ver(i)) }
	enc := func(v any) (string, []byte) {
		if python {
			b, err := msgpack.Marshal(v)
			if err != nil {
				tb.Fatal(err)
			}
			return "msgpack", b
		}
		b, _ := json.Marshal(v)
		return "json", b
	}
	var cps, blobs, writes [][]any
	parent := any(nil)
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("1f1ee0c0-%04x-6%03x-8000-000000000000", i>>12, i&0xfff)
		log := []string{fmt.Sprintf("step %d: ", i) + strings.Repeat(strconv.Itoa(i%10), 200)}
		body := map[string]any{"v": 4, "id": id, "ts": "2026-12-02T04:57:11.840231+00:00",
			"channel_versions": map[string]any{"n": ver(i), "log": ver(i)},
			"versions_seen":    map[string]any{"step": map[string]any{"n": ver(i - 1)}}}
		if python {
			body["channel_values"] = map[string]any{"n": i}
		} else {
			typ, b := enc(i)
			blobs = append(blobs, []any{"long", "", "n", verText(i), typ, b})
		}
		typ, b := enc(log)
		blobs = append(blobs, []any{"long", "", "log", verText(i), typ, b})
		cpJSON, _ := json.Marshal(body)
		meta, _ := json.Marshal(map[string]any{"source": "loop", "step": i, "parents": map[string]any{}})
		cps = append(cps, []any{"long", "", id, parent, string(cpJSON), string(meta)})
		wtyp, wb := enc(i + 1)
		w := []any{"long", "", id, "task-" + strconv.Itoa(i), 0, "n", wtyp, wb}
		if python {
			w = append(w, "~__pregel_pull, step")
		}
		writes = append(writes, w)
		parent = id
	}
	wcols := []string{"thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx", "channel", "type", "blob"}
	if python {
		wcols = append(wcols, "task_path")
	}
	for _, c := range []struct {
		table string
		cols  []string
		rows  [][]any
	}{
		{"checkpoints", []string{"thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "checkpoint", "metadata"}, cps},
		{"checkpoint_blobs", []string{"thread_id", "checkpoint_ns", "channel", "version", "type", "blob"}, blobs},
		{"checkpoint_writes", wcols, writes},
	} {
		if _, err := conn.CopyFrom(ctx, pgx.Identifier{c.table}, c.cols, pgx.CopyFromRows(c.rows)); err != nil {
			tb.Fatalf("%s: %v", c.table, err)
		}
	}
	if _, err := conn.Exec(ctx, "ANALYZE"); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkPostgresGet reads one checkpoint of a thread of many (2,000, or
// WEFT_LG_BENCH_CHECKPOINTS) as Get does now (the checkpoint and its
// parent) and as it did (the whole thread).
//
//	eval "$(bash scripts/pg-test-server.sh start)"
//	go test ./checkpoint/langgraph -run '^$' -bench PostgresGet -benchtime 20x
func BenchmarkPostgresGet(b *testing.B) {
	n := 2000
	if s := os.Getenv("WEFT_LG_BENCH_CHECKPOINTS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatalf("WEFT_LG_BENCH_CHECKPOINTS=%q: %v", s, err)
		}
	}
	ctx := context.Background()
	for _, name := range []string{"py-postgres", "js-postgres"} {
		dsn := restoreDump(b, name)
		longThread(b, dsn, name == "py-postgres", n)
		r, err := OpenPostgres(ctx, dsn)
		if err != nil {
			b.Fatal(err)
		}
		mid := fmt.Sprintf("1f1ee0c0-%04x-6%03x-8000-000000000000", (n/2)>>12, (n/2)&0xfff)
		want, err := r.Get(ctx, checkpoint.Ref{ThreadID: "long", CheckpointID: mid})
		if err != nil || want.Metadata.Step != n/2 {
			b.Fatalf("%s: Get = %+v, %v", name, want, err)
		}
		b.Run(name+"/get", func(b *testing.B) {
			for b.Loop() {
				if _, err := r.Get(ctx, checkpoint.Ref{ThreadID: "long", CheckpointID: mid}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/get-head", func(b *testing.B) {
			for b.Loop() {
				if _, err := r.Get(ctx, checkpoint.Ref{ThreadID: "long"}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/whole-thread", func(b *testing.B) {
			for b.Loop() {
				th, err := r.ReadThread(ctx, "long")
				if err != nil {
					b.Fatal(err)
				}
				if _, err := th.byID("", mid).Tuple("long"); err != nil {
					b.Fatal(err)
				}
			}
		})
		r.Close()
	}
}
