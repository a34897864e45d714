package sqlite

import (
	"reflect"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
)

func TestSortWrites(t *testing.T) {
	w := func(task, ch string) checkpoint.PendingWrite {
		return checkpoint.PendingWrite{TaskID: task, Channel: ch}
	}
	ws := []checkpoint.PendingWrite{w("b", "b0"), w("a", "a1"), w("a", "err"), w("a", "a0")}
	idxs := []int{0, 1, -1, 0}
	sortWrites(ws, idxs)
	want := []checkpoint.PendingWrite{w("a", "err"), w("a", "a0"), w("a", "a1"), w("b", "b0")}
	if !reflect.DeepEqual(ws, want) || !reflect.DeepEqual(idxs, []int{-1, 0, 1, 0}) {
		t.Fatalf("sorted to %v %v", ws, idxs)
	}
}

func TestVersionRanges(t *testing.T) {
	// Versions as the engine makes them: a step count in the high bits and
	// random low bits. Gaps are counted in steps.
	v := func(step, low int64) int64 { return step<<32 | low }
	got := versionRanges([]int64{v(510, 5), v(1, 7), v(500, 9), v(520, 2), v(501, 3), v(503, 1), v(500, 9)})
	want := [][2]int64{{v(1, 7), v(1, 7)}, {v(500, 9), v(503, 1)}, {v(510, 5), v(510, 5)}, {v(520, 2), v(520, 2)}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("versionRanges = %v, want %v", got, want)
	}
}
