package engine_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/postgres"
	"github.com/weftstudio/weft/checkpoint/sqlite"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/internal/testenv"
)

// A thread written by a host whose clock is 60 s ahead, then continued by
// one with the right clock: each node runs once per step, the new
// checkpoints become the head and the history's id order is the chain's.
func TestClockAheadThenRightClock(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		s, err := sqlite.Open(filepath.Join(t.TempDir(), "skew.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		clockAheadThenRight(t, s)
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := testenv.PostgresDSN(t)
		s, err := postgres.Open(context.Background(), dsn, postgres.WithSchema(fmt.Sprintf("weft_skew_%d_%d", os.Getpid(), time.Now().UnixNano())))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		clockAheadThenRight(t, s)
	})
}

func clockAheadThenRight(t *testing.T, s checkpoint.Saver) {
	n := engine.LastValue[int]("n")
	var runs atomic.Int32
	b := engine.NewGraph("skew", n)
	b.AddNode("inc", func(_ context.Context, st engine.State) (engine.Output, error) {
		runs.Add(1)
		return engine.Updates(n.Set(n.Get(st) + 1)), nil
	})
	b.AddEdge(engine.START, "inc")
	g := compile(t, b, engine.WithSaver(s))
	ctx := context.Background()
	th := engine.WithThread("skew")

	restore := engine.SetClock(func() time.Time { return time.Now().Add(60 * time.Second) })
	if _, err := g.Invoke(ctx, engine.Values{"n": 0}, th); err != nil {
		restore()
		t.Fatal(err)
	}
	restore()
	runs.Store(0)
	res, err := g.Invoke(ctx, engine.Values{"n": 10}, th)
	if err != nil {
		t.Fatalf("run with the right clock: %v", err)
	}
	if got := runs.Load(); got != 1 {
		t.Errorf("node ran %d times, want 1", got)
	}
	if got := res.Values["n"]; got != 11 {
		t.Errorf("n = %v, want 11", got)
	}
	var ids []string
	var parents []string
	for tp, err := range s.List(ctx, checkpoint.ListOptions{ThreadID: "skew"}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tp.Ref.CheckpointID)
		p := ""
		if tp.Parent != nil {
			p = tp.Parent.CheckpointID
		}
		parents = append(parents, p)
	}
	if len(ids) != 6 {
		t.Fatalf("%d checkpoints, want 6 (input, loop, loop per run)", len(ids))
	}
	for i := 0; i+1 < len(ids); i++ {
		if parents[i] != ids[i+1] {
			t.Errorf("history position %d: parent %s, want the next older %s (id order is not the chain's)", i, parents[i], ids[i+1])
		}
	}
	head, err := s.Get(ctx, checkpoint.Ref{ThreadID: "skew"})
	if err != nil {
		t.Fatal(err)
	}
	if head.Ref.CheckpointID != res.Ref.CheckpointID {
		t.Errorf("head %s, want the last run's %s", head.Ref.CheckpointID, res.Ref.CheckpointID)
	}
}

// A thread written by another process whose clock is 60 s ahead, then
// forked from its first checkpoint (an update there, a replay from there)
// by this one with the right clock: the fork's checkpoints become the head,
// so the thread goes on from the fork, not from the branch it left. The
// branch ahead is written by a child process because within one process
// ids only grow, which would hide the skew.
func TestForkByBehindClockBecomesHead(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "skew.db")
		forkByBehindClock(t, []string{"WEFT_SKEW_CHILD_DB=" + db}, func() (checkpoint.Saver, func()) {
			s, err := sqlite.Open(db)
			if err != nil {
				t.Fatal(err)
			}
			return s, func() { s.Close() }
		})
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := testenv.PostgresDSN(t)
		schema := fmt.Sprintf("weft_skewfork_%d_%d", os.Getpid(), time.Now().UnixNano())
		forkByBehindClock(t, []string{"WEFT_SKEW_CHILD_PG_SCHEMA=" + schema}, func() (checkpoint.Saver, func()) {
			s, err := postgres.Open(context.Background(), dsn, postgres.WithSchema(schema))
			if err != nil {
				t.Fatal(err)
			}
			return s, s.Close
		})
	})
}

