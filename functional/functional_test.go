package functional_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/functional"
)

func TestParallelTasksAndPrevious(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int32
	double := functional.NewTask("double", func(_ context.Context, n int) (int, error) {
		calls.Add(1)
		return 2 * n, nil
	})
	wf, err := functional.Entrypoint("main", func(ctx context.Context, n int, prev *int) (int, error) {
		a, b := double.Call(ctx, n), double.Call(ctx, n+1)
		x, err := a.Get(ctx)
		if err != nil {
			return 0, err
		}
		y, err := b.Get(ctx)
		if err != nil {
			return 0, err
		}
		p := 0
		if prev != nil {
			p = *prev
		}
		return x + y + p, nil
	}, functional.WithCompile(engine.WithSaver(memory.New())))
	if err != nil {
		t.Fatal(err)
	}
	out, res, err := wf.Invoke(ctx, 3, engine.WithThread("t"))
	if err != nil || out != 14 || !res.Done {
		t.Fatalf("first run: %v %v %+v", out, err, res)
	}
	out, _, err = wf.Invoke(ctx, 1, engine.WithThread("t"))
	if err != nil || out != 2+4+14 {
		t.Fatalf("second run: %v %v, want 20 (prev 14)", out, err)
	}
	if calls.Load() != 4 {
		t.Fatalf("double ran %d times, want 4", calls.Load())
	}
}

func TestInterruptInTaskDoesNotRerunFinishedSibling(t *testing.T) {
	ctx := context.Background()
	var fast, ask atomic.Int32
	fastT := functional.NewTask("fast", func(_ context.Context, s string) (string, error) {
		fast.Add(1)
		return s + "!", nil
	})
	askT := functional.NewTask("ask", func(ctx context.Context, s string) (string, error) {
		ask.Add(1)
		return engine.InterruptAs[string](ctx, "name for "+s)
	})
	wf, err := functional.Entrypoint("main", func(ctx context.Context, s string, _ *string) (string, error) {
		f, a := fastT.Call(ctx, s), askT.Call(ctx, s)
		x, err := f.Get(ctx)
		if err != nil {
			return "", err
		}
		y, err := a.Get(ctx)
		if err != nil {
			return "", err
		}
		return x + " " + y, nil
	}, functional.WithCompile(engine.WithSaver(memory.New())))
	if err != nil {
		t.Fatal(err)
	}
	_, res, err := wf.Invoke(ctx, "hi", engine.WithThread("t"))
	if err != nil || len(res.Interrupts) != 1 || res.Interrupts[0].Value != "name for hi" {
		t.Fatalf("want one interrupt: %v %+v", err, res)
	}
	out, res, err := wf.Resume(ctx, "bob", engine.WithThread("t"))
	if err != nil || out != "hi! bob" || !res.Done {
		t.Fatalf("resume: %q %v %+v", out, err, res)
	}
	if fast.Load() != 1 || ask.Load() != 2 {
		t.Fatalf("fast ran %d (want 1), ask %d (want 2)", fast.Load(), ask.Load())
	}
}

func TestFinalSavesOtherValue(t *testing.T) {
	ctx := context.Background()
	wf, err := functional.EntrypointFinal("main", func(_ context.Context, n int, prev *int) (functional.Final[string, int], error) {
		p := 0
		if prev != nil {
			p = *prev
		}
		return functional.Final[string, int]{Value: "seen", Save: p + n}, nil
	}, functional.WithCompile(engine.WithSaver(memory.New())))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{2, 5} {
		out, _, err := wf.Invoke(ctx, []int{2, 3}[i], engine.WithThread("t"))
		if err != nil || out != "seen" {
			t.Fatalf("run %d: %q %v", i, out, err)
		}
		snap, err := wf.Graph().GetState(ctx, engine.WithThread("t"))
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := snap.Values[functional.PreviousKey].(int); got != want {
			t.Fatalf("run %d saved %v, want %d", i, snap.Values[functional.PreviousKey], want)
		}
	}
}

