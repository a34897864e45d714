package engine

// This file holds the two halves of LangGraph's algorithm (semantics
// reference §2.3–§2.4, LangGraph's pregel/_algo.py): planning a super-step's
// tasks and applying their writes. Both are functions over explicit inputs
// — the graph, the channels with their versions, the tasks — so they can be
// tested alone; the loop around them (loop.go) only sequences them.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/weftstudio/weft/checkpoint"
)

// chanState is what the algorithm reads and changes: a graph's channels,
// their versions, and per node the versions of its triggers it has seen.
// Index i of ch and ver is the graph's channel i.
type chanState struct {
	ch   []channel
	ver  []int64
	seen seenVersions
}

// seenVersions holds per node the versions of its triggers it last ran on
// (LangGraph's versions_seen), each by channel index; a nil entry means
// the node never ran. The graph's nodes are found by index, as planning
// and applying look them up every step; the other names a checkpoint
// holds (__input__, __interrupt__, a node the graph no longer has) are
// kept in a short list.
type seenVersions struct {
	g     *Graph
	nodes [][]int64 // by node index
	other []namedSeen
	// block is memory for new entries, used up to used: one allocation
	// serves every node of a run, and reset hands it out again.
	block []int64
	used  int
}

type namedSeen struct {
	name string
	s    []int64
}

// newSeen returns an empty seenVersions for g's nodes; it allocates when
// the first entry is made.
func newSeen(g *Graph) seenVersions { return seenVersions{g: g} }

// peek returns the entry of the graph's node i; nil when it has none.
func (sv *seenVersions) peek(i int) []int64 {
	if sv.nodes == nil {
		return nil
	}
	return sv.nodes[i]
}

// reset forgets every entry, keeping the memory.
func (sv *seenVersions) reset() {
	clear(sv.nodes)
	clear(sv.other)
	sv.other = sv.other[:0]
	clear(sv.block[:sv.used])
	sv.used = 0
}

// alloc returns a new zeroed entry.
func (sv *seenVersions) alloc() []int64 {
	n := len(sv.g.specs)
	if len(sv.block)-sv.used < n {
		sv.block, sv.used = make([]int64, n*(len(sv.g.nodes)+2)), 0
	}
	s := sv.block[sv.used : sv.used+n : sv.used+n]
	sv.used += n
	return s
}

// node returns the entry of the graph's node i, creating it empty.
func (sv *seenVersions) node(i int) []int64 {
	if sv.nodes == nil {
		sv.nodes = make([][]int64, len(sv.g.nodes))
	}
	if sv.nodes[i] == nil {
		sv.nodes[i] = sv.alloc()
	}
	return sv.nodes[i]
}

// get returns name's entry; nil when it has none.
func (sv *seenVersions) get(name string) []int64 {
	if i, ok := sv.g.nodeIdx[name]; ok {
		return sv.peek(i)
	}
	for _, o := range sv.other {
		if o.name == name {
			return o.s
		}
	}
	return nil
}

// set makes s name's entry.
func (sv *seenVersions) set(name string, s []int64) {
	if i, ok := sv.g.nodeIdx[name]; ok {
		if sv.nodes == nil {
			sv.nodes = make([][]int64, len(sv.g.nodes))
		}
		sv.nodes[i] = s
		return
	}
	for k := range sv.other {
		if sv.other[k].name == name {
			sv.other[k].s = s
			return
		}
	}
	sv.other = append(sv.other, namedSeen{name, s})
}

// ensure returns name's entry, creating it empty.
func (sv *seenVersions) ensure(name string) []int64 {
	s := sv.get(name)
	if s == nil {
		s = sv.alloc()
		sv.set(name, s)
	}
	return s
}

// count returns how many names have an entry.
func (sv *seenVersions) count() int {
	n := len(sv.other)
	for _, s := range sv.nodes {
		if s != nil {
			n++
		}
	}
	return n
}

