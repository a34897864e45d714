package agentserver_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/weftstudio/weft/agentserver"
	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/checkpoint/sqlite"
	"github.com/weftstudio/weft/engine"
)

// history is the thread's whole history and state as the API gives them.
func (s *server) history(tid string) (hist, state any) {
	s.t.Helper()
	_, hist = s.call("POST", "/threads/"+tid+"/history", `{"limit": 1000}`)
	_, state = s.call("GET", "/threads/"+tid+"/state", "")
	return hist, state
}

// waitFor polls until ok holds, failing after 10 s.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestCancelRollback: a run cancelled with action=rollback is gone, with
// every checkpoint it wrote: the thread's history and state are exactly
// those before it, the run is not listed and cannot be read, and the
// thread takes a new run.
func TestCancelRollback(t *testing.T) {
	s := newSlow(t)
	tid := s.newThread(`{}`)
	if code, v := s.call("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id": "slow", "input": {"n": 0, "until": 3}}`); code != 200 || get(v, "n") != 3.0 {
		t.Fatalf("first run: %d %v", code, v)
	}
	_, runs := s.call("GET", "/threads/"+tid+"/runs", "")
	hist, state := s.history(tid)
	rid := s.background(tid, `{"assistant_id": "slow", "input": {"until": 100000}}`)
	waitFor(t, "the run's steps", func() bool {
		_, v := s.call("GET", "/threads/"+tid+"/state", "")
		n, _ := get(v, "values", "n").(float64)
		return n > 5
	})
	if code, v := s.call("POST", "/threads/"+tid+"/runs/"+rid+"/cancel?wait=true&action=rollback", ""); code != 204 {
		t.Fatalf("cancel with rollback: %d %v", code, v)
	}
	if code, v := s.call("GET", "/threads/"+tid+"/runs/"+rid, ""); code != 404 {
		t.Errorf("the rolled-back run: %d %v, want 404", code, v)
	}
	if _, v := s.call("GET", "/threads/"+tid+"/runs", ""); !reflect.DeepEqual(v, runs) {
		t.Errorf("runs after the rollback:\n%v\nwant\n%v", v, runs)
	}
	gotHist, gotState := s.history(tid)
	if !reflect.DeepEqual(gotHist, hist) {
		t.Errorf("history after the rollback:\n%v\nwant\n%v", gotHist, hist)
	}
	if !reflect.DeepEqual(gotState, state) {
		t.Errorf("state after the rollback:\n%v\nwant\n%v", gotState, state)
	}
	for tp, err := range s.saver.List(context.Background(), checkpoint.ListOptions{ThreadID: tid, Filter: map[string]any{"run_id": rid}}) {
		t.Errorf("a checkpoint of the rolled-back run is left: %v %v", tp, err)
	}
	if _, v := s.call("GET", "/threads/"+tid, ""); str(v, "status") != "idle" {
		t.Errorf("thread after the rollback: %v, want idle", v)
	}
	if code, v := s.call("POST", "/threads/"+tid+"/runs/"+rid+"/cancel?action=rollback", ""); code != 404 {
		t.Errorf("rolling back a rolled-back run: %d %v, want 404", code, v)
	}
	if code, v := s.call("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id": "slow", "input": {"until": 5}}`); code != 200 || get(v, "n") != 5.0 {
		t.Errorf("a run after the rollback: %d %v", code, v)
	}
}

// TestMultitaskRollback: a run under multitask_strategy rollback rolls
// the running one back, then runs from the state before it.
func TestMultitaskRollback(t *testing.T) {
	s := newSlow(t)
	tid := s.newThread(`{}`)
	if code, v := s.call("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id": "slow", "input": {"n": 0, "until": 2}}`); code != 200 {
		t.Fatalf("first run: %d %v", code, v)
	}
	first := s.background(tid, `{"assistant_id": "slow", "input": {"n": 1000, "until": 100000}}`)
	waitFor(t, "the run's steps", func() bool {
		_, v := s.call("GET", "/threads/"+tid+"/state", "")
		n, _ := get(v, "values", "n").(float64)
		return n > 1002
	})
	// n is 2 again when the new run starts: it counts 2 → 4, not 1003 → 4.
	code, v := s.call("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id": "slow", "input": {"until": 4}, "multitask_strategy": "rollback"}`)
	if code != 200 || get(v, "n") != 3.0 && get(v, "n") != 4.0 {
		t.Fatalf("the run after the rollback: %d %v", code, v)
	}
	if code, r := s.call("GET", "/threads/"+tid+"/runs/"+first, ""); code != 404 {
		t.Errorf("the rolled-back run: %d %v, want 404", code, r)
	}
	hist, _ := s.history(tid)
	for _, cp := range hist.([]any) {
		if n, _ := get(cp, "values", "n").(float64); n >= 1000 {
			t.Errorf("a checkpoint of the rolled-back run is in the history: %v", get(cp, "values"))
		}
	}
}

