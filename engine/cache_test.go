package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/checkpoint/nodecache"
	"github.com/weftstudio/weft/engine"
)

// cachedGraph is topic → work (cached by p) → END; work writes out with
// how many times it ran.
func cachedGraph(t *testing.T, c nodecache.Cache, p engine.CachePolicy, runs *atomic.Int64, opts ...engine.CompileOption) *engine.Graph {
	t.Helper()
	topic := engine.LastValue[string]("topic")
	n := engine.LastValue[int]("n")
	out := engine.LastValue[string]("out")
	g, err := engine.NewGraph("cached", topic, n, out).
		AddNode("work", func(_ context.Context, s engine.State) (engine.Output, error) {
			k := runs.Add(1)
			return engine.Update{out.Set(fmt.Sprintf("%s#%d", topic.Get(s), k))}, nil
		}, engine.WithCachePolicy(p)).
		AddNode("plain", func(_ context.Context, s engine.State) (engine.Output, error) { return nil, nil }).
		AddEdge(engine.START, "work").
		AddEdge("work", "plain").
		AddEdge("plain", engine.END).
		Compile(append([]engine.CompileOption{engine.WithSaver(memory.New()), engine.WithCache(c)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestCacheHitDoesNotRunNodeAndIsMarked(t *testing.T) {
	var runs atomic.Int64
	g := cachedGraph(t, nodecache.NewMemory(), engine.CachePolicy{}, &runs)
	res, err := g.Invoke(ctx, engine.Values{"topic": "kelp"}, engine.WithThread("1"))
	if err != nil || res.Values["out"] != "kelp#1" {
		t.Fatalf("first run: %v %v", res, err)
	}
	var updates []*engine.NodeUpdate
	var taskEnds, results []string
	var cachedEnd bool
	for ev, err := range g.Stream(ctx, engine.Values{"topic": "kelp"}, engine.ModeUpdates|engine.ModeTasks|engine.ModeLifecycle|engine.ModeValues, engine.WithThread("2")) {
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case ev.Update != nil:
			updates = append(updates, ev.Update)
		case ev.Task != nil && ev.Task.Done:
			results = append(results, ev.Task.Name)
		case ev.Lifecycle != nil && ev.Lifecycle.Kind == engine.TaskEnd:
			taskEnds = append(taskEnds, ev.Lifecycle.Node)
			if ev.Lifecycle.Node == "work" {
				cachedEnd = ev.Lifecycle.Cached
			}
		case ev.Values != nil:
			if v := ev.Values["out"]; v != nil && v != "kelp#1" {
				t.Errorf("thread 2 out = %v, want the cached kelp#1", v)
			}
		}
	}
	if runs.Load() != 1 {
		t.Errorf("work ran %d times, want 1 (the second thread hits)", runs.Load())
	}
	if len(updates) != 2 || updates[0].Node != "work" || !updates[0].Cached || !updates[0].CacheHit || updates[1].Cached {
		t.Fatalf("updates = %+v, want work cached (hit) then plain", updates)
	}
	if strings.Join(results, ",") != "plain" {
		t.Errorf("task results = %v, want only plain's (a hit has none, as in LangGraph)", results)
	}
	if strings.Join(taskEnds, ",") != "work,plain" || !cachedEnd {
		t.Errorf("lifecycle task ends = %v (work cached %v), want work (cached), plain", taskEnds, cachedEnd)
	}
	// Another input misses.
	res, err = g.Invoke(ctx, engine.Values{"topic": "reef"}, engine.WithThread("3"))
	if err != nil || res.Values["out"] != "reef#2" {
		t.Fatalf("other input: %v %v", res.Values, err)
	}
}

func TestCacheKeyFunctionAndClear(t *testing.T) {
	var runs atomic.Int64
	c := nodecache.NewMemory()
	key := func(s engine.State) (string, error) { return engine.LastValue[string]("topic").Get(s), nil }
	g := cachedGraph(t, c, engine.CachePolicy{Key: key}, &runs)
	for i, want := range []string{"kelp#1", "kelp#1"} {
		res, err := g.Invoke(ctx, engine.Values{"topic": "kelp", "n": i}, engine.WithThread(fmt.Sprint("k", i)))
		if err != nil || res.Values["out"] != want {
			t.Fatalf("run %d: out %v (%v), want %s: the key ignores n", i, res.Values["out"], err, want)
		}
	}
	if err := g.ClearCache(ctx, "plain"); err != nil {
		t.Fatal(err)
	}
	if res, _ := g.Invoke(ctx, engine.Values{"topic": "kelp"}, engine.WithThread("k2")); res.Values["out"] != "kelp#1" {
		t.Fatalf("after clearing another node: out %v, want the cached kelp#1", res.Values["out"])
	}
	if err := g.ClearCache(ctx, "work"); err != nil {
		t.Fatal(err)
	}
	if res, _ := g.Invoke(ctx, engine.Values{"topic": "kelp"}, engine.WithThread("k3")); res.Values["out"] != "kelp#2" {
		t.Fatalf("after clearing work: out %v, want kelp#2 (it ran)", res.Values["out"])
	}
	if err := g.ClearCache(ctx, "nope"); err == nil || !strings.Contains(err.Error(), `no node "nope"`) {
		t.Errorf("ClearCache of an unknown node: %v, want an error naming it", err)
	}
}

func TestCacheClearAllFollowsReference(t *testing.T) {
	for _, ref := range []engine.Reference{engine.LangGraphPython, engine.LangGraphJS} {
		t.Run(ref.String(), func(t *testing.T) {
			var runs atomic.Int64
			c := nodecache.NewMemory()
			if err := c.Set(ctx, "another graph|x", "k", nil, 0); err != nil {
				t.Fatal(err)
			}
			g := cachedGraph(t, c, engine.CachePolicy{}, &runs, engine.WithReference(ref))
			if _, err := g.Invoke(ctx, engine.Values{"topic": "kelp"}, engine.WithThread("1")); err != nil {
				t.Fatal(err)
			}
			if err := g.ClearCache(ctx); err != nil {
				t.Fatal(err)
			}
			if res, _ := g.Invoke(ctx, engine.Values{"topic": "kelp"}, engine.WithThread("2")); res.Values["out"] != "kelp#2" {
				t.Fatalf("after ClearCache(): out %v, want kelp#2", res.Values["out"])
			}
			_, kept, _ := c.Get(ctx, "another graph|x", "k")
			if want := ref == engine.LangGraphPython; kept != want {
				t.Errorf("another graph's entry kept = %v, want %v (Python clears the graph's nodes, LangGraph.js the whole cache)", kept, want)
			}
		})
	}
}

func TestCacheTTL(t *testing.T) {
	var runs atomic.Int64
	c := nodecache.NewMemory()
	now := time.Unix(1_000_000, 0)
	c.SetClock(func() time.Time { return now })
	g := cachedGraph(t, c, engine.CachePolicy{TTL: time.Minute}, &runs)
	run := func(thread string) any {
		res, err := g.Invoke(ctx, engine.Values{"topic": "kelp"}, engine.WithThread(thread))
		if err != nil {
			t.Fatal(err)
		}
		return res.Values["out"]
	}
	run("1")
	now = now.Add(59 * time.Second)
	if got := run("2"); got != "kelp#1" {
		t.Fatalf("before the TTL: %v, want kelp#1", got)
	}
	now = now.Add(time.Second)
	if got := run("3"); got != "kelp#2" {
		t.Fatalf("at the TTL: %v, want kelp#2 (expired, ran)", got)
	}
}

func TestCacheKeyErrorFailsRun(t *testing.T) {
	var runs atomic.Int64
	bad := errors.New("no key here")
	g := cachedGraph(t, nodecache.NewMemory(), engine.CachePolicy{Key: func(engine.State) (string, error) { return "", bad }}, &runs)
	_, err := g.Invoke(ctx, engine.Values{"topic": "kelp"}, engine.WithThread("1"))
	var ne *engine.NodeError
	if !errors.Is(err, bad) || !errors.As(err, &ne) || ne.Node != "work" || !strings.Contains(err.Error(), "cache key") {
		t.Fatalf("err = %v, want work's NodeError wrapping the key error", err)
	}
	if runs.Load() != 0 {
		t.Errorf("work ran %d times with a failing key", runs.Load())
	}
}

// failingCache fails every call.
type failingCache struct{ err error }

func (f failingCache) Get(context.Context, string, string) ([]checkpoint.Write, bool, error) {
	return nil, false, f.err
}
func (f failingCache) Set(context.Context, string, string, []checkpoint.Write, time.Duration) error {
	return f.err
}
func (f failingCache) Clear(context.Context, ...string) error { return f.err }

func TestCacheBackendErrorIsReported(t *testing.T) {
	var runs atomic.Int64
	down := errors.New("cache down")
	g := cachedGraph(t, failingCache{down}, engine.CachePolicy{}, &runs)
	_, err := g.Invoke(ctx, engine.Values{"topic": "kelp"}, engine.WithThread("1"))
	if !errors.Is(err, down) || !strings.Contains(err.Error(), "reading the node cache") {
		t.Fatalf("err = %v, want the cache's error, named", err)
	}
}

func TestGraphWithCacheBindsAnotherCache(t *testing.T) {
	var runs atomic.Int64
	first := nodecache.NewMemory()
	g := cachedGraph(t, first, engine.CachePolicy{}, &runs)
	second := nodecache.NewMemory()
	h := g.WithCache(second)
	if h.Cache() != nodecache.Cache(second) || g.Cache() != nodecache.Cache(first) {
		t.Fatal("WithCache did not bind the copy alone")
	}
	for _, th := range []string{"1", "2"} {
		if _, err := h.Invoke(ctx, engine.Values{"topic": "kelp"}, engine.WithThread(th)); err != nil {
			t.Fatal(err)
		}
	}
	if runs.Load() != 1 || second.Len() != 1 || first.Len() != 0 {
		t.Fatalf("runs %d, entries %d in the bound cache and %d in the compiled one; want 1, 1, 0", runs.Load(), second.Len(), first.Len())
	}
}

func TestClearCacheWithoutCache(t *testing.T) {
	g, err := engine.NewGraph("none", engine.LastValue[int]("x")).
		AddNode("a", func(context.Context, engine.State) (engine.Output, error) { return nil, nil }).
		AddEdge(engine.START, "a").Compile()
	if err != nil {
		t.Fatal(err)
	}
	if err := g.ClearCache(ctx); !errors.Is(err, engine.ErrNoCache) {
		t.Fatalf("ClearCache without a cache: %v, want ErrNoCache", err)
	}
}

// TestCacheSubgraphOwnCache: a subgraph's cached node uses the subgraph's
// own cache (WithCache on the subgraph), not the parent's, as in both
// LangGraphs (scenario cache_subgraph_node).
func TestCacheSubgraphOwnCache(t *testing.T) {
	x := engine.LastValue[string]("x")
	y := engine.LastValue[string]("y")
	build := func(subCache nodecache.Cache) (*engine.Graph, *nodecache.Memory, *atomic.Int64) {
		var runs atomic.Int64
		var sopts []engine.CompileOption
		if subCache != nil {
			sopts = append(sopts, engine.WithCache(subCache))
		}
		sub, err := engine.NewGraph("inner", x, y).
			AddNode("slow", func(_ context.Context, s engine.State) (engine.Output, error) {
				return engine.Update{y.Set(fmt.Sprintf("%s@%d", x.Get(s), runs.Add(1)))}, nil
			}, engine.WithCachePolicy(engine.CachePolicy{})).
			AddEdge(engine.START, "slow").Compile(sopts...)
		if err != nil {
			t.Fatal(err)
		}
		parent := nodecache.NewMemory()
		g, err := engine.NewGraph("outer", x, y).AddSubgraph("child", sub).AddEdge(engine.START, "child").
			Compile(engine.WithSaver(memory.New()), engine.WithCache(parent))
		if err != nil {
			t.Fatal(err)
		}
		return g, parent, &runs
	}
	for _, own := range []bool{false, true} {
		var c *nodecache.Memory
		var subCache nodecache.Cache
		if own {
			c = nodecache.NewMemory()
			subCache = c
		}
		g, parent, runs := build(subCache)
		for _, th := range []string{"1", "2"} {
			if _, err := g.Invoke(ctx, engine.Values{"x": "a"}, engine.WithThread(th)); err != nil {
				t.Fatal(err)
			}
		}
		want := int64(2)
		if own {
			want = 1
		}
		if runs.Load() != want {
			t.Errorf("subgraph with its own cache %v: the inner node ran %d times, want %d", own, runs.Load(), want)
		}
		if parent.Len() != 0 {
			t.Errorf("the parent's cache holds %d entries, want none", parent.Len())
		}
		if own && c.Len() != 1 {
			t.Errorf("the subgraph's cache holds %d entries, want 1", c.Len())
		}
	}
}
