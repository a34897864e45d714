package studio

import (
	"fmt"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
)

func header(id, parent string, step int) checkpoint.Header {
	hd := checkpoint.Header{Ref: checkpoint.Ref{ThreadID: "x", CheckpointID: id}, Metadata: checkpoint.Metadata{Source: checkpoint.SourceLoop, Step: step, Tasks: []string{"n"}}}
	if parent != "" {
		hd.Parent = &checkpoint.Ref{ThreadID: "x", CheckpointID: parent}
	}
	return hd
}

// 01 → 02 → 03 → 04, and forks 05 (from 02) → 06, 07 (from 02).
var forked = []checkpoint.Header{header("07", "02", 2), header("06", "05", 3), header("05", "02", 2), header("04", "03", 3), header("03", "02", 2), header("02", "01", 1), header("01", "", 0)}

// Headers arriving in pages, newest first, end up oldest first with forks
// on lanes of their own.
func TestTimelineMergeAndLanes(t *testing.T) {
	tl := newTimeline()
	tl.merge(itemsOf(forked[:3]))
	tl.merge(itemsOf(forked[3:5]))
	tl.merge(itemsOf(forked[5:]))
	if tl.merge(itemsOf(forked[1:4])) {
		t.Error("known headers reported as added")
	}
	var got string
	for _, it := range tl.items {
		got += fmt.Sprintf("%s:%d:%d ", it.id, it.lane, it.parent)
	}
	if want := "01:0:-1 02:0:0 03:0:1 04:0:2 05:1:1 06:1:4 07:2:1 "; got != want {
		t.Errorf("items\n got %s\nwant %s", got, want)
	}
	if tl.lanes != 3 || tl.head() != "07" || tl.forks != 2 {
		t.Errorf("lanes %d head %s forks %d", tl.lanes, tl.head(), tl.forks)
	}
}

// ← and → walk the branch of the selected checkpoint: ← from a fork's
// first checkpoint goes to the checkpoint it forked from (not to whatever
// came before it in time, on another branch), → stays on the branch.
// Before, ← and → moved by position in time order: ← from 05 gave 04 (the
// end of the old branch) and → from 02 gave 03 only by chance.
func TestTimelineArrowsFollowTheBranch(t *testing.T) {
	tl := newTimeline()
	tl.merge(itemsOf(forked))
	for _, c := range []struct{ from, prev, next string }{
		{"05", "02", "06"}, // the fork's first checkpoint
		{"06", "05", ""},   // the fork's end
		{"04", "03", ""},   // the old branch's end
		{"02", "01", "03"}, // the fork point continues its own branch
		{"07", "02", ""},   // the second fork
		{"01", "", "02"},
	} {
		if got := tl.prev(c.from); got != c.prev {
			t.Errorf("← from %s = %q, want %q", c.from, got, c.prev)
		}
		if got := tl.next(c.from); got != c.next {
			t.Errorf("→ from %s = %q, want %q", c.from, got, c.next)
		}
	}
}