// all yields each name with an entry and its entry.
func (sv *seenVersions) all() iter.Seq2[string, []int64] {
	return func(yield func(string, []int64) bool) {
		for i, s := range sv.nodes {
			if s != nil && !yield(sv.g.nodes[i].name, s) {
				return
			}
		}
		for _, o := range sv.other {
			if !yield(o.name, o.s) {
				return
			}
		}
	}
}

// hasVersions reports whether any channel has ever been written: a thread
// with no state has nothing to resume.
func (st *chanState) hasVersions() bool {
	return slices.ContainsFunc(st.ver, func(v int64) bool { return v != 0 })
}

// stepIDs is what a step's task ids are derived from (semantics §3). With
// needed false tasks get no id: a run with neither saver nor stream never
// shows them, and hashing is a third of a small step's cost.
type stepIDs struct {
	needed bool
	cpID   string // the checkpoint the step starts from
	ns     string
	step   int
}

// taskPool hands out tasks and takes back those of a finished step, so a
// long run allocates tasks for its widest step only.
type taskPool struct {
	live []*task // handed out for the current step
	free []*task
	buf  []*task // the slice planTasks returns, reused
}

// recycle makes the previous step's tasks free for reuse.
func (p *taskPool) recycle() {
	p.free = append(p.free, p.live...)
	p.live = p.live[:0]
}

func (p *taskPool) get() *task {
	var t *task
	if n := len(p.free); n > 0 {
		t = p.free[n-1]
		p.free = p.free[:n-1]
		*t = task{writes: t.writes[:0]}
	} else {
		t = &task{}
	}
	p.live = append(p.live, t)
	return t
}

// algoBufs are scratch buffers of planTasks and applyWrites, reused from
// step to step.
type algoBufs struct {
	cands  []int
	mask   []bool
	writes []cwrite // a step's writes, by channel
	vals   []any    // their values, in the same order
	order  []*task
	// updated alternates between two buffers: the slice applyWrites
	// returned last time stays valid while the next is built.
	upd  [2][]int
	flip int
}

func (b *algoBufs) reset() {
	clear(b.writes[:cap(b.writes)])
	clear(b.vals[:cap(b.vals)])
	b.cands, b.writes, b.vals, b.order = b.cands[:0], b.writes[:0], b.vals[:0], b.order[:0]
	b.upd, b.flip = [2][]int{b.upd[0][:0], b.upd[1][:0]}, 0
	clear(b.mask)
}

// planTasks returns the tasks of the next super-step (LangGraph's
// prepare_next_tasks): a push task per pending Send, in Send order, then a
// pull task per node one of whose triggers is available with a version it
// has not seen. updated lists the channels the last applyWrites changed;
// with it only the nodes they trigger are candidates, in name order, and
// without it (nil: unknown, as after loading a checkpoint) every node is,
// in declaration order — the order LangGraph's snapshots list tasks in.
// The tasks come from pool and are valid until its next recycle.
func planTasks(g *Graph, st *chanState, updated []int, ids stepIDs, pool *taskPool, b *algoBufs) ([]*task, error) {
	tasks := pool.buf[:0]
	defer func() { pool.buf = tasks[:0] }()
	if v, ok := st.ch[g.tasksCh].get(); ok {
		for i, s := range v.([]Send) {
			ni, ok := g.nodeIdx[s.Node]
			if !ok || s.Node == START {
				return nil, fmt.Errorf("Send to unknown node %q", s.Node)
			}
			t := pool.get()
			t.node, t.name, t.push, t.idx, t.arg, t.path = g.nodes[ni], s.Node, true, i, s.Arg, "push:"+strconv.Itoa(i)+":"+s.Node
			tasks = append(tasks, t)
		}
	}
	cands := b.cands[:0]
	if updated != nil {
		for _, c := range updated {
			cands = append(cands, g.trigToNodes[c]...)
		}
		slices.Sort(cands) // node indexes follow names
		cands = slices.Compact(cands)
	} else {
		cands = append(cands, g.declared...)
	}
	b.cands = cands
	for _, ni := range cands {
		n := g.nodes[ni]
		if triggered(st, n) {
			t := pool.get()
			t.node, t.name, t.triggers, t.path = n, n.name, n.triggers, n.pullPath
			tasks = append(tasks, t)
		}
	}
	if ids.needed {
		for _, t := range tasks {
			t.id = taskID(ids, t)
		}
	}
	return tasks, nil
}

