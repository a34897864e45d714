package checkpointtest

import (
	"errors"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
)

func runDeleter(s checkpoint.Saver) bool { _, ok := s.(checkpoint.RunDeleter); return ok }

func runDeleteCases() []testCase {
	cs := []testCase{
		{name: "deletes_run_in_every_namespace", run: runDeleteNamespaces},
		{name: "resets_writes_of_start", run: runDeleteResetsStart},
		{name: "deletes_values_only_the_run_used", run: runDeleteValues},
		{name: "refuses_when_another_run_continued", run: runDeleteRefusesChild},
		{name: "refuses_when_a_subgraph_of_another_run_continued", run: runDeleteRefusesSubgraph},
		{name: "run_without_checkpoints", run: runDeleteNothing},
		{name: "other_threads_untouched", run: runDeleteOthers},
		{name: "rejects_bad_arguments", run: runDeleteBadArgs},
	}
	for i := range cs {
		cs[i].needs, cs[i].capability = runDeleter, "checkpoint.RunDeleter"
	}
	return cs
}

func runMD(step int, run string, parents map[string]string) checkpoint.Metadata {
	md := loopMD(step)
	md.RunID = run
	if parents != nil {
		md.Parents = parents
	}
	return md
}

func deleteRun(t *testing.T, s checkpoint.Saver, thread, run string, starts ...checkpoint.RunStart) checkpoint.RunDeleted {
	t.Helper()
	res, err := s.(checkpoint.RunDeleter).DeleteRun(t.Context(), thread, run, starts...)
	if err != nil {
		t.Fatalf("DeleteRun(%q, %q): %v", thread, run, err)
	}
	return res
}

// startOf is the RunStart a caller records before a run: the checkpoint as
// Get returns it.
func startOf(t *testing.T, s checkpoint.Saver, ref checkpoint.Ref) checkpoint.RunStart {
	t.Helper()
	tp := mustGet(t, s, ref)
	return checkpoint.RunStart{Ref: tp.Ref, Writes: tp.PendingWrites}
}

// putStep stores a child of parent for run, channel "i" at version v.
func putStep(t *testing.T, s checkpoint.Saver, parent checkpoint.Ref, md checkpoint.Metadata, v int) (checkpoint.Ref, checkpoint.Checkpoint) {
	t.Helper()
	cp := newCP(vals("i", "v"+string(rune('0'+v)), "const", "c"), vers("i", v, "const", 1))
	nv := vers("i", v)
	if parent.CheckpointID == "" {
		nv = cp.ChannelVersions
	}
	return mustPut(t, s, parent, cp, md, nv), cp
}

// The run's checkpoints go in the root namespace and in its subgraphs';
// the checkpoint it started from, of another run, stays the thread's head.
func runDeleteNamespaces(t *testing.T, s checkpoint.Saver) {
	thread := newThread("rundel")
	root := checkpoint.Ref{ThreadID: thread}
	c0, cp0 := putStep(t, s, root, runMD(0, "run-a", nil), 1)
	start := startOf(t, s, c0)
	c1, _ := putStep(t, s, c0, runMD(1, "run-b", nil), 2)
	sub := checkpoint.Ref{ThreadID: thread, NS: "child:1"}
	s1, _ := putStep(t, s, sub, runMD(0, "run-b", map[string]string{"": c0.CheckpointID}), 1)
	putStep(t, s, s1, runMD(1, "run-b", map[string]string{"": c0.CheckpointID}), 2)
	putStep(t, s, c1, runMD(2, "run-b", nil), 3)
	res := deleteRun(t, s, thread, "run-b", start)
	if res.Checkpoints != 4 {
		t.Errorf("DeleteRun deleted %d checkpoints, want 4: %+v", res.Checkpoints, res)
	}
	w := want(c0, "", cp0, runMD(0, "run-a", nil), cp0.ChannelValues)
	expectList(t, s, checkpoint.ListOptions{ThreadID: thread}, []*checkpoint.Tuple{w})
	expectTuple(t, "head after DeleteRun", mustGet(t, s, root), w)
	expectNotFound(t, s, sub)
}

