package examples_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/examples"
)

var ctx = context.Background()

func run(t *testing.T, g *engine.Graph, in engine.Input, thread string) *engine.Result {
	t.Helper()
	res, err := g.Invoke(ctx, in, engine.WithThread(thread))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestWriterReviewLoop(t *testing.T) {
	d, err := examples.Writer(memory.New())
	if err != nil {
		t.Fatal(err)
	}
	g := d.Graph
	res := run(t, g, d.Example, "w")
	if len(res.Interrupts) != 1 || res.Interrupts[0].Node != "review" {
		t.Fatalf("want the review interrupt, got %+v", res)
	}
	notes := res.Values["notes"].([]string)
	if len(notes) != 3 || !strings.HasPrefix(notes[0], "tide pools: history") {
		t.Errorf("notes %v", notes)
	}
	// An answer that is not a choice is asked again, with the reason.
	res = run(t, g, engine.Command{Resume: "maybe"}, "w")
	if len(res.Interrupts) != 1 || !strings.Contains(fmt.Sprint(res.Interrupts[0].Value), "want \"approve\"") {
		t.Fatalf("invalid answer: %+v", res.Interrupts)
	}
	res = run(t, g, engine.Command{Resume: map[string]any{"action": "revise", "feedback": "add a safety tip"}}, "w")
	if len(res.Interrupts) != 1 || res.Values["revisions"] != 2 || !strings.Contains(res.Values["draft"].(string), "add a safety tip") {
		t.Fatalf("after revise: %+v", res.Values)
	}
	res = run(t, g, engine.Command{Resume: "approve"}, "w")
	if !res.Done || res.Values["published"] != res.Values["draft"] {
		t.Fatalf("after approve: done=%v values=%v", res.Done, res.Values)
	}
}

func TestAgentTransferHappensOnce(t *testing.T) {
	bank := examples.NewBank(1000)
	d, err := examples.AgentWithBank(memory.New(), bank)
	if err != nil {
		t.Fatal(err)
	}
	res := run(t, d.Graph, d.Example, "a")
	if len(res.Interrupts) != 1 || !strings.Contains(fmt.Sprint(res.Interrupts[0].Value), "Transfer 250 to Alice?") {
		t.Fatalf("want the approval interrupt, got %+v", res.Interrupts)
	}
	if len(bank.Transfers()) != 0 {
		t.Fatal("money moved before approval")
	}
	res = run(t, d.Graph, engine.Command{Resume: "approve"}, "a")
	if !res.Done {
		t.Fatalf("not done: %+v", res)
	}
	if got := bank.Transfers(); len(got) != 1 || bank.Balance != 750 {
		t.Fatalf("transfers %v balance %d", got, bank.Balance)
	}
	msgs := res.Values["messages"].([]engine.Message)
	if last := msgs[len(msgs)-1]; !strings.Contains(last.Content, "Sent 250 to Alice.") || !strings.Contains(last.Content, "Balance: 1000.") {
		t.Errorf("final answer %q", last.Content)
	}
	// Replaying the tools step from its checkpoint re-runs the node and asks
	// again; approving again must not move money twice.
	snaps, err := d.Graph.History(ctx, checkpointAll, engine.WithThread("a"))
	if err != nil {
		t.Fatal(err)
	}
	var beforeTools string
	for _, s := range snaps {
		if slices.Equal(s.Next, []string{"tools"}) {
			beforeTools = s.Ref.CheckpointID
		}
	}
	res, err = d.Graph.Invoke(ctx, nil, engine.WithThread("a"), engine.WithCheckpoint(beforeTools))
	if err != nil || len(res.Interrupts) != 1 {
		t.Fatalf("replay: %v %+v", err, res)
	}
	run(t, d.Graph, engine.Command{Resume: "approve"}, "a")
	if got := bank.Transfers(); len(got) != 1 || bank.Balance != 750 {
		t.Fatalf("after replay: transfers %v balance %d", got, bank.Balance)
	}
}

func TestMapReduceWithSubgraph(t *testing.T) {
	saver := memory.New()
	d, err := examples.MapReduce(saver)
	if err != nil {
		t.Fatal(err)
	}
	res := run(t, d.Graph, d.Example, "m")
	want := "otters: otters is 6 letters long; otters starts with O\nkelp: kelp is 4 letters long; kelp starts with K\ngulls: gulls is 5 letters long; gulls starts with G"
	if res.Values["report"] != want {
		t.Errorf("report\n%v", res.Values["report"])
	}
	// Each subgraph run checkpointed in its own namespace.
	nss := map[string]bool{}
	for tp, err := range saver.List(ctx, checkpointAll) {
		if err != nil {
			t.Fatal(err)
		}
		nss[tp.Ref.NS] = true
	}
	if len(nss) != 4 {
		t.Errorf("namespaces %v, want the root and three subgraph runs", nss)
	}
}

func TestAllCompile(t *testing.T) {
	demos, err := examples.All(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(demos) != 3 || demos[0].Graph.Name() != "writing assistant" {
		t.Errorf("demos %v", demos)
	}
}

var checkpointAll = checkpointListAll()
