package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/checkpoint/store"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/examples"
)

// countingWriter counts what passes through it.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// bigStore builds a SQLite store holding the thread "big": the writing
// assistant on a topic of topicMB megabytes of "x", run to its review
// interrupt, as a run over AG-UI leaves it (issue #19 item 10). With
// WEFT_BIG_DB set, a copy of the store is left at that path, to measure a
// weft binary on it from outside (peak RSS with /usr/bin/time).
func bigStore(tb testing.TB, topicMB int) (string, []*engine.Graph) {
	tb.Helper()
	db := filepath.Join(tb.TempDir(), "big.db")
	s, err := store.Open(context.Background(), db)
	if err != nil {
		tb.Fatal(err)
	}
	open := true
	defer func() {
		if open {
			s.Close()
		}
	}()
	d, err := examples.Writer(s)
	if err != nil {
		tb.Fatal(err)
	}
	topic := strings.Repeat("x", topicMB<<20)
	if _, err := d.Graph.Invoke(context.Background(), engine.Values{"topic": topic}, engine.WithThread("big")); err != nil {
		tb.Fatal(err)
	}
	open = false
	if err := s.Close(); err != nil {
		tb.Fatal(err)
	}
	if keep := os.Getenv("WEFT_BIG_DB"); keep != "" {
		b, err := os.ReadFile(db)
		if err == nil {
			err = os.WriteFile(keep, b, 0o644)
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
	demos, err := examples.All(nil)
	if err != nil {
		tb.Fatal(err)
	}
	var graphs []*engine.Graph
	for _, d := range demos {
		graphs = append(graphs, d.Graph)
	}
	return db, graphs
}

// runOn runs a command on the store at db, its output counted.
func runOn(tb testing.TB, db string, graphs []*engine.Graph, args ...string) int64 {
	tb.Helper()
	var out countingWriter
	var errs strings.Builder
	if code := Run(context.Background(), append(args, "-db", db), Env{Graphs: graphs, Stdout: &out, Stderr: &errs}); code != 0 {
		tb.Fatalf("%v: exit %d: %s", args, code, errs.String())
	}
	return out.n
}

// BenchmarkBigHistory: weft history on a thread of 12 MB values.
func BenchmarkBigHistory(b *testing.B) {
	db, graphs := bigStore(b, 12)
	b.ResetTimer()
	var n int64
	for range b.N {
		n = runOn(b, db, graphs, "history", "big")
	}
	b.ReportMetric(float64(n)/1e6, "MB-out")
}

// BenchmarkBigExport: weft export of the same thread.
func BenchmarkBigExport(b *testing.B) {
	db, graphs := bigStore(b, 12)
	b.ResetTimer()
	var n int64
	for range b.N {
		n = runOn(b, db, graphs, "export", "big")
	}
	b.ReportMetric(float64(n)/1e6, "MB-out")
}

// bigSteps builds a graph whose node writes a new 2 MB string at each of
// steps steps, beside a small counter, and runs it on thread "t" of s.
func bigSteps(t testing.TB, s checkpoint.Saver, steps int) *engine.Graph {
	t.Helper()
	n := engine.LastValue[int]("n")
	big := engine.LastValue[string]("big")
	g, err := engine.NewGraph("big steps", n, big).
		AddNode("grow", func(_ context.Context, st engine.State) (engine.Output, error) {
			return engine.Updates(n.Set(n.Get(st)+1), big.Set(strings.Repeat(string(rune('a'+n.Get(st))), 2<<20))), nil
		}).
		AddEdge(engine.START, "grow").
		AddConditionalEdges("grow", func(_ context.Context, st engine.State) (engine.Route, error) {
			if n.Get(st) < steps {
				return engine.To("grow"), nil
			}
			return engine.To(engine.END), nil
		}, engine.Targets("grow", engine.END)).
		Compile(engine.WithSaver(s))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Invoke(context.Background(), engine.Values{"n": 0}, engine.WithThread("t")); err != nil {
		t.Fatal(err)
	}
	return g
}

// History prints a value stored larger than -max-value as an omission
// marker, so its output is bounded per checkpoint; -max-value 0 prints
// every value, and what each checkpoint plans next is the same either way.
func TestHistoryBoundsLargeValues(t *testing.T) {
	s := memory.New()
	g := bigSteps(t, s, 4)
	ctx := context.Background()
	var short, full bytes.Buffer
	if err := cmdHistory(ctx, s, []*engine.Graph{g}, []string{"t"}, &short); err != nil {
		t.Fatal(err)
	}
	if err := cmdHistory(ctx, s, []*engine.Graph{g}, []string{"t", "-max-value", "0"}, &full); err != nil {
		t.Fatal(err)
	}
	var a, b []SnapshotJSON
	if err := json.Unmarshal(short.Bytes(), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(full.Bytes(), &b); err != nil {
		t.Fatal(err)
	}
	if len(a) != len(b) || len(a) < 5 {
		t.Fatalf("%d and %d checkpoints", len(a), len(b))
	}
	if short.Len() > 64<<10 || full.Len() < 8<<20 {
		t.Errorf("history printed %d bytes, -max-value 0 %d", short.Len(), full.Len())
	}
	for i := range a {
		if !slices.Equal(a[i].Next, b[i].Next) || a[i].Values["n"] != b[i].Values["n"] {
			t.Errorf("checkpoint %d: next %v / %v, n %v / %v", i, a[i].Next, b[i].Next, a[i].Values["n"], b[i].Values["n"])
		}
		full, _ := b[i].Values["big"].(string)
		if full == "" {
			continue
		}
		m, _ := a[i].Values["big"].(map[string]any)
		if m["$weft"] != "omitted" || m["bytes"] != float64(len(full)+2) {
			t.Errorf("checkpoint %d: big printed as %v, want the marker of %d bytes", i, a[i].Values["big"], len(full)+2)
		}
	}
}

// The writing assistant on a 2 MB topic: its review interrupt carries the
// draft, and history prints the interrupt's payload as a marker too.
func TestHistoryBoundsInterrupts(t *testing.T) {
	db, graphs := bigStore(t, 2)
	var out bytes.Buffer
	if code := Run(context.Background(), []string{"history", "big", "-db", db}, Env{Graphs: graphs, Stdout: &out}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	var hist []SnapshotJSON
	if err := json.Unmarshal(out.Bytes(), &hist); err != nil || len(hist) == 0 || len(hist[0].Interrupts) != 1 {
		t.Fatalf("%v: %.300s", err, out.String())
	}
	if m, _ := hist[0].Interrupts[0].Value.(map[string]any); m["$weft"] != "omitted" || out.Len() > 64<<10 {
		t.Errorf("interrupt printed as %.200v; %d bytes in all", hist[0].Interrupts[0].Value, out.Len())
	}
}

// History leaves out the writing assistant's large values yet names the
// same next tasks at each checkpoint as -max-value 0: the three research
// tasks its Send packets plan (37 MB of them on a 12 MB topic), the start
// task of its input; and it prints the graph's state keys only, never the
// internal channels holding those packets and that input.
func TestHistoryPlansWhatItLeavesOut(t *testing.T) {
	db, graphs := bigStore(t, 2)
	history := func(args ...string) []SnapshotJSON {
		var out bytes.Buffer
		if code := Run(context.Background(), append([]string{"history", "big", "-db", db}, args...), Env{Graphs: graphs, Stdout: &out}); code != 0 {
			t.Fatalf("%v: exit %d", args, code)
		}
		var hist []SnapshotJSON
		if err := json.Unmarshal(out.Bytes(), &hist); err != nil {
			t.Fatal(err)
		}
		return hist
	}
	short, full := history(), history("-max-value", "0")
	if len(short) != len(full) || len(full) != 6 {
		t.Fatalf("%d and %d checkpoints, want 6", len(short), len(full))
	}
	sends := false
	for i := range full {
		if !slices.Equal(short[i].Next, full[i].Next) {
			t.Errorf("checkpoint of step %d: next %v, with every value %v", full[i].Step, short[i].Next, full[i].Next)
		}
		sends = sends || slices.Equal(full[i].Next, []string{"research", "research", "research"})
		keys, want := slices.Sorted(maps.Keys(short[i].Values)), slices.Sorted(maps.Keys(full[i].Values))
		if !slices.Equal(keys, want) {
			t.Errorf("checkpoint of step %d: values %v, with every value %v", full[i].Step, keys, want)
		}
	}
	if !sends {
		t.Error("no checkpoint plans the research tasks")
	}
}
