package memory_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
)

func putStep(b *testing.B, s checkpoint.Saver, parent checkpoint.Ref, i int) checkpoint.Ref {
	cp := checkpoint.Checkpoint{
		V: checkpoint.FormatVersion, ID: checkpoint.NewID(), TS: time.Now(),
		ChannelValues:   map[string][]byte{"messages": []byte(fmt.Sprintf(`["m%d"]`, i)), "step": []byte(fmt.Sprint(i))},
		ChannelVersions: map[string]int64{"messages": int64(i + 1), "step": int64(i + 1)},
		VersionsSeen:    map[string]map[string]int64{"node": {"messages": int64(i)}},
		UpdatedChannels: []string{"messages", "step"},
	}
	md := checkpoint.Metadata{Source: checkpoint.SourceLoop, Step: i, Parents: map[string]string{}, Tasks: []string{"node"}}
	ref, err := s.Put(b.Context(), parent, cp, md, cp.ChannelVersions)
	if err != nil {
		b.Fatal(err)
	}
	return ref
}

// BenchmarkPut puts one small checkpoint with two changed channels.
func BenchmarkPut(b *testing.B) {
	s := memory.New()
	parent := checkpoint.Ref{ThreadID: "bench"}
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		parent = putStep(b, s, parent, i)
		i++
	}
}

// BenchmarkList1002 lists a thread of 1,002 checkpoints with values and
// writes.
func BenchmarkList1002(b *testing.B) {
	s := memory.New()
	parent := checkpoint.Ref{ThreadID: "bench"}
	for i := range 1002 {
		parent = putStep(b, s, parent, i)
		if err := s.PutWrites(b.Context(), parent, []checkpoint.Write{{Channel: "messages", Value: []byte(`"hi"`)}}, "task", ""); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for _, err := range s.List(b.Context(), checkpoint.ListOptions{ThreadID: "bench"}) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 1002 {
			b.Fatalf("listed %d", n)
		}
	}
}
