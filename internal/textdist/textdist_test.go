package textdist

import "testing"

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"thread", "threads", 1},
		{"threads", "thread", 1},
		{"kitten", "sitting", 3},
		{"notes", "ntoes", 2},
		{"résumé", "resume", 2}, // runes, not bytes: two edits, not four
		{"same", "same", 0},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
