package checkpointtest

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
)

// ---- delete_thread ----

func deleteCases() []testCase {
	return []testCase{
		{name: "removes_thread", run: deleteRemoves},
		{name: "removes_all_namespaces_writes_and_values", run: deleteEverything},
		{name: "other_threads_kept", run: deleteKeepsOthers},
		{name: "missing_thread_is_noop", run: deleteMissing},
		{name: "rejects_empty_thread_id", run: deleteEmptyID},
	}
}

// JS deleteThread: after putting threads 1 and 2, deleting 1 leaves 2.
func deleteRemoves(t *testing.T, s checkpoint.Saver) {
	t1, t2 := newThread("del"), newThread("del")
	p1, p2 := newJSPair(t1, ""), newJSPair(t2, "")
	p1.put(t, s)
	p2.put(t, s)
	if err := s.DeleteThread(t.Context(), t1); err != nil {
		t.Fatal(err)
	}
	expectNotFound(t, s, checkpoint.Ref{ThreadID: t1})
	expectTuple(t, "thread 2", mustGet(t, s, checkpoint.Ref{ThreadID: t2}), p2.child)
}

// Python test_delete_thread_*: checkpoints of every namespace, writes and
// stored values go. Re-putting a deleted checkpoint id with newVersions {}
// proves its old values and writes are gone, not just hidden.
func deleteEverything(t *testing.T, s checkpoint.Saver) {
	thread := newThread("del")
	root, sub := newJSPair(thread, ""), newJSPair(thread, "sub:1")
	root.put(t, s)
	sub.put(t, s)
	if err := s.DeleteThread(t.Context(), thread); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []checkpoint.Ref{root.parent.Ref, root.child.Ref, sub.parent.Ref, sub.child.Ref, {ThreadID: thread}, {ThreadID: thread, NS: "sub:1"}} {
		expectNotFound(t, s, ref)
	}
	expectList(t, s, checkpoint.ListOptions{ThreadID: thread}, nil)
	ref := mustPut(t, s, checkpoint.Ref{ThreadID: thread}, root.childCP, root.childMD, nil)
	expectTuple(t, "re-put after delete", mustGet(t, s, ref), want(ref, "", root.childCP, root.childMD, nil))
}

// Python test_delete_thread_preserves_other_threads.
func deleteKeepsOthers(t *testing.T, s checkpoint.Saver) {
	f := fill(t, s)
	if err := s.DeleteThread(t.Context(), f.a); err != nil {
		t.Fatal(err)
	}
	expectList(t, s, checkpoint.ListOptions{}, rev(f.bRoot...))
}

// Python test_delete_thread_nonexistent.
func deleteMissing(t *testing.T, s checkpoint.Saver) {
	p := newJSPair(newThread("del"), "")
	p.put(t, s)
	if err := s.DeleteThread(t.Context(), "no-such-thread"); err != nil {
		t.Fatalf("DeleteThread of a missing thread: %v", err)
	}
	expectTuple(t, "kept", mustGet(t, s, p.child.Ref), p.child)
}

func deleteEmptyID(t *testing.T, s checkpoint.Saver) {
	p := newJSPair(newThread("del"), "")
	p.put(t, s)
	if err := s.DeleteThread(t.Context(), ""); !errors.Is(err, checkpoint.ErrNoThread) {
		t.Fatalf("DeleteThread(\"\") = %v, want ErrNoThread", err)
	}
	expectTuple(t, "kept", mustGet(t, s, p.child.Ref), p.child)
}

// ---- prune ----

func pruner(s checkpoint.Saver) bool { _, ok := s.(checkpoint.Pruner); return ok }

func pruneCases() []testCase {
	cs := []testCase{
		{name: "keep_latest_single_thread", run: pruneKeepLatest},
		{name: "keep_latest_several_threads", run: pruneSeveralThreads},
		{name: "keep_latest_per_namespace", run: prunePerNamespace},
		{name: "keeps_writes_of_kept_checkpoints", run: pruneKeepsWrites},
		{name: "keeps_values_of_kept_checkpoints", run: pruneKeepsValues},
		{name: "deletes_unreferenced_values_and_writes", run: pruneDeletesUnreferenced},
		{name: "zero_deletes_all", run: pruneZero},
		{name: "other_threads_untouched", run: pruneOthers},
		{name: "empty_list_is_noop", run: pruneEmptyList},
		{name: "missing_thread_is_noop", run: pruneMissing},
		{name: "rejects_negative_keep", run: pruneNegative},
	}
	for i := range cs {
		cs[i].needs, cs[i].capability = pruner, "checkpoint.Pruner"
	}
	return cs
}

