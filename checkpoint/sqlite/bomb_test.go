package sqlite_test

import (
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/sqlite"
)

// deflateBomb returns the stored form of n zero bytes, as Pack writes a
// compressed value: 0x01, then DEFLATE data (about n/1000 bytes).
func deflateBomb(n int) []byte {
	var buf bytes.Buffer
	buf.WriteByte(0x01)
	w, _ := flate.NewWriter(&buf, flate.BestCompression)
	zeros := make([]byte, 1<<20)
	for ; n > 0; n -= len(zeros) {
		w.Write(zeros[:min(n, len(zeros))])
	}
	w.Close()
	return buf.Bytes()
}

// A crafted store whose value inflates past checkpoint.MaxValueSize (which
// no Weft writes) is refused with an error naming the channel and version,
// and reading it takes memory bounded by the limit, not by what the bomb
// would inflate to. Values up to the limit read back however well they
// compress: see the conformance suite's limits cases.
func TestDecompressionBomb(t *testing.T) {
	path := filledFile(t, 0)
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	channels := map[string][]byte{}
	versions := map[string]int64{}
	for i := range 3 {
		ch := fmt.Sprintf("c%02d", i)
		channels[ch], versions[ch] = []byte(`"small"`), 7
	}
	cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: time.Now(), ChannelValues: channels, ChannelVersions: versions}
	ref, err := s.Put(t.Context(), checkpoint.Ref{ThreadID: "bomb"}, cp, checkpoint.Metadata{Source: checkpoint.SourceInput}, versions)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	db := rawDB(t, path)
	// One value of four times the limit, from about 256 KB.
	if _, err := db.Exec("UPDATE blobs SET value = ? WHERE channel = 'c01'", deflateBomb(4*checkpoint.MaxValueSize)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	expectTooLarge(t, path, ref, `channel "c01" version 7`)
}

func expectTooLarge(t *testing.T, path string, ref checkpoint.Ref, says string) {
	t.Helper()
	s, err := sqlite.Open(path, sqlite.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = s.Get(t.Context(), ref)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, sqlite.ErrValueTooLarge) || !strings.Contains(err.Error(), says) || !strings.Contains(err.Error(), path) {
		t.Fatalf("Get of a crafted checkpoint = %v; want ErrValueTooLarge saying %q and naming %s", err, says, path)
	}
	// Inflating up to the limit may allocate a few times it (buffers grow
	// by doubling), never the whole bomb.
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 3*checkpoint.MaxValueSize {
		t.Errorf("refusing the bomb allocated %d MiB", grew>>20)
	}
	t.Logf("%v (allocated %d MiB)", err, (after.TotalAlloc-before.TotalAlloc)>>20)
}

// Values over the limit are refused when written, naming the channel.
func TestValueSizeLimitOnWrite(t *testing.T) {
	s, err := sqlite.Open(filledFile(t, 0), sqlite.WithMaxValueSize(1000))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	big := bytes.Repeat([]byte("x"), 1001)
	cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: time.Now(),
		ChannelValues: map[string][]byte{"fat": big}, ChannelVersions: map[string]int64{"fat": 3}}
	_, err = s.Put(t.Context(), checkpoint.Ref{ThreadID: "t"}, cp, checkpoint.Metadata{Source: checkpoint.SourceInput, Step: -1}, cp.ChannelVersions)
	if !errors.Is(err, sqlite.ErrValueTooLarge) || !strings.Contains(err.Error(), `channel "fat" at version 3`) {
		t.Fatalf("Put of a 1001-byte value under a 1000-byte limit = %v", err)
	}
	cp.ChannelValues["fat"] = big[:1000]
	ref, err := s.Put(t.Context(), checkpoint.Ref{ThreadID: "t"}, cp, checkpoint.Metadata{Source: checkpoint.SourceInput, Step: -1}, cp.ChannelVersions)
	if err != nil {
		t.Fatal(err)
	}
	err = s.PutWrites(t.Context(), ref, []checkpoint.Write{{Channel: "fat", Value: big}}, "task", "")
	if !errors.Is(err, sqlite.ErrValueTooLarge) || !strings.Contains(err.Error(), `channel "fat"`) {
		t.Fatalf("PutWrites of a 1001-byte value = %v", err)
	}
	err = s.WriteBatch(t.Context(), []checkpoint.Op{{Ref: ref, Writes: []checkpoint.Write{{Channel: "fat", Value: big}}, TaskID: "task"}})
	if !errors.Is(err, sqlite.ErrValueTooLarge) {
		t.Fatalf("WriteBatch of a 1001-byte value = %v", err)
	}
	tp, err := s.Get(t.Context(), ref)
	if err != nil || len(tp.Checkpoint.ChannelValues["fat"]) != 1000 {
		t.Fatalf("a value at the limit reads back as %d bytes, %v", len(tp.Checkpoint.ChannelValues["fat"]), err)
	}
}