// triggered reports whether node n has a trigger that is available with a
// version newer than the one n last saw.
func triggered(st *chanState, n *node) bool {
	seen := st.seen.peek(n.idx)
	for _, t := range n.triggers {
		var sv int64
		if seen != nil {
			sv = seen[t]
		}
		if st.ch[t].available() && st.ver[t] > sv {
			return true
		}
	}
	return false
}

// taskID derives a task's id from the step it belongs to and its path (and
// a pull task's triggers), as LangGraph does with xxh3; see the package
// documentation. It is hashID's digest of the same parts, formatted as a
// UUID, built in one buffer: History derives an id for every task of every
// checkpoint.
func taskID(ids stepIDs, t *task) string {
	var buf [256]byte // most ids hash less; longer input just allocates
	b := append(buf[:0], ids.cpID...)
	b = append(b, 0)
	b = append(b, ids.ns...)
	b = append(b, 0)
	b = strconv.AppendInt(b, int64(ids.step), 10)
	b = append(b, 0)
	b = append(b, t.path...)
	b = append(b, 0)
	if !t.push {
		b = append(b, t.node.trigNames...) // t.triggers are its node's
	}
	b = append(b, 0)
	sum := sha256.Sum256(b)
	var out [36]byte
	hex.Encode(out[0:8], sum[0:4])
	hex.Encode(out[9:13], sum[4:6])
	hex.Encode(out[14:18], sum[6:8])
	hex.Encode(out[19:23], sum[8:10])
	hex.Encode(out[24:36], sum[10:16])
	out[8], out[13], out[18], out[23] = '-', '-', '-', '-'
	return string(out[:])
}

// applyOrder returns tasks in the order their writes apply (LangGraph sorts
// by task path): pull tasks by node name, then push tasks by Send index,
// then tasks with neither (input, manual updates), as given.
func applyOrder(tasks []*task, buf []*task) []*task {
	out := append(buf[:0], tasks...)
	if len(out) > 1 {
		slices.SortStableFunc(out, byPath)
	}
	return out
}

// pathRank orders kinds of tasks as their paths sort: pull, push, others.
func pathRank(t *task) int {
	switch {
	case t.push:
		return 1
	case t.node != nil && len(t.triggers) > 0:
		return 0
	}
	return 2
}

func byPath(a, b *task) int {
	ra, rb := pathRank(a), pathRank(b)
	switch {
	case ra != rb:
		return ra - rb
	case ra == 0:
		return a.node.idx - b.node.idx // node indexes follow names
	case ra == 1:
		return a.idx - b.idx
	}
	return 0
}

