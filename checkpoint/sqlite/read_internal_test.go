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
	got := versionRanges(map[string][]int64{"a": {1, 500, 501}, "b": {503, 510}, "c": {520}})
	want := [][2]int64{{1, 1}, {500, 503}, {510, 510}, {520, 520}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("versionRanges = %v, want %v", got, want)
	}
}
