package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
)

func noop(context.Context, engine.State) (engine.Output, error) { return nil, nil }

func TestCompileErrors(t *testing.T) {
	k := engine.LastValue[string]("k")
	other := engine.LastValue[string]("other")
	//lint:ignore U1000 the field is never used: the case is a struct whose only field is unexported
	type hidden struct{ secret string }
	cases := []struct {
		name  string
		build func() *engine.StateGraph
		want  string
	}{
		{"unknown edge target", func() *engine.StateGraph {
			return engine.NewGraph("g", k).AddNode("a", noop).AddEdge(engine.START, "a").AddEdge("a", "b")
		}, `edge a → b: unknown node "b"`},
		{"unknown edge source", func() *engine.StateGraph {
			return engine.NewGraph("g", k).AddNode("a", noop).AddEdge(engine.START, "a").AddEdge("x", "a")
		}, `unknown node "x"`},
		{"unreachable node", func() *engine.StateGraph {
			return engine.NewGraph("g", k).AddNode("a", noop).AddNode("orphan", noop).AddEdge(engine.START, "a")
		}, `node "orphan" is unreachable from START`},
		{"no entry point", func() *engine.StateGraph {
			return engine.NewGraph("g", k).AddNode("a", noop)
		}, "no entry point"},
		{"duplicate node", func() *engine.StateGraph {
			return engine.NewGraph("g", k).AddNode("a", noop).AddNode("a", noop)
		}, `node "a" added twice`},
		{"reserved node name", func() *engine.StateGraph {
			return engine.NewGraph("g", k).AddNode("__start__", noop)
		}, `node name "__start__" is reserved`},
		{"node named like a channel", func() *engine.StateGraph {
			return engine.NewGraph("g", k).AddNode("k", noop)
		}, `node "k" has the name of a state channel`},
		{"duplicate channel", func() *engine.StateGraph {
			return engine.NewGraph("g", k, engine.LastValue[int]("k"))
		}, `channel "k" declared twice`},
		{"path map names an unknown node", func() *engine.StateGraph {
			return engine.NewGraph("g", k).AddNode("a", noop).AddEdge(engine.START, "a").
				AddConditionalEdges("a", func(context.Context, engine.State) (engine.Route, error) { return engine.To("x"), nil },
					engine.PathMap(map[string]string{"x": "nowhere"}))
		}, `path map key "x" names unknown node "nowhere"`},
		{"conditional edge without destinations", func() *engine.StateGraph {
			return engine.NewGraph("g", k).AddNode("a", noop).AddEdge(engine.START, "a").
				AddConditionalEdges("a", func(context.Context, engine.State) (engine.Route, error) { return engine.To("a"), nil })
		}, "declares no destinations"},
		{"write to an undeclared channel", func() *engine.StateGraph {
			return engine.NewGraph("g", k).AddNode("a", noop, engine.Writes(other)).AddEdge(engine.START, "a")
		}, `node "a" declares a write to "other", which is not a channel of the state`},
		{"a value JSON would lose", func() *engine.StateGraph {
			return engine.NewGraph("g", engine.LastValue[hidden]("h")).AddNode("a", noop).AddEdge(engine.START, "a")
		}, "unexported field would be lost"},
		{"the builder keeps its first error", func() *engine.StateGraph {
			return engine.NewGraph("g", k).AddNode("a", nil).AddNode("a", noop).AddEdge("zzz", "yyy")
		}, `node "a": nil function`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.build().Compile()
			var ce *engine.CompileError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want a CompileError containing %q", err, c.want)
			}
		})
	}
}

func TestNodePanicIsAnErrorNamingTheNode(t *testing.T) {
	k := engine.LastValue[string]("k")
	g := compile(t, engine.NewGraph("p", k).AddNode("boom", func(context.Context, engine.State) (engine.Output, error) {
		var m map[string]int
		//lint:ignore SA5000 the node must panic
		m["x"] = 1 // a nil-map write panics
		return nil, nil
	}).AddEdge(engine.START, "boom"))
	_, err := g.Invoke(ctx, engine.Values{})
	var ne *engine.NodeError
	if !errors.As(err, &ne) || ne.Node != "boom" || !ne.Panic || !strings.Contains(err.Error(), `node "boom" panicked`) || ne.Stack == "" {
		t.Fatalf("err = %v", err)
	}
}