// A run resumed at an interrupt stores its writes on the checkpoint it
// started from: the answer (a null task's __resume__), a finished task's
// writes, a new interrupt replacing the old. Rolled back, that checkpoint
// holds exactly what it held before, the earlier null-task writes and the
// old interrupt included.
func runDeleteResetsStart(t *testing.T, s checkpoint.Saver) {
	thread := newThread("rundel")
	c0, cp0 := putStep(t, s, checkpoint.Ref{ThreadID: thread}, runMD(0, "run-a", nil), 1)
	mustWrites(t, s, c0, "task-1", "pull:ask", checkpoint.Interrupt, `["first"]`)
	mustWrites(t, s, c0, checkpoint.NullTaskID, "", "i", "from a command")
	mustWrites(t, s, c0, "task-2", "pull:done", "i", "done before")
	start := startOf(t, s, c0)
	before := mustGet(t, s, c0)
	// The run.
	mustWrites(t, s, c0, checkpoint.NullTaskID, "", checkpoint.Resume, `"answer"`)
	mustWrites(t, s, c0, "task-1", "pull:ask", checkpoint.Interrupt, `["second"]`)
	mustWrites(t, s, c0, "task-3", "pull:other", "i", "new", "const", "too")
	mustWrites(t, s, c0, "task-2", "pull:done", "i", "done before") // a no-op
	putStep(t, s, c0, runMD(1, "run-b", nil), 2)
	res := deleteRun(t, s, thread, "run-b", start)
	if res.Checkpoints != 1 || res.Writes != 4 || res.Restored != 1 {
		t.Errorf("DeleteRun = %+v, want 1 checkpoint, 4 writes (resume, new interrupt, 2 of task-3), 1 restored", res)
	}
	w := want(c0, "", cp0, runMD(0, "run-a", nil), cp0.ChannelValues, before.PendingWrites...)
	expectTuple(t, "start after DeleteRun", mustGet(t, s, checkpoint.Ref{ThreadID: thread}), w)
	// Deleting again changes nothing.
	if res := deleteRun(t, s, thread, "run-b", start); res != (checkpoint.RunDeleted{}) {
		t.Errorf("second DeleteRun = %+v, want nothing", res)
	}
	expectTuple(t, "start after a second DeleteRun", mustGet(t, s, c0), w)
}

// A value only the run's checkpoints used goes; one a kept checkpoint
// shares stays: re-putting a deleted checkpoint with no new values finds
// the shared value and not the other.
func runDeleteValues(t *testing.T, s checkpoint.Saver) {
	thread := newThread("rundel")
	c0, _ := putStep(t, s, checkpoint.Ref{ThreadID: thread}, runMD(0, "run-a", nil), 1)
	c1, cp1 := putStep(t, s, c0, runMD(1, "run-b", nil), 2)
	deleteRun(t, s, thread, "run-b")
	expectNotFound(t, s, c1)
	cp := cp1.Clone()
	ref := mustPut(t, s, c0, cp, runMD(1, "run-c", nil), nil)
	expectTuple(t, "re-put deleted checkpoint", mustGet(t, s, ref), want(ref, c0.CheckpointID, cp, runMD(1, "run-c", nil), vals("const", "c")))
}

func expectRefused(t *testing.T, s checkpoint.Saver, thread, run string, before []*checkpoint.Tuple) {
	t.Helper()
	_, err := s.(checkpoint.RunDeleter).DeleteRun(t.Context(), thread, run)
	if !errors.Is(err, checkpoint.ErrRunContinued) {
		t.Fatalf("DeleteRun of a run another continued: err = %v, want ErrRunContinued", err)
	}
	expectList(t, s, checkpoint.ListOptions{ThreadID: thread}, before)
}

// A checkpoint of another run whose parent is the run's: nothing goes.
func runDeleteRefusesChild(t *testing.T, s checkpoint.Saver) {
	thread := newThread("rundel")
	c0, _ := putStep(t, s, checkpoint.Ref{ThreadID: thread}, runMD(0, "run-a", nil), 1)
	mustWrites(t, s, c0, "task", "", "i", "w")
	c1, _ := putStep(t, s, c0, runMD(1, "run-b", nil), 2)
	putStep(t, s, c1, runMD(2, "run-c", nil), 3)
	expectRefused(t, s, thread, "run-b", mustList(t, s, checkpoint.ListOptions{ThreadID: thread}))
}