// pairGraph asks two questions in parallel; the second's node takes long
// when answered "slow" (until its context ends).
func pairGraph(t testing.TB) *engine.Graph {
	t.Helper()
	a, b := engine.LastValue[string]("a"), engine.LastValue[string]("b")
	ask := func(key engine.Key[string], q string) engine.NodeFunc {
		return func(ctx context.Context, s engine.State) (engine.Output, error) {
			ans, err := engine.Interrupt(ctx, q)
			if err != nil {
				return nil, err
			}
			if ans == "slow" {
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-time.After(20 * time.Second):
				}
			}
			return engine.Updates(key.Set(fmt.Sprint(ans))), nil
		}
	}
	g, err := engine.NewGraph("pair", a, b).
		AddNode("ask_a", ask(a, "a?")).AddNode("ask_b", ask(b, "b?")).
		AddEdge(engine.START, "ask_a").AddEdge(engine.START, "ask_b").
		AddEdge("ask_a", engine.END).AddEdge("ask_b", engine.END).
		Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestRollbackResumedRun: a resume rolled back while one of its tasks
// still ran, after the other had finished and stored its writes, leaves
// the interrupts waiting as before: the finished task's writes and the
// answer are gone from the checkpoint, so answering again runs both
// tasks with the new answers.
func TestRollbackResumedRun(t *testing.T) {
	t.Run("memory", func(t *testing.T) { testRollbackResumedRun(t, memory.New()) })
	t.Run("sqlite", func(t *testing.T) {
		saver, err := sqlite.Open(filepath.Join(t.TempDir(), "store.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { saver.Close() })
		testRollbackResumedRun(t, saver)
	})
}

func testRollbackResumedRun(t *testing.T, saver checkpoint.Saver) {
	h, err := agentserver.New(map[string]*engine.Graph{"pair": pairGraph(t)}, saver)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	s := &server{t: t, srv: srv, saver: saver}
	tid := s.newThread(`{}`)
	code, v := s.call("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id": "pair", "input": {"a": "-", "b": "-"}}`)
	if code != 200 || get(v, "__interrupt__") == nil {
		t.Fatalf("first run: %d %v", code, v)
	}
	hist, state := s.history(tid)
	idOf := map[string]string{}
	for _, task := range get(state, "tasks").([]any) {
		for _, it := range get(task, "interrupts").([]any) {
			idOf[str(it, "value")] = str(it, "id")
		}
	}
	if len(idOf) != 2 {
		t.Fatalf("the interrupts waiting: %v", get(state, "tasks"))
	}
	head, err := saver.Get(context.Background(), checkpoint.Ref{ThreadID: tid})
	if err != nil {
		t.Fatal(err)
	}
	rid := s.background(tid, fmt.Sprintf(`{"assistant_id": "pair", "command": {"resume": {%q: "first", %q: "slow"}}}`, idOf["a?"], idOf["b?"]))
	waitFor(t, "ask_a's writes", func() bool {
		tp, err := saver.Get(context.Background(), checkpoint.Ref{ThreadID: tid})
		if err != nil {
			return false
		}
		for _, w := range tp.PendingWrites {
			if w.Channel == "a" {
				return true
			}
		}
		return false
	})
	if code, v := s.call("POST", "/threads/"+tid+"/runs/"+rid+"/cancel?wait=true&action=rollback", ""); code != 204 {
		t.Fatalf("cancel with rollback: %d %v", code, v)
	}
	after, err := saver.Get(context.Background(), checkpoint.Ref{ThreadID: tid})
	if err != nil {
		t.Fatal(err)
	}
	if after.Ref != head.Ref || !reflect.DeepEqual(after.PendingWrites, head.PendingWrites) {
		t.Errorf("the checkpoint the run started from, after the rollback:\n%+v\nwant\n%+v", after.PendingWrites, head.PendingWrites)
	}
	gotHist, gotState := s.history(tid)
	if !reflect.DeepEqual(gotHist, hist) || !reflect.DeepEqual(gotState, state) {
		t.Errorf("history and state after the rollback:\n%v\n%v\nwant\n%v\n%v", gotHist, gotState, hist, state)
	}
	if _, v := s.call("GET", "/threads/"+tid, ""); str(v, "status") != "interrupted" {
		t.Errorf("thread after the rollback: %q, want interrupted (both questions wait again)", str(v, "status"))
	}
	code, v = s.call("POST", "/threads/"+tid+"/runs/wait", fmt.Sprintf(`{"assistant_id": "pair", "command": {"resume": {%q: "second", %q: "fine"}}}`, idOf["a?"], idOf["b?"]))
	if code != 200 || get(v, "a") != "second" || get(v, "b") != "fine" || get(v, "__interrupt__") != nil {
		t.Errorf("answering again after the rollback: %d %v, want a=second b=fine", code, v)
	}
}

// bareSaver hides every optional capability of the saver it wraps.
type bareSaver struct{ checkpoint.Saver }

// TestRollbackNeedsRunDeleter: on a store that cannot delete a run, both
// forms of rollback are refused with 501 naming what is missing, and the
// run goes on.
func TestRollbackNeedsRunDeleter(t *testing.T) {
	saver := bareSaver{memory.New()}
	h, err := agentserver.New(map[string]*engine.Graph{"slow": slowGraph(t)}, saver)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	s := &server{t: t, srv: srv, saver: saver}
	tid := s.newThread(`{}`)
	rid := s.background(tid, `{"assistant_id": "slow", "input": {"until": 100000}}`)
	// A background run starts a moment after it is created: wait for it,
	// so what follows sees a running run, on a loaded machine too.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, v := s.call("GET", "/threads/"+tid+"/runs/"+rid, ""); str(v, "status") == "running" {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the background run never started: %v", v)
		}
	}
	if code, v := s.call("POST", "/threads/"+tid+"/runs/"+rid+"/cancel?action=rollback", ""); code != 501 || str(v, "detail") == "" {
		t.Errorf("cancel with rollback: %d %v", code, v)
	}
	if code, v := s.call("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id": "slow", "input": {"until": 1}, "multitask_strategy": "rollback"}`); code != 501 {
		t.Errorf("multitask_strategy rollback: %d %v", code, v)
	}
	if _, v := s.call("GET", "/threads/"+tid+"/runs/"+rid, ""); str(v, "status") != "running" {
		t.Errorf("the run after refused rollbacks: %v", v)
	}
	if code, _ := s.call("POST", "/threads/"+tid+"/runs/"+rid+"/cancel?wait=true", ""); code != 204 {
		t.Errorf("cancel: %d", code)
	}
}

// nestedGraph asks its question inside a subgraph, whose next node takes
// long when the answer is "slow" (until its context ends).
func nestedGraph(t testing.TB) *engine.Graph {
	t.Helper()
	ans := engine.LastValue[string]("answer")
	done := engine.LastValue[string]("done")
	sub, err := engine.NewGraph("inner", ans, done).
		AddNode("ask", func(ctx context.Context, s engine.State) (engine.Output, error) {
			v, err := engine.Interrupt(ctx, "which?")
			if err != nil {
				return nil, err
			}
			return engine.Updates(ans.Set(fmt.Sprint(v))), nil
		}).
		AddNode("work", func(ctx context.Context, s engine.State) (engine.Output, error) {
			if ans.Get(s) == "slow" {
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-time.After(20 * time.Second):
				}
			}
			return engine.Updates(done.Set("worked on " + ans.Get(s))), nil
		}).
		AddEdge(engine.START, "ask").AddEdge("ask", "work").AddEdge("work", engine.END).Compile()
	if err != nil {
		t.Fatal(err)
	}
	g, err := engine.NewGraph("nested", ans, done).
		AddSubgraph("inner", sub).
		AddEdge(engine.START, "inner").AddEdge("inner", engine.END).Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestRollbackInSubgraph: a resume of an interrupt inside a subgraph,
// rolled back after the subgraph's step that took the answer stored a
// checkpoint and its writes, leaves the subgraph's interrupt waiting as
// before, in the subgraph's namespace too, and answerable anew.
func TestRollbackInSubgraph(t *testing.T) {
	saver := memory.New()
	h, err := agentserver.New(map[string]*engine.Graph{"nested": nestedGraph(t)}, saver)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	s := &server{t: t, srv: srv, saver: saver}
	tid := s.newThread(`{}`)
	if code, v := s.call("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id": "nested", "input": {"answer": "-"}}`); code != 200 || get(v, "__interrupt__") == nil {
		t.Fatalf("first run: %d %v", code, v)
	}
	all := func() []*checkpoint.Tuple {
		var out []*checkpoint.Tuple
		for tp, err := range saver.List(context.Background(), checkpoint.ListOptions{ThreadID: tid}) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, tp)
		}
		return out
	}
	before := all()
	hist, state := s.history(tid)
	rid := s.background(tid, `{"assistant_id": "nested", "command": {"resume": "slow"}}`)
	waitFor(t, "the subgraph's step past the answer", func() bool { return len(all()) > len(before) })
	time.Sleep(50 * time.Millisecond) // into work's wait
	if code, v := s.call("POST", "/threads/"+tid+"/runs/"+rid+"/cancel?wait=true&action=rollback", ""); code != 204 {
		t.Fatalf("cancel with rollback: %d %v", code, v)
	}
	if got := all(); !reflect.DeepEqual(got, before) {
		t.Errorf("checkpoints after the rollback (every namespace):\n%d %v\nwant\n%d %v", len(got), got, len(before), before)
	}
	gotHist, gotState := s.history(tid)
	if !reflect.DeepEqual(gotHist, hist) || !reflect.DeepEqual(gotState, state) {
		t.Errorf("history and state after the rollback:\n%v\n%v\nwant\n%v\n%v", gotHist, gotState, hist, state)
	}
	code, v := s.call("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id": "nested", "command": {"resume": "quick"}}`)
	if code != 200 || get(v, "done") != "worked on quick" {
		t.Errorf("answering again after the rollback: %d %v", code, v)
	}
}

