package sqlite_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/checkpointtest"
	"github.com/weftstudio/weft/checkpoint/sqlite"
)

// The conformance suite again with prunes split into transactions of 2
// rows: every case then crosses chunk boundaries.
func TestConformanceSmallPruneChunks(t *testing.T) {
	defer sqlite.SetPruneChunk(2)()
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver { return openTemp(t) })
}

// A prune of a thread that a run keeps advancing meanwhile, in chunks that
// let the run's writes in between, leaves every remaining checkpoint whole:
// the values it shares with pruned checkpoints, and those of checkpoints
// put during the prune, are all there.
func TestPruneWhileAThreadAdvances(t *testing.T) {
	defer sqlite.SetPruneChunk(25)()
	s := openTemp(t)
	ctx := context.Background()
	put := func(parent checkpoint.Ref, i int) checkpoint.Ref {
		cp := checkpoint.Checkpoint{V: checkpoint.FormatVersion, ID: checkpoint.NewID(),
			ChannelValues:   map[string][]byte{"i": fmt.Appendf(nil, "value %d", i), "const": []byte("set once")},
			ChannelVersions: map[string]int64{"i": int64(i+1) << 32, "const": 1 << 32}}
		nv := map[string]int64{"i": int64(i+1) << 32}
		if i == 0 {
			nv["const"] = 1 << 32
		}
		ref, err := s.Put(ctx, parent, cp, checkpoint.Metadata{Source: checkpoint.SourceLoop, Step: i}, nv)
		if err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
		if err := s.PutWrites(ctx, ref, []checkpoint.Write{{Channel: "i", Value: []byte("w")}}, "task", ""); err != nil {
			t.Fatal(err)
		}
		return ref
	}
	head := checkpoint.Ref{ThreadID: "busy"}
	for i := range 600 {
		head = put(head, i)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 600; i < 900; i++ {
			head = put(head, i)
		}
	})
	res, err := s.PruneBy(ctx, checkpoint.PrunePolicy{Threads: []string{"busy"}, KeepLatest: 10})
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if res.Checkpoints < 590 { // at least the 600 there before, less the 10 kept
		t.Errorf("pruned %d checkpoints, want at least 590", res.Checkpoints)
	}
	n := 0
	for tp, err := range s.List(ctx, checkpoint.ListOptions{ThreadID: "busy"}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		step := tp.Metadata.Step
		if got := string(tp.Checkpoint.ChannelValues["i"]); got != fmt.Sprintf("value %d", step) {
			t.Errorf("step %d: channel i = %q", step, got)
		}
		if got := string(tp.Checkpoint.ChannelValues["const"]); got != "set once" {
			t.Errorf("step %d: channel const = %q: a value the kept checkpoints share was pruned", step, got)
		}
		if len(tp.PendingWrites) != 1 {
			t.Errorf("step %d: %d writes", step, len(tp.PendingWrites))
		}
	}
	if n < 10 || int64(n)+res.Checkpoints != 900 {
		t.Errorf("%d checkpoints left and %d pruned, of 900", n, res.Checkpoints)
	}
	sum, err := s.StorageSummary(ctx, checkpoint.StorageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Values != int64(n)+1 { // one "i" per checkpoint, and "const"
		t.Errorf("%d values left for %d checkpoints, want %d: unreferenced values stayed", sum.Values, n, n+1)
	}
}
