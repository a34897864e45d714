package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftstudio/weft/engine"
)

var ctx = context.Background()

func compile(t testing.TB, b *engine.StateGraph, opts ...engine.CompileOption) *engine.Graph {
	t.Helper()
	g, err := b.Compile(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func invoke(t testing.TB, g *engine.Graph, in engine.Input, opts ...engine.RunOption) *engine.Result {
	t.Helper()
	res, err := g.Invoke(ctx, in, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func node(f func(s engine.State) engine.Output) engine.NodeFunc {
	return func(_ context.Context, s engine.State) (engine.Output, error) { return f(s), nil }
}

// updatesOf runs g and returns the node names of its update events in order.
func updatesOf(t *testing.T, g *engine.Graph, in engine.Input, opts ...engine.RunOption) ([]string, engine.Values) {
	t.Helper()
	var names []string
	var last engine.Values
	for ev, err := range g.Stream(ctx, in, engine.ModeUpdates|engine.ModeValues, opts...) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Mode {
		case engine.ModeUpdates:
			names = append(names, ev.Update.Node)
		case engine.ModeValues:
			last = ev.Values
		}
	}
	return names, last
}

func sortedAdd(a, b []string) []string {
	out := engine.Append(a, b)
	slices.Sort(out)
	return out
}

// §11 scenario 5: fan-out with a join that waits for a slow branch.
func TestFanOutJoin(t *testing.T) {
	query := engine.LastValue[string]("query")
	answer := engine.LastValue[string]("answer")
	docs := engine.Reducer("docs", "sorted_add", sortedAdd)
	g := compile(t, engine.NewGraph("fan-out", query, answer, docs).
		AddNode("rewrite_query", node(func(s engine.State) engine.Output {
			return engine.Updates(query.Set("query: " + query.Get(s)))
		})).
		AddNode("analyzer_one", node(func(s engine.State) engine.Output {
			return engine.Updates(query.Set("analyzed: " + query.Get(s)))
		})).
		AddNode("retriever_one", node(func(s engine.State) engine.Output { return engine.Updates(docs.Add([]string{"doc1", "doc2"})) })).
		AddNode("retriever_two", func(ctx context.Context, s engine.State) (engine.Output, error) {
			time.Sleep(50 * time.Millisecond)
			return engine.Updates(docs.Add([]string{"doc3", "doc4"})), nil
		}).
		AddNode("qa", node(func(s engine.State) engine.Output {
			return engine.Updates(answer.Set(strings.Join(docs.Get(s), ",")))
		})).
		AddEdge(engine.START, "rewrite_query").
		AddEdge("rewrite_query", "analyzer_one").
		AddEdge("analyzer_one", "retriever_one").
		AddEdge("rewrite_query", "retriever_two").
		AddJoin([]string{"retriever_one", "retriever_two"}, "qa").
		AddEdge("qa", engine.END))
	names, vals := updatesOf(t, g, engine.Values{"query": "what is weather in sf"})
	want := engine.Values{"query": "analyzed: query: what is weather in sf", "docs": []string{"doc1", "doc2", "doc3", "doc4"}, "answer": "doc1,doc2,doc3,doc4"}
	if fmt.Sprint(vals) != fmt.Sprint(want) {
		t.Errorf("final state %v, want %v", vals, want)
	}
	if got := strings.Join(names, ","); got != "rewrite_query,analyzer_one,retriever_two,retriever_one,qa" {
		t.Errorf("update order %s", got)
	}
}

// §11 scenario 6: a join over a node and one of its successors.
func TestMultiEdge(t *testing.T) {
	key := engine.Reducer("my_key", "add", engine.Sum[string])
	noop := node(func(engine.State) engine.Output { return nil })
	g := compile(t, engine.NewGraph("multi-edge", key).
		AddNode("up", noop).AddNode("side", noop).AddNode("down", noop).
		AddNode("other", node(func(engine.State) engine.Output { return engine.Updates(key.Add("_more")) })).
		AddEdge(engine.START, "up").AddEdge("up", "side").AddEdge("up", "other").
		AddJoin([]string{"up", "side"}, "down").AddEdge("down", engine.END))
	names, vals := updatesOf(t, g, engine.Values{"my_key": "my_value"})
	if vals["my_key"] != "my_value_more" {
		t.Errorf("my_key = %v", vals["my_key"])
	}
	if len(names) != 4 || names[0] != "up" || names[3] != "down" || !slices.Contains(names, "side") || !slices.Contains(names, "other") {
		t.Errorf("updates %v", names)
	}
}

// §11 scenario 7: two writes to a LastValue in one step.
func TestLastValueConflict(t *testing.T) {
	hello := engine.LastValue[string]("hello")
	w := node(func(engine.State) engine.Output { return engine.Updates(hello.Set("world")) })
	g := compile(t, engine.NewGraph("conflict", hello).
		AddNode("one", w).AddNode("two", w).
		AddConditionalEdges(engine.START, func(context.Context, engine.State) (engine.Route, error) {
			return engine.To("one", "two"), nil
		}, engine.Targets("one", "two")))
	_, err := g.Invoke(ctx, engine.Values{"hello": "there"})
	var iu *engine.InvalidUpdateError
	if !errors.As(err, &iu) || iu.Key != "hello" || !strings.Contains(err.Error(), "At key 'hello'") {
		t.Fatalf("err = %v, want InvalidUpdateError at key hello", err)
	}
}

// Raw-channel variant: a Topic accepts both writes.
func TestTopicAcceptsConcurrentWrites(t *testing.T) {
	out := engine.Topic[int]("out", true)
	w := node(func(engine.State) engine.Output { return engine.Updates(out.Add(3)) })
	g := compile(t, engine.NewGraph("topic", out).
		AddNode("one", w).AddNode("two", w).
		AddEdge(engine.START, "one").AddEdge(engine.START, "two"))
	res := invoke(t, g, engine.Values{})
	if fmt.Sprint(res.Values["out"]) != "[3 3]" {
		t.Errorf("out = %v", res.Values["out"])
	}
}

// §11 scenario 8: a conditional entry point that fans out with Send.
func TestSendMap(t *testing.T) {
	locations := engine.LastValue[[]string]("locations")
	results := engine.List[string]("results")
	g := compile(t, engine.NewGraph("weather", locations, results).
		AddNode("get_weather", node(func(s engine.State) engine.Output {
			loc, _ := engine.ArgAs[string](s)
			w := "cloudy"
			if loc == "nyc" {
				w = "sunny"
			}
			return engine.Updates(results.Add("It's " + w + " in " + loc))
		})).
		AddConditionalEdges(engine.START, func(_ context.Context, s engine.State) (engine.Route, error) {
			var r engine.Route
			for _, l := range locations.Get(s) {
				r.Sends = append(r.Sends, engine.Send{Node: "get_weather", Arg: l})
			}
			return r, nil
		}, engine.SendsTo("get_weather")))
	res := invoke(t, g, engine.Values{"locations": []string{"sf", "nyc"}})
	if got := fmt.Sprint(res.Values["results"]); got != "[It's cloudy in sf It's sunny in nyc]" {
		t.Errorf("results = %s", got)
	}
}

// §11 scenario 9: Sends from two nodes apply in task-path order.
func TestSendOrdering(t *testing.T) {
	root := engine.List[string]("root")
	say := func(name string) engine.NodeFunc {
		return node(func(engine.State) engine.Output { return engine.Updates(root.Add(name)) })
	}
	g := compile(t, engine.NewGraph("sends", root).
		AddNode("1", say("1")).AddNode("1.1", say("1.1")).AddNode("3", say("3")).AddNode("3.1", say("3.1")).
		AddNode("2", node(func(s engine.State) engine.Output {
			n, _ := engine.ArgAs[int](s)
			return engine.Updates(root.Add(fmt.Sprintf("2|%d", n)))
		})).
		AddEdge(engine.START, "1").AddEdge(engine.START, "1.1").
		AddConditionalEdges("1", func(context.Context, engine.State) (engine.Route, error) {
			return engine.Route{Keys: []string{"3.1"}, Sends: []engine.Send{{Node: "2", Arg: 1}, {Node: "2", Arg: 2}}}, nil
		}, engine.Targets("3.1"), engine.SendsTo("2")).
		AddConditionalEdges("1.1", func(context.Context, engine.State) (engine.Route, error) {
			return engine.SendTo(engine.Send{Node: "2", Arg: 3}, engine.Send{Node: "2", Arg: 4}), nil
		}, engine.SendsTo("2")).
		AddConditionalEdges("2", func(context.Context, engine.State) (engine.Route, error) { return engine.To("3"), nil }, engine.Targets("3")))
	res := invoke(t, g, engine.Values{"root": []string{"0"}})
	want := "[0 1 1.1 3.1 2|1 2|2 2|3 2|4 3]"
	if got := fmt.Sprint(res.Values["root"]); got != want {
		t.Errorf("root = %s, want %s", got, want)
	}
}

// §11 scenario 10: a conditional edge after Sends runs its target once.
func TestSendThenConditional(t *testing.T) {
	root := engine.List[string]("root")
	g := compile(t, engine.NewGraph("send-cond", root).
		AddNode("1", node(func(engine.State) engine.Output { return engine.Updates(root.Add("1")) })).
		AddNode("2", node(func(engine.State) engine.Output { return engine.Updates(root.Add("2")) })).
		AddNode("3", node(func(engine.State) engine.Output { return engine.Updates(root.Add("3")) })).
		AddEdge(engine.START, "1").
		AddConditionalEdges("1", func(_ context.Context, s engine.State) (engine.Route, error) {
			arg := engine.Values{"root": root.Get(s)}
			return engine.SendTo(engine.Send{Node: "2", Arg: arg}, engine.Send{Node: "2", Arg: arg}), nil
		}, engine.SendsTo("2")).
		AddConditionalEdges("2", func(context.Context, engine.State) (engine.Route, error) { return engine.To("3"), nil }, engine.Targets("3")))
	res := invoke(t, g, engine.Values{"root": []string{"0"}})
	if got := fmt.Sprint(res.Values["root"]); got != "[0 1 2 2 3]" {
		t.Errorf("root = %s", got)
	}
}

// §11 scenario 14: Overwrite replaces a reducer's value.
func TestOverwrite(t *testing.T) {
	msgs := engine.List[string]("messages")
	add := func(v string) engine.NodeFunc {
		return node(func(engine.State) engine.Output { return engine.Updates(msgs.Add(v)) })
	}
	over := func(v string) engine.NodeFunc {
		return node(func(engine.State) engine.Output { return engine.Updates(msgs.Overwrite([]string{v})) })
	}
	t.Run("sequential", func(t *testing.T) {
		g := compile(t, engine.NewGraph("ow", msgs).AddNode("a", add("a")).AddNode("b", over("b")).
			AddEdge(engine.START, "a").AddEdge("a", "b"))
		res := invoke(t, g, engine.Values{"messages": []string{"START"}})
		if got := fmt.Sprint(res.Values["messages"]); got != "[b]" {
			t.Errorf("messages = %s", got)
		}
	})
	t.Run("parallel write after overwrite is skipped", func(t *testing.T) {
		g := compile(t, engine.NewGraph("ow", msgs).AddNode("a", add("a")).AddNode("b", over("b")).
			AddNode("c", add("c")).AddNode("d", add("d")).
			AddEdge(engine.START, "a").AddEdge("a", "b").AddEdge("a", "c").AddJoin([]string{"b", "c"}, "d"))
		res := invoke(t, g, engine.Values{"messages": []string{"START"}})
		if got := fmt.Sprint(res.Values["messages"]); got != "[b d]" {
			t.Errorf("messages = %s", got)
		}
	})
	t.Run("two overwrites in one step", func(t *testing.T) {
		g := compile(t, engine.NewGraph("ow", msgs).AddNode("a", add("a")).AddNode("b", over("b")).
			AddNode("c", over("c")).AddEdge(engine.START, "a").AddEdge("a", "b").AddEdge("a", "c"))
		_, err := g.Invoke(ctx, engine.Values{"messages": []string{"START"}})
		var iu *engine.InvalidUpdateError
		if !errors.As(err, &iu) || !strings.Contains(err.Error(), "only one Overwrite") {
			t.Errorf("err = %v", err)
		}
	})
}

// §11 scenario 15: a list of Commands updates one key twice, in order.
func TestCommandListUpdates(t *testing.T) {
	foo := engine.Reducer("foo", "add", engine.Sum[string])
	g := compile(t, engine.NewGraph("cmds", foo).
		AddNode("node_a", node(func(engine.State) engine.Output {
			return engine.Commands{{Update: engine.Updates(foo.Add("a1"))}, {Update: engine.Updates(foo.Add("a2"))}}
		})).
		AddNode("node_b", node(func(engine.State) engine.Output { return engine.Updates(foo.Add("b")) })).
		AddEdge(engine.START, "node_a").AddEdge("node_a", "node_b"))
	var ups []string
	for ev, err := range g.Stream(ctx, engine.Values{"foo": ""}, engine.ModeUpdates) {
		if err != nil {
			t.Fatal(err)
		}
		var parts []string
		for _, w := range ev.Update.Writes {
			parts = append(parts, fmt.Sprintf("%s=%v", w.Channel, w.Value))
		}
		ups = append(ups, ev.Update.Node+":"+strings.Join(parts, ","))
	}
	if got := strings.Join(ups, " "); got != "node_a:foo=a1,foo=a2 node_b:foo=b" {
		t.Errorf("updates %s", got)
	}
	res := invoke(t, g, engine.Values{"foo": ""})
	if res.Values["foo"] != "a1a2b" {
		t.Errorf("foo = %v", res.Values["foo"])
	}
}

// The recursion limit: a self-loop runs its node L times, then fails.
func TestRecursionLimit(t *testing.T) {
	count := engine.LastValue[int]("count")
	var mu sync.Mutex
	calls := 0
	g := compile(t, engine.NewGraph("loop", count).
		AddNode("inc", node(func(s engine.State) engine.Output {
			mu.Lock()
			calls++
			mu.Unlock()
			return engine.Updates(count.Set(count.Get(s) + 1))
		})).
		AddEdge(engine.START, "inc").
		AddConditionalEdges("inc", func(context.Context, engine.State) (engine.Route, error) { return engine.To("inc"), nil }, engine.Targets("inc")))
	for _, limit := range []int{1, 5, 25} {
		calls = 0
		_, err := g.Invoke(ctx, engine.Values{"count": 0}, engine.WithRecursionLimit(limit))
		var rl *engine.RecursionLimitError
		if !errors.As(err, &rl) || rl.Limit != limit {
			t.Fatalf("limit %d: err = %v", limit, err)
		}
		if calls != limit {
			t.Errorf("limit %d: node ran %d times", limit, calls)
		}
	}
	// A chain of k nodes needs a limit of k+1.
	a := node(func(engine.State) engine.Output { return nil })
	chain := compile(t, engine.NewGraph("chain", count).AddNode("a", a).AddNode("b", a).
		AddEdge(engine.START, "a").AddEdge("a", "b"))
	if _, err := chain.Invoke(ctx, engine.Values{}, engine.WithRecursionLimit(2)); err == nil {
		t.Error("limit 2 on a 2-node chain should fail")
	}
	if _, err := chain.Invoke(ctx, engine.Values{}, engine.WithRecursionLimit(3)); err != nil {
		t.Errorf("limit 3 on a 2-node chain: %v", err)
	}
}
