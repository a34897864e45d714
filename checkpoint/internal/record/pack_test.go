package record

import (
	"bytes"
	"compress/flate"
	"errors"
	"runtime"
	"strings"
	"testing"
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

// A decompression bomb (a few KB that inflate to gigabytes) is refused
// after reading at most the limit, raw or compressed.
func TestUnpackLimit(t *testing.T) {
	var buf bytes.Buffer
	buf.WriteByte(packDeflate)
	w, _ := flate.NewWriter(&buf, flate.BestCompression)
	zeros := make([]byte, 1<<20)
	for range 64 { // 64 MiB of zeros
		w.Write(zeros)
	}
	w.Close()
	bomb := buf.Bytes()
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
