package bundle_test

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/bundle"
	"github.com/weftstudio/weft/checkpoint/sqlite"
)

// A bundle takes what the store takes: a thread holding a value and a
// write of exactly checkpoint.MaxValueSize, one random (stored as base64)
// and one repetitive JSON text, exports and imports into another store
// byte for byte.
func TestRoundTripAtTheValueLimit(t *testing.T) {
	random := make([]byte, checkpoint.MaxValueSize)
	rand.NewChaCha8([32]byte{'b'}).Read(random)
	random[0] = 0xff // not JSON: the bundle stores it as base64
	text := append(append([]byte{'"'}, bytes.Repeat([]byte("x"), checkpoint.MaxValueSize-2)...), '"')

	open := func() *sqlite.Saver {
		s, err := sqlite.Open(filepath.Join(t.TempDir(), "weft.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	src, dst := open(), open()
	cp := checkpoint.Checkpoint{V: checkpoint.FormatVersion, ID: checkpoint.NewID(), TS: time.Now(),
		ChannelValues: map[string][]byte{"random": random, "topic": text}, ChannelVersions: map[string]int64{"random": 1, "topic": 1}}
	ref, err := src.Put(t.Context(), checkpoint.Ref{ThreadID: "big"}, cp, checkpoint.Metadata{Source: checkpoint.SourceInput, Step: -1}, cp.ChannelVersions)
	if err != nil {
		t.Fatal(err)
	}
	if err := src.PutWrites(t.Context(), ref, []checkpoint.Write{{Channel: "topic", Value: text}}, "task-1", ""); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := bundle.Export(t.Context(), src, "big", &buf); err != nil {
		t.Fatalf("export of values at the limit: %v", err)
	}
	if _, err := bundle.Import(t.Context(), dst, &buf); err != nil {
		t.Fatalf("import of values at the limit: %v", err)
	}
	tp, err := dst.Get(t.Context(), checkpoint.Ref{ThreadID: "big"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(tp.Checkpoint.ChannelValues["random"], random) || !bytes.Equal(tp.Checkpoint.ChannelValues["topic"], text) {
		t.Fatalf("imported values: %d and %d bytes, not the %d written", len(tp.Checkpoint.ChannelValues["random"]), len(tp.Checkpoint.ChannelValues["topic"]), checkpoint.MaxValueSize)
	}
	if len(tp.PendingWrites) != 1 || !bytes.Equal(tp.PendingWrites[0].Value, text) {
		t.Fatalf("imported pending writes: %d, want the one of %d bytes", len(tp.PendingWrites), checkpoint.MaxValueSize)
	}
}
