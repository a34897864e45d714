package record

import (
	"strconv"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
)

// A buffer returns what was added, in order, across its chunks' seams,
// whatever its limit; empty is an empty slice, not nil.
func TestHeaderBuf(t *testing.T) {
	for _, tc := range []struct{ limit, n int }{{0, 0}, {0, 1}, {0, headerChunk}, {0, headerChunk + 1}, {0, 3*headerChunk + 7}, {10, 10}, {10, 11}, {100, 5000}} {
		b := NewHeaderBuf(tc.limit)
		if tc.limit == 0 && tc.n == 1 {
			b = &HeaderBuf{} // the zero value
		}
		for i := range tc.n {
			b.Add(checkpoint.Header{Ref: checkpoint.Ref{CheckpointID: strconv.Itoa(i)}})
		}
		got := b.Headers()
		if got == nil || len(got) != tc.n {
			t.Fatalf("limit %d, %d added: got %d headers (nil %v)", tc.limit, tc.n, len(got), got == nil)
		}
		for i, h := range got {
			if h.Ref.CheckpointID != strconv.Itoa(i) {
				t.Fatalf("limit %d, %d added: header %d is %s", tc.limit, tc.n, i, h.Ref.CheckpointID)
			}
		}
	}
}
