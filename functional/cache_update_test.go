package functional_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/checkpoint/nodecache"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/functional"
)

// A task with TaskCache, in an entrypoint compiled with a cache, is served
// from it on an input it has seen: it does not run, its Future says
// Cached, and ClearCache on the graph makes it run again.
func TestTaskCache(t *testing.T) {
	ctx := context.Background()
	var runs atomic.Int32
	research := functional.NewTask("research", func(_ context.Context, topic string) (string, error) {
		return fmt.Sprintf("notes on %s #%d", topic, runs.Add(1)), nil
	}, functional.TaskCache(engine.CachePolicy{TTL: time.Hour}))
	var cached []bool
	wf, err := functional.Entrypoint("writer", func(ctx context.Context, topic string, _ *string) (string, error) {
		f := research.Call(ctx, topic)
		notes, err := f.Get(ctx)
		cached = append(cached, f.Cached())
		return notes, err
	}, functional.WithCompile(engine.WithSaver(memory.New()), engine.WithCache(nodecache.NewMemory())))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"notes on kelp #1", "notes on kelp #1", "notes on reef #2"} {
		topic := "kelp"
		if i == 2 {
			topic = "reef"
		}
		out, _, err := wf.Invoke(ctx, topic, engine.WithThread(fmt.Sprint(i)))
		if err != nil || out != want {
			t.Fatalf("run %d: %q, %v; want %q", i, out, err, want)
		}
	}
	if fmt.Sprint(cached) != "[false true false]" {
		t.Fatalf("Future.Cached per run %v, want only the second run's hit", cached)
	}
	if err := wf.Graph().ClearCache(ctx); err != nil {
		t.Fatal(err)
	}
	if out, _, err := wf.Invoke(ctx, "kelp", engine.WithThread("after clear")); err != nil || out != "notes on kelp #3" {
		t.Fatalf("after ClearCache: %q, %v; want the task run again", out, err)
	}
}

// TaskTimeout fails an attempt that outlives it with an
// *engine.TimeoutError, which TaskRetry retries.
func TestTaskTimeout(t *testing.T) {
	ctx := context.Background()
	var attempts atomic.Int32
	slow := functional.NewTask("slow", func(ctx context.Context, n int) (int, error) {
		if attempts.Add(1) <= int32(n) {
			<-ctx.Done()
			return 0, ctx.Err()
		}
		return n, nil
	}, functional.TaskTimeout(20*time.Millisecond), functional.TaskRetry(engine.RetryPolicy{MaxAttempts: 2}))
	wf, err := functional.Entrypoint("main", func(ctx context.Context, n int, _ *int) (int, error) {
		return slow.Call(ctx, n).Get(ctx)
	})
	if err != nil {
		t.Fatal(err)
	}
	if out, _, err := wf.Invoke(ctx, 1); err != nil || out != 1 || attempts.Load() != 2 {
		t.Fatalf("one slow attempt: %d, %v after %d attempts; want 1 after 2", out, err, attempts.Load())
	}
	attempts.Store(0)
	_, _, err = wf.Invoke(ctx, 2)
	var te *engine.TimeoutError
	if !errors.As(err, &te) || te.Node != "slow" || attempts.Load() != 2 {
		t.Fatalf("two slow attempts: %v after %d attempts; want a TimeoutError of task slow after 2", err, attempts.Load())
	}
}

// UpdateState writes the entrypoint's result as LangGraph's update_state
// does on an entrypoint: the thread's values are the value and the next
// run gets it as prev; UpdateFinal returns one value and saves another.
func TestUpdateState(t *testing.T) {
	ctx := context.Background()
	wf, err := functional.Entrypoint("counter", func(_ context.Context, by int, prev *int) (int, error) {
		if prev == nil {
			return by, nil
		}
		return *prev + by, nil
	}, functional.WithCompile(engine.WithSaver(memory.New())))
	if err != nil {
		t.Fatal(err)
	}
	th := engine.WithThread("t")
	if _, _, err := wf.Invoke(ctx, 2, th); err != nil {
		t.Fatal(err)
	}
	ref, err := wf.UpdateState(ctx, 40, th)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := wf.Graph().GetState(ctx, th)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Values[functional.ReturnKey] != 40 || snap.Metadata.Source != "update" || snap.Ref.CheckpointID != ref.CheckpointID {
		t.Fatalf("after UpdateState: values %v, source %q, checkpoint %s (update %s)", snap.Values, snap.Metadata.Source, snap.Ref.CheckpointID, ref.CheckpointID)
	}
	if out, _, err := wf.Invoke(ctx, 2, th); err != nil || out != 42 {
		t.Fatalf("run after UpdateState: %d, %v; want 42 (prev 40)", out, err)
	}

	final, err := functional.EntrypointFinal("final", func(_ context.Context, n int, prev *string) (functional.Final[int, string], error) {
		p := "none"
		if prev != nil {
			p = *prev
		}
		return functional.Final[int, string]{Value: n, Save: fmt.Sprint(n, " after ", p)}, nil
	}, functional.WithCompile(engine.WithSaver(memory.New())))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := final.UpdateState(ctx, 1, th); err == nil || !strings.Contains(err.Error(), "use UpdateFinal") {
		t.Fatalf("UpdateState of an entrypoint saving another type: %v, want an error pointing to UpdateFinal", err)
	}
	if _, err := final.UpdateFinal(ctx, functional.Final[int, string]{Value: 7, Save: "seven"}, th); err != nil {
		t.Fatal(err)
	}
	snap, err = final.Graph().GetState(ctx, th)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Values[functional.ReturnKey] != 7 || snap.Values[functional.PreviousKey] != "seven" {
		t.Fatalf("after UpdateFinal: %v", snap.Values)
	}
	var saved string
	if _, res, err := final.Invoke(ctx, 1, th); err != nil {
		t.Fatal(err)
	} else {
		saved, _ = res.Values[functional.PreviousKey].(string)
	}
	if saved != "1 after seven" {
		t.Fatalf("run after UpdateFinal saved %q, want prev to be the saved value", saved)
	}
}