// chain puts n checkpoints in one thread and namespace; channel "i" changes
// every step, channel "const" only at the first. It returns the expected
// tuples, oldest first.
func chain(t *testing.T, s checkpoint.Saver, thread, ns string, n int) []*checkpoint.Tuple {
	t.Helper()
	return chainWrites(t, s, thread, ns, n, nil)
}

// chainWrites is chain calling write(i, ref) after storing checkpoint i and
// before its child, when a run makes a checkpoint's writes (a task's writes
// to a superseded checkpoint are a conflict). write may be nil.
func chainWrites(t *testing.T, s checkpoint.Saver, thread, ns string, n int, write func(i int, ref checkpoint.Ref)) []*checkpoint.Tuple {
	t.Helper()
	var out []*checkpoint.Tuple
	parent := checkpoint.Ref{ThreadID: thread, NS: ns}
	for i := range n {
		cp := newCP(vals("i", fmt.Sprint(i), "const", "c-"+ns), vers("i", i+1, "const", 1))
		nv := vers("i", i+1)
		if i == 0 {
			nv = cp.ChannelVersions
		}
		md := loopMD(i)
		ref := mustPut(t, s, parent, cp, md, nv)
		out = append(out, want(ref, parent.CheckpointID, cp, md, cp.ChannelValues))
		parent = ref
		if write != nil {
			write(i, ref)
		}
	}
	return out
}

func prune(t *testing.T, s checkpoint.Saver, threads []string, keep int) {
	t.Helper()
	if err := s.(checkpoint.Pruner).Prune(t.Context(), threads, keep); err != nil {
		t.Fatalf("Prune(%q, %d): %v", threads, keep, err)
	}
}

// Python test_prune_keep_latest_single_thread.
func pruneKeepLatest(t *testing.T, s checkpoint.Saver) {
	thread := newThread("prune")
	c := chain(t, s, thread, "", 4)
	prune(t, s, []string{thread}, 1)
	expectList(t, s, checkpoint.ListOptions{ThreadID: thread}, c[3:])
}

// Python test_prune_keep_latest_multiple_threads.
func pruneSeveralThreads(t *testing.T, s checkpoint.Saver) {
	t1, t2 := newThread("prune"), newThread("prune")
	c1, c2 := chain(t, s, t1, "", 3), chain(t, s, t2, "", 5)
	prune(t, s, []string{t1, t2}, 2)
	expectList(t, s, checkpoint.ListOptions{ThreadID: t1}, rev(c1[1:]...))
	expectList(t, s, checkpoint.ListOptions{ThreadID: t2}, rev(c2[3:]...))
}

// Python test_prune_keep_latest_across_namespaces.
func prunePerNamespace(t *testing.T, s checkpoint.Saver) {
	thread := newThread("prune")
	root, sub := chain(t, s, thread, "", 3), chain(t, s, thread, "child:1", 2)
	prune(t, s, []string{thread}, 1)
	expectList(t, s, checkpoint.ListOptions{ThreadID: thread, NS: ptr("")}, root[2:])
	expectList(t, s, checkpoint.ListOptions{ThreadID: thread, NS: ptr("child:1")}, sub[1:])
}

// Python test_prune_keep_latest_preserves_writes.
func pruneKeepsWrites(t *testing.T, s checkpoint.Saver) {
	thread := newThread("prune")
	c := chainWrites(t, s, thread, "", 3, func(i int, ref checkpoint.Ref) {
		switch i {
		case 1:
			mustWrites(t, s, ref, "task", "", "ch", "old")
		case 2:
			mustWrites(t, s, ref, "task", "", "ch", "val")
		}
	})
	c[2].PendingWrites = []checkpoint.PendingWrite{pw("task", "ch", "val")}
	prune(t, s, []string{thread}, 1)
	expectTuple(t, "latest", mustGet(t, s, checkpoint.Ref{ThreadID: thread}), c[2])
}

// The kept checkpoint's unchanged channel lives in a value stored by a pruned
// checkpoint; it must survive.
func pruneKeepsValues(t *testing.T, s checkpoint.Saver) {
	thread := newThread("prune")
	c := chain(t, s, thread, "", 6)
	prune(t, s, []string{thread}, 2)
	expectList(t, s, checkpoint.ListOptions{ThreadID: thread}, rev(c[4:]...))
}

