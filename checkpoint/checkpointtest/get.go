package checkpointtest

import (
	"errors"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
)

func getCases() []testCase {
	var cs []testCase
	cs = append(cs, perNS("by_id_parent", getByIDParent)...)
	cs = append(cs, perNS("by_id_child", getByIDChild)...)
	cs = append(cs, perNS("latest_without_id", getLatest)...)
	cs = append(cs, perNS("unknown_checkpoint_id", getUnknownID)...)
	cs = append(cs, perNS("missing_thread_id", getNoThread)...)
	cs = append(cs, perNS("carry_over_unchanged_channels", getCarryOver)...)
	cs = append(cs, []testCase{
		{name: "unknown_thread", run: getUnknownThread},
		{name: "ref_shape", run: getRefShape},
		{name: "latest_is_highest_id_not_last_put", run: getLatestHighestID},
		{name: "namespace_filter", run: getNamespaceFilter},
		{name: "pending_writes_order", run: getWritesOrder},
		{name: "writes_of_other_checkpoints_not_included", run: getWritesIsolated},
	}...)
	return cs
}

// JS getTuple with the parent's id: checkpoint, metadata and config
// unmodified, no parent, the parent's TASKS write.
func getByIDParent(t *testing.T, s checkpoint.Saver, ns string) {
	p := newJSPair(newThread("get"), ns)
	p.put(t, s)
	got := mustGet(t, s, p.parent.Ref)
	expectTuple(t, "parent by id", got, p.parent)
	if got.Parent != nil {
		t.Errorf("Parent = %+v, want nil", *got.Parent)
	}
}

// JS getTuple with the child's id: parentConfig points to the parent; the
// child's write.
func getByIDChild(t *testing.T, s checkpoint.Saver, ns string) {
	p := newJSPair(newThread("get"), ns)
	p.put(t, s)
	got := mustGet(t, s, p.child.Ref)
	expectTuple(t, "child by id", got, p.child)
	if got.Parent == nil || *got.Parent != p.parent.Ref {
		t.Errorf("Parent = %v, want %+v", got.Parent, p.parent.Ref)
	}
}

// JS getTuple without id: the latest (the child).
func getLatest(t *testing.T, s checkpoint.Saver, ns string) {
	p := newJSPair(newThread("get"), ns)
	p.put(t, s)
	expectTuple(t, "latest", mustGet(t, s, checkpoint.Ref{ThreadID: p.child.Ref.ThreadID, NS: ns}), p.child)
}

// JS getTuple failure: an unknown checkpoint id finds nothing.
func getUnknownID(t *testing.T, s checkpoint.Saver, ns string) {
	p := newJSPair(newThread("get"), ns)
	p.put(t, s)
	expectNotFound(t, s, checkpoint.Ref{ThreadID: p.child.Ref.ThreadID, NS: ns, CheckpointID: checkpoint.NewID()})
}

// JS getTuple failure: a missing thread id finds nothing (Weft: ErrNoThread).
func getNoThread(t *testing.T, s checkpoint.Saver, ns string) {
	p := newJSPair(newThread("get"), ns)
	p.put(t, s)
	tp, err := s.Get(t.Context(), checkpoint.Ref{NS: ns, CheckpointID: p.child.Ref.CheckpointID})
	if !errors.Is(err, checkpoint.ErrNoThread) || tp != nil {
		t.Fatalf("Get without thread id = %s, %v; want nil, ErrNoThread", describe(tp), err)
	}
}

// JS getTuple carry-over: a child put with newVersions {stepCount: 2} only
// still reconstructs both channels, by id and as latest.
func getCarryOver(t *testing.T, s checkpoint.Saver, ns string) {
	thread := newThread("get")
	parentCP := newCP(vals("messages", `["hi"]`, "stepCount", "1"), vers("messages", 1, "stepCount", 1))
	pref := mustPut(t, s, checkpoint.Ref{ThreadID: thread, NS: ns}, parentCP, inputMD(), parentCP.ChannelVersions)
	childCP := newCP(vals("messages", `["hi"]`, "stepCount", "3"), vers("messages", 1, "stepCount", 2))
	childMD := checkpoint.Metadata{Source: checkpoint.SourceLoop, Step: 0, Parents: map[string]string{}}
	cref := mustPut(t, s, pref, childCP, childMD, vers("stepCount", 2))
	w := want(cref, pref.CheckpointID, childCP, childMD, vals("messages", `["hi"]`, "stepCount", "3"))
	expectTuple(t, "child by id", mustGet(t, s, cref), w)
	expectTuple(t, "child as latest", mustGet(t, s, checkpoint.Ref{ThreadID: thread, NS: ns}), w)
}

