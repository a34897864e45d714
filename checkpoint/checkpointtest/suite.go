// Package checkpointtest is the conformance suite every checkpoint.Saver must
// pass. A saver's tests run it with one call:
//
//	func TestConformance(t *testing.T) {
//		checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver { return memory.New() })
//	}
//
// The suite ports every case of LangGraph's two checkpointer suites (see the
// project's semantics reference, §10): the JS package
// @langchain/langgraph-checkpoint-validation (put, putWrites, getTuple, the
// generated list combinations, deleteThread) and the Python package
// langgraph-checkpoint-conformance (put, put_writes, get_tuple, list,
// delete_thread, copy_thread, prune). Cases for the optional capabilities
// (checkpoint.Pruner, Copier, RunDeleter, ThreadLister, HeaderLister, StatsReporter,
// StorageReporter, PolicyPruner, Vacuumer, ThreadSearcher, Watcher) run only when
// the saver implements them. Weft's own contract adds mutation safety,
// concurrent use, write ordering, the storage model (one value per channel
// version), thread leases (checkpoint.Leaser, when implemented) and, for
// savers shared between processes (not checkpoint.InProcess), the conflict
// rule of checkpoint.ErrConflict.
//
// Every case gets a fresh saver from newSaver, except the generated list
// combinations, which share one saver filled once. There are 187 cases
// (put 31, put_writes 19, get 18, list 20, delete_thread 5, prune 11,
// copy_thread 5, delete_run 8, list_threads 4, list_headers 1, stats 1, storage 8,
// prune_by 8, vacuum 1, search_threads 9, safety 7, lease 11, conflict 6,
// limits 5, lease_holder 6, watch 3) plus the 432 generated list
// combinations.
//
// # What the suite pins down beyond LangGraph
//
//   - Values are bytes and come back byte for byte; a channel present in
//     ChannelValues with a nil value comes back as an empty, non-nil slice.
//     A write's nil value stays nil; an empty one stays empty.
//   - Checkpoint.TS comes back in UTC, to the nanosecond.
//   - ChannelValues, ChannelVersions and VersionsSeen are never nil on read;
//     UpdatedChannels keeps nil (unknown) apart from empty.
//   - Metadata comes back as its JSON encoding decodes (Extra numbers as
//     float64, objects as map[string]any; empty Tasks or Extra as nil).
//   - Tuple.PendingWrites is never nil; it is ordered by task id, then index,
//     so special writes (negative indexes) come before a task's ordinary ones.
//   - List orders newest first by checkpoint id, ties by thread id then
//     namespace; a nil filter value matches a missing or null key.
//   - Values up to checkpoint.MaxValueSize are stored and read back, random
//     or repetitive; a larger one is refused by Put or PutWrites, which
//     then store nothing.
//   - Get with an empty thread id returns checkpoint.ErrNoThread (LangGraph
//     returns nothing); a missing checkpoint returns checkpoint.ErrNotFound.
//
// # Left out on purpose
//
//   - JS "should migrate pending sends": it loads v1 checkpoints whose
//     pending_sends must move into channel_values[__pregel_tasks]. Weft never
//     wrote that format (checkpoint.FormatVersion starts at 4), so there is
//     nothing to migrate.
//   - JS deltaChannelHistory and Python delta-channel cases: DeltaChannel is
//     beta in LangGraph 1.2 and out of scope for the engine.
//   - Python delete_for_runs: Weft's checkpoint.RunDeleter deletes one
//     run and also resets the writes it added to the checkpoint it started
//     from; its own cases (delete_run) cover that instead.
//   - Python "put_writes idempotent across restart" needs a saver that can be
//     reopened; the SQLite saver's own tests cover it.
package checkpointtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
)

