package record

import (
	"bytes"
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
		out, err := Unpack(stored)
		if err != nil || !bytes.Equal(out, in) || (in == nil) != (stored == nil) {
			t.Errorf("%s: round trip gave %q, %v", name, out, err)
		}
	}
	if got := Pack(long); len(got) >= len(long)/4 {
		t.Errorf("a repetitive 1 KB value packs to %d bytes", len(got))
	}
	if _, err := Unpack([]byte{0x01, 0xff, 0xff}); err == nil {
		t.Error("damaged compressed data unpacked without error")
	}
}
