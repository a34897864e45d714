package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/checkpoint/sqlite"
	"github.com/weftstudio/weft/engine"
)

var threadSeq int

// peerThread names a thread as the peer harnesses do (`t-<pid>-<n>`), so
// both sides' b-trees get keys in about the same order. Random thread ids
// land all over the SQLite saver's b-trees and split pages:
// BenchmarkB3Chain10SQLiteRandomThreads measures that case.
func peerThread() string {
	threadSeq++
	return fmt.Sprintf("t-%d-%d", os.Getpid(), threadSeq)
}

func openSQLite(b *testing.B) (*sqlite.Saver, string) {
	path := filepath.Join(b.TempDir(), "bench.db")
	s, err := sqlite.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s, path
}

func benchChain(b *testing.B, s checkpoint.Saver, opts ...engine.RunOption) {
	benchChainThreads(b, s, peerThread, opts...)
}

func benchChainThreads(b *testing.B, s checkpoint.Saver, thread func() string, opts ...engine.RunOption) {
	g := chain10(b, engine.WithSaver(s))
	in := engine.Values{"count": 0}
	b.ReportAllocs()
	for b.Loop() {
		res, err := g.Invoke(ctx, in, append(opts, engine.WithThread(thread()))...)
		if err != nil || res.Values["count"] != 10 {
			b.Fatal(err, res)
		}
	}
}

// B2: B1's chain with the in-memory saver, a new thread per invoke.
func BenchmarkB2Chain10Memory(b *testing.B) { benchChain(b, memory.New()) }

// B3: the same with the SQLite saver on a file (WAL, synchronous NORMAL).
func BenchmarkB3Chain10SQLite(b *testing.B) {
	s, _ := openSQLite(b)
	benchChain(b, s)
}

// B3 with a random UUID per thread, as LangGraph's server names threads:
// each run's rows land at a random place in the b-trees.
func BenchmarkB3Chain10SQLiteRandomThreads(b *testing.B) {
	s, _ := openSQLite(b)
	benchChainThreads(b, s, uuid.NewString)
}

// B3 with durability sync: every checkpoint committed before the next step
// runs (the mode the kill -9 tests prove; WAL, synchronous NORMAL).
func BenchmarkB3Chain10SQLiteSync(b *testing.B) {
	s, _ := openSQLite(b)
	benchChain(b, s, engine.WithDurability(engine.DurabilitySync))
}

// B5 with SQLite: the whole 1000-step loop per op.
func BenchmarkB5Loop1000SQLite(b *testing.B) {
	s, _ := openSQLite(b)
	g := loop1000(b, engine.WithSaver(s))
	b.ReportAllocs()
	for b.Loop() {
		res, err := g.Invoke(ctx, engine.Values{"count": 0}, engine.WithThread(peerThread()), engine.WithRecursionLimit(2000))
		if err != nil || res.Values["count"] != 1000 {
			b.Fatal(err, res)
		}
	}
}

func b5Thread(b *testing.B) *engine.Graph {
	s, _ := openSQLite(b)
	g := loop1000(b, engine.WithSaver(s))
	if _, err := g.Invoke(ctx, engine.Values{"count": 0}, engine.WithThread("b5"), engine.WithRecursionLimit(2000)); err != nil {
		b.Fatal(err)
	}
	return g
}

// B5History lists all 1,002 checkpoints of B5's thread as snapshots.
func BenchmarkB5History(b *testing.B) {
	g := b5Thread(b)
	b.ReportAllocs()
	for b.Loop() {
		h, err := g.History(ctx, checkpoint.ListOptions{}, engine.WithThread("b5"))
		if err != nil || len(h) != 1002 {
			b.Fatal(err, len(h))
		}
	}
}

// B5List lists the same 1,002 checkpoints straight from the saver, as
// tuples (values and pending writes, no snapshots): the saver's share of
// B5History.
func BenchmarkB5List(b *testing.B) {
	g := b5Thread(b)
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for _, err := range g.Saver().List(ctx, checkpoint.ListOptions{ThreadID: "b5"}) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 1002 {
			b.Fatal(n)
		}
	}
}

// B5GetState reads the state at the latest checkpoint of B5's thread.
func BenchmarkB5GetState(b *testing.B) {
	g := b5Thread(b)
	b.ReportAllocs()
	for b.Loop() {
		st, err := g.GetState(ctx, engine.WithThread("b5"))
		if err != nil || st.Values["count"] != 1000 {
			b.Fatal(err)
		}
	}
}

// B6: a node calls Interrupt; invoke, then resume with "yes"; memory saver.
func BenchmarkB6InterruptResume(b *testing.B) {
	answer := engine.LastValue[string]("answer")
	g := compile(b, engine.NewGraph("ask", answer).
		AddNode("ask", func(ctx context.Context, s engine.State) (engine.Output, error) {
			a, err := engine.Interrupt(ctx, "continue?")
			if err != nil {
				return nil, err
			}
			return engine.Updates(answer.Set(a.(string))), nil
		}).AddEdge(engine.START, "ask"), engine.WithSaver(memory.New()))
	b.ReportAllocs()
	for b.Loop() {
		th := engine.WithThread(peerThread())
		res, err := g.Invoke(ctx, engine.Values{"answer": ""}, th)
		if err != nil || len(res.Interrupts) != 1 {
			b.Fatal(err, res)
		}
		res, err = g.Invoke(ctx, engine.Command{Resume: "yes"}, th)
		if err != nil || res.Values["answer"] != "yes" {
			b.Fatal(err, res)
		}
	}
}

// B7: 50 LastValue string channels of 1 KB each, 5 nodes in a line each
// rewriting 5 of them, SQLite saver, a new thread per invoke; reports the
// database file's growth per invoke.
func BenchmarkB7WideStateSQLite(b *testing.B) {
	keys := make([]engine.Key[string], 50)
	decls := make([]engine.Decl, 50)
	in := engine.Values{}
	kb := strings.Repeat("x", 1024)
	for i := range keys {
		keys[i] = engine.LastValue[string](fmt.Sprintf("k%02d", i))
		decls[i] = keys[i]
		in[keys[i].Name()] = kb
	}
	bld := engine.NewGraph("wide", decls...)
	prev := engine.START
	for n := range 5 {
		name := fmt.Sprintf("n%d", n)
		bld.AddNode(name, func(_ context.Context, s engine.State) (engine.Output, error) {
			up := make(engine.Update, 0, 5)
			for j := range 5 {
				k := keys[n*5+j]
				v := k.Get(s)
				up = append(up, k.Set(name+v[len(name):]))
			}
			return up, nil
		})
		bld.AddEdge(prev, name)
		prev = name
	}
	path := filepath.Join(b.TempDir(), "wide.db")
	open := func() *sqlite.Saver {
		s, err := sqlite.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	// The file's size once closed (the WAL folded in), so the figure is the
	// data kept, not how far the WAL happened to grow.
	size := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		return fi.Size()
	}
	s := open()
	g := compile(b, bld, engine.WithSaver(s))
	// Grow the file first so the figure is per invoke, not start-up.
	for range 3 {
		if _, err := g.Invoke(ctx, in, engine.WithThread(peerThread())); err != nil {
			b.Fatal(err)
		}
	}
	s.Close()
	before := size()
	s = open()
	defer s.Close()
	g = g.WithSaver(s)
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for b.Loop() {
		if _, err := g.Invoke(ctx, in, engine.WithThread(peerThread())); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.StopTimer()
	s.Close()
	if n > 0 {
		b.ReportMetric(float64(size()-before)/float64(n), "file-B/invoke")
	}
}