// Run runs the whole conformance suite against savers made by newSaver,
// which must return a new, empty saver each call (closing it, if needed,
// through t.Cleanup).
func Run(t *testing.T, newSaver func(t *testing.T) checkpoint.Saver) {
	t.Helper()
	groups := []struct {
		name  string
		cases []testCase
	}{
		{"put", putCases()},
		{"put_writes", writesCases()},
		{"get", getCases()},
		{"list", listCases()},
		{"delete_thread", deleteCases()},
		{"prune", pruneCases()},
		{"copy_thread", copyCases()},
		{"delete_run", runDeleteCases()},
		{"list_threads", threadCases()},
		{"list_headers", headerCases()},
		{"write_kinds", writeKindsCases()},
		{"stats", statsCases()},
		{"storage", storageCases()},
		{"prune_by", policyCases()},
		{"vacuum", vacuumCases()},
		{"search_threads", searchCases()},
		{"safety", safetyCases()},
		{"lease", leaseCases()},
		{"conflict", conflictCases()},
		{"limits", limitCases()},
		{"lease_holder", holderCases()},
		{"watch", watchCases()},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, c := range g.cases {
				t.Run(c.name, func(t *testing.T) {
					s := newSaver(t)
					if c.needs != nil && !c.needs(s) {
						t.Skipf("saver %T does not implement %s", s, c.capability)
					}
					c.run(t, s)
				})
			}
		})
	}
	t.Run("list/generated", func(t *testing.T) { runGeneratedList(t, newSaver(t)) })
}

// testCase is one conformance case.
type testCase struct {
	name       string
	run        func(t *testing.T, s checkpoint.Saver)
	needs      func(s checkpoint.Saver) bool // nil: every saver
	capability string
}

// namespaces are the two namespaces the JS suite runs put, putWrites and
// getTuple cases in.
var namespaces = []struct{ label, ns string }{{"root_ns", ""}, {"child_ns", "child"}}

// perNS returns one case per namespace for a case taking the namespace.
func perNS(name string, run func(t *testing.T, s checkpoint.Saver, ns string)) []testCase {
	var out []testCase
	for _, n := range namespaces {
		out = append(out, testCase{name: n.label + "/" + name, run: func(t *testing.T, s checkpoint.Saver) { run(t, s, n.ns) }})
	}
	return out
}

// ---- fixtures and helpers ----

var threadSeq atomic.Int64

// newThread returns a thread id unique within the test binary.
func newThread(prefix string) string {
	return fmt.Sprintf("%s-%d-%s", prefix, threadSeq.Add(1), checkpoint.NewID()[24:])
}

// vals builds channel values from strings.
func vals(kv ...string) map[string][]byte {
	m := map[string][]byte{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = []byte(kv[i+1])
	}
	return m
}

// vers builds a version map from name, version pairs.
func vers(kv ...any) map[string]int64 {
	m := map[string]int64{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = int64(kv[i+1].(int))
	}
	return m
}

// newCP returns a fresh checkpoint with a new id, like the JS fixtures:
// v 4 and opaque versions_seen {"": {someChannel: 1}}.
func newCP(values map[string][]byte, versions map[string]int64) checkpoint.Checkpoint {
	return checkpoint.Checkpoint{
		V:               checkpoint.FormatVersion,
		ID:              checkpoint.NewID(),
		TS:              time.Now(),
		ChannelValues:   values,
		ChannelVersions: versions,
		VersionsSeen:    map[string]map[string]int64{"": {"someChannel": 1}},
	}
}

func inputMD() checkpoint.Metadata {
	return checkpoint.Metadata{Source: checkpoint.SourceInput, Step: -1, Parents: map[string]string{}}
}

func updateMD(step int) checkpoint.Metadata {
	return checkpoint.Metadata{Source: checkpoint.SourceUpdate, Step: step, Parents: map[string]string{}}
}

func loopMD(step int) checkpoint.Metadata {
	return checkpoint.Metadata{Source: checkpoint.SourceLoop, Step: step, Parents: map[string]string{}}
}

func mustPut(t *testing.T, s checkpoint.Saver, parent checkpoint.Ref, cp checkpoint.Checkpoint, md checkpoint.Metadata, newVersions map[string]int64) checkpoint.Ref {
	t.Helper()
	ref, err := s.Put(t.Context(), parent, cp, md, newVersions)
	if err != nil {
		t.Fatalf("Put(%+v, checkpoint %s): %v", parent, cp.ID, err)
	}
	return ref
}

func mustWrites(t *testing.T, s checkpoint.Saver, ref checkpoint.Ref, taskID, taskPath string, kv ...string) {
	t.Helper()
	var ws []checkpoint.Write
	for i := 0; i+1 < len(kv); i += 2 {
		ws = append(ws, checkpoint.Write{Channel: kv[i], Value: []byte(kv[i+1])})
	}
	if err := s.PutWrites(t.Context(), ref, ws, taskID, taskPath); err != nil {
		t.Fatalf("PutWrites(%+v, task %q): %v", ref, taskID, err)
	}
}

