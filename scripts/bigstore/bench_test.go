package main

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/sqlite"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/scripts/bigstore/gen"
)

// EnvVar names the environment variable that gives the scale benchmarks
// the store scripts/bigstore.sh built.
const EnvVar = "WEFT_BIGSTORE"

// bigStore returns the path of the full store, or fails with how to make
// one: the benchmarks on it are run by hand (bash scripts/dev.sh bench-big),
// never in CI.
func bigStore(b *testing.B) (string, gen.Shape) {
	path := os.Getenv(EnvVar)
	if path == "" {
		b.Fatalf("%s is not set: build the 2 GB store once with\n\tbash scripts/bigstore.sh /tmp/weft-bigstore.db\nthen run\n\t%s=/tmp/weft-bigstore.db go test -run '^$' -bench '10kThreads|100k|StorageSummary$' ./scripts/bigstore\n(or just bash scripts/dev.sh bench-big, which does both)", EnvVar, EnvVar)
	}
	if _, err := os.Stat(path); err != nil {
		b.Fatalf("%s=%s: %v (build it with bash scripts/bigstore.sh %s)", EnvVar, path, err, path)
	}
	return path, gen.Full
}

var small struct {
	once sync.Once
	path string
	err  error
}

// smallStore builds the Small shape once per test binary: the in-process
// variants of the scale benchmarks run on it in seconds.
func smallStore(b *testing.B) (string, gen.Shape) {
	small.once.Do(func() {
		dir, err := os.MkdirTemp("", "weft-bigstore-small-")
		if err != nil {
			small.err = err
			return
		}
		small.path = filepath.Join(dir, "small.db")
		s, err := sqlite.Open(small.path)
		if err != nil {
			small.err = err
			return
		}
		defer s.Close()
		small.err = gen.Generate(context.Background(), s, gen.Small, nil)
	})
	if small.err != nil {
		b.Fatal(small.err)
	}
	return small.path, gen.Small
}

// loop runs op until the benchmark has its time, and reports the CPU time
// per op beside the wall time: on a machine shared with other work the CPU
// time says what an op costs, the wall time what it took then.
func loop(b *testing.B, op func()) {
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		op()
	}
	if cpu := cpuTime() - start; cpu > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
	}
}