// applyWrites commits a super-step's writes to st (LangGraph's
// apply_writes, semantics reference §2.4) and returns the channels it
// updated that are available, sorted. It marks the triggers each task ran
// on as seen, consumes them, applies the writes per channel in task-path
// order, lets every other channel see a step pass when a task had triggers,
// and calls finish on every channel when nothing left triggers a node. All
// channels bumped by one call get one new version. The returned slice is
// valid until the call after next.
func applyWrites(g *Graph, st *chanState, tasks []*task, b *algoBufs) ([]int, error) {
	if len(tasks) > 1 { // one task is in order as it is
		b.order = applyOrder(tasks, b.order)
		tasks = b.order
	}
	bump := false
	for _, t := range tasks {
		if len(t.triggers) > 0 || t.bump || t.push {
			bump = true
		}
	}
	var maxv int64
	for _, v := range st.ver {
		maxv = max(maxv, v)
	}
	next := nextVersion(maxv)
	for _, t := range tasks {
		if len(t.triggers) == 0 {
			continue
		}
		seen := st.seen.node(t.node.idx) // a task with triggers is a node's pull task
		for _, c := range t.triggers {
			seen[c] = st.ver[c]
		}
	}
	for _, t := range tasks {
		for _, c := range t.triggers {
			if st.ch[c].consume() {
				st.ver[c] = next
			}
		}
	}
	// The step's writes in channel order, each channel's in task order
	// (a stable sort of one buffer: a slice per channel cost an
	// allocation per channel written).
	ws := b.writes[:0]
	for _, t := range tasks {
		for _, w := range t.writes {
			if w.ch >= 0 {
				ws = append(ws, w)
			}
		}
	}
	slices.SortStableFunc(ws, func(a, b cwrite) int { return a.ch - b.ch })
	vals := b.vals[:0]
	for _, w := range ws {
		vals = append(vals, w.v)
	}
	b.flip ^= 1
	updated := b.upd[b.flip][:0]
	if len(b.mask) < len(st.ch) {
		b.mask = make([]bool, len(st.ch))
		b.upd = [2][]int{make([]int, 0, len(st.ch)), make([]int, 0, len(st.ch))}
		updated = b.upd[b.flip]
	}
	mask := b.mask
	clear(mask)
	var err error
	for i := 0; i < len(ws); {
		c, j := ws[i].ch, i+1
		for j < len(ws) && ws[j].ch == c {
			j++
		}
		chVals := vals[i:j:j]
		i = j
		if err != nil {
			continue
		}
		changed, uerr := st.ch[c].update(chVals)
		if uerr != nil {
			err = uerr
			continue
		}
		if changed {
			st.ver[c] = next
			if st.ch[c].available() {
				updated = append(updated, c)
				mask[c] = true
			}
		}
	}
	// Kept for the next step. The values they still hold go when the
	// buffers are reset at the run's end: clearing them every step cost a
	// write barrier per slot whenever the GC was marking.
	b.writes, b.vals = ws[:0], vals[:0]
	if err != nil {
		return nil, err
	}
	if bump {
		n := len(updated)
		for c, ch := range st.ch {
			if mask[c] || !ch.available() {
				continue
			}
			if changed, _ := ch.update(nil); changed {
				st.ver[c] = next
				if ch.available() {
					updated = append(updated, c)
				}
			}
		}
		for _, c := range updated[n:] {
			mask[c] = true
		}
		slices.Sort(updated)
		triggers := false
		for _, c := range updated {
			if len(g.trigToNodes[c]) > 0 {
				triggers = true
				break
			}
		}
		if !triggers {
			for c, ch := range st.ch {
				if ch.finish() {
					st.ver[c] = next
					if ch.available() && !mask[c] {
						updated = append(updated, c)
						mask[c] = true
					}
				}
			}
			slices.Sort(updated)
		}
	}
	b.upd[b.flip] = updated
	return updated, nil
}

// MetaGraph is the metadata Extra key under which every checkpoint records
// the name of the graph that wrote it, so tools can tell which graph a
// thread belongs to.
const MetaGraph = "graph"

// MetaFingerprint is the metadata Extra key under which every checkpoint
// records the fingerprint of the graph's shape that wrote it
// (Topology.Fingerprint), so tools can tell a checkpoint written by an
// older version of the graph.
const MetaFingerprint = "graph_fingerprint"

// nextVersion returns a channel version greater than v. The high 31 bits
// count steps; the low 32 bits are random, as LangGraph's savers add a random
// fraction: two branches forked from one checkpoint then never give the same
// version to different values, so a saver can key stored values by
// (channel, version) across the whole thread.
func nextVersion(v int64) int64 {
	return ((v>>versionShift)+1)<<versionShift | int64(rand.Uint32())
}

const versionShift = 32

// VersionStep returns the step-counter part of a channel version, for
// display: versions compare as whole numbers, but their low bits are random
// (see checkpoint.VersionStep).
func VersionStep(v int64) int64 { return checkpoint.VersionStep(v) }
