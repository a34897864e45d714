package engine_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
)

// A Topic takes one value or a list of them; a single value is recorded as
// itself (as LangGraph records it), and both forms survive a checkpoint.
func TestTopicSingleAndListWrites(t *testing.T) {
	ctx := context.Background()
	words := engine.Topic[string]("words", true)
	pairs := engine.Topic[[]string]("pairs", true)
	g, err := engine.NewGraph("topic", words, pairs).
		AddNode("a", func(context.Context, engine.State) (engine.Output, error) {
			return engine.Updates(words.Add("one"), words.Add("two", "three"), pairs.Add([]string{"x", "y"})), nil
		}).
		AddEdge(engine.START, "a").
		Compile(engine.WithSaver(memory.New()), engine.WithInterruptAfter("a"))
	if err != nil {
		t.Fatal(err)
	}
	if w := words.Add("one"); w.Value != "one" {
		t.Errorf("a single word is written as %#v, want the word itself", w.Value)
	}
	if w := pairs.Add([]string{"x"}); fmt.Sprint(w.Value) != "[[x]]" {
		t.Errorf("a single list element is written as %#v, want a list of it", w.Value)
	}
	th := engine.WithThread("t")
	if _, err := g.Invoke(ctx, engine.Values{}, th); err != nil {
		t.Fatal(err)
	}
	hist, err := g.History(ctx, checkpoint.ListOptions{}, th)
	if err != nil {
		t.Fatal(err)
	}
	var res []engine.Write
	for _, s := range hist {
		for _, ts := range s.Tasks {
			if ts.Name == "a" {
				res = ts.Result
			}
		}
	}
	if fmt.Sprint(res) != "[{words one} {words [two three]} {pairs [[x y]]}]" {
		t.Errorf("a's stored writes = %v", res)
	}
	snap, err := g.GetState(ctx, th)
	if err != nil {
		t.Fatal(err)
	}
	if got := words.Get(engine.StateOf(snap.Values)); !slices.Equal(got, []string{"one", "two", "three"}) {
		t.Errorf("words = %v", got)
	}
	if got := pairs.Get(engine.StateOf(snap.Values)); len(got) != 1 || !slices.Equal(got[0], []string{"x", "y"}) {
		t.Errorf("pairs = %v", got)
	}
}
