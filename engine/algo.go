package engine

// This file holds the two halves of LangGraph's algorithm (semantics
// reference §2.3–§2.4): planning a super-step's tasks and applying their
// writes.

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/weftstudio/weft/checkpoint"
)

// prepare plans the next super-step: pull tasks for nodes whose triggers
// changed since they last ran, then push tasks for pending Sends.
func (rt *runtime) prepare() ([]*task, error) {
	g := rt.g
	// Tasks of the previous step are done with: reuse them and their write
	// buffers.
	rt.free = append(rt.free, rt.live...)
	rt.live = rt.live[:0]
	tasks := rt.taskBuf[:0]
	defer func() { rt.taskBuf = tasks[:0] }()
	cands := rt.cands[:0]
	if rt.updated != nil {
		for _, c := range rt.updated {
			cands = append(cands, g.trigToNodes[c]...)
		}
		slices.Sort(cands)
		cands = slices.Compact(cands)
	} else {
		for i := range g.nodes {
			cands = append(cands, i)
		}
	}
	rt.cands = cands
	for _, ni := range cands {
		n := g.nodes[ni]
		seen := rt.seen[n.name]
		run := false
		for _, t := range n.triggers {
			var sv int64
			if seen != nil {
				sv = seen[t]
			}
			if rt.ch[t].available() && rt.ver[t] > sv {
				run = true
				break
			}
		}
		if run {
			t := rt.newTask()
			t.node, t.name, t.triggers, t.path = n, n.name, n.triggers, n.pullPath
			tasks = append(tasks, t)
		}
	}
	if v, ok := rt.ch[g.tasksCh].get(); ok {
		for i, s := range v.([]Send) {
			ni, ok := g.nodeIdx[s.Node]
			if !ok || s.Node == START {
				return nil, fmt.Errorf("Send to unknown node %q", s.Node)
			}
			t := rt.newTask()
			t.node, t.name, t.push, t.idx, t.arg, t.path = g.nodes[ni], s.Node, true, i, s.Arg, "push:"+strconv.Itoa(i)+":"+s.Node
			tasks = append(tasks, t)
		}
	}
	if rt.needIDs() {
		for _, t := range tasks {
			trig := ""
			if !t.push {
				names := make([]string, len(t.triggers))
				for i, c := range t.triggers {
					names[i] = g.specs[c].name
				}
				trig = strings.Join(names, ",")
			}
			id := hashID(rt.cpID, rt.ns, strconv.Itoa(rt.step), t.path, trig)
			t.id = id[0:8] + "-" + id[8:12] + "-" + id[12:16] + "-" + id[16:20] + "-" + id[20:32]
		}
	}
	return tasks, nil
}

// newTask returns a cleared task, reusing one from an earlier step.
func (rt *runtime) newTask() *task {
	var t *task
	if n := len(rt.free); n > 0 {
		t = rt.free[n-1]
		rt.free = rt.free[:n-1]
		*t = task{writes: t.writes[:0]}
	} else {
		t = &task{}
	}
	rt.live = append(rt.live, t)
	return t
}

func (rt *runtime) needIDs() bool { return rt.saver != nil || rt.em != nil }

// apply commits a super-step's writes (semantics reference §2.4) and returns
// the channels it updated.
func (rt *runtime) apply(tasks []*task) ([]int, error) {
	g := rt.g
	bump := false
	for _, t := range tasks {
		if len(t.triggers) > 0 || t.bump || t.push {
			bump = true
		}
	}
	var maxv int64
	for _, v := range rt.ver {
		maxv = max(maxv, v)
	}
	next := nextVersion(maxv)
	for _, t := range tasks {
		if len(t.triggers) == 0 {
			continue
		}
		seen := rt.seenFor(t.name)
		for _, c := range t.triggers {
			seen[c] = rt.ver[c]
		}
	}
	for _, t := range tasks {
		for _, c := range t.triggers {
			if rt.ch[c].consume() {
				rt.ver[c] = next
			}
		}
	}
	rt.touched = rt.touched[:0]
	if rt.buckets == nil {
		rt.buckets = make([][]any, len(rt.ch))
	}
	for _, t := range tasks {
		for _, w := range t.writes {
			if w.ch < 0 {
				continue
			}
			if len(rt.buckets[w.ch]) == 0 {
				rt.touched = append(rt.touched, w.ch)
			}
			rt.buckets[w.ch] = append(rt.buckets[w.ch], w.v)
		}
	}
	slices.Sort(rt.touched)
	// Two buffers in turn: rt.updated (the previous step's) stays valid
	// while this one is built.
	rt.updFlip ^= 1
	updated := rt.updBuf[rt.updFlip][:0]
	if len(rt.mask) < len(rt.ch) {
		rt.mask = make([]bool, len(rt.ch))
	}
	mask := rt.mask
	clear(mask)
	var err error
	for _, c := range rt.touched {
		vals := rt.buckets[c]
		rt.buckets[c] = vals[:0]
		if err != nil {
			continue
		}
		changed, uerr := rt.ch[c].update(vals)
		clear(vals)
		if uerr != nil {
			err = uerr
			continue
		}
		if changed {
			rt.ver[c] = next
			if rt.ch[c].available() {
				updated = append(updated, c)
				mask[c] = true
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if bump {
		n := len(updated)
		for c, ch := range rt.ch {
			if mask[c] || !ch.available() {
				continue
			}
			if changed, _ := ch.update(nil); changed {
				rt.ver[c] = next
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
			for c, ch := range rt.ch {
				if ch.finish() {
					rt.ver[c] = next
					if ch.available() && !mask[c] {
						updated = append(updated, c)
						mask[c] = true
					}
				}
			}
			slices.Sort(updated)
		}
	}
	rt.updBuf[rt.updFlip] = updated
	rt.updated = updated
	return updated, nil
}

// MetaGraph is the metadata Extra key under which every checkpoint records
// the name of the graph that wrote it, so tools can tell which graph a
// thread belongs to.
const MetaGraph = "graph"

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