func TestTaskRetryAndFailure(t *testing.T) {
	ctx := context.Background()
	var n atomic.Int32
	flaky := functional.NewTask("flaky", func(_ context.Context, _ int) (int, error) {
		if n.Add(1) < 3 {
			return 0, errors.New("flaky")
		}
		return 7, nil
	}, functional.TaskRetry(engine.RetryPolicy{MaxAttempts: 3}))
	broken := functional.NewTask("broken", func(_ context.Context, _ int) (int, error) {
		return 0, errors.New("broken for good")
	})
	wf, err := functional.Entrypoint("main", func(ctx context.Context, in int, _ *int) (int, error) {
		if in < 0 {
			return broken.Call(ctx, in).Get(ctx)
		}
		return flaky.Call(ctx, in).Get(ctx)
	}, functional.WithCompile(engine.WithSaver(memory.New())))
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := wf.Invoke(ctx, 1, engine.WithThread("t"))
	if err != nil || out != 7 || n.Load() != 3 {
		t.Fatalf("retry: %v %v after %d attempts", out, err, n.Load())
	}
	_, _, err = wf.Invoke(ctx, -1, engine.WithThread("u"))
	if err == nil || !strings.Contains(err.Error(), "broken for good") {
		t.Fatalf("want the task's error, got %v", err)
	}
}

func TestCallOutsideNode(t *testing.T) {
	task := functional.NewTask("x", func(_ context.Context, n int) (int, error) { return n, nil })
	if _, err := task.Call(context.Background(), 1).Get(context.Background()); err == nil {
		t.Fatal("a call outside an entrypoint should fail")
	}
}

type note struct {
	Topic string `json:"topic"`
	Words int    `json:"words"`
}

// A struct result stored before an interrupt comes back as the struct on
// resume (through its stored JSON form), and so does prev.
func TestStoredResultsKeepTheirType(t *testing.T) {
	ctx := context.Background()
	var drafts atomic.Int32
	draft := functional.NewTask("draft", func(_ context.Context, topic string) (note, error) {
		drafts.Add(1)
		return note{Topic: topic, Words: 3}, nil
	})
	wf, err := functional.Entrypoint("main", func(ctx context.Context, topic string, prev *note) (note, error) {
		n, err := draft.Call(ctx, topic).Get(ctx)
		if err != nil {
			return note{}, err
		}
		if prev != nil {
			n.Words += prev.Words
		}
		if _, err := engine.Interrupt(ctx, "ok?"); err != nil {
			return note{}, err
		}
		return n, nil
	}, functional.WithCompile(engine.WithSaver(memory.New())))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := wf.Invoke(ctx, "kelp", engine.WithThread("t")); err != nil {
		t.Fatal(err)
	}
	out, _, err := wf.Resume(ctx, "yes", engine.WithThread("t"))
	if err != nil || out != (note{Topic: "kelp", Words: 3}) || drafts.Load() != 1 {
		t.Fatalf("resume: %+v %v, draft ran %d times (want 1)", out, err, drafts.Load())
	}
	if _, _, err := wf.Invoke(ctx, "otters", engine.WithThread("t")); err != nil {
		t.Fatal(err)
	}
	out, _, err = wf.Resume(ctx, "yes", engine.WithThread("t"))
	if err != nil || out != (note{Topic: "otters", Words: 6}) {
		t.Fatalf("second run: %+v %v", out, err)
	}
}

// Updates stream each task's result under its name, then the entrypoint's
// writes under its own.
func TestUpdatesStreamTasks(t *testing.T) {
	ctx := context.Background()
	one := functional.NewTask("one", func(_ context.Context, n int) (int, error) { return n + 1, nil })
	wf, err := functional.Entrypoint("main", func(ctx context.Context, n int, _ *int) (int, error) {
		return one.Call(ctx, n).Get(ctx)
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for ev, err := range wf.Graph().Stream(ctx, wf.Input(1), engine.ModeUpdates) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.Update.Node)
		if ev.Update.Node == "one" && ev.Update.Return != 2 {
			t.Fatalf("task update %+v, want Return 2", ev.Update)
		}
	}
	if strings.Join(got, ",") != "one,main" {
		t.Fatalf("updates from %v, want one then main", got)
	}
}
