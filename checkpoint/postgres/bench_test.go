package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/postgres"
	"github.com/weftstudio/weft/engine"
)

// chain10Checkpoints is how many checkpoints one run of chain10 writes: the
// input, the __start__ step and one per node.
const chain10Checkpoints = 12

// BenchmarkB3Chain10Postgres runs B1's graph (engine/bench_test.go: 10
// nodes in a line, count +1 and log appended per node) with the PostgreSQL
// saver, on a new thread per invoke, with 1 and with 4 concurrent workers
// sharing one saver. ns/op is wall time per invoke (for 4 workers, the
// aggregate: wall time / invokes); invoke-µs is the mean latency of one
// invoke as a worker sees it; ckpt/s is checkpoints stored per second.
func BenchmarkB3Chain10Postgres(b *testing.B) {
	s, _ := openFresh(b, postgres.WithMaxConns(8))
	g := chain10(b, s)
	var seq atomic.Int64
	run := func() error {
		th := fmt.Sprintf("b3-%d", seq.Add(1))
		res, err := g.Invoke(context.Background(), engine.Values{"count": 0}, engine.WithThread(th))
		if err != nil {
			return err
		}
		if res.Values["count"] != 10 {
			return fmt.Errorf("thread %s: count = %v, want 10", th, res.Values["count"])
		}
		return nil
	}
	// Check the checkpoint count the metric assumes.
	if err := run(); err != nil {
		b.Fatal(err)
	}
	hs, err := s.ListHeaders(context.Background(), checkpoint.ListOptions{ThreadID: fmt.Sprintf("b3-%d", seq.Load())})
	if err != nil || len(hs) != chain10Checkpoints {
		b.Fatalf("one invoke stored %d checkpoints (%v), want %d", len(hs), err, chain10Checkpoints)
	}
	for _, workers := range []int{1, 4} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			var (
				next    atomic.Int64
				latency atomic.Int64 // summed ns
				wg      sync.WaitGroup
				errOnce sync.Once
				firstE  error
			)
			n := int64(b.N)
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for next.Add(1) <= n {
						t0 := time.Now()
						if err := run(); err != nil {
							errOnce.Do(func() { firstE = err })
							return
						}
						latency.Add(int64(time.Since(t0)))
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			if firstE != nil {
				b.Fatal(firstE)
			}
			b.ReportMetric(float64(n*chain10Checkpoints)/elapsed.Seconds(), "ckpt/s")
			b.ReportMetric(float64(latency.Load())/float64(n)/1e3, "invoke-µs")
		})
	}
}
