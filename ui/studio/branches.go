package studio

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/weftstudio/weft/checkpoint"
)

// tlItem is one checkpoint on the timeline: what the timeline draws of
// its header, not the header itself, whose metadata maps would cost a
// 100,000-checkpoint thread some 80 MB more.
type tlItem struct {
	id       string
	parentID string // the parent checkpoint's id, "" for none
	ts       time.Time
	step     int
	source   checkpoint.Source
	tasks    []string // the nodes whose writes made it
	edits    int      // the what-if edits a fork records
	fp       string   // the fingerprint of the graph that wrote it, "" when not recorded
	lane     int
	parent   int    // index of the parent item, -1 for none
	cont     int    // index of the child that continues this branch (same lane), -1 for none
	label    string // "" until text asks: made only for what is shown
	when     string
}

// newItem keeps what the timeline shows of h.
func newItem(h checkpoint.Header) tlItem {
	it := tlItem{id: h.Ref.CheckpointID, ts: h.TS, step: h.Metadata.Step, source: h.Metadata.Source,
		tasks: h.Metadata.Tasks, edits: len(editsOf(h.Metadata)), fp: writtenBy(h.Metadata)}
	if h.Parent != nil {
		it.parentID = h.Parent.CheckpointID
	}
	return it
}

// olderGraph reports whether the item was written by another version of
// the graph than fp (an item that does not say is not).
func (it *tlItem) olderGraph(fp string) bool { return it.fp != "" && fp != "" && it.fp != fp }

// timeline is a thread's checkpoint headers, oldest first, laid out as
// branches: a checkpoint takes its parent's lane when it is that parent's
// first child, and a new lane below when it starts a fork. It holds no
// values, so 10,000 checkpoints cost little.
type timeline struct {
	items []tlItem
	index map[string]int
	lanes int
	forks int
}

func newTimeline() *timeline { return &timeline{index: map[string]int{}} }

func (t *timeline) count() int { return len(t.items) }

func (t *timeline) knows(id string) bool { _, ok := t.index[id]; return ok }

// head returns the id of the newest checkpoint ("" when empty).
func (t *timeline) head() string {
	if len(t.items) == 0 {
		return ""
	}
	return t.items[len(t.items)-1].id
}

// at returns the index of checkpoint id, -1 when unknown.
func (t *timeline) at(id string) int {
	if i, ok := t.index[id]; ok {
		return i
	}
	return -1
}

// subColumn is the column sub-lanes are drawn under: the step that ran the
// subgraph tasks, which is the checkpoint continuing the one that planned
// them once there is one (the planning checkpoint until then); -1 when the
// timeline does not hold it.
func (t *timeline) subColumn(sub *subLanes) int {
	col := t.at(sub.At)
	if col >= 0 && t.items[col].cont >= 0 {
		col = t.items[col].cont
	}
	return col
}

// id returns the checkpoint id of item i, "" when out of range.
func (t *timeline) id(i int) string {
	if i < 0 || i >= len(t.items) {
		return ""
	}
	return t.items[i].id
}

// prev returns the checkpoint before id on its branch: its parent.
func (t *timeline) prev(id string) string {
	i := t.at(id)
	if i < 0 {
		return ""
	}
	return t.id(t.items[i].parent)
}

// next returns the checkpoint after id on its branch: the child on the
// same lane, else its first child (the start of a fork), else "".
func (t *timeline) next(id string) string {
	i := t.at(id)
	if i < 0 {
		return ""
	}
	if c := t.items[i].cont; c >= 0 {
		return t.id(c)
	}
	for j := i + 1; j < len(t.items); j++ {
		if t.items[j].parent == i {
			return t.id(j)
		}
	}
	return ""
}

// itemsOf keeps what the timeline shows of headers, in their order: done
// off the UI goroutine for a long thread's pages, so the headers' maps die
// young.
func itemsOf(hs []checkpoint.Header) []tlItem {
	out := make([]tlItem, len(hs))
	for i, h := range hs {
		out[i] = newItem(h)
	}
	return out
}

// oldestFirst joins pages read newest first (each newest first) into one
// slice, oldest first, as merge takes them without sorting.
func oldestFirst(pages [][]tlItem) []tlItem {
	n := 0
	for _, p := range pages {
		n += len(p)
	}
	out := make([]tlItem, 0, n)
	for i := len(pages) - 1; i >= 0; i-- {
		for j := len(pages[i]) - 1; j >= 0; j-- {
			out = append(out, pages[i][j])
		}
	}
	return out
}

// merge adds items (any order) it does not hold yet and lays out the
// lanes again; it reports whether anything was added. Pages of older
// items are prepended and newer ones appended without sorting; anything
// else is sorted. It may reorder items.
func (t *timeline) merge(items []tlItem) bool {
	add := items[:0]
	for _, it := range items {
		if _, ok := t.index[it.id]; ok {
			continue
		}
		add = append(add, it)
		t.index[it.id] = -1
	}
	if len(add) == 0 {
		return false
	}
	// Ids are UUIDv7: their order is creation order.
	if !slices.IsSortedFunc(add, cmpItems) {
		slices.SortFunc(add, cmpItems)
	}
	switch n := len(t.items); {
	case n == 0:
		t.items = add
	case cmpItems(add[len(add)-1], t.items[0]) < 0:
		t.items = append(add, t.items...)
	case cmpItems(add[0], t.items[n-1]) > 0:
		t.items = append(t.items, add...)
	default:
		t.items = append(t.items, add...)
		slices.SortFunc(t.items, cmpItems)
	}
	t.layout()
	return true
}

func cmpItems(a, b tlItem) int { return strings.Compare(a.id, b.id) }

// layout gives each checkpoint its parent's lane when it is that parent's
// first child, and a new lane when it starts a fork.
func (t *timeline) layout() {
	t.lanes, t.forks = 0, 0
	if len(t.items) > 0 {
		t.lanes = 1
	}
	for i := range t.items {
		it := &t.items[i]
		t.index[it.id] = i
		it.parent, it.cont, it.lane = -1, -1, 0
		if it.parentID != "" {
			if j, ok := t.index[it.parentID]; ok && j >= 0 && j < i {
				it.parent = j
				if t.items[j].cont >= 0 {
					it.lane = t.lanes
					t.lanes++
					t.forks++
				} else {
					it.lane = t.items[j].lane
					t.items[j].cont = i
				}
			}
		}
	}
}

// text returns item i's label and time, made on first use: a long thread
// has far more checkpoints than are ever on screen.
func (t *timeline) text(i int) (label, when string) {
	it := &t.items[i]
	if it.label == "" {
		it.label, it.when = it.text()
	}
	return it.label, it.when
}

// text is a checkpoint's label on the timeline ("3 review", "1 fork")
// and its time.
func (it *tlItem) text() (label, when string) {
	what := joinNames(it.tasks)
	switch {
	case it.source == checkpoint.SourceInput:
		what = "input"
	case it.source == checkpoint.SourceFork:
		what = "fork"
		if it.edits == 1 {
			what = "fork, 1 edit"
		} else if it.edits > 1 {
			what = fmt.Sprintf("fork, %d edits", it.edits)
		}
	case it.source == checkpoint.SourceUpdate:
		what = strings.TrimSpace("update " + what)
	case what == "":
		what = string(it.source)
	}
	return fmt.Sprintf("%d %s", it.step, what), clock(it.ts)
}
