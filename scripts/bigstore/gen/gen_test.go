package gen

import (
	"context"
	"reflect"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
)

// sizes returns what a store holds per thread: checkpoints, values, writes
// and their bytes, by channel, which a seed must fix.
func sizes(t *testing.T, sh Shape) map[string][]checkpoint.ChannelBytes {
	s := memory.New()
	if err := Generate(context.Background(), s, sh, nil); err != nil {
		t.Fatal(err)
	}
	out := map[string][]checkpoint.ChannelBytes{}
	ids := []string{LongThread}
	for i := range sh.Threads {
		ids = append(ids, ShortThread(i))
	}
	for _, id := range ids {
		ts, err := s.ThreadStorage(context.Background(), id, checkpoint.StorageOptions{})
		if err != nil {
			t.Fatalf("thread %s: %v", id, err)
		}
		out[id] = append(ts.Channels, checkpoint.ChannelBytes{Channel: "(checkpoints)", Values: ts.Checkpoints})
	}
	return out
}

// The same shape and seed give the same threads with the same values; the
// long thread has one checkpoint per turn plus the input's two.
func TestGenerateIsReproducible(t *testing.T) {
	sh := Shape{Seed: 7, Threads: 5, ShortTurns: 6, LongTurns: 40, ValueBytes: 300}
	a, b := sizes(t, sh), sizes(t, sh)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("two runs of one seed differ:\n%v\n%v", a, b)
	}
	long := a[LongThread]
	if n := long[len(long)-1].Values; n != int64(sh.LongTurns+2) {
		t.Errorf("long thread has %d checkpoints, want %d", n, sh.LongTurns+2)
	}
	sh.Seed = 8
	if c := sizes(t, sh); reflect.DeepEqual(a, c) {
		t.Error("another seed gave the same store")
	}
}
