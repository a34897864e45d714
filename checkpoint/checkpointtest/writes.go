package checkpointtest

import (
	"errors"
	"reflect"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
)

func writesCases() []testCase {
	var cs []testCase
	cs = append(cs, perNS("basic", writesBasic)...)
	cs = append(cs, perNS("rejects_missing_thread_id", writesRejectNoThread)...)
	cs = append(cs, perNS("rejects_missing_checkpoint_id", writesRejectNoID)...)
	cs = append(cs, []testCase{
		{name: "several_per_task", run: writesSeveralPerTask},
		{name: "several_tasks_ordered_by_task_id", run: writesSeveralTasks},
		{name: "fields_kept", run: writesFieldsKept},
		{name: "task_path_kept", run: writesTaskPath},
		{name: "idempotent_on_task_and_index", run: writesIdempotent},
		{name: "special_writes_stored", run: writesSpecialStored},
		{name: "special_writes_replaced", run: writesSpecialReplaced},
		{name: "mixed_batch", run: writesMixedBatch},
		{name: "namespaces_isolated", run: writesNamespaces},
		{name: "new_checkpoint_has_no_writes", run: writesNewCheckpoint},
		{name: "written_before_checkpoint", run: writesBeforeCheckpoint},
		{name: "empty_batch", run: writesEmptyBatch},
		{name: "rejects_empty_task_id", run: writesRejectNoTask},
	}...)
	return cs
}

// putOne stores one empty checkpoint in a new thread and returns its ref.
func putOne(t *testing.T, s checkpoint.Saver, ns string) checkpoint.Ref {
	t.Helper()
	return mustPut(t, s, checkpoint.Ref{ThreadID: newThread("writes"), NS: ns}, newCP(nil, nil), inputMD(), nil)
}

func expectWrites(t *testing.T, s checkpoint.Saver, ref checkpoint.Ref, want ...checkpoint.PendingWrite) {
	t.Helper()
	tp := mustGet(t, s, ref)
	got := tp.PendingWrites
	w := &checkpoint.Tuple{PendingWrites: append([]checkpoint.PendingWrite{}, want...)}
	g := &checkpoint.Tuple{PendingWrites: got}
	expectTuple(t, "pending writes", g, w)
	// A saver that lists write kinds lists these, without their values.
	if wk, ok := s.(checkpoint.WriteKindsReader); ok {
		kinds, err := wk.WriteKinds(t.Context(), tp.Ref)
		if err != nil {
			t.Fatalf("WriteKinds(%v): %v", tp.Ref, err)
		}
		bare := []checkpoint.PendingWrite{}
		for _, pw := range got {
			pw.Value = nil
			bare = append(bare, pw)
		}
		if !reflect.DeepEqual(kinds, bare) {
			t.Errorf("WriteKinds(%v) = %+v, want Get's writes without values %+v", tp.Ref, kinds, bare)
		}
	}
}

// JS putWrites: a write [["animals","dog"]] by "pet_task" reads back as
// pending write ("pet_task", "animals", "dog").
func writesBasic(t *testing.T, s checkpoint.Saver, ns string) {
	ref := putOne(t, s, ns)
	mustWrites(t, s, ref, "pet_task", "", "animals", `"dog"`)
	expectWrites(t, s, ref, pw("pet_task", "animals", `"dog"`))
}

func writesRejectNoThread(t *testing.T, s checkpoint.Saver, ns string) {
	ref := putOne(t, s, ns)
	err := s.PutWrites(t.Context(), checkpoint.Ref{NS: ns, CheckpointID: ref.CheckpointID}, []checkpoint.Write{{Channel: "a", Value: []byte("1")}}, "task", "")
	if !errors.Is(err, checkpoint.ErrNoThread) {
		t.Fatalf("PutWrites without thread id: err = %v, want ErrNoThread", err)
	}
}

func writesRejectNoID(t *testing.T, s checkpoint.Saver, ns string) {
	ref := putOne(t, s, ns)
	err := s.PutWrites(t.Context(), checkpoint.Ref{ThreadID: ref.ThreadID, NS: ns}, []checkpoint.Write{{Channel: "a", Value: []byte("1")}}, "task", "")
	if !errors.Is(err, checkpoint.ErrNoCheckpoint) {
		t.Fatalf("PutWrites without checkpoint id: err = %v, want ErrNoCheckpoint", err)
	}
	expectWrites(t, s, ref)
}