func TestCancellationStopsPromptly(t *testing.T) {
	k := engine.LastValue[int]("k")
	g := compile(t, engine.NewGraph("slow", k).AddNode("wait", func(ctx context.Context, s engine.State) (engine.Output, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}).AddEdge(engine.START, "wait"))
	c, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { _, err := g.Invoke(c, engine.Values{}); done <- err }()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the run ignored cancellation")
	}
}

// A failing task cancels its siblings; the writes of tasks that finished
// are kept as pending writes.
func TestFailureCancelsSiblingsAndKeepsFinishedWrites(t *testing.T) {
	out := engine.List[string]("out")
	var sawCancel atomic.Bool
	saver := memory.New()
	g := compile(t, engine.NewGraph("sib", out).
		AddNode("fast", func(context.Context, engine.State) (engine.Output, error) {
			return engine.Updates(out.Add("fast")), nil
		}).
		AddNode("fail", func(context.Context, engine.State) (engine.Output, error) {
			time.Sleep(20 * time.Millisecond)
			return nil, errors.New("broken")
		}).
		AddNode("slow", func(ctx context.Context, s engine.State) (engine.Output, error) {
			select {
			case <-ctx.Done():
				sawCancel.Store(true)
				return nil, ctx.Err()
			case <-time.After(10 * time.Second):
				return engine.Updates(out.Add("slow")), nil
			}
		}).
		AddEdge(engine.START, "fast").AddEdge(engine.START, "fail").AddEdge(engine.START, "slow"),
		engine.WithSaver(saver))
	_, err := g.Invoke(ctx, engine.Values{}, engine.WithThread("t"), engine.WithDurability(engine.DurabilitySync))
	var ne *engine.NodeError
	if !errors.As(err, &ne) || ne.Node != "fail" {
		t.Fatalf("err = %v", err)
	}
	if !sawCancel.Load() {
		t.Error("the slow sibling was not cancelled")
	}
	st, err := g.GetState(ctx, engine.WithThread("t"))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(st.Values["out"]) != "[fast]" || !slices.Contains(st.Next, "fail") || !slices.Contains(st.Next, "slow") || slices.Contains(st.Next, "fast") {
		t.Errorf("state %v next %v", st.Values, st.Next)
	}
}

// Every stream mode, several at once, with subgraph namespaces.
func TestStreamModes(t *testing.T) {
	items := engine.List[string]("items")
	sub := compile(t, engine.NewGraph("inner", items).
		AddNode("deep", func(ctx context.Context, s engine.State) (engine.Output, error) {
			engine.Emit(ctx, "from the subgraph")
			return engine.Updates(items.Add("deep")), nil
		}).AddEdge(engine.START, "deep"))
	g := compile(t, engine.NewGraph("outer", items).
		AddNode("talk", func(ctx context.Context, s engine.State) (engine.Output, error) {
			engine.Emit(ctx, map[string]any{"progress": 0.5})
			engine.EmitMessage(ctx, engine.Message{ID: "m", Role: engine.RoleAssistant, Content: "hel"})
			engine.EmitMessage(ctx, engine.Message{ID: "m", Role: engine.RoleAssistant, Content: "lo"})
			return engine.Updates(items.Add("talk")), nil
		}).
		AddSubgraph("inner", sub).
		AddEdge(engine.START, "talk").AddEdge("talk", "inner"),
		engine.WithSaver(memory.New()))
	count := map[engine.StreamMode]int{}
	var nss []string
	var custom []string
	var chunks string
	for ev, err := range g.Stream(ctx, engine.Values{}, engine.ModeAll, engine.WithThread("s")) {
		if err != nil {
			t.Fatal(err)
		}
		count[ev.Mode]++
		if ev.NS != "" && !slices.Contains(nss, strings.Split(ev.NS, ":")[0]) {
			nss = append(nss, strings.Split(ev.NS, ":")[0])
		}
		switch ev.Mode {
		case engine.ModeCustom:
			custom = append(custom, fmt.Sprint(ev.Custom))
		case engine.ModeMessages:
			chunks += ev.Message.Message.Content
			if ev.Message.Node != "talk" {
				t.Errorf("chunk from %q", ev.Message.Node)
			}
		case engine.ModeTasks:
			if ev.Task.ID == "" || ev.Task.Name == "" {
				t.Errorf("task event without id or name: %+v", ev.Task)
			}
		case engine.ModeCheckpoints:
			if ev.State == nil {
				t.Error("checkpoint event without a snapshot")
			}
		case engine.ModeDebug:
			if ev.Debug == "" {
				t.Error("debug event without a type")
			}
		}
	}
	for _, m := range []engine.StreamMode{engine.ModeValues, engine.ModeUpdates, engine.ModeCustom, engine.ModeMessages, engine.ModeTasks, engine.ModeCheckpoints, engine.ModeDebug} {
		if count[m] == 0 {
			t.Errorf("no %s events", m)
		}
	}
	if chunks != "hello" || strings.Join(custom, "|") != "map[progress:0.5]|from the subgraph" {
		t.Errorf("chunks %q custom %q", chunks, custom)
	}
	if !slices.Contains(nss, "inner") {
		t.Errorf("no events carry the subgraph namespace: %v", nss)
	}
}

