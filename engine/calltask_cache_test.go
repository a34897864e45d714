package engine_test

// Call tasks with a cache policy (CallOptions.Cache) and a time limit
// (CallOptions.Timeout).

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
)

// cachedCallGraph is a one-node graph (node "n", channel "out") whose node
// calls task "research" on its input "topic" with opts and writes the
// result; each run of the task counts in runs. askAfter makes the node
// interrupt after the call, asking "publish?".
func cachedCallGraph(t *testing.T, opts engine.CallOptions, runs *atomic.Int32, askAfter bool, copts ...engine.CompileOption) *engine.Graph {
	t.Helper()
	topic, out := engine.LastValue[string]("topic"), engine.LastValue[string]("out")
	fn := func(ctx context.Context, s engine.State) (engine.Output, error) {
		f := engine.Call(ctx, "research", topic.Get(s), func(_ context.Context, in any) (any, error) {
			n := runs.Add(1)
			return fmt.Sprintf("notes on %v #%d", in, n), nil
		}, opts)
		v, err := f.Wait(ctx)
		if err != nil {
			return nil, err
		}
		if askAfter {
			if _, err := engine.Interrupt(ctx, "publish?"); err != nil {
				return nil, err
			}
		}
		return engine.Updates(out.Set(v.(string))), nil
	}
	copts = append([]engine.CompileOption{engine.WithSaver(memory.New())}, copts...)
	g, err := engine.NewGraph("calls", topic, out).
		AddNode("n", fn).
		AddEdge(engine.START, "n").
		AddEdge("n", engine.END).
		Compile(copts...)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// callEvents runs g on topic in thread and returns its result and what the
// updates, tasks and lifecycle streams said about the "research" task.
func callEvents(t *testing.T, g *engine.Graph, input engine.Input, thread string) (out any, updates []*engine.NodeUpdate, starts, results int, ends []*engine.Lifecycle) {
	t.Helper()
	for ev, err := range g.Stream(context.Background(), input, engine.ModeUpdates|engine.ModeTasks|engine.ModeLifecycle|engine.ModeValues, engine.WithThread(thread)) {
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case ev.Mode == engine.ModeValues && ev.Values != nil:
			out = ev.Values["out"]
		case ev.Update != nil && ev.Update.Node == "research":
			updates = append(updates, ev.Update)
		case ev.Task != nil && ev.Task.Name == "research" && ev.Mode == engine.ModeTasks:
			if ev.Task.Done {
				results++
			} else {
				starts++
			}
		case ev.Lifecycle != nil && ev.Lifecycle.Node == "research" && ev.Lifecycle.Kind == engine.TaskEnd:
			ends = append(ends, ev.Lifecycle)
		}
	}
	return out, updates, starts, results, ends
}

// A call task with a cache policy, in a graph with a cache, is served from
// it on an input it has seen, in another thread: it does not run, its
// result is the stored one, and it streams as LangGraph streams a hit (a
// task start, an update marked cached and a cache hit, no task result).
// Without a policy, or without a cache, it runs every time.
func TestCallCacheHit(t *testing.T) {
	var runs atomic.Int32
	g := cachedCallGraph(t, engine.CallOptions{Cache: &engine.CachePolicy{}}, &runs, false, engine.WithCache(nodecache.NewMemory()))
	out, ups, starts, results, _ := callEvents(t, g, engine.Values{"topic": "kelp"}, "1")
	if out != "notes on kelp #1" || len(ups) != 1 || ups[0].Cached || starts != 1 || results != 1 {
		t.Fatalf("first run: out %v, updates %+v, %d starts, %d results; want a run, not cached", out, ups, starts, results)
	}
	out, ups, starts, results, ends := callEvents(t, g, engine.Values{"topic": "kelp"}, "2")
	if runs.Load() != 1 {
		t.Fatalf("the task ran %d times, want once: the second call is a hit", runs.Load())
	}
	if out != "notes on kelp #1" {
		t.Fatalf("hit returned %v, want the first run's result", out)
	}
	if len(ups) != 1 || !ups[0].Cached || !ups[0].CacheHit || ups[0].Return != "notes on kelp #1" {
		t.Fatalf("hit's updates %+v, want one marked Cached and CacheHit with the stored result", ups)
	}
	if starts != 1 || results != 0 {
		t.Fatalf("hit's tasks stream: %d starts, %d results; want a start and no result", starts, results)
	}
	if len(ends) != 1 || !ends[0].Cached {
		t.Fatalf("hit's lifecycle TaskEnd %+v, want one marked Cached", ends)
	}
	if out, _, _, _, _ = callEvents(t, g, engine.Values{"topic": "reef"}, "3"); out != "notes on reef #2" {
		t.Fatalf("another input: %v, want a run", out)
	}

	for name, g := range map[string]*engine.Graph{
		"no policy": cachedCallGraph(t, engine.CallOptions{}, &runs, false, engine.WithCache(nodecache.NewMemory())),
		"no cache":  cachedCallGraph(t, engine.CallOptions{Cache: &engine.CachePolicy{}}, &runs, false),
	} {
		before := runs.Load()
		callEvents(t, g, engine.Values{"topic": "kelp"}, "1")
		callEvents(t, g, engine.Values{"topic": "kelp"}, "2")
		if n := runs.Load() - before; n != 2 {
			t.Errorf("%s: the task ran %d times in two runs, want 2", name, n)
		}
	}
}