func mustGet(t *testing.T, s checkpoint.Saver, ref checkpoint.Ref) *checkpoint.Tuple {
	t.Helper()
	tp, err := s.Get(t.Context(), ref)
	if err != nil {
		t.Fatalf("Get(%+v): %v", ref, err)
	}
	if tp == nil {
		t.Fatalf("Get(%+v) returned nil tuple and nil error", ref)
	}
	return tp
}

func mustList(t *testing.T, s checkpoint.Saver, opts checkpoint.ListOptions) []*checkpoint.Tuple {
	t.Helper()
	var out []*checkpoint.Tuple
	for tp, err := range s.List(t.Context(), opts) {
		if err != nil {
			t.Fatalf("List(%s): %v", describeOpts(opts), err)
		}
		out = append(out, tp)
	}
	return out
}

func expectNotFound(t *testing.T, s checkpoint.Saver, ref checkpoint.Ref) {
	t.Helper()
	tp, err := s.Get(t.Context(), ref)
	if !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("Get(%+v) = %v, %v; want ErrNotFound", ref, describe(tp), err)
	}
	if tp != nil {
		t.Fatalf("Get(%+v) returned a tuple with ErrNotFound", ref)
	}
}

// normMD returns md as a saver returns it: through its JSON encoding.
func normMD(md checkpoint.Metadata) checkpoint.Metadata {
	b, err := json.Marshal(md)
	if err != nil {
		panic(err)
	}
	var out checkpoint.Metadata
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

// want builds the tuple a saver must return for a stored checkpoint whose
// reconstructed values are values.
func want(ref checkpoint.Ref, parentID string, cp checkpoint.Checkpoint, md checkpoint.Metadata, values map[string][]byte, writes ...checkpoint.PendingWrite) *checkpoint.Tuple {
	c := cp.Clone()
	c.TS = c.TS.UTC()
	c.ChannelValues = map[string][]byte{}
	for k, v := range values {
		if v == nil {
			v = []byte{}
		}
		c.ChannelValues[k] = slices.Clone(v)
	}
	if c.ChannelVersions == nil {
		c.ChannelVersions = map[string]int64{}
	}
	if c.VersionsSeen == nil {
		c.VersionsSeen = map[string]map[string]int64{}
	}
	tp := &checkpoint.Tuple{Ref: ref, Checkpoint: c, Metadata: normMD(md), PendingWrites: []checkpoint.PendingWrite{}}
	if parentID != "" {
		tp.Parent = &checkpoint.Ref{ThreadID: ref.ThreadID, NS: ref.NS, CheckpointID: parentID}
	}
	tp.PendingWrites = append(tp.PendingWrites, writes...)
	return tp
}

// pw is a pending write with a string value.
func pw(task, channel, value string) checkpoint.PendingWrite {
	return checkpoint.PendingWrite{TaskID: task, Channel: channel, Value: []byte(value)}
}

// expectTuple fails unless got deep-equals want, showing both.
func expectTuple(t *testing.T, what string, got, want *checkpoint.Tuple) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got: %s\nwant: %s", what, describe(got), describe(want))
	}
}

// expectIDs fails unless tuples have exactly the ids, in order.
func expectIDs(t *testing.T, what string, tuples []*checkpoint.Tuple, ids ...string) {
	t.Helper()
	got := make([]string, len(tuples))
	for i, tp := range tuples {
		got[i] = tp.Ref.CheckpointID
	}
	if ids == nil {
		ids = []string{}
	}
	if !slices.Equal(got, ids) {
		t.Errorf("%s: got ids %v, want %v", what, got, ids)
	}
}