// skewForkThreads are the threads TestSkewForkChild writes, one per way
// of forking.
var skewForkThreads = []string{"skewfork-update", "skewfork-replay"}

func skewForkGraph(t testing.TB, s checkpoint.Saver) (*engine.Graph, engine.Key[int]) {
	n := engine.LastValue[int]("n")
	b := engine.NewGraph("skewfork", n)
	b.AddNode("inc", func(_ context.Context, st engine.State) (engine.Output, error) {
		return engine.Updates(n.Set(n.Get(st) + 1)), nil
	})
	b.AddEdge(engine.START, "inc")
	return compile(t, b, engine.WithSaver(s)), n
}

// TestSkewForkChild is the child process of TestForkByBehindClockBecomesHead:
// with a clock 60 s ahead it runs each thread twice.
func TestSkewForkChild(t *testing.T) {
	var s checkpoint.Saver
	switch db, schema := os.Getenv("WEFT_SKEW_CHILD_DB"), os.Getenv("WEFT_SKEW_CHILD_PG_SCHEMA"); {
	case db != "":
		sq, err := sqlite.Open(db)
		if err != nil {
			t.Fatal(err)
		}
		defer sq.Close()
		s = sq
	case schema != "":
		pg, err := postgres.Open(context.Background(), os.Getenv("WEFT_TEST_POSTGRES_DSN"), postgres.WithSchema(schema))
		if err != nil {
			t.Fatal(err)
		}
		defer pg.Close()
		s = pg
	default:
		t.Skip("child process of TestForkByBehindClockBecomesHead")
	}
	g, _ := skewForkGraph(t, s)
	defer engine.SetClock(func() time.Time { return time.Now().Add(60 * time.Second) })()
	for _, th := range skewForkThreads {
		for _, n := range []int{0, 5} {
			if _, err := g.Invoke(context.Background(), engine.Values{"n": n}, engine.WithThread(th)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func forkByBehindClock(t *testing.T, env []string, open func() (checkpoint.Saver, func())) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestSkewForkChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child writing the branch ahead: %v\n%s", err, out)
	}
	s, closeStore := open()
	defer closeStore()
	g, n := skewForkGraph(t, s)
	ctx := context.Background()
	forks := map[string]func(thread, at string) (checkpoint.Ref, error){
		"skewfork-update": func(thread, at string) (checkpoint.Ref, error) {
			return g.UpdateState(ctx, engine.Updates(n.Set(100)), "inc", engine.WithThread(thread), engine.WithCheckpoint(at))
		},
		"skewfork-replay": func(thread, at string) (checkpoint.Ref, error) {
			res, err := g.Invoke(ctx, nil, engine.WithThread(thread), engine.WithCheckpoint(at))
			if err != nil {
				return checkpoint.Ref{}, err
			}
			return res.Ref, nil
		},
	}
	for _, th := range skewForkThreads {
		t.Run(th, func(t *testing.T) {
			var first string
			count := 0
			for tp, err := range s.List(ctx, checkpoint.ListOptions{ThreadID: th}) {
				if err != nil {
					t.Fatal(err)
				}
				first = tp.Ref.CheckpointID // the oldest comes last
				count++
			}
			if count < 4 {
				t.Fatalf("the child wrote %d checkpoints, want two runs' (at least 4)", count)
			}
			ref, err := forks[th](th, first)
			if err != nil {
				t.Fatalf("fork: %v", err)
			}
			head, err := s.Get(ctx, checkpoint.Ref{ThreadID: th})
			if err != nil {
				t.Fatal(err)
			}
			if head.Ref.CheckpointID != ref.CheckpointID {
				t.Errorf("head %s, want the fork's %s (the fork sorts below the branch written by the clock ahead)", head.Ref.CheckpointID, ref.CheckpointID)
			}
		})
	}
}
