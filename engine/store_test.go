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