// Python test_get_tuple_nonexistent: an unknown thread finds nothing.
func getUnknownThread(t *testing.T, s checkpoint.Saver) {
	expectNotFound(t, s, checkpoint.Ref{ThreadID: newThread("nobody")})
	expectNotFound(t, s, checkpoint.Ref{ThreadID: newThread("nobody"), CheckpointID: checkpoint.NewID()})
}

// Python test_get_tuple_config_shape: the Ref names thread, namespace and id
// whether or not the request had an id.
func getRefShape(t *testing.T, s checkpoint.Saver) {
	thread := newThread("get")
	cp := newCP(nil, nil)
	mustPut(t, s, checkpoint.Ref{ThreadID: thread, NS: "sub:1"}, cp, inputMD(), nil)
	w := checkpoint.Ref{ThreadID: thread, NS: "sub:1", CheckpointID: cp.ID}
	for _, req := range []checkpoint.Ref{{ThreadID: thread, NS: "sub:1"}, w} {
		if got := mustGet(t, s, req).Ref; got != w {
			t.Errorf("Get(%+v).Ref = %+v, want %+v", req, got, w)
		}
	}
}

// "Latest" is the highest checkpoint id of the thread and namespace, not the
// one put last.
func getLatestHighestID(t *testing.T, s checkpoint.Saver) {
	thread := newThread("get")
	older, newer := newCP(nil, nil), newCP(nil, nil)
	mustPut(t, s, checkpoint.Ref{ThreadID: thread}, newer, loopMD(2), nil)
	mustPut(t, s, checkpoint.Ref{ThreadID: thread}, older, loopMD(1), nil)
	if got := mustGet(t, s, checkpoint.Ref{ThreadID: thread}).Ref.CheckpointID; got != newer.ID {
		t.Errorf("latest = %s, want %s (the higher id)", got, newer.ID)
	}
}

// Python test_get_tuple_namespace: the latest of the root namespace ignores a
// newer subgraph checkpoint, and the other way round.
func getNamespaceFilter(t *testing.T, s checkpoint.Saver) {
	thread := newThread("get")
	root := newCP(vals("who", "root"), vers("who", 1))
	rref := mustPut(t, s, checkpoint.Ref{ThreadID: thread}, root, inputMD(), root.ChannelVersions)
	sub := newCP(vals("who", "sub"), vers("who", 1))
	smd := checkpoint.Metadata{Source: checkpoint.SourceInput, Step: -1, Parents: map[string]string{"": root.ID}}
	sref := mustPut(t, s, checkpoint.Ref{ThreadID: thread, NS: "sub:1"}, sub, smd, sub.ChannelVersions)
	expectTuple(t, "root latest", mustGet(t, s, checkpoint.Ref{ThreadID: thread}), want(rref, "", root, inputMD(), vals("who", "root")))
	expectTuple(t, "subgraph latest", mustGet(t, s, checkpoint.Ref{ThreadID: thread, NS: "sub:1"}), want(sref, "", sub, smd, vals("who", "sub")))
	expectNotFound(t, s, checkpoint.Ref{ThreadID: thread, NS: "sub:1", CheckpointID: root.ID})
	expectNotFound(t, s, checkpoint.Ref{ThreadID: thread, NS: "sub:2"})
}

// Pending writes come ordered by task id, then index.
func getWritesOrder(t *testing.T, s checkpoint.Saver) {
	ref := putOne(t, s, "")
	mustWrites(t, s, ref, "c", "", "x", "c0", "y", "c1")
	mustWrites(t, s, ref, "a", "", "x", "a0", "x", "a1", "x", "a2")
	mustWrites(t, s, ref, "b", "", checkpoint.NoWrites, "")
	mustWrites(t, s, ref, "a", "", checkpoint.Error, `"boom"`)
	expectWrites(t, s, ref,
		pw("a", checkpoint.Error, `"boom"`), pw("a", "x", "a0"), pw("a", "x", "a1"), pw("a", "x", "a2"),
		pw("b", checkpoint.NoWrites, ""),
		pw("c", "x", "c0"), pw("c", "y", "c1"))
}

func getWritesIsolated(t *testing.T, s checkpoint.Saver) {
	// Each checkpoint's writes come before its child, as a run makes them
	// (a task's writes to a superseded checkpoint are a conflict).
	ref := putOne(t, s, "")
	mustWrites(t, s, ref, "t", "", "ch", "first")
	ref2 := mustPut(t, s, ref, newCP(nil, nil), loopMD(0), nil)
	other := putOne(t, s, "")
	mustWrites(t, s, ref2, "t", "", "ch", "second")
	mustWrites(t, s, other, "t", "", "ch", "other")
	expectWrites(t, s, ref, pw("t", "ch", "first"))
	expectWrites(t, s, ref2, pw("t", "ch", "second"))
	expectWrites(t, s, other, pw("t", "ch", "other"))
}