func open(b *testing.B, path string) *sqlite.Saver {
	s, err := sqlite.Open(path, sqlite.MustExist())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// benchOpen opens the store with opts (besides MustExist) and reads the
// first page of 50 threads, as the studio does when it opens a store.
func benchOpen(b *testing.B, store func(*testing.B) (string, gen.Shape), opts ...sqlite.Option) {
	benchOpenPage(b, store, nil, opts...)
}

// benchOpenPage is benchOpen with a ThreadQuery.Filter: of the store's
// graph (every thread matches, so the page is the unfiltered one and the
// filter's cost is all extra) or of another graph (no thread matches:
// every thread is tested and the page is empty).
func benchOpenPage(b *testing.B, store func(*testing.B) (string, gen.Shape), filter map[string]any, opts ...sqlite.Option) {
	path, sh := store(b)
	opts = append([]sqlite.Option{sqlite.MustExist()}, opts...)
	none := filter != nil && filter[engine.MetaGraph] != gen.GraphName
	loop(b, func() {
		s, err := sqlite.Open(path, opts...)
		if err != nil {
			b.Fatal(err)
		}
		page, err := s.SearchThreads(context.Background(), checkpoint.ThreadQuery{Limit: 50, Filter: filter})
		s.Close()
		if none {
			if err != nil || len(page.Threads) != 0 || page.More {
				b.Fatalf("filter %v: %d threads, more %v, %v; want none", filter, len(page.Threads), page.More, err)
			}
			return
		}
		if err != nil || len(page.Threads) != 50 || !page.More {
			b.Fatalf("first page: %d threads, more %v, %v", len(page.Threads), page.More, err)
		}
		if page.Threads[0].ThreadID != gen.LongThread || page.Threads[0].Checkpoints != sh.LongTurns+2 {
			b.Fatalf("first thread %+v, want %s with %d checkpoints", page.Threads[0].ThreadID, gen.LongThread, sh.LongTurns+2)
		}
	})
}

// BenchmarkOpenStore10kThreads: open the full store and list its first
// page of threads.
func BenchmarkOpenStore10kThreads(b *testing.B) { benchOpen(b, bigStore) }

// BenchmarkOpenStore10kThreadsReadOnly is BenchmarkOpenStore10kThreads
// opening the store read-only, as the filtered variants do (so that they
// write nothing to the file): their baseline.
func BenchmarkOpenStore10kThreadsReadOnly(b *testing.B) { benchOpen(b, bigStore, sqlite.ReadOnly()) }

// BenchmarkOpenStore10kThreadsOfGraph lists the first page of the store's
// graph's threads, as the studio does: every thread is of that graph, the
// worst case for the filter's cost.
func BenchmarkOpenStore10kThreadsOfGraph(b *testing.B) {
	benchOpenPage(b, bigStore, map[string]any{engine.MetaGraph: gen.GraphName}, sqlite.ReadOnly())
}

// BenchmarkOpenStore10kThreadsOfOtherGraph lists the threads of a graph no
// thread is of: every thread's metadata is tested, none is listed.
func BenchmarkOpenStore10kThreadsOfOtherGraph(b *testing.B) {
	benchOpenPage(b, bigStore, map[string]any{engine.MetaGraph: "no-such-graph"}, sqlite.ReadOnly())
}

// BenchmarkOpenStoreSmall is BenchmarkOpenStore10kThreads on the Small store.
func BenchmarkOpenStoreSmall(b *testing.B) { benchOpen(b, smallStore) }

// BenchmarkOpenStoreOfGraphSmall is BenchmarkOpenStore10kThreadsOfGraph on
// the Small store.
func BenchmarkOpenStoreOfGraphSmall(b *testing.B) {
	benchOpenPage(b, smallStore, map[string]any{engine.MetaGraph: gen.GraphName}, sqlite.ReadOnly())
}

// BenchmarkOpenStoreOfOtherGraphSmall is
// BenchmarkOpenStore10kThreadsOfOtherGraph on the Small store.
func BenchmarkOpenStoreOfOtherGraphSmall(b *testing.B) {
	benchOpenPage(b, smallStore, map[string]any{engine.MetaGraph: "no-such-graph"}, sqlite.ReadOnly())
}

// benchHistory reads the first page of 50 snapshots of the long thread
// through the engine (HistorySeq with Limit 50, as a paged view asks).
// Without the limit, breaking after 50 costs about ten times more: the
// sequence reads ahead (a saver page of 256, and batches waiting for the
// consumer) before it sees the break.
func benchHistory(b *testing.B, store func(*testing.B) (string, gen.Shape)) {
	path, sh := store(b)
	s := open(b, path)
	g, err := gen.Graph(sh.Seed, sh.ValueBytes, s)
	if err != nil {
		b.Fatal(err)
	}
	loop(b, func() {
		n := 0
		for snap, err := range g.HistorySeq(context.Background(), checkpoint.ListOptions{Limit: 50}, engine.WithThread(gen.LongThread)) {
			if err != nil {
				b.Fatal(err)
			}
			if n == 0 && snap.Values["turn"] != sh.LongTurns {
				b.Fatalf("newest snapshot has turn %v, want %d", snap.Values["turn"], sh.LongTurns)
			}
			if n++; n == 50 {
				break
			}
		}
		if n != 50 {
			b.Fatalf("%d snapshots", n)
		}
	})
}

// BenchmarkHistoryFirstPage100k: the first 50 snapshots of the 100,000
// checkpoint thread.
func BenchmarkHistoryFirstPage100k(b *testing.B) { benchHistory(b, bigStore) }

// BenchmarkHistoryFirstPageSmall is BenchmarkHistoryFirstPage100k on the
// Small store's 2,000-checkpoint thread.
func BenchmarkHistoryFirstPageSmall(b *testing.B) { benchHistory(b, smallStore) }

// benchTimeline reads what the studio's timeline needs to open the long
// thread: every root checkpoint's header, no values.
func benchTimeline(b *testing.B, store func(*testing.B) (string, gen.Shape)) {
	path, sh := store(b)
	s := open(b, path)
	root := ""
	loop(b, func() {
		hs, err := s.ListHeaders(context.Background(), checkpoint.ListOptions{ThreadID: gen.LongThread, NS: &root})
		if err != nil || len(hs) != sh.LongTurns+2 {
			b.Fatalf("%d headers, want %d: %v", len(hs), sh.LongTurns+2, err)
		}
	})
}

// BenchmarkTimeline100k: the headers of the 100,000-checkpoint thread.
func BenchmarkTimeline100k(b *testing.B) { benchTimeline(b, bigStore) }

// BenchmarkTimelineSmall is BenchmarkTimeline100k on the Small store.
func BenchmarkTimelineSmall(b *testing.B) { benchTimeline(b, smallStore) }

// benchSummary reads the storage summary of the whole store.
func benchSummary(b *testing.B, store func(*testing.B) (string, gen.Shape)) {
	path, sh := store(b)
	s := open(b, path)
	loop(b, func() {
		sum, err := s.StorageSummary(context.Background(), checkpoint.StorageOptions{})
		if err != nil || sum.Threads != int64(sh.Threads+1) {
			b.Fatalf("%d threads, want %d: %v", sum.Threads, sh.Threads+1, err)
		}
	})
}

// BenchmarkStorageSummary: the storage summary of the full store.
func BenchmarkStorageSummary(b *testing.B) { benchSummary(b, bigStore) }

// BenchmarkStorageSummarySmall is BenchmarkStorageSummary on the Small
// store.
func BenchmarkStorageSummarySmall(b *testing.B) { benchSummary(b, smallStore) }
