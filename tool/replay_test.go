package tool_test

import (
	"context"
	"errors"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/model"
	"github.com/weftstudio/weft/tool"
)

// replayer serves the recorded result of call c1, refuses c2 when strict,
// and lets other calls run.
type replayer struct{ strict bool }

func (replayer) ReplayModelCall(context.Context, *model.Request) (*engine.CallRecord, error) {
	return nil, nil
}

func (r replayer) ReplayToolCall(_ context.Context, c engine.ToolCall) (*engine.CallRecord, error) {
	switch {
	case c.ID == "c1":
		return &engine.CallRecord{Kind: engine.CallTool, Name: c.Name, Result: engine.CallText{Text: "recorded 1"}}, nil
	case c.ID == "c2" && r.strict:
		return nil, engine.Permanent(errors.New("c2 is not in the recording"))
	}
	return nil, nil
}

func TestNodeServesRecordedToolCalls(t *testing.T) {
	runs := 0
	echo := tool.Must(tool.New("echo", "", func(_ context.Context, a struct {
		S string `json:"s"`
	}) (string, error) {
		runs++
		return "live " + a.S, nil
	}))
	g, err := engine.NewGraph("tools", msgs).AddNode("tools", tool.Node(msgs, echo)).AddEdge(engine.START, "tools").
		Compile(engine.WithSaver(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	in := engine.Values{"messages": []engine.Message{{ID: "u", Role: engine.RoleUser, Content: "go"}, {ID: "ai", Role: engine.RoleAssistant,
		ToolCalls: []engine.ToolCall{{ID: "c1", Name: "echo", Args: `{"s":"1"}`}, {ID: "c2", Name: "echo", Args: `{"s":"2"}`}}}}}
	ctx := model.WithCallReplayer(context.Background(), replayer{})
	res, err := g.Invoke(ctx, in, engine.WithThread("t"))
	if err != nil {
		t.Fatal(err)
	}
	got := msgs.Get(engine.StateOf(res.Values))[2:]
	if len(got) != 2 || got[0].Content != "recorded 1" || got[0].ID != tool.ResultID("c1") || got[1].Content != "live 2" || runs != 1 {
		t.Fatalf("results %+v, %d runs", got, runs)
	}
	hist, err := g.History(ctx, checkpoint.ListOptions{}, engine.WithThread("t"))
	if err != nil {
		t.Fatal(err)
	}
	var served bool
	for _, s := range hist {
		for _, ts := range s.Tasks {
			for _, c := range ts.Calls {
				served = served || (c.ToolCallID == "c1" && c.Result.Text == "recorded 1" && c.Args.Text == `{"s":"1"}`)
			}
		}
	}
	if !served {
		t.Error("the served call was not recorded")
	}
	// A strict replayer's refusal fails the node rather than going to the
	// model as the call's result.
	strict := model.WithCallReplayer(context.Background(), replayer{strict: true})
	if _, err := g.Invoke(strict, in, engine.WithThread("t2")); err == nil {
		t.Error("a refused call did not fail the node")
	}
}