// Values referenced by no kept checkpoint and writes of pruned checkpoints
// are deleted: re-putting a pruned checkpoint with newVersions {} finds
// neither.
func pruneDeletesUnreferenced(t *testing.T, s checkpoint.Saver) {
	thread := newThread("prune")
	c := chainWrites(t, s, thread, "", 3, func(i int, ref checkpoint.Ref) {
		if i == 0 {
			mustWrites(t, s, ref, "task", "", "ch", "old")
		}
	})
	prune(t, s, []string{thread}, 1)
	expectNotFound(t, s, c[0].Ref)
	// Re-put the first checkpoint as it was ("i" at version 1, "const" at 1).
	cp := c[0].Checkpoint.Clone()
	ref := mustPut(t, s, checkpoint.Ref{ThreadID: thread}, cp, c[0].Metadata, nil)
	// "i"@1 was referenced only by the pruned checkpoint: gone. "const"@1 is
	// still referenced by the kept one: there. The old write is gone.
	expectTuple(t, "re-put pruned checkpoint", mustGet(t, s, ref), want(ref, "", cp, c[0].Metadata, vals("const", "c-")))
}

// Python test_prune_delete_all (strategy "delete" = keepLatest 0).
func pruneZero(t *testing.T, s checkpoint.Saver) {
	thread := newThread("prune")
	chain(t, s, thread, "", 3)
	chain(t, s, thread, "sub", 2)
	prune(t, s, []string{thread}, 0)
	expectList(t, s, checkpoint.ListOptions{ThreadID: thread}, nil)
	expectNotFound(t, s, checkpoint.Ref{ThreadID: thread})
}

// Python test_prune_preserves_other_threads.
func pruneOthers(t *testing.T, s checkpoint.Saver) {
	t1, t2 := newThread("prune"), newThread("prune")
	chain(t, s, t1, "", 3)
	c2 := chainWrites(t, s, t2, "", 2, func(i int, ref checkpoint.Ref) {
		if i == 0 {
			mustWrites(t, s, ref, "task", "", "ch", "w")
		}
	})
	c2[0].PendingWrites = []checkpoint.PendingWrite{pw("task", "ch", "w")}
	prune(t, s, []string{t1}, 1)
	expectList(t, s, checkpoint.ListOptions{ThreadID: t2}, rev(c2...))
}

// Python test_prune_empty_list_noop.
func pruneEmptyList(t *testing.T, s checkpoint.Saver) {
	thread := newThread("prune")
	c := chain(t, s, thread, "", 2)
	prune(t, s, nil, 1)
	prune(t, s, []string{}, 0)
	expectList(t, s, checkpoint.ListOptions{ThreadID: thread}, rev(c...))
}

// Python test_prune_nonexistent_noop.
func pruneMissing(t *testing.T, s checkpoint.Saver) {
	thread := newThread("prune")
	c := chain(t, s, thread, "", 2)
	prune(t, s, []string{"no-such-thread"}, 1)
	expectList(t, s, checkpoint.ListOptions{ThreadID: thread}, rev(c...))
}

func pruneNegative(t *testing.T, s checkpoint.Saver) {
	thread := newThread("prune")
	c := chain(t, s, thread, "", 2)
	if err := s.(checkpoint.Pruner).Prune(t.Context(), []string{thread}, -1); err == nil {
		t.Fatal("Prune with keepLatest -1: no error")
	}
	expectList(t, s, checkpoint.ListOptions{ThreadID: thread}, rev(c...))
}

// ---- copy_thread ----

func copier(s checkpoint.Saver) bool { _, ok := s.(checkpoint.Copier); return ok }

func copyCases() []testCase {
	cs := []testCase{
		{name: "copies_everything", run: copyEverything},
		{name: "source_untouched", run: copySourceUntouched},
		{name: "independent_of_source", run: copyIndependent},
		{name: "missing_source_gives_empty_target", run: copyMissing},
		{name: "rejects_empty_thread_ids", run: copyEmptyIDs},
	}
	for i := range cs {
		cs[i].needs, cs[i].capability = copier, "checkpoint.Copier"
	}
	return cs
}

func copyThread(t *testing.T, s checkpoint.Saver, src, dst string) {
	t.Helper()
	if err := s.(checkpoint.Copier).CopyThread(t.Context(), src, dst); err != nil {
		t.Fatalf("CopyThread(%q, %q): %v", src, dst, err)
	}
}

