package engine_test

import (
	"context"
	"fmt"
	"os"
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
		dsn := os.Getenv("WEFT_TEST_POSTGRES_DSN")
		if dsn == "" {
			if testenv.ServicesRequired() {
				t.Fatal("WEFT_TEST_POSTGRES_DSN is not set, and the PostgreSQL tests must run here")
			}
			t.Skip(`no PostgreSQL: run eval "$(bash scripts/pg-test-server.sh start)" first`)
		}
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
