package engine_test

import (
	"context"
	"crypto/sha256"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint/nodecache"
	"github.com/weftstudio/weft/checkpoint/sqlite"
	"github.com/weftstudio/weft/engine"
)

// workBlock is what a "working" node hashes: 16 KiB, tens of microseconds
// of CPU, the scale of a quick tool call (a model call takes milliseconds).
var workBlock = make([]byte, 16<<10)

// cachedChain10 is B1's chain (10 nodes each adding 1 to count and its
// name to log), each node cached when c is not nil, and each doing
// workBlock's hashing first when work is set.
func cachedChain10(t testing.TB, c nodecache.Cache, work bool) *engine.Graph {
	count := engine.LastValue[int]("count")
	log := engine.List[string]("log")
	b := engine.NewGraph("chain10", count, log)
	prev := engine.START
	for i := range 10 {
		name := string(rune('a' + i))
		var opts []engine.NodeOption
		if c != nil {
			opts = append(opts, engine.WithCachePolicy(engine.CachePolicy{}))
		}
		b.AddNode(name, func(_ context.Context, s engine.State) (engine.Output, error) {
			if work {
				sha256.Sum256(workBlock)
			}
			return engine.Update{count.Set(count.Get(s) + 1), log.Add(name)}, nil
		}, opts...)
		b.AddEdge(prev, name)
		prev = name
	}
	var copts []engine.CompileOption
	if c != nil {
		copts = append(copts, engine.WithCache(c))
	}
	g, err := b.Compile(copts...)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func benchCachedChain(b *testing.B, g *engine.Graph) {
	in := engine.Values{"count": 0}
	if res, err := g.Invoke(ctx, in); err != nil || res.Values["count"] != 10 { // fills the cache
		b.Fatal(err, res)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := g.Invoke(ctx, in)
		if err != nil || res.Values["count"] != 10 {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkB1CacheHitMemory: every node of B1's chain is a hit in the
// in-memory cache. Against BenchmarkB1Chain10 it gives the cost of a hit
// over a node that does next to nothing.
func BenchmarkB1CacheHitMemory(b *testing.B) {
	benchCachedChain(b, cachedChain10(b, nodecache.NewMemory(), false))
}

// BenchmarkB1CacheHitSQLite is the same with the SQLite store's cache.
func BenchmarkB1CacheHitSQLite(b *testing.B) {
	s, err := sqlite.Open(filepath.Join(b.TempDir(), "weft.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	benchCachedChain(b, cachedChain10(b, s.NodeCache(), false))
}

// BenchmarkB1WorkUncached is B1's chain with nodes that each hash 16 KiB;
// BenchmarkB1WorkCacheHit the same chain cached, every node a hit.
func BenchmarkB1WorkUncached(b *testing.B) { benchCachedChain(b, cachedChain10(b, nil, true)) }
func BenchmarkB1WorkCacheHit(b *testing.B) {
	benchCachedChain(b, cachedChain10(b, nodecache.NewMemory(), true))
}

// TestCacheHitAllocations keeps a hit cheap where it can be checked
// without a clock: B1's chain of ten in-memory hits allocates at most two
// objects per node more than B1's chain running its nodes (the key's
// buffer and hash; the decoded writes are kept per graph).
func TestCacheHitAllocations(t *testing.T) {
	in := engine.Values{"count": 0}
	allocs := func(g *engine.Graph) float64 {
		if _, err := g.Invoke(ctx, in); err != nil {
			t.Fatal(err)
		}
		return testing.AllocsPerRun(50, func() {
			if res, err := g.Invoke(ctx, in); err != nil || res.Values["count"] != 10 {
				t.Fatal(err, res)
			}
		})
	}
	plain := allocs(cachedChain10(t, nil, false))
	hit := allocs(cachedChain10(t, nodecache.NewMemory(), false))
	// Two per hit; under the race detector, which drops pooled buffers at
	// random and allocates for itself, the difference measured 9-17: three.
	limit := 20.0
	if raceOn {
		limit = 30
	}
	if hit > plain+limit {
		t.Errorf("ten cache hits allocate %.0f objects per run against %.0f running the nodes: more than %.0f per hit", hit, plain, limit/10)
	}
}

// BenchmarkB1CacheHitCost measures what a hit costs against the node it
// replaces with less noise than separate benchmarks on a shared machine:
// rounds of B1's chain, the chain of hits and the chain of 16 KiB-hashing
// nodes, run back to back, and the medians of each round's differences
// per node. It reports ns/hit (over running B1's trivial node), ns/node
// (the hashing node's own work) and hit-% (the first over the second).
// Run it alone: go test -run '^$' -bench B1CacheHitCost ./engine
func BenchmarkB1CacheHitCost(b *testing.B) {
	plain := cachedChain10(b, nil, false)
	hit := cachedChain10(b, nodecache.NewMemory(), false)
	work := cachedChain10(b, nil, true)
	in := engine.Values{"count": 0}
	ns := func(g *engine.Graph) float64 {
		const n = 500
		start := time.Now()
		for range n {
			if res, err := g.Invoke(ctx, in); err != nil || res.Values["count"] != 10 {
				b.Fatal(err, res)
			}
		}
		return float64(time.Since(start).Nanoseconds()) / n
	}
	ns(plain)
	ns(hit) // fills the cache
	ns(work)
	var dh, dw []float64
	for b.Loop() {
		for range 12 {
			p := ns(plain)
			dh = append(dh, (ns(hit)-p)/10)
			dw = append(dw, (ns(work)-p)/10)
		}
	}
	med := func(v []float64) float64 {
		slices.Sort(v)
		return (v[(len(v)-1)/2] + v[len(v)/2]) / 2
	}
	h, w := med(dh), med(dw)
	b.ReportMetric(h, "ns/hit")
	b.ReportMetric(w, "ns/node")
	b.ReportMetric(100*h/w, "hit-%")
}
