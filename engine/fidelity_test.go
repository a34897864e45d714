package engine_test

// Tests for behaviours where Weft once differed from LangGraph; each builds
// the reproduction in words from the differential runs.

import (
	"context"
	"slices"
	"testing"

	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
)

// logNode appends name to log.
func logNode(log engine.ListKey[string], name string) engine.NodeFunc {
	return func(context.Context, engine.State) (engine.Output, error) {
		return engine.Updates(log.Add(name)), nil
	}
}

// A join target stays pending after UpdateState re-reaches its complete
// barrier, and runs on the next Invoke(nil).
func TestJoinTargetSurvivesUpdateState(t *testing.T) {
	ctx := context.Background()
	log := engine.List[string]("log")
	g, err := engine.NewGraph("join", log).
		AddNode("a", logNode(log, "a")).
		AddNode("b", logNode(log, "b")).
		AddNode("c", logNode(log, "c")).
		AddEdge(engine.START, "a").AddEdge(engine.START, "b").
		AddJoin([]string{"a", "b"}, "c").
		Compile(engine.WithSaver(memory.New()), engine.WithInterruptBefore("c"))
	if err != nil {
		t.Fatal(err)
	}
	th := engine.WithThread("t")
	if _, err := g.Invoke(ctx, engine.Values{}, th); err != nil {
		t.Fatal(err)
	}
	if _, err := g.UpdateState(ctx, engine.Updates(log.Add("b2")), "b", th); err != nil {
		t.Fatal(err)
	}
	snap, err := g.GetState(ctx, th)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(snap.Next, []string{"c"}) {
		t.Errorf("next after UpdateState as b = %v, want [c]", snap.Next)
	}
	res, err := g.Invoke(ctx, nil, th)
	if err != nil {
		t.Fatal(err)
	}
	if got := log.Get(engine.StateOf(res.Values)); !slices.Equal(got, []string{"a", "b", "b2", "c"}) {
		t.Errorf("log = %v, want [a b b2 c]", got)
	}
}
