package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/checkpoint/postgres"
	"github.com/weftstudio/weft/engine"
)

func newCP() checkpoint.Checkpoint {
	return checkpoint.Checkpoint{V: checkpoint.FormatVersion, ID: checkpoint.NewID(), TS: time.Now(),
		ChannelValues: map[string][]byte{"x": []byte("1")}, ChannelVersions: map[string]int64{"x": 1}}
}

func md(src checkpoint.Source, step int) checkpoint.Metadata {
	return checkpoint.Metadata{Source: src, Step: step}
}

// expectConflict fails unless err is a conflict naming thread, parent and
// head.
func expectConflict(t *testing.T, err error, thread, parent, head string) {
	t.Helper()
	if !errors.Is(err, postgres.ErrConflict) {
		t.Fatalf("err = %v, want ErrConflict", err)
	}
	var ce *postgres.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("err %v is not a *ConflictError", err)
	}
	if ce.ThreadID != thread || ce.ParentID != parent || (head != "" && ce.HeadID != head) {
		t.Errorf("conflict %+v, want thread %q parent %s head %s", ce, thread, parent, head)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("%q", thread)) {
		t.Errorf("error %q does not name thread %q", err, thread)
	}
}

// TestConflictRule pins down which Puts are conflicts, at the saver level.
func TestConflictRule(t *testing.T) {
	s, _ := openFresh(t)
	ctx := context.Background()
	const th = "rule"
	put := func(parent string, cp checkpoint.Checkpoint, src checkpoint.Source) error {
		_, err := s.Put(ctx, checkpoint.Ref{ThreadID: th, CheckpointID: parent}, cp, md(src, 0), cp.ChannelVersions)
		return err
	}
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	in, a, b := newCP(), newCP(), newCP()
	must("input", put("", in, checkpoint.SourceInput))
	must("loop a after input", put(in.ID, a, checkpoint.SourceLoop))

	// A second loop child of the input: another writer got there first.
	expectConflict(t, put(in.ID, b, checkpoint.SourceLoop), th, in.ID, a.ID)
	if _, err := s.Get(ctx, checkpoint.Ref{ThreadID: th, CheckpointID: b.ID}); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("the refused checkpoint was stored: %v", err)
	}
	// Retrying a Put that succeeded is not a conflict.
	must("retry of a", put(in.ID, a, checkpoint.SourceLoop))

	// A fork of an old checkpoint is allowed and becomes the head, so the
	// old branch can no longer be advanced, but the fork can.
	f := newCP()
	must("fork of the input", put(in.ID, f, checkpoint.SourceFork))
	c := newCP()
	expectConflict(t, put(a.ID, c, checkpoint.SourceLoop), th, a.ID, f.ID)
	must("loop after the fork", put(f.ID, c, checkpoint.SourceLoop))

	// Update and input checkpoints may branch from any checkpoint.
	must("update of an old checkpoint", put(a.ID, newCP(), checkpoint.SourceUpdate))
	must("input on an old checkpoint", put(a.ID, newCP(), checkpoint.SourceInput))
	// A checkpoint with no parent starts a branch of its own.
	must("a loop checkpoint with no parent", put("", newCP(), checkpoint.SourceLoop))

	// Heads are per namespace.
	sub := checkpoint.Ref{ThreadID: th, NS: "sub:1"}
	s1, s2 := newCP(), newCP()
	if _, err := s.Put(ctx, sub, s1, md(checkpoint.SourceInput, -1), nil); err != nil {
		t.Fatal(err)
	}
	sub.CheckpointID = s1.ID
	if _, err := s.Put(ctx, sub, s2, md(checkpoint.SourceLoop, 0), nil); err != nil {
		t.Fatalf("a loop checkpoint in a namespace of its own: %v", err)
	}

	// A child whose id sorts before its parent (a clock gone back) is
	// refused, not silently hidden behind its parent.
	head, err := s.Get(ctx, checkpoint.Ref{ThreadID: th})
	if err != nil {
		t.Fatal(err)
	}
	early := newCP()
	early.ID = "00000000-0000-7000-8000-000000000000"
	err = put(head.Ref.CheckpointID, early, checkpoint.SourceLoop)
	if err == nil || errors.Is(err, postgres.ErrConflict) || !strings.Contains(err.Error(), "clock") {
		t.Fatalf("child with an id below its parent's: err = %v", err)
	}
}