// refusingSaver is the memory saver whose DeleteRun refuses, as a store
// does when another run continued from the run's checkpoints.
type refusingSaver struct{ *memory.Saver }

func (refusingSaver) DeleteRun(ctx context.Context, threadID, runID string, starts ...checkpoint.RunStart) (checkpoint.RunDeleted, error) {
	return checkpoint.RunDeleted{}, fmt.Errorf("delete run %q: %w", runID, checkpoint.ErrRunContinued)
}

// TestRollbackRefused: when the store refuses to delete the run, the run
// still stops, stays listed as interrupted, and its stream says why it was
// not rolled back; its checkpoints stay.
func TestRollbackRefused(t *testing.T) {
	saver := refusingSaver{memory.New()}
	h, err := agentserver.New(map[string]*engine.Graph{"slow": slowGraph(t)}, saver)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	s := &server{t: t, srv: srv, saver: saver}
	tid := s.newThread(`{}`)
	rid := s.background(tid, `{"assistant_id": "slow", "input": {"n": 0, "until": 100000}}`)
	waitFor(t, "the run's steps", func() bool {
		_, v := s.call("GET", "/threads/"+tid+"/state", "")
		n, _ := get(v, "values", "n").(float64)
		return n > 2
	})
	if code, v := s.call("POST", "/threads/"+tid+"/runs/"+rid+"/cancel?wait=true&action=rollback", ""); code != 204 {
		t.Fatalf("cancel with rollback: %d %v", code, v)
	}
	if code, v := s.call("GET", "/threads/"+tid+"/runs/"+rid, ""); code != 200 || str(v, "status") != "interrupted" {
		t.Errorf("the run whose rollback was refused: %d %v", code, v)
	}
	evs := s.joinStream(tid, rid, "")
	if last := evs[len(evs)-1]; last.Name != "error" || !strings.Contains(str(last.Data, "message"), "not rolled back") || !strings.Contains(str(last.Data, "message"), "another run continued") {
		t.Errorf("the run's last event: %s %s, want the error saying it was not rolled back and why", last.Name, last.Data)
	}
	if _, v := s.call("GET", "/threads/"+tid+"/state", ""); get(v, "values", "n") == nil {
		t.Errorf("the run's checkpoints went: %v", v)
	}
}
