package engine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/weftstudio/weft/checkpoint/longterm"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
)

// A node reaches the graph's long-term store through its Runtime: what one
// thread puts, another thread reads; a subgraph's nodes get the outermost
// graph's store, or their own when the parent has none; without WithStore
// the Runtime's Store is nil.
func TestRuntimeStore(t *testing.T) {
	ctx := context.Background()
	fact := engine.LastValue[string]("fact")
	remember := func(ctx context.Context, s engine.State) (engine.Output, error) {
		rt, _ := engine.RuntimeOf(ctx)
		if rt.Store == nil {
			return nil, errors.New("no store")
		}
		ns := longterm.Namespace{"users", "ada"}
		old, err := rt.Store.Get(ctx, ns, "fact")
		if err != nil {
			return nil, err
		}
		if old != nil {
			return engine.Updates(fact.Set(old.Value["text"].(string))), nil
		}
		return nil, rt.Store.Put(ctx, ns, "fact", map[string]any{"text": "likes tea, learned in " + rt.ThreadID})
	}
	store := longterm.NewMemory(longterm.Config{})
	g, err := engine.NewGraph("g", fact).AddNode("remember", remember).AddEdge(engine.START, "remember").
		Compile(engine.WithSaver(memory.New()), engine.WithStore(store))
	if err != nil {
		t.Fatal(err)
	}
	if g.Store() != store {
		t.Error("Graph.Store does not return the compiled store")
	}
	if _, err := g.Invoke(ctx, engine.Values{}, engine.WithThread("t1")); err != nil {
		t.Fatal(err)
	}
	res, err := g.Invoke(ctx, engine.Values{}, engine.WithThread("t2"))
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Values["fact"]; got != "likes tea, learned in t1" {
		t.Errorf("second thread read %v, want the first thread's fact", got)
	}

	// Subgraphs: which store each level sees.
	seen := map[string]longterm.Store{}
	probe := func(ctx context.Context, _ engine.State) (engine.Output, error) {
		rt, _ := engine.RuntimeOf(ctx)
		seen[rt.Node] = rt.Store
		return nil, nil
	}
	own := longterm.NewMemory(longterm.Config{})
	sub, err := engine.NewGraph("sub", fact).AddNode("inner", probe).AddEdge(engine.START, "inner").Compile(engine.WithStore(own))
	if err != nil {
		t.Fatal(err)
	}
	parent, err := engine.NewGraph("p", fact).AddNode("outer", probe).AddSubgraph("s", sub).
		AddEdge(engine.START, "outer").AddEdge("outer", "s").Compile(engine.WithStore(store))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parent.Invoke(ctx, engine.Values{}); err != nil {
		t.Fatal(err)
	}
	if seen["outer"] != store || seen["inner"] != store {
		t.Errorf("with a parent store: outer %p inner %p, want both %p", seen["outer"], seen["inner"], store)
	}
	bare, err := engine.NewGraph("b", fact).AddNode("outer", probe).AddSubgraph("s", sub).
		AddEdge(engine.START, "outer").AddEdge("outer", "s").Compile()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bare.Invoke(ctx, engine.Values{}); err != nil {
		t.Fatal(err)
	}
	if seen["outer"] != nil || seen["inner"] != own {
		t.Errorf("without a parent store: outer %v inner %p, want nil and the subgraph's own %p", seen["outer"], seen["inner"], own)
	}
	if _, err := bare.WithStore(store).Invoke(ctx, engine.Values{}); err != nil {
		t.Fatal(err)
	}
	if seen["outer"] != store || seen["inner"] != store {
		t.Error("Graph.WithStore's copy does not give its store to its nodes")
	}
}

// A store records which task of which run put or deleted an item: the
// Writer of a node's context is its Runtime's thread, namespace,
// checkpoint, step, task and node, inside a subgraph too; a put from the
// program's own code is by nobody.
func TestStoreRecordsTheWriter(t *testing.T) {
	ctx := context.Background()
	fact := engine.LastValue[string]("fact")
	seen := map[string]engine.Runtime{}
	put := func(ctx context.Context, _ engine.State) (engine.Output, error) {
		rt, _ := engine.RuntimeOf(ctx)
		seen[rt.Node] = rt
		return nil, rt.Store.Put(ctx, longterm.Namespace{"by"}, rt.Node, map[string]any{"step": rt.Step})
	}
	forget := func(ctx context.Context, _ engine.State) (engine.Output, error) {
		rt, _ := engine.RuntimeOf(ctx)
		seen[rt.Node] = rt
		return nil, rt.Store.Delete(ctx, longterm.Namespace{"by"}, "first")
	}
	sub, err := engine.NewGraph("sub", fact).AddNode("inner", put).AddEdge(engine.START, "inner").Compile()
	if err != nil {
		t.Fatal(err)
	}
	store := longterm.NewMemory(longterm.Config{})
	g, err := engine.NewGraph("g", fact).AddNode("first", put).AddSubgraph("s", sub).AddNode("forget", forget).
		AddEdge(engine.START, "first").AddEdge("first", "s").AddEdge("s", "forget").
		Compile(engine.WithSaver(memory.New()), engine.WithStore(store))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Invoke(ctx, engine.Values{}, engine.WithThread("t1")); err != nil {
		t.Fatal(err)
	}
	writer := func(rt engine.Runtime) longterm.Writer {
		return longterm.Writer{ThreadID: rt.ThreadID, NS: rt.NS, CheckpointID: rt.CheckpointID, Step: rt.Step, TaskID: rt.TaskID, Node: rt.Node}
	}
	inner, err := store.Get(ctx, longterm.Namespace{"by"}, "inner")
	if err != nil || inner == nil {
		t.Fatalf("inner's item: %v, %v", inner, err)
	}
	if want := writer(seen["inner"]); inner.Writer != want || want.NS == "" || want.ThreadID != "t1" || want.CheckpointID == "" {
		t.Errorf("inner's item was written by %+v, want %+v (in the subgraph's namespace)", inner.Writer, want)
	}
	cs, err := store.Changes(ctx, longterm.ChangeQuery{Prefix: longterm.Namespace{"by"}, Key: "first"})
	if err != nil || len(cs) != 2 {
		t.Fatalf("first's changes: %+v, %v", cs, err)
	}
	if !cs[0].Deleted() || cs[0].Writer != writer(seen["forget"]) || cs[1].Writer != writer(seen["first"]) || cs[1].Writer.Step != 1 {
		t.Errorf("first's changes = %+v; want forget's delete, then first's put at step 1 (%+v)", cs, seen)
	}
	if err := store.Put(ctx, longterm.Namespace{"by"}, "program", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	if it, _ := store.Get(ctx, longterm.Namespace{"by"}, "program"); it == nil || !it.Writer.IsZero() {
		t.Errorf("a put outside a run: %+v, want the zero Writer", it)
	}
}