// The policy's Key makes the key from the task's input (ArgAs), its TTL
// bounds the entry, and the Future says where a result came from.
func TestCallCacheKeyTTLAndFuture(t *testing.T) {
	c := nodecache.NewMemory()
	now := time.Unix(1_000_000, 0)
	c.SetClock(func() time.Time { return now })
	var runs atomic.Int32
	var cached, restored []bool
	policy := &engine.CachePolicy{TTL: time.Minute, Key: func(s engine.State) (string, error) {
		in, ok := engine.ArgAs[map[string]any](s)
		if !ok {
			return "", fmt.Errorf("input %T, want a map", s.Arg())
		}
		return fmt.Sprint(in["topic"]), nil
	}}
	g := callGraph(t, func(ctx context.Context, s engine.State) (engine.Output, error) {
		f := engine.Call(ctx, "work", map[string]any{"topic": "kelp", "n": runs.Load()}, func(_ context.Context, in any) (any, error) {
			return fmt.Sprintf("%v #%d", in.(map[string]any)["topic"], runs.Add(1)), nil
		}, engine.CallOptions{Cache: policy})
		v, err := f.Wait(ctx)
		if err != nil {
			return nil, err
		}
		cached, restored = append(cached, f.Cached()), append(restored, f.Restored())
		return engine.Updates(engine.Write{Channel: "out", Value: v.(string)}), nil
	})
	g = g.WithCache(c)
	run := func(thread string) any {
		t.Helper()
		res, err := g.Invoke(context.Background(), engine.Values{}, engine.WithThread(thread))
		if err != nil {
			t.Fatal(err)
		}
		return res.Values["out"]
	}
	run("1")
	now = now.Add(59 * time.Second)
	if got := run("2"); got != "kelp #1" { // n differs, the key does not
		t.Fatalf("before the TTL: %v, want kelp #1 from the cache", got)
	}
	now = now.Add(time.Second)
	if got := run("3"); got != "kelp #2" {
		t.Fatalf("at the TTL: %v, want kelp #2 (expired, ran)", got)
	}
	if fmt.Sprint(cached, restored) != "[false true false] [false false false]" {
		t.Fatalf("Future.Cached %v, Restored %v; want only the second run's call cached", cached, restored)
	}
}

// Only a call that succeeds fills an entry; a failing Key, and a cache that
// fails, fail the call with an error that says so.
func TestCallCacheFailures(t *testing.T) {
	var runs atomic.Int32
	var fail atomic.Bool
	fail.Store(true)
	g := callGraph(t, func(ctx context.Context, s engine.State) (engine.Output, error) {
		v, err := engine.Call(ctx, "fetch", "kelp", func(context.Context, any) (any, error) {
			runs.Add(1)
			if fail.Load() {
				return nil, engine.Permanent(errors.New("fetch failed"))
			}
			return "fetched", nil
		}, engine.CallOptions{Cache: &engine.CachePolicy{}}).Wait(ctx)
		if err != nil {
			return nil, err
		}
		return engine.Updates(engine.Write{Channel: "out", Value: v.(string)}), nil
	}).WithCache(nodecache.NewMemory())
	ctx := context.Background()
	if _, err := g.Invoke(ctx, engine.Values{}, engine.WithThread("1")); err == nil {
		t.Fatal("want the task's failure")
	}
	fail.Store(false)
	for _, th := range []string{"2", "3"} {
		if _, err := g.Invoke(ctx, engine.Values{}, engine.WithThread(th)); err != nil {
			t.Fatal(err)
		}
	}
	if runs.Load() != 2 {
		t.Fatalf("the task ran %d times, want 2: the failure was not cached, the success was", runs.Load())
	}

	badKey := &engine.CachePolicy{Key: func(engine.State) (string, error) { return "", errors.New("no key here") }}
	var runs2 atomic.Int32
	g = cachedCallGraph(t, engine.CallOptions{Cache: badKey}, &runs2, false, engine.WithCache(nodecache.NewMemory()))
	if _, err := g.Invoke(ctx, engine.Values{"topic": "kelp"}, engine.WithThread("1")); err == nil || !strings.Contains(err.Error(), "cache key: no key here") || runs2.Load() != 0 {
		t.Fatalf("a failing Key: err %v, %d runs; want the run failed naming the key, the task not run", err, runs2.Load())
	}
	g = cachedCallGraph(t, engine.CallOptions{Cache: &engine.CachePolicy{}}, &runs2, false, engine.WithCache(failingCache{errors.New("disk on fire")}))
	if _, err := g.Invoke(ctx, engine.Values{"topic": "kelp"}, engine.WithThread("1")); err == nil || !strings.Contains(err.Error(), "reading the node cache: disk on fire") {
		t.Fatalf("a failing cache: %v, want the run failed naming the cache", err)
	}
}