// A slow observer never blocks the run: what it cannot take is dropped and
// counted.
func TestSlowObserverDropsAndCounts(t *testing.T) {
	n := engine.LastValue[int]("n")
	release := make(chan struct{})
	g := compile(t, engine.NewGraph("chatty", n).
		AddNode("emit", func(ctx context.Context, s engine.State) (engine.Output, error) {
			for i := range 10000 {
				engine.Emit(ctx, i)
			}
			close(release) // the observer was stuck the whole time
			return nil, nil
		}).AddEdge(engine.START, "emit"))
	var seen atomic.Int64
	res, err := g.Invoke(ctx, engine.Values{}, engine.WithObserver(engine.ModeCustom, func(engine.Event) {
		<-release
		seen.Add(1)
	}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Dropped == 0 || int64(res.Dropped)+seen.Load() != 10000 {
		t.Errorf("dropped %d, delivered %d of 10000", res.Dropped, seen.Load())
	}
}

// A deferred node waits until branches of unequal length are all done.
func TestDeferredNode(t *testing.T) {
	log := engine.List[string]("log")
	say := func(n string) engine.NodeFunc {
		return func(context.Context, engine.State) (engine.Output, error) { return engine.Updates(log.Add(n)), nil }
	}
	g := compile(t, engine.NewGraph("defer", log).
		AddNode("a", say("a")).AddNode("b", say("b")).AddNode("b2", say("b2")).AddNode("c", say("c"), engine.Defer()).
		AddEdge(engine.START, "a").AddEdge(engine.START, "b").AddEdge("b", "b2").
		AddEdge("a", "c").AddEdge("b2", "c"))
	res := invoke(t, g, engine.Values{})
	if fmt.Sprint(res.Values["log"]) != "[a b b2 c]" {
		t.Errorf("log = %v: c must run once, after the longer branch", res.Values["log"])
	}
}

// A subgraph node can send a Command to its parent graph.
func TestParentCommandFromSubgraph(t *testing.T) {
	log := engine.List[string]("log")
	sub := compile(t, engine.NewGraph("child", log).
		AddNode("decide", func(context.Context, engine.State) (engine.Output, error) {
			return engine.Command{Graph: engine.ParentGraph, Update: engine.Updates(log.Add("from child")), Goto: []string{"after"}}, nil
		}).AddEdge(engine.START, "decide"))
	g := compile(t, engine.NewGraph("parent", log).
		AddSubgraph("child", sub, engine.Destinations("after")).
		AddNode("after", func(context.Context, engine.State) (engine.Output, error) {
			return engine.Updates(log.Add("after")), nil
		}).
		AddEdge(engine.START, "child"))
	res := invoke(t, g, engine.Values{})
	if fmt.Sprint(res.Values["log"]) != "[from child after]" {
		t.Errorf("log = %v", res.Values["log"])
	}
}

// Values keep their Go types through a checkpoint round trip.
type Recipe struct {
	Title string
	Steps []string
	Rated map[string]int
}

func TestValuesKeepTheirTypes(t *testing.T) {
	recipe := engine.LastValue[Recipe]("recipe")
	msgs := engine.Messages("messages")
	anything := engine.LastValue[any]("anything")
	engine.RegisterType[Recipe]("test.recipe")
	saver := memory.New()
	g := compile(t, engine.NewGraph("types", recipe, msgs, anything).
		AddNode("cook", func(context.Context, engine.State) (engine.Output, error) {
			return engine.Updates(recipe.Set(Recipe{"soup", []string{"boil"}, map[string]int{"ann": 5}}),
				msgs.Add(engine.Message{ID: "1", Role: engine.RoleAssistant, Content: "done"}),
				anything.Set(Recipe{Title: "in an any channel"})), nil
		}).AddEdge(engine.START, "cook"), engine.WithSaver(saver))
	invoke(t, g, engine.Values{}, engine.WithThread("t"))
	st, err := g.GetState(ctx, engine.WithThread("t"))
	if err != nil {
		t.Fatal(err)
	}
	r, ok := st.Values["recipe"].(Recipe)
	m, ok2 := st.Values["messages"].([]engine.Message)
	a, ok3 := st.Values["anything"].(Recipe)
	if !ok || !ok2 || !ok3 || r.Rated["ann"] != 5 || m[0].Content != "done" || a.Title != "in an any channel" {
		t.Errorf("restored %T %T %T: %+v", st.Values["recipe"], st.Values["messages"], st.Values["anything"], st.Values)
	}
	// An unregistered type in an any channel is refused when it would be
	// stored, with a clear error, never dropped.
	type unregistered struct{ X int }
	g2 := compile(t, engine.NewGraph("types2", anything).
		AddNode("put", func(context.Context, engine.State) (engine.Output, error) {
			return engine.Updates(anything.Set(unregistered{1})), nil
		}).AddEdge(engine.START, "put"), engine.WithSaver(memory.New()))
	_, err = g2.Invoke(ctx, engine.Values{}, engine.WithThread("t"))
	if !errors.Is(err, engine.ErrUnregisteredType) {
		t.Errorf("err = %v", err)
	}
}

// The topology lists nodes, every edge kind and subgraphs; its fingerprint
// is stable and follows changes.
func TestTopologyAndFingerprint(t *testing.T) {
	d1, d2 := demoTopology(t), demoTopology(t)
	if d1.Fingerprint == "" || d1.Fingerprint != d2.Fingerprint {
		t.Fatalf("fingerprints %q %q", d1.Fingerprint, d2.Fingerprint)
	}
	kinds := map[engine.EdgeKind]bool{}
	for _, e := range d1.Edges {
		kinds[e.Kind] = true
	}
	for _, k := range []engine.EdgeKind{engine.EdgeStatic, engine.EdgeConditional, engine.EdgeJoin, engine.EdgeSend, engine.EdgeCommand} {
		if !kinds[k] {
			t.Errorf("no %s edge in %+v", k, d1.Edges)
		}
	}
	var subgraph bool
	for _, n := range d1.Nodes {
		subgraph = subgraph || n.Subgraph != nil
	}
	if !subgraph || d1.Nodes[0].Kind != engine.NodeStart || d1.Nodes[len(d1.Nodes)-1].Kind != engine.NodeEnd {
		t.Errorf("nodes %+v", d1.Nodes)
	}
	other := compile(t, engine.NewGraph("shapes", engine.LastValue[int]("x")).AddNode("a", noop).AddEdge(engine.START, "a"))
	if other.Topology().Fingerprint == d1.Fingerprint {
		t.Error("different graphs share a fingerprint")
	}
}

func demoTopology(t *testing.T) *engine.Topology {
	x := engine.List[string]("x")
	sub := compile(t, engine.NewGraph("sub", x).AddNode("s", noop).AddEdge(engine.START, "s"))
	return compile(t, engine.NewGraph("shapes", x).
		AddNode("a", noop, engine.Destinations("d")).AddNode("b", noop).AddNode("c", noop).AddNode("d", noop).
		AddSubgraph("sub", sub).
		AddEdge(engine.START, "a").AddEdge("a", "b").
		AddConditionalEdges("b", func(context.Context, engine.State) (engine.Route, error) { return engine.To("go"), nil },
			engine.PathMap(map[string]string{"go": "c", "stop": engine.END}), engine.SendsTo("sub")).
		AddJoin([]string{"c", "sub"}, "d")).Topology()
}

var _ = checkpoint.ListOptions{}
