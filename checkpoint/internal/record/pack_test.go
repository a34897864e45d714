package record

import (
	"bytes"
	"compress/flate"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/weftstudio/weft/checkpoint"
)

func TestPackRoundTrip(t *testing.T) {
	long := []byte(`"` + strings.Repeat("tide pools ", 100) + `"`)
	cases := map[string][]byte{
		"nil": nil, "empty": {}, "short json": []byte(`{"a":1}`),
		"long json":              long,
		"starts with 0x01":       {0x01, 'x'},
		"starts with 0x02":       {0x02, 'y', 'z'},
		"long, starts with 0x01": append([]byte{0x01}, long...),
		"incompressible":         bytes.Repeat([]byte{0x03, 0x9f, 0x44, 0xe1, 0x17, 0x58, 0xc2, 0x7d}, 64),
	}
	for name, in := range cases {
		stored := Pack(in)
		out, err := Unpack(stored, 0)
		if err != nil || !bytes.Equal(out, in) || (in == nil) != (stored == nil) {
			t.Errorf("%s: round trip gave %q, %v", name, out, err)
		}
	}
	if got := Pack(long); len(got) >= len(long)/4 {
		t.Errorf("a repetitive 1 KB value packs to %d bytes", len(got))
	}
	if _, err := Unpack([]byte{0x01, 0xff, 0xff}, 0); err == nil {
		t.Error("damaged compressed data unpacked without error")
	}
}

// deflated is a value's stored form as schema 7 and older wrote it.
func deflated(t *testing.T, v []byte) []byte {
	var buf bytes.Buffer
	buf.WriteByte(packDeflate)
	w, _ := flate.NewWriter(&buf, flate.BestSpeed)
	if _, err := w.Write(v); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Values are packed with zstd now; those stored with DEFLATE before still
// read, and no DEFLATE stream starts with the byte that marks zstd.
func TestPackZstdAndOldDeflate(t *testing.T) {
	long := []byte(`"` + strings.Repeat("tide pools ", 100) + `"`)
	if got := Pack(long); len(got) < 2 || got[0] != packDeflate || got[1] != packZstd {
		t.Fatalf("a long value packs to %x…, want the zstd mark", got[:min(len(got), 6)])
	}
	for _, v := range [][]byte{long, bytes.Repeat([]byte{0x01}, 300), bytes.Repeat([]byte(`{"k":"x"}`), 10000)} {
		old := deflated(t, v)
		if old[1] == packZstd {
			t.Fatalf("a DEFLATE stream starts with the zstd mark %#x", old[1])
		}
		out, err := Unpack(old, 0)
		if err != nil || !bytes.Equal(out, v) {
			t.Fatalf("a value stored with DEFLATE reads back as %d bytes, %v", len(out), err)
		}
	}
	// At the largest size a value may have, and one byte more.
	big := bytes.Repeat([]byte(`{"m":"the tide came in"},`), checkpoint.MaxValueSize/25+1)[:checkpoint.MaxValueSize]
	out, err := Unpack(Pack(big), checkpoint.MaxValueSize)
	if err != nil || !bytes.Equal(out, big) {
		t.Fatalf("a %d-byte value round trip: %d bytes, %v", len(big), len(out), err)
	}
	over := append(big, ' ')
	if _, err := Unpack(Pack(over), 0); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a value over checkpoint.MaxValueSize unpacked with no limit given: %v", err)
	}
}

// A zstd frame is checked against the size it says before anything is
// decoded, and must hold exactly that size.
func TestUnpackZstdLimits(t *testing.T) {
	bomb := Pack(make([]byte, 64<<20)) // 64 MiB of zeros in a few KB
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Unpack(bomb, 1<<20)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a %d-byte zstd bomb of 64 MiB unpacked with err %v, want ErrTooLarge", len(bomb), err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("refusing the bomb allocated %d KiB", grew>>10)
	}
	// A frame whose header says 300 bytes but which holds 3,000.
	lie := zstdEncoder().EncodeAll(bytes.Repeat([]byte("y"), 300), []byte{packDeflate, packZstd})
	truth := zstdEncoder().EncodeAll(bytes.Repeat([]byte("y"), 3000), nil)
	var h zstd.Header
	if err := h.Decode(truth); err != nil {
		t.Fatal(err)
	}
	forged := append(append([]byte{}, lie[:2+h.HeaderSize]...), truth[h.HeaderSize:]...)
	if out, err := Unpack(forged, 0); err == nil {
		t.Fatalf("a frame lying about its size unpacked to %d bytes", len(out))
	}
	if _, err := Unpack([]byte{packDeflate, packZstd, 0x28, 0xb5}, 0); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("a cut zstd frame: %v", err)
	}
}

// A decompression bomb (a few KB that inflate to gigabytes) is refused
// after reading at most the limit, raw or compressed.
func TestUnpackLimit(t *testing.T) {
	bomb := deflated(t, make([]byte, 64<<20)) // 64 MiB of zeros
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Unpack(bomb, 1<<20)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a %d-byte bomb of 64 MiB unpacked with err %v, want ErrTooLarge", len(bomb), err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
		t.Errorf("refusing the bomb allocated %d MiB", grew>>20)
	}
	if _, err := Unpack(Pack(bytes.Repeat([]byte("x"), 1000)), 999); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a 1000-byte value under a 999-byte limit: %v", err)
	}
	if _, err := Unpack(bytes.Repeat([]byte{0x7f}, 100), 99); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a raw 100-byte value under a 99-byte limit: %v", err)
	}
	if v, err := Unpack(Pack(bytes.Repeat([]byte("x"), 1000)), 1000); err != nil || len(v) != 1000 {
		t.Errorf("a value at the limit: %d bytes, %v", len(v), err)
	}
}

// FuzzUnpack: stored forms of any shape unpack to at most the limit or
// fail; none panics or allocates past the limit.
//
//	go test -run '^$' -fuzz FuzzUnpack -fuzztime 200000x ./checkpoint/internal/record
func FuzzUnpack(f *testing.F) {
	f.Add(Pack(bytes.Repeat([]byte(`{"a":[1,2,3]}`), 100)))
	f.Add([]byte{packEscaped, 1, 2})
	f.Add([]byte(`"plain"`))
	f.Fuzz(func(t *testing.T, b []byte) {
		const limit = 1 << 16
		out, err := Unpack(b, limit)
		if err == nil && len(out) > limit {
			t.Fatalf("unpacked %d bytes past the %d-byte limit", len(out), limit)
		}
		if err == nil && len(b) > 0 && b[0] != packDeflate {
			if !bytes.Equal(Pack(out), b) && b[0] != packEscaped && len(b) < PackMin {
				t.Fatalf("a raw value does not pack back to itself: %q", b)
			}
		}
	})
}
