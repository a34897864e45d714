package sqlite_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/sqlite"
)

// fillChain puts n checkpoints in one thread: two small channels change at
// every step (the shape of a simple graph's history), and each checkpoint
// gets one pending write.
func fillChain(b testing.TB, s checkpoint.Saver, thread string, n int, writes bool) {
	b.Helper()
	ctx := b.Context()
	parent := checkpoint.Ref{ThreadID: thread}
	for i := range n {
		cp := checkpoint.Checkpoint{
			V: checkpoint.FormatVersion, ID: checkpoint.NewID(), TS: time.Now(),
			ChannelValues:   map[string][]byte{"messages": []byte(fmt.Sprintf(`["m%d"]`, i)), "step": []byte(fmt.Sprint(i))},
			ChannelVersions: map[string]int64{"messages": int64(i + 1), "step": int64(i + 1)},
			VersionsSeen:    map[string]map[string]int64{"node": {"messages": int64(i)}},
			UpdatedChannels: []string{"messages", "step"},
		}
		md := checkpoint.Metadata{Source: checkpoint.SourceLoop, Step: i, Parents: map[string]string{}, Tasks: []string{"node"}}
		ref, err := s.Put(ctx, parent, cp, md, cp.ChannelVersions)
		if err != nil {
			b.Fatal(err)
		}
		if writes {
			if err := s.PutWrites(ctx, ref, []checkpoint.Write{{Channel: "messages", Value: []byte(`"hi"`)}}, "task-1", "pull:node"); err != nil {
				b.Fatal(err)
			}
		}
		parent = ref
	}
}

// BenchmarkList1002 lists a thread of 1,002 checkpoints with their values
// and writes. Target: ≤ 10 ms/op.
func BenchmarkList1002(b *testing.B) {
	s := openTemp(b)
	fillChain(b, s, "bench", 1002, true)
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for tp, err := range s.List(b.Context(), checkpoint.ListOptions{ThreadID: "bench"}) {
			if err != nil {
				b.Fatal(err)
			}
			if len(tp.Checkpoint.ChannelValues) != 2 {
				b.Fatalf("checkpoint %s has %d values", tp.Ref.CheckpointID, len(tp.Checkpoint.ChannelValues))
			}
			n++
		}
		if n != 1002 {
			b.Fatalf("listed %d", n)
		}
	}
}

// BenchmarkListHeaders10000 lists 10,000 checkpoint headers. Target: well
// under 100 ms/op.
func BenchmarkListHeaders10000(b *testing.B) {
	s := openTemp(b)
	fillChain(b, s, "bench", 10000, false)
	b.ReportAllocs()
	for b.Loop() {
		hs, err := s.ListHeaders(b.Context(), checkpoint.ListOptions{ThreadID: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		if len(hs) != 10000 {
			b.Fatalf("listed %d", len(hs))
		}
	}
}

// BenchmarkPut puts one small checkpoint (two changed channels). Target: well
// under 100 µs/op.
func BenchmarkPut(b *testing.B) {
	for _, enc := range []bool{false, true} {
		b.Run(fmt.Sprintf("encrypted=%v", enc), func(b *testing.B) {
			var opts []sqlite.Option
			if enc {
				opts = append(opts, sqlite.WithEncryptionKey(make([]byte, 32)))
			}
			s := openTemp(b, opts...)
			parent := checkpoint.Ref{ThreadID: "bench"}
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				i++
				cp := checkpoint.Checkpoint{
					V: checkpoint.FormatVersion, ID: checkpoint.NewID(), TS: time.Now(),
					ChannelValues:   map[string][]byte{"messages": []byte(`["hello"]`), "step": []byte("1")},
					ChannelVersions: map[string]int64{"messages": int64(i), "step": int64(i)},
				}
				ref, err := s.Put(b.Context(), parent, cp, checkpoint.Metadata{Source: checkpoint.SourceLoop, Step: i}, cp.ChannelVersions)
				if err != nil {
					b.Fatal(err)
				}
				parent = ref
			}
		})
	}
}

// BenchmarkPutWrites stores one task's two writes.
func BenchmarkPutWrites(b *testing.B) {
	s := openTemp(b)
	fillChain(b, s, "bench", 1, false)
	ref := checkpoint.Ref{ThreadID: "bench"}
	tp, err := s.Get(b.Context(), ref)
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		i++
		ws := []checkpoint.Write{{Channel: "messages", Value: []byte(`"hi"`)}, {Channel: "branch:to:b"}}
		if err := s.PutWrites(b.Context(), tp.Ref, ws, fmt.Sprint("task-", i), "pull:a"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetLatest reads the latest checkpoint of a 100-checkpoint thread.
func BenchmarkGetLatest(b *testing.B) {
	s := openTemp(b)
	fillChain(b, s, "bench", 100, true)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Get(b.Context(), checkpoint.Ref{ThreadID: "bench"}); err != nil {
			b.Fatal(err)
		}
	}
}
