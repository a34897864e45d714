package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/sqlite"
	"github.com/weftstudio/weft/engine"
)

var crashResults = engine.List[string]("results")

// crashGraph fans out to four parallel workers, then joins them in total.
// hang, when set, makes p2 and p3 block until the process is killed.
func crashGraph(t testing.TB, saver checkpoint.Saver, calls *[4]atomic.Int32, hang bool) *engine.Graph {
	b := engine.NewGraph("crash", crashResults)
	for i := range 4 {
		name := fmt.Sprintf("p%d", i)
		b.AddNode(name, func(ctx context.Context, s engine.State) (engine.Output, error) {
			calls[i].Add(1)
			if hang && i >= 2 {
				<-ctx.Done() // killed before this returns
				return nil, ctx.Err()
			}
			return engine.Updates(crashResults.Add(fmt.Sprintf("%s:%d", name, len(crashResults.Get(s))))), nil
		})
		b.AddEdge(engine.START, name)
	}
	b.AddNode("total", func(_ context.Context, s engine.State) (engine.Output, error) {
		return engine.Updates(crashResults.Add(fmt.Sprintf("total:%d", len(crashResults.Get(s))))), nil
	})
	b.AddJoin([]string{"p0", "p1", "p2", "p3"}, "total")
	return compile(t, b, engine.WithSaver(saver))
}

// TestCrashChild is the child process of TestKillMidStepResumes: it runs the
// graph on the SQLite file until it is killed.
func TestCrashChild(t *testing.T) {
	db := os.Getenv("WEFT_CRASH_CHILD_DB")
	if db == "" {
		t.Skip("child process of TestKillMidStepResumes")
	}
	s, err := sqlite.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	var calls [4]atomic.Int32
	g := crashGraph(t, s, &calls, true)
	g.Invoke(context.Background(), engine.Values{}, engine.WithThread("crash"), engine.WithDurability(engine.DurabilitySync),
		engine.WithLeaseTTL(crashLeaseTTL))
	t.Fatal("the run should never end: the parent kills this process")
}

// crashLeaseTTL is the lease of the run TestCrashChild is killed in.
const crashLeaseTTL = 2 * time.Second

// A process running a super-step is killed with SIGKILL after two of its
// four parallel tasks finished; a run on the same machine sees that the
// lease's holder is gone and resumes the thread at once, without waiting
// for the lease to lapse, runs only the two unfinished tasks, and ends in
// the state of an uninterrupted run.
func TestKillMidStepResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	db := filepath.Join(t.TempDir(), "crash.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "WEFT_CRASH_CHILD_DB="+db)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()

	// Wait until the child has stored the writes of p0 and p1.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if done := finishedTasks(t, db); done == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the child never finished p0 and p1")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	s, err := sqlite.Open(db)
	if err != nil {
		t.Fatalf("reopening after kill -9: %v", err)
	}
	defer s.Close()
	var calls [4]atomic.Int32
	g := crashGraph(t, s, &calls, false)
	res, err := g.Invoke(ctx, nil, engine.WithThread("crash"))
	if errors.Is(err, checkpoint.ErrLeaseHeld) {
		t.Fatalf("the killed run's lease (%v) still holds the thread although its process is gone: %v", crashLeaseTTL, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if calls[0].Load() != 0 || calls[1].Load() != 0 || calls[2].Load() != 1 || calls[3].Load() != 1 {
		t.Errorf("after resume the tasks ran %d %d %d %d times, want 0 0 1 1", calls[0].Load(), calls[1].Load(), calls[2].Load(), calls[3].Load())
	}

	var fresh [4]atomic.Int32
	ref := crashGraph(t, memorySaver(), &fresh, false)
	want := invoke(t, ref, engine.Values{}, engine.WithThread("x"))
	if fmt.Sprint(res.Values) != fmt.Sprint(want.Values) {
		t.Errorf("resumed state %v, uninterrupted %v", res.Values, want.Values)
	}
}

// finishedTasks counts tasks with stored writes on the latest checkpoint of
// the crash thread.
func finishedTasks(t *testing.T, db string) int {
	if _, err := os.Stat(db); err != nil {
		return 0
	}
	s, err := sqlite.Open(db, sqlite.ReadOnly())
	if err != nil {
		return 0
	}
	defer s.Close()
	tp, err := s.Get(ctx, checkpoint.Ref{ThreadID: "crash"})
	if err != nil {
		return 0
	}
	tasks := map[string]bool{}
	for _, w := range tp.PendingWrites {
		if w.Channel == "results" {
			tasks[w.TaskID] = true
		}
	}
	return len(tasks)
}