// describe prints a tuple readably: bytes as quoted strings, nil apart from
// empty.
func describe(tp *checkpoint.Tuple) string {
	if tp == nil {
		return "<nil>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "{Ref:%+v Parent:", tp.Ref)
	if tp.Parent == nil {
		b.WriteString("<nil>")
	} else {
		fmt.Fprintf(&b, "%+v", *tp.Parent)
	}
	cp := tp.Checkpoint
	fmt.Fprintf(&b, " V:%d ID:%s TS:%s(%v) Values:%s Versions:%v Seen:%v Updated:%s Meta:%#v Writes:[",
		cp.V, cp.ID, cp.TS.Format(time.RFC3339Nano), cp.TS.Location(), describeValues(cp.ChannelValues),
		cp.ChannelVersions, cp.VersionsSeen, describeStrings(cp.UpdatedChannels), tp.Metadata)
	if tp.PendingWrites == nil {
		b.WriteString("<nil>")
	}
	for i, w := range tp.PendingWrites {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "(%s %s %s %q)", w.TaskID, w.Channel, describeBytes(w.Value), w.TaskPath)
	}
	b.WriteString("]}")
	return b.String()
}

func describeValues(m map[string][]byte) string {
	if m == nil {
		return "<nil>"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ":" + describeBytes(m[k])
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func describeBytes(b []byte) string {
	if b == nil {
		return "<nil>"
	}
	if len(b) > 64 {
		return fmt.Sprintf("%q…(%d bytes)", b[:64], len(b))
	}
	return fmt.Sprintf("%q", b)
}

func describeStrings(s []string) string {
	if s == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%q", s)
}

func describeOpts(o checkpoint.ListOptions) string {
	ns := "<all>"
	if o.NS != nil {
		ns = fmt.Sprintf("%q", *o.NS)
	}
	return fmt.Sprintf("thread=%q ns=%s filter=%v before=%q limit=%d", o.ThreadID, ns, o.Filter, o.Before, o.Limit)
}

func ptr[T any](v T) *T { return &v }

// jsPair is the JS suite's parent/child fixture in one thread and namespace:
// the parent (source input, step -1) holds animals=["dog"] at version 1 and
// a TASKS write of task "pending_sends_task"; the child (source loop, step 0,
// parents {ns: parent id}) holds animals=["fish","dog"] at version 2, put
// with newVersions {animals: 2}, and a write of task "add_fish".
type jsPair struct {
	parent, child           *checkpoint.Tuple // what Get must return
	parentCP, childCP       checkpoint.Checkpoint
	parentMD, childMD       checkpoint.Metadata
	childNewVersions        map[string]int64
	parentWrite, childWrite checkpoint.PendingWrite
}

func newJSPair(thread, ns string) *jsPair {
	p := &jsPair{}
	p.parentCP = newCP(vals("animals", `["dog"]`), vers("animals", 1))
	p.childCP = newCP(vals("animals", `["fish","dog"]`), vers("animals", 2))
	p.parentMD = inputMD()
	p.childMD = checkpoint.Metadata{Source: checkpoint.SourceLoop, Step: 0, Parents: map[string]string{ns: p.parentCP.ID}}
	p.childNewVersions = vers("animals", 2)
	p.parentWrite = pw("pending_sends_task", checkpoint.Tasks, `["add_fish"]`)
	p.childWrite = pw("add_fish", "animals", `["fish","dog"]`)
	p.parent = want(checkpoint.Ref{ThreadID: thread, NS: ns, CheckpointID: p.parentCP.ID}, "", p.parentCP, p.parentMD, p.parentCP.ChannelValues, p.parentWrite)
	p.child = want(checkpoint.Ref{ThreadID: thread, NS: ns, CheckpointID: p.childCP.ID}, p.parentCP.ID, p.childCP, p.childMD, p.childCP.ChannelValues, p.childWrite)
	return p
}

// put stores the pair and its writes, checking nothing was there before.
func (p *jsPair) put(t *testing.T, s checkpoint.Saver) {
	t.Helper()
	expectNotFound(t, s, p.parent.Ref)
	ref := mustPut(t, s, checkpoint.Ref{ThreadID: p.parent.Ref.ThreadID, NS: p.parent.Ref.NS}, p.parentCP, p.parentMD, p.parentCP.ChannelVersions)
	mustWrites(t, s, ref, p.parentWrite.TaskID, "", p.parentWrite.Channel, string(p.parentWrite.Value))
	expectNotFound(t, s, p.child.Ref)
	ref = mustPut(t, s, ref, p.childCP, p.childMD, p.childNewVersions)
	mustWrites(t, s, ref, p.childWrite.TaskID, "", p.childWrite.Channel, string(p.childWrite.Value))
}