// TestStrictInput: with WithStrictInput an input checkpoint must extend the
// head too; a new thread and a retried Put are still fine.
func TestStrictInput(t *testing.T) {
	s, _ := openFresh(t, postgres.WithStrictInput())
	ctx := context.Background()
	const th = "strict"
	put := func(parent string, cp checkpoint.Checkpoint, src checkpoint.Source) error {
		_, err := s.Put(ctx, checkpoint.Ref{ThreadID: th, CheckpointID: parent}, cp, md(src, 0), cp.ChannelVersions)
		return err
	}
	in, a, in2 := newCP(), newCP(), newCP()
	if err := put("", in, checkpoint.SourceInput); err != nil {
		t.Fatal(err)
	}
	if err := put(in.ID, a, checkpoint.SourceLoop); err != nil {
		t.Fatal(err)
	}
	expectConflict(t, put(in.ID, in2, checkpoint.SourceInput), th, in.ID, a.ID)
	if err := put(a.ID, in2, checkpoint.SourceInput); err != nil {
		t.Fatalf("an input child of the head: %v", err)
	}
	if err := put(a.ID, in2, checkpoint.SourceInput); err != nil {
		t.Fatalf("a retried input Put: %v", err)
	}
	if err := put(in.ID, newCP(), checkpoint.SourceUpdate); err != nil {
		t.Fatalf("an update of an old checkpoint: %v", err)
	}
}