// retarget returns the tuples as they must read in another thread.
func retarget(ts []*checkpoint.Tuple, thread string) []*checkpoint.Tuple {
	out := make([]*checkpoint.Tuple, len(ts))
	for i, tp := range ts {
		c := tp.Clone()
		c.Ref.ThreadID = thread
		if c.Parent != nil {
			c.Parent.ThreadID = thread
		}
		out[i] = c
	}
	return out
}

// Python test_copy_thread_*: every checkpoint, its metadata, namespace,
// writes, values, source and order.
func copyEverything(t *testing.T, s checkpoint.Saver) {
	f := fill(t, s)
	dst := newThread("copy")
	copyThread(t, s, f.a, dst)
	a := slices.Concat(f.aRoot, f.aSub)
	sortNewestFirst(a)
	expectList(t, s, checkpoint.ListOptions{ThreadID: dst}, retarget(a, dst))
	expectTuple(t, "latest root", mustGet(t, s, checkpoint.Ref{ThreadID: dst}), retarget(f.aRoot[3:], dst)[0])
}

func copySourceUntouched(t *testing.T, s checkpoint.Saver) {
	f := fill(t, s)
	copyThread(t, s, f.a, newThread("copy"))
	expectList(t, s, checkpoint.ListOptions{ThreadID: f.b}, rev(f.bRoot...))
	a := slices.Concat(f.aRoot, f.aSub)
	sortNewestFirst(a)
	expectList(t, s, checkpoint.ListOptions{ThreadID: f.a}, a)
}

// The copy stays whole after the source is deleted, and writes to the copy
// do not show in the source.
func copyIndependent(t *testing.T, s checkpoint.Saver) {
	src, dst := newThread("copy"), newThread("copy")
	c := chain(t, s, src, "", 3)
	copyThread(t, s, src, dst)
	mustWrites(t, s, checkpoint.Ref{ThreadID: dst, CheckpointID: c[2].Ref.CheckpointID}, "t", "", "ch", "dst only")
	expectTuple(t, "source latest", mustGet(t, s, checkpoint.Ref{ThreadID: src}), c[2])
	if err := s.DeleteThread(t.Context(), src); err != nil {
		t.Fatal(err)
	}
	w := retarget(c, dst)
	w[2].PendingWrites = []checkpoint.PendingWrite{pw("t", "ch", "dst only")}
	expectList(t, s, checkpoint.ListOptions{ThreadID: dst}, rev(w...))
}

// Python test_copy_thread_nonexistent_source.
func copyMissing(t *testing.T, s checkpoint.Saver) {
	dst := newThread("copy")
	copyThread(t, s, "no-such-thread", dst)
	expectList(t, s, checkpoint.ListOptions{ThreadID: dst}, nil)
	expectNotFound(t, s, checkpoint.Ref{ThreadID: dst})
}

func copyEmptyIDs(t *testing.T, s checkpoint.Saver) {
	for _, ids := range [][2]string{{"", "x"}, {"x", ""}} {
		if err := s.(checkpoint.Copier).CopyThread(t.Context(), ids[0], ids[1]); !errors.Is(err, checkpoint.ErrNoThread) {
			t.Errorf("CopyThread(%q, %q) = %v, want ErrNoThread", ids[0], ids[1], err)
		}
	}
}

// ---- list_threads ----

func threadLister(s checkpoint.Saver) bool { _, ok := s.(checkpoint.ThreadLister); return ok }

func threadCases() []testCase {
	cs := []testCase{
		{name: "newest_first_with_counts", run: threadsNewestFirst},
		{name: "limit", run: threadsLimit},
		{name: "empty_store", run: threadsEmpty},
		{name: "deleted_thread_gone", run: threadsDeleted},
	}
	for i := range cs {
		cs[i].needs, cs[i].capability = threadLister, "checkpoint.ThreadLister"
	}
	return cs
}

func listThreads(t *testing.T, s checkpoint.Saver, limit int) []checkpoint.ThreadInfo {
	t.Helper()
	got, err := s.(checkpoint.ThreadLister).ListThreads(t.Context(), limit)
	if err != nil {
		t.Fatalf("ListThreads(%d): %v", limit, err)
	}
	return got
}

func threadInfo(latest *checkpoint.Tuple, n int) checkpoint.ThreadInfo {
	return checkpoint.ThreadInfo{ThreadID: latest.Ref.ThreadID, Checkpoints: n, Latest: latest.Ref, LatestMeta: latest.Metadata, UpdatedAt: latest.Checkpoint.TS}
}

func expectThreads(t *testing.T, got, want []checkpoint.ThreadInfo) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ListThreads:\n got: %+v\nwant: %+v", got, want)
	}
}

