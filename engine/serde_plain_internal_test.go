package engine

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestPlainJSONStringAgreesWithMarshal checks every byte at every position
// of a word and in the tail: a string is plain when it holds only printable
// ASCII other than " \ < > &, and json.Marshal then leaves it unchanged
// between quotes (the one byte json.Marshal also keeps, DEL, is refused:
// refusing only means json.Marshal writes the value).
func TestPlainJSONStringAgreesWithMarshal(t *testing.T) {
	for c := 0; c < 256; c++ {
		for _, n := range []int{1, 7, 8, 9, 16, 23} {
			for pos := 0; pos < n; pos++ {
				b := []byte(strings.Repeat("a", n))
				b[pos] = byte(c)
				s := string(b)
				want := c >= 0x20 && c < 0x7f && !strings.ContainsRune(`"\<>&`, rune(c))
				got := plainJSONString(s)
				if got != want {
					t.Fatalf("plainJSONString(%q) = %v, want %v (byte %#x at %d of %d)", s, got, want, c, pos, n)
				}
				if m, err := json.Marshal(s); got && (err != nil || string(m) != `"`+s+`"`) {
					t.Fatalf("plainJSONString(%q) is true but json.Marshal writes %s", s, m)
				}
			}
		}
	}
}

func BenchmarkPlainJSONString1K(b *testing.B) {
	s := strings.Repeat("x", 1024)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if !plainJSONString(s) {
			b.Fatal("not plain")
		}
	}
}