// TestConflictManyWriters: writers that all loaded the same head and put a
// child of it at once; exactly one wins and the history stays one chain.
func TestConflictManyWriters(t *testing.T) {
	s, _ := openFresh(t, postgres.WithMaxConns(10))
	ctx := context.Background()
	const th, writers, rounds = "many", 8, 5
	parent := checkpoint.Ref{ThreadID: th}
	root := newCP()
	ref, err := s.Put(ctx, parent, root, md(checkpoint.SourceInput, -1), root.ChannelVersions)
	if err != nil {
		t.Fatal(err)
	}
	chain := []string{root.ID}
	for round := range rounds {
		var (
			wg        sync.WaitGroup
			start     = make(chan struct{})
			mu        sync.Mutex
			winners   []string
			conflicts int
		)
		for range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cp := newCP()
				<-start
				_, err := s.Put(ctx, ref, cp, md(checkpoint.SourceLoop, round), cp.ChannelVersions)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					winners = append(winners, cp.ID)
				case errors.Is(err, postgres.ErrConflict):
					conflicts++
				default:
					t.Errorf("round %d: %v", round, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if len(winners) != 1 || conflicts != writers-1 {
			t.Fatalf("round %d: %d winners, %d conflicts; want 1 and %d", round, len(winners), conflicts, writers-1)
		}
		chain = append(chain, winners[0])
		ref = checkpoint.Ref{ThreadID: th, CheckpointID: winners[0]}
	}
	hs, err := s.ListHeaders(ctx, checkpoint.ListOptions{ThreadID: th})
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != len(chain) {
		t.Fatalf("history has %d checkpoints, want %d", len(hs), len(chain))
	}
	for i, h := range hs { // newest first
		want := chain[len(chain)-1-i]
		if h.Ref.CheckpointID != want {
			t.Fatalf("history[%d] = %s, want %s", i, h.Ref.CheckpointID, want)
		}
		if i+1 < len(hs) && (h.Parent == nil || h.Parent.CheckpointID != hs[i+1].Ref.CheckpointID) {
			t.Fatalf("history[%d]'s parent is %v, want %s", i, h.Parent, hs[i+1].Ref.CheckpointID)
		}
	}
}

// noLeases is a saver without the Leaser capability: runs on it do not
// claim their thread, as a run whose lease lapsed while it stalled.
type noLeases struct{ checkpoint.Saver }

// TestConflictTwoRuntimes: two engine runtimes, each with its own
// connection pool as two processes would have, load the same checkpoint and
// both run the next super-step. Leases are hidden, as if each stalled past
// its lease: the store's conflict rule is the second line of defence. One
// wins; the other gets a conflict naming the thread; the loser can reload
// and go on; the history stays one chain whose final state equals a
// single-process run.
func TestConflictTwoRuntimes(t *testing.T) {
	dsn := testDSN(t)
	schema := freshSchema(t, dsn)
	ctx := context.Background()
	open := func() *postgres.Saver {
		s, err := postgres.Open(ctx, dsn, postgres.WithSchema(schema))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
	var racing atomic.Bool
	arrived := make(chan struct{}, 2)
	release := make(chan struct{})
	// barrier holds both runtimes' node until both are running it, so
	// both have loaded the same checkpoint before either stores a new one.
	barrier := func() error {
		if !racing.Load() {
			return nil
		}
		arrived <- struct{}{}
		select {
		case <-release:
			return nil
		case <-time.After(20 * time.Second):
			return errors.New("the other runtime never arrived")
		}
	}
	count := engine.LastValue[int]("count")
	build := func(s checkpoint.Saver) *engine.Graph {
		g, err := engine.NewGraph("counter", count).
			AddNode("inc", func(_ context.Context, st engine.State) (engine.Output, error) {
				if err := barrier(); err != nil {
					return nil, err
				}
				return engine.Updates(count.Set(count.Get(st) + 1)), nil
			}).
			AddEdge(engine.START, "inc").
			AddConditionalEdges("inc", func(_ context.Context, st engine.State) (engine.Route, error) {
				if count.Get(st) < 100 {
					return engine.To("inc"), nil
				}
				return engine.To(engine.END), nil
			}, engine.Targets("inc", engine.END)).
			Compile(engine.WithSaver(s))
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	const th = "contended"
	ga, gb := build(noLeases{open()}), build(noLeases{open()})
	mustInvoke(t, ga, engine.Values{"count": 0}, engine.WithThread(th), engine.WithStepLimit(1))

	const races = 6
	for i := range races {
		// Not DurabilityAsync: its Invoke loses the error of a failed
		// background Put (see the package's report on engine/run.go).
		durability := engine.DurabilitySync
		if i%2 == 1 {
			durability = engine.DurabilityExit
		}
		head, err := ga.GetState(ctx, engine.WithThread(th))
		if err != nil {
			t.Fatal(err)
		}
		racing.Store(true)
		errs := make([]error, 2)
		results := make([]*engine.Result, 2)
		var wg sync.WaitGroup
		for j, g := range []*engine.Graph{ga, gb} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[j], errs[j] = g.Invoke(ctx, nil, engine.WithThread(th), engine.WithStepLimit(1), engine.WithDurability(durability))
			}()
		}
		<-arrived
		<-arrived
		racing.Store(false)
		close(release)
		wg.Wait()
		release = make(chan struct{})

		var lost error
		switch {
		case errs[0] == nil && errs[1] != nil:
			lost = errs[1]
		case errs[1] == nil && errs[0] != nil:
			lost = errs[0]
		default:
			t.Fatalf("race %d: errors %v and %v (results %v, %v); want exactly one to fail\n%s", i, errs[0], errs[1], results[0], results[1], transcript(t, ga, th))
		}
		expectConflict(t, lost, th, head.Ref.CheckpointID, "")
		t.Logf("race %d (%v durability): the loser got: %v", i, durability, lost)
		// The loser reloads and advances the thread by one more step.
		mustInvoke(t, gb, nil, engine.WithThread(th), engine.WithStepLimit(1))
	}

	// One chain: input, step 0, then two steps per race.
	snaps := historyOf(t, ga, th)
	if len(snaps) != 2+2*races {
		t.Fatalf("history has %d checkpoints, want %d:\n%s", len(snaps), 2+2*races, transcript(t, ga, th))
	}
	for i, s := range snaps {
		if s.Metadata.Step != len(snaps)-2-i {
			t.Errorf("history[%d] is step %d, want %d", i, s.Metadata.Step, len(snaps)-2-i)
		}
		if i+1 < len(snaps) && (s.Parent == nil || s.Parent.CheckpointID != snaps[i+1].Ref.CheckpointID) {
			t.Errorf("history[%d]'s parent is %v, want %s", i, s.Parent, snaps[i+1].Ref.CheckpointID)
		}
	}
	// The same steps in one process on the memory saver.
	gm := build(memory.New())
	mustInvoke(t, gm, engine.Values{"count": 0}, engine.WithThread(th), engine.WithStepLimit(1))
	for range 2 * races {
		mustInvoke(t, gm, nil, engine.WithThread(th), engine.WithStepLimit(1))
	}
	if got, want := transcript(t, ga, th), transcript(t, gm, th); got != want {
		t.Errorf("history differs from a single-process run\npostgres:\n%s\nmemory:\n%s", got, want)
	}
}