// Threads newest first by their latest root checkpoint; the count is of root
// checkpoints; subgraph checkpoints do not make a thread newer.
func threadsNewestFirst(t *testing.T, s checkpoint.Saver) {
	f := fill(t, s)
	// A newer subgraph checkpoint of A must not move A ahead of B.
	mustPut(t, s, checkpoint.Ref{ThreadID: f.a, NS: "sub:9"}, newCP(nil, nil), inputMD(), nil)
	expectThreads(t, listThreads(t, s, 0), []checkpoint.ThreadInfo{threadInfo(f.bRoot[1], 2), threadInfo(f.aRoot[3], 4)})
	// A new root checkpoint of A makes A the newest.
	c := newCP(nil, nil)
	md := loopMD(3)
	md.Extra = map[string]any{"k": "v"}
	ref := mustPut(t, s, f.aRoot[3].Ref, c, md, nil)
	expectThreads(t, listThreads(t, s, 0), []checkpoint.ThreadInfo{threadInfo(want(ref, f.aRoot[3].Ref.CheckpointID, c, md, nil), 5), threadInfo(f.bRoot[1], 2)})
}

func threadsLimit(t *testing.T, s checkpoint.Saver) {
	var latest []*checkpoint.Tuple
	for range 4 {
		c := chain(t, s, newThread("threads"), "", 2)
		latest = append(latest, c[1])
	}
	want := []checkpoint.ThreadInfo{threadInfo(latest[3], 2), threadInfo(latest[2], 2)}
	expectThreads(t, listThreads(t, s, 2), want)
	if got := listThreads(t, s, 0); len(got) != 4 {
		t.Errorf("ListThreads(0) returned %d threads, want 4", len(got))
	}
}

func threadsEmpty(t *testing.T, s checkpoint.Saver) {
	expectThreads(t, listThreads(t, s, 0), nil)
}

func threadsDeleted(t *testing.T, s checkpoint.Saver) {
	f := fill(t, s)
	if err := s.DeleteThread(t.Context(), f.b); err != nil {
		t.Fatal(err)
	}
	expectThreads(t, listThreads(t, s, 10), []checkpoint.ThreadInfo{threadInfo(f.aRoot[3], 4)})
}

// ---- list_headers ----

func headerLister(s checkpoint.Saver) bool { _, ok := s.(checkpoint.HeaderLister); return ok }

func headerCases() []testCase {
	return []testCase{{name: "same_selection_as_list", run: headersLikeList, needs: headerLister, capability: "checkpoint.HeaderLister"}}
}

// ListHeaders selects and orders exactly like List, for every kind of
// option.
func headersLikeList(t *testing.T, s checkpoint.Saver) {
	f := fill(t, s)
	hl := s.(checkpoint.HeaderLister)
	for _, opts := range []checkpoint.ListOptions{
		{},
		{ThreadID: f.a},
		{ThreadID: f.a, NS: ptr("")},
		{NS: ptr("sub:1")},
		{Filter: map[string]any{"source": "loop"}},
		{Filter: map[string]any{"score": 42, "step": 0}},
		{Before: f.aRoot[3].Ref.CheckpointID},
		{Limit: 3},
		{ThreadID: f.a, Before: f.aRoot[3].Ref.CheckpointID, Limit: 2, Filter: map[string]any{"run_id": f.runID}},
		{ThreadID: "no-such-thread"},
	} {
		tuples := mustList(t, s, opts)
		want := make([]checkpoint.Header, len(tuples))
		for i, tp := range tuples {
			want[i] = checkpoint.Header{Ref: tp.Ref, Parent: tp.Parent, TS: tp.Checkpoint.TS, Metadata: tp.Metadata}
		}
		got, err := hl.ListHeaders(t.Context(), opts)
		if err != nil {
			t.Fatalf("ListHeaders(%s): %v", describeOpts(opts), err)
		}
		if len(got) != 0 || len(want) != 0 {
			if !reflect.DeepEqual(got, want) {
				t.Errorf("ListHeaders(%s):\n got: %+v\nwant: %+v", describeOpts(opts), got, want)
			}
		}
	}
	if _, err := hl.ListHeaders(t.Context(), checkpoint.ListOptions{Filter: map[string]any{"x": func() {}}}); err == nil {
		t.Error("ListHeaders with a func in the filter: no error")
	}
}

// ---- write_kinds ----

func writeKindsReader(s checkpoint.Saver) bool { _, ok := s.(checkpoint.WriteKindsReader); return ok }