func writesRejectNoTask(t *testing.T, s checkpoint.Saver) {
	ref := putOne(t, s, "")
	if err := s.PutWrites(t.Context(), ref, []checkpoint.Write{{Channel: "a", Value: []byte("1")}}, "", ""); err == nil {
		t.Fatal("PutWrites with empty task id: no error")
	}
	expectWrites(t, s, ref)
}

// Python test_put_writes_multiple_writes_same_task: kept in batch order.
func writesSeveralPerTask(t *testing.T, s checkpoint.Saver) {
	ref := putOne(t, s, "")
	mustWrites(t, s, ref, "task", "", "ch3", "v1", "ch1", "v2", "ch2", "v3")
	expectWrites(t, s, ref, pw("task", "ch3", "v1"), pw("task", "ch1", "v2"), pw("task", "ch2", "v3"))
}

// Python test_put_writes_multiple_tasks; ordered by task id whatever the
// order of the calls.
func writesSeveralTasks(t *testing.T, s checkpoint.Saver) {
	ref := putOne(t, s, "")
	mustWrites(t, s, ref, "task-b", "", "ch", "from_b", "ch", "from_b2")
	mustWrites(t, s, ref, "task-a", "", "ch", "from_a")
	mustWrites(t, s, ref, checkpoint.NullTaskID, "", "ch", "from_null")
	expectWrites(t, s, ref,
		pw(checkpoint.NullTaskID, "ch", "from_null"),
		pw("task-a", "ch", "from_a"),
		pw("task-b", "ch", "from_b"), pw("task-b", "ch", "from_b2"))
}

// Python test_put_writes_preserves_task_id / channel_and_value: bytes kept,
// nil stays nil, empty stays empty.
func writesFieldsKept(t *testing.T, s checkpoint.Saver) {
	ref := putOne(t, s, "")
	ws := []checkpoint.Write{
		{Channel: "my_channel", Value: []byte(`{"data":123}`)},
		{Channel: "branch:to:b", Value: nil},
		{Channel: "empty", Value: []byte{}},
		{Channel: "binary", Value: []byte{0, 1, 0xff}},
	}
	if err := s.PutWrites(t.Context(), ref, ws, "task-1", ""); err != nil {
		t.Fatal(err)
	}
	expectWrites(t, s, ref,
		checkpoint.PendingWrite{TaskID: "task-1", Channel: "my_channel", Value: []byte(`{"data":123}`)},
		checkpoint.PendingWrite{TaskID: "task-1", Channel: "branch:to:b", Value: nil},
		checkpoint.PendingWrite{TaskID: "task-1", Channel: "empty", Value: []byte{}},
		checkpoint.PendingWrite{TaskID: "task-1", Channel: "binary", Value: []byte{0, 1, 0xff}})
}

// Python test_put_writes_task_path: the path is stored with each write.
func writesTaskPath(t *testing.T, s checkpoint.Saver) {
	ref := putOne(t, s, "")
	mustWrites(t, s, ref, "t1", "pull:a", "ch", "v")
	mustWrites(t, s, ref, "t2", "push:0:worker", "ch", "w", "other", "x")
	want := []checkpoint.PendingWrite{pw("t1", "ch", "v"), pw("t2", "ch", "w"), pw("t2", "other", "x")}
	want[0].TaskPath, want[1].TaskPath, want[2].TaskPath = "pull:a", "push:0:worker", "push:0:worker"
	expectWrites(t, s, ref, want...)
}

// Python test_put_writes_idempotent: writing (task, index) again is a no-op,
// even with another value.
func writesIdempotent(t *testing.T, s checkpoint.Saver) {
	ref := putOne(t, s, "")
	mustWrites(t, s, ref, "task", "", "ch", "val")
	mustWrites(t, s, ref, "task", "", "ch", "val")
	mustWrites(t, s, ref, "task", "", "ch", "changed", "ch2", "added")
	expectWrites(t, s, ref, pw("task", "ch", "val"), pw("task", "ch2", "added"))
}

