package studio

import (
	"fmt"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
)

// Headers arriving in pages, newest first, end up oldest first with forks
// on lanes of their own.
func TestTimelineMergeAndLanes(t *testing.T) {
	s := newStudio(t, nil)
	h := func(id, parent string, step int) checkpoint.Header {
		hd := checkpoint.Header{Ref: checkpoint.Ref{ThreadID: "x", CheckpointID: id}, Metadata: checkpoint.Metadata{Source: checkpoint.SourceLoop, Step: step, Tasks: []string{"n"}}}
		if parent != "" {
			hd.Parent = &checkpoint.Ref{ThreadID: "x", CheckpointID: parent}
		}
		return hd
	}
	// 01 → 02 → 03 → 04, and forks 05 (from 02) → 06, 07 (from 02).
	all := []checkpoint.Header{h("07", "02", 2), h("06", "05", 3), h("05", "02", 2), h("04", "03", 3), h("03", "02", 2), h("02", "01", 1), h("01", "", 0)}
	act(func() {
		s.tl.merge(all[:3])
		s.tl.merge(all[3:5])
		s.tl.merge(all[5:])
		s.tl.merge(all[1:4]) // known ones change nothing
	})
	var got string
	for _, it := range s.tl.items {
		got += fmt.Sprintf("%s:%d:%d ", it.h.Ref.CheckpointID, it.lane, it.parent)
	}
	if want := "01:0:-1 02:0:0 03:0:1 04:0:2 05:1:1 06:1:4 07:2:1 "; got != want {
		t.Errorf("items\n got %s\nwant %s", got, want)
	}
	if s.tl.lanes != 3 || s.tl.head() != "07" {
		t.Errorf("lanes %d head %s", s.tl.lanes, s.tl.head())
	}
}