func writeKindsCases() []testCase {
	return []testCase{{name: "missing_checkpoint", run: writeKindsMissing, needs: writeKindsReader, capability: "checkpoint.WriteKindsReader"}}
}

// WriteKinds of a checkpoint that is not stored, or of no thread, is an
// error (the writes cases check what it lists: see expectWrites).
func writeKindsMissing(t *testing.T, s checkpoint.Saver) {
	wk := s.(checkpoint.WriteKindsReader)
	ref := mustPut(t, s, checkpoint.Ref{ThreadID: newThread("kinds")}, newCP(nil, nil), inputMD(), nil)
	if _, err := wk.WriteKinds(t.Context(), checkpoint.Ref{ThreadID: ref.ThreadID, CheckpointID: "no-such-checkpoint"}); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("WriteKinds of a missing checkpoint: %v, want ErrNotFound", err)
	}
	if _, err := wk.WriteKinds(t.Context(), checkpoint.Ref{CheckpointID: ref.CheckpointID}); !errors.Is(err, checkpoint.ErrNoThread) {
		t.Errorf("WriteKinds without a thread: %v, want ErrNoThread", err)
	}
	if got, err := wk.WriteKinds(t.Context(), ref); err != nil || got == nil || len(got) != 0 {
		t.Errorf("WriteKinds of a checkpoint without writes: %v, %v; want an empty list", got, err)
	}
}

// ---- stats ----

func statsReporter(s checkpoint.Saver) bool { _, ok := s.(checkpoint.StatsReporter); return ok }

func statsCases() []testCase {
	return []testCase{{name: "counts", run: statsCounts, needs: statsReporter, capability: "checkpoint.StatsReporter"}}
}

// Stats counts threads, checkpoints, writes and stored values (one per
// channel version: a step that changes 1 of 3 channels adds 1 value). Zero
// fields mean "unknown" and are not checked, except Checkpoints.
func statsCounts(t *testing.T, s checkpoint.Saver) {
	sr := s.(checkpoint.StatsReporter)
	get := func() checkpoint.Stats {
		t.Helper()
		st, err := sr.Stats(t.Context())
		if err != nil {
			t.Fatalf("Stats: %v", err)
		}
		return st
	}
	if st := get(); st.Threads != 0 || st.Checkpoints != 0 || st.Writes != 0 || st.Blobs != 0 {
		t.Fatalf("empty store: %+v", st)
	}
	t1, t2 := newThread("stats"), newThread("stats")
	cp1 := newCP(vals("a", "1", "b", "2", "c", "3"), vers("a", 1, "b", 1, "c", 1))
	r1 := mustPut(t, s, checkpoint.Ref{ThreadID: t1}, cp1, inputMD(), cp1.ChannelVersions) // 3 values
	mustWrites(t, s, r1, "task", "", checkpoint.Error, `"e"`)
	cp2 := newCP(vals("a", "10", "b", "2", "c", "3"), vers("a", 2, "b", 1, "c", 1))
	r2 := mustPut(t, s, r1, cp2, loopMD(0), vers("a", 2)) // 1 value
	mustPut(t, s, checkpoint.Ref{ThreadID: t2, NS: "sub"}, newCP(vals("x", "x"), vers("x", 1)), inputMD(), vers("x", 1))
	mustWrites(t, s, r2, "task", "", "a", "1", "b", "2")
	st := get()
	want := checkpoint.Stats{Threads: 2, Checkpoints: 3, Writes: 3, Blobs: 5}
	if st.Checkpoints != want.Checkpoints ||
		(st.Threads != 0 && st.Threads != want.Threads) ||
		(st.Writes != 0 && st.Writes != want.Writes) ||
		(st.Blobs != 0 && st.Blobs != want.Blobs) {
		t.Errorf("Stats = %+v, want %+v", st, want)
	}
	if st.Bytes < 0 {
		t.Errorf("Stats.Bytes = %d", st.Bytes)
	}
	if err := s.DeleteThread(t.Context(), t1); err != nil {
		t.Fatal(err)
	}
	st = get()
	want = checkpoint.Stats{Threads: 1, Checkpoints: 1, Writes: 0, Blobs: 1}
	if st.Checkpoints != want.Checkpoints || (st.Threads != 0 && st.Threads != want.Threads) ||
		st.Writes != 0 || (st.Blobs != 0 && st.Blobs != want.Blobs) {
		t.Errorf("after delete: Stats = %+v, want %+v", st, want)
	}
}