// Python test_put_writes_special_channels: ERROR and INTERRUPT are stored
// under their fixed indexes, so they sort before ordinary writes.
func writesSpecialStored(t *testing.T, s checkpoint.Saver) {
	ref := putOne(t, s, "")
	mustWrites(t, s, ref, "task", "", checkpoint.Error, `"something went wrong"`, checkpoint.Interrupt, `{"reason":"human_input"}`)
	mustWrites(t, s, ref, "task", "", checkpoint.Resume, `["yes"]`, checkpoint.Scheduled, `1`)
	expectWrites(t, s, ref,
		pw("task", checkpoint.Resume, `["yes"]`),                     // -4
		pw("task", checkpoint.Interrupt, `{"reason":"human_input"}`), // -3
		pw("task", checkpoint.Scheduled, `1`),                        // -2
		pw("task", checkpoint.Error, `"something went wrong"`))       // -1
}

// LangGraph upserts special writes: a later one replaces the earlier.
func writesSpecialReplaced(t *testing.T, s checkpoint.Saver) {
	ref := putOne(t, s, "")
	mustWrites(t, s, ref, "task", "", checkpoint.Error, `"first"`)
	mustWrites(t, s, ref, "task", "", checkpoint.Interrupt, `[1]`)
	mustWrites(t, s, ref, "task", "retry", checkpoint.Error, `"second"`)
	mustWrites(t, s, ref, "task", "", checkpoint.Interrupt, `[2]`)
	mustWrites(t, s, ref, "other", "", checkpoint.Error, `"other task"`)
	want := []checkpoint.PendingWrite{pw("other", checkpoint.Error, `"other task"`), pw("task", checkpoint.Interrupt, `[2]`), pw("task", checkpoint.Error, `"second"`)}
	want[2].TaskPath = "retry"
	expectWrites(t, s, ref, want...)
}

// A batch mixing ordinary and special writes: the ordinary ones are kept
// once, the special one replaced.
func writesMixedBatch(t *testing.T, s checkpoint.Saver) {
	ref := putOne(t, s, "")
	mustWrites(t, s, ref, "task", "", "value", "1", checkpoint.Error, `"e1"`)
	mustWrites(t, s, ref, "task", "", "value", "2", checkpoint.Error, `"e2"`)
	expectWrites(t, s, ref, pw("task", checkpoint.Error, `"e2"`), pw("task", "value", "1"))
}

// Python test_put_writes_across_namespaces: same thread and checkpoint id,
// different namespaces, separate writes.
func writesNamespaces(t *testing.T, s checkpoint.Saver) {
	thread := newThread("writes")
	cp := newCP(nil, nil)
	root := mustPut(t, s, checkpoint.Ref{ThreadID: thread}, cp, inputMD(), nil)
	child := mustPut(t, s, checkpoint.Ref{ThreadID: thread, NS: "child:1"}, cp, inputMD(), nil)
	mustWrites(t, s, root, "task", "", "ch", "root_val")
	mustWrites(t, s, child, "task", "", "ch", "child_val")
	expectWrites(t, s, root, pw("task", "ch", "root_val"))
	expectWrites(t, s, child, pw("task", "ch", "child_val"))
}

// Python test_put_writes_cleared_on_next_checkpoint.
func writesNewCheckpoint(t *testing.T, s checkpoint.Saver) {
	ref := putOne(t, s, "")
	mustWrites(t, s, ref, "task", "", "ch", "old_write")
	ref2 := mustPut(t, s, ref, newCP(nil, nil), loopMD(0), nil)
	got := mustGet(t, s, ref2).PendingWrites
	if got == nil || len(got) != 0 {
		t.Fatalf("new checkpoint's PendingWrites = %#v, want empty and non-nil", got)
	}
	expectWrites(t, s, ref, pw("task", "ch", "old_write"))
}

// Writes may arrive before their checkpoint (the engine puts checkpoints in
// the background); they show once it is stored.
func writesBeforeCheckpoint(t *testing.T, s checkpoint.Saver) {
	thread := newThread("writes")
	cp := newCP(nil, nil)
	ref := checkpoint.Ref{ThreadID: thread, CheckpointID: cp.ID}
	mustWrites(t, s, ref, "task", "", "ch", "early")
	expectNotFound(t, s, ref)
	mustPut(t, s, checkpoint.Ref{ThreadID: thread}, cp, inputMD(), nil)
	expectWrites(t, s, ref, pw("task", "ch", "early"))
}

func writesEmptyBatch(t *testing.T, s checkpoint.Saver) {
	ref := putOne(t, s, "")
	if err := s.PutWrites(t.Context(), ref, nil, "task", ""); err != nil {
		t.Fatalf("PutWrites with no writes: %v", err)
	}
	expectWrites(t, s, ref)
}