// A subgraph checkpoint of another run under the run's root checkpoint.
func runDeleteRefusesSubgraph(t *testing.T, s checkpoint.Saver) {
	thread := newThread("rundel")
	c0, _ := putStep(t, s, checkpoint.Ref{ThreadID: thread}, runMD(0, "run-a", nil), 1)
	c1, _ := putStep(t, s, c0, runMD(1, "run-b", nil), 2)
	putStep(t, s, checkpoint.Ref{ThreadID: thread, NS: "child:1"}, runMD(0, "", map[string]string{"": c1.CheckpointID}), 1)
	expectRefused(t, s, thread, "run-b", mustList(t, s, checkpoint.ListOptions{ThreadID: thread}))
}

func runDeleteNothing(t *testing.T, s checkpoint.Saver) {
	thread := newThread("rundel")
	c := chain(t, s, thread, "", 2)
	if res := deleteRun(t, s, thread, "no-such-run"); res != (checkpoint.RunDeleted{}) {
		t.Errorf("DeleteRun of a run with no checkpoints = %+v, want nothing", res)
	}
	if res := deleteRun(t, s, "no-such-thread", "no-such-run"); res != (checkpoint.RunDeleted{}) {
		t.Errorf("DeleteRun in a missing thread = %+v, want nothing", res)
	}
	expectList(t, s, checkpoint.ListOptions{ThreadID: thread}, rev(c...))
}

func runDeleteOthers(t *testing.T, s checkpoint.Saver) {
	t1, t2 := newThread("rundel"), newThread("rundel")
	a0, _ := putStep(t, s, checkpoint.Ref{ThreadID: t1}, runMD(0, "run-a", nil), 1)
	putStep(t, s, a0, runMD(1, "run-b", nil), 2)
	b0, _ := putStep(t, s, checkpoint.Ref{ThreadID: t2}, runMD(0, "run-a", nil), 1)
	putStep(t, s, b0, runMD(1, "run-b", nil), 2)
	other := mustList(t, s, checkpoint.ListOptions{ThreadID: t2})
	deleteRun(t, s, t1, "run-b")
	expectList(t, s, checkpoint.ListOptions{ThreadID: t2}, other)
	expectIDs(t, "thread after DeleteRun", mustList(t, s, checkpoint.ListOptions{ThreadID: t1}), a0.CheckpointID)
}

// Bad arguments are errors that delete nothing.
func runDeleteBadArgs(t *testing.T, s checkpoint.Saver) {
	thread := newThread("rundel")
	c0, _ := putStep(t, s, checkpoint.Ref{ThreadID: thread}, runMD(0, "run-a", nil), 1)
	putStep(t, s, c0, runMD(1, "run-b", nil), 2)
	before := mustList(t, s, checkpoint.ListOptions{ThreadID: thread})
	rd := s.(checkpoint.RunDeleter)
	if _, err := rd.DeleteRun(t.Context(), "", "run-b"); !errors.Is(err, checkpoint.ErrNoThread) {
		t.Errorf("DeleteRun with no thread: err = %v, want ErrNoThread", err)
	}
	if _, err := rd.DeleteRun(t.Context(), thread, ""); err == nil {
		t.Error("DeleteRun with no run id: no error")
	}
	missing := checkpoint.RunStart{Ref: checkpoint.Ref{ThreadID: thread, CheckpointID: checkpoint.NewID()}}
	if _, err := rd.DeleteRun(t.Context(), thread, "run-b", missing); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("DeleteRun with a start not stored: err = %v, want ErrNotFound", err)
	}
	if _, err := rd.DeleteRun(t.Context(), thread, "run-b", checkpoint.RunStart{Ref: checkpoint.Ref{ThreadID: "other", CheckpointID: c0.CheckpointID}}); err == nil {
		t.Error("DeleteRun with a start of another thread: no error")
	}
	if _, err := rd.DeleteRun(t.Context(), thread, "run-b", checkpoint.RunStart{Ref: checkpoint.Ref{ThreadID: thread}}); !errors.Is(err, checkpoint.ErrNoCheckpoint) {
		t.Errorf("DeleteRun with a start without checkpoint id: err = %v, want ErrNoCheckpoint", err)
	}
	expectList(t, s, checkpoint.ListOptions{ThreadID: thread}, before)
}