// ClearCache with no nodes clears the graph's call tasks' entries too,
// under both references; naming a node leaves them; they are in a
// namespace of their own, so a node's entries are not theirs.
func TestCallCacheClear(t *testing.T) {
	ctx := context.Background()
	for _, ref := range []engine.Reference{engine.LangGraphPython, engine.LangGraphJS} {
		var runs atomic.Int32
		c := nodecache.NewMemory()
		g := cachedCallGraph(t, engine.CallOptions{Cache: &engine.CachePolicy{}}, &runs, false, engine.WithCache(c), engine.WithReference(ref))
		run := func(thread string) {
			t.Helper()
			if _, err := g.Invoke(ctx, engine.Values{"topic": "kelp"}, engine.WithThread(thread)); err != nil {
				t.Fatal(err)
			}
		}
		run("1")
		if err := g.ClearCache(ctx, "n"); err != nil {
			t.Fatal(err)
		}
		run("2")
		if runs.Load() != 1 {
			t.Fatalf("%v: clearing node n ran the task again (%d runs): its entry is not the node's", ref, runs.Load())
		}
		if err := g.ClearCache(ctx); err != nil {
			t.Fatal(err)
		}
		run("3")
		if runs.Load() != 2 {
			t.Fatalf("%v: after ClearCache() the task ran %d times, want 2: its entry cleared", ref, runs.Load())
		}
	}
}

// Following LangGraph.js a hit is stored as the task's pending write, so a
// resume restores it; following Python it is not, so a resume looks it up
// in the cache again (B9).
func TestCallCacheHitOnResumeFollowsReference(t *testing.T) {
	for _, ref := range []engine.Reference{engine.LangGraphPython, engine.LangGraphJS} {
		var runs atomic.Int32
		g := cachedCallGraph(t, engine.CallOptions{Cache: &engine.CachePolicy{}}, &runs, true, engine.WithCache(nodecache.NewMemory()), engine.WithReference(ref))
		callEvents(t, g, engine.Values{"topic": "kelp"}, "1") // fills the entry, stops
		_, ups, _, _, _ := callEvents(t, g, engine.Values{"topic": "kelp"}, "2")
		if len(ups) != 1 || !ups[0].CacheHit {
			t.Fatalf("%v: thread 2's call %+v, want a hit", ref, ups)
		}
		out, ups, starts, _, _ := callEvents(t, g, engine.Command{Resume: "yes"}, "2")
		if out != "notes on kelp #1" || runs.Load() != 1 {
			t.Fatalf("%v: resumed to %v with %d runs, want the cached result and one run", ref, out, runs.Load())
		}
		wantHit := ref == engine.LangGraphPython
		if len(ups) != 1 || !ups[0].Cached || ups[0].CacheHit != wantHit || starts != 1 {
			t.Fatalf("%v: the resume's call %+v (%d starts), want cached, CacheHit %v, one start", ref, ups, starts, wantHit)
		}
	}
}

// A call task's Timeout cuts each attempt short with a *TimeoutError that
// names the task, and its retry policy retries it like any failure.
func TestCallTimeout(t *testing.T) {
	ctx := context.Background()
	var attempts atomic.Int32
	slowUntil := int32(2) // the first two attempts outlive the limit
	g := callGraph(t, func(ctx context.Context, s engine.State) (engine.Output, error) {
		v, err := engine.Call(ctx, "slow", nil, func(ctx context.Context, _ any) (any, error) {
			if attempts.Add(1) <= slowUntil {
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return "done", nil
		}, engine.CallOptions{Timeout: 20 * time.Millisecond, Retry: &engine.RetryPolicy{MaxAttempts: 3}}).Wait(ctx)
		if err != nil {
			return nil, err
		}
		return engine.Updates(engine.Write{Channel: "out", Value: v.(string)}), nil
	})
	res, err := g.Invoke(ctx, engine.Values{}, engine.WithThread("1"))
	if err != nil || res.Values["out"] != "done" || attempts.Load() != 3 {
		t.Fatalf("retried timeouts: %v, %v after %d attempts; want done after 3", res, err, attempts.Load())
	}

	attempts.Store(0)
	slowUntil = 5
	_, err = g.Invoke(ctx, engine.Values{}, engine.WithThread("2"))
	var te *engine.TimeoutError
	if !errors.As(err, &te) || te.Node != "slow" || te.Limit != 20*time.Millisecond {
		t.Fatalf("exhausted: %v, want a *TimeoutError of task slow after 20ms", err)
	}
	if !strings.Contains(err.Error(), `task "slow" timed out after 20ms (its CallOptions.Timeout)`) || attempts.Load() != 3 {
		t.Fatalf("exhausted after %d attempts: %q, want 3 attempts and the task named", attempts.Load(), err)
	}

	attempts.Store(0)
	slowUntil = 0 // in time: no error
	if _, err := g.Invoke(ctx, engine.Values{}, engine.WithThread("3")); err != nil || attempts.Load() != 1 {
		t.Fatalf("in time: %v after %d attempts", err, attempts.Load())
	}
}
