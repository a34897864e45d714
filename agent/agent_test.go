package agent_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/weftstudio/weft/agent"
	"github.com/weftstudio/weft/checkpoint/sqlite"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/model"
	"github.com/weftstudio/weft/model/modeltest"
	"github.com/weftstudio/weft/model/openai"
	"github.com/weftstudio/weft/model/scripted"
	"github.com/weftstudio/weft/tool"
)

type weatherArgs struct {
	City  string `json:"city"`
	Units string `json:"units,omitempty" jsonschema:"enum=metric,enum=imperial"`
}

type transferArgs struct {
	Amount int    `json:"amount" jsonschema:"minimum=1"`
	To     string `json:"to"`
}

func tools(sent *atomic.Int32) []tool.Tool {
	return []tool.Tool{
		tool.Must(tool.New("get_weather", "Weather in a city.", func(_ context.Context, a weatherArgs) (string, error) {
			return "Sunny in " + a.City, nil
		})),
		tool.Must(tool.New("transfer_money", "Sends money.", func(_ context.Context, a transferArgs) (string, error) {
			sent.Add(1)
			return "sent", nil
		})),
	}
}

// The script the fake OpenAI server plays: a call with a bad argument and
// a transfer needing approval, then, once the results are in, an answer.
var (
	askTools = modeltest.Reply{ID: "r1", Model: "gpt-test", Text: []string{"On it."}, Calls: []modeltest.Call{
		{ID: "w1", Name: "get_weather", Args: []string{`{"city":"Paris",`, `"units":"kelvin"}`}},
		{ID: "t1", Name: "transfer_money", Args: []string{`{"amount":`, `250,"to":"Alice"}`}},
	}}
	answer = modeltest.Reply{ID: "r2", Model: "gpt-test", Text: []string{"Done", "."}}
)

func openStore(t *testing.T, path string) *sqlite.Saver {
	t.Helper()
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// The ReAct agent end to end on the fake OpenAI server: it stops for
// approval before the chosen tool, survives the process going away (a new
// graph on the reopened store resumes it), feeds a tool error back to the
// model, and runs the approved transfer once.
func TestReActOnFakeOpenAI(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.OpenAI{}, modeltest.Response{Reply: askTools}, modeltest.Response{Reply: answer})
	m := openai.New(openai.WithBaseURL(srv.URL), openai.WithAPIKey("k"))
	var sent atomic.Int32
	db := filepath.Join(t.TempDir(), "agent.db")
	ctx := context.Background()
	build := func() *engine.Graph {
		g, err := agent.New(m, tools(&sent), agent.WithApproval("transfer_money"), agent.WithSystemPrompt("You are a bank clerk."),
			agent.WithCompileOptions(engine.WithSaver(openStore(t, db))))
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	g := build()
	res, err := g.Invoke(ctx, engine.Values{"messages": []engine.Message{{ID: "u1", Role: engine.RoleUser, Content: "Weather in Paris, and send Alice 250."}}},
		engine.WithThread("th"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Interrupts) != 1 || len(res.Next) != 1 || res.Next[0] != agent.ApproveNode {
		t.Fatalf("interrupts %+v, next %v", res.Interrupts, res.Next)
	}
	q, ok := res.Interrupts[0].Value.(agent.ApprovalRequest)
	if !ok || q.ToolCallID != "t1" || q.Tool != "transfer_money" || q.Args != `{"amount":250,"to":"Alice"}` || q.Reason != "tool_call" {
		t.Fatalf("question %#v", res.Interrupts[0].Value)
	}
	if sent.Load() != 0 {
		t.Fatal("the transfer ran before approval")
	}

	// A fresh graph on the reopened store, as after a kill, answers.
	g = build()
	res, err = g.Invoke(ctx, engine.Command{Resume: map[string]any{"action": "approve"}}, engine.WithThread("th"))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Done || sent.Load() != 1 {
		t.Fatalf("done %v, transfers %d", res.Done, sent.Load())
	}
	msgs := engine.Messages("messages").Get(engine.StateOf(res.Values))
	var roles []string
	for _, msg := range msgs {
		roles = append(roles, msg.Role)
	}
	if strings.Join(roles, ",") != "user,assistant,tool,tool,assistant" || msgs[4].Content != "Done." {
		t.Fatalf("conversation %v: %+v", roles, msgs)
	}
	if !strings.HasPrefix(msgs[2].Content, `Error: invalid arguments for tool "get_weather": at /units`) || msgs[3].Content != "sent" {
		t.Errorf("tool results %q, %q", msgs[2].Content, msgs[3].Content)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests", len(reqs))
	}
	seen, err := modeltest.OpenAI{}.Decode(reqs[1].Body)
	if err != nil {
		t.Fatal(err)
	}
	if len(seen.Messages) != 5 || seen.Messages[0].Content != "You are a bank clerk." || !strings.HasPrefix(seen.Messages[3].Content, "Error: invalid arguments") ||
		seen.Messages[3].ToolCallID != "w1" || len(seen.Tools) != 2 {
		t.Errorf("the second model request: %+v", seen)
	}
}

// A rejection reaches the model as the call's result; the tool never runs.
// An edit changes the arguments the tool runs with.
func TestApprovalRejectAndEdit(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		answer any
		sent   int32
		result string
	}{
		{agent.Decision{Action: "reject", Reason: "too much"}, 0, "The reviewer rejected this call. Reason: too much"},
		{"reject", 0, "The reviewer rejected this call."},
		{map[string]any{"action": "edit", "args": `{"amount":100,"to":"Alice"}`}, 1, "sent"},
	} {
		srv := modeltest.NewServer(t, modeltest.OpenAI{}, modeltest.Response{Reply: askTools}, modeltest.Response{Reply: answer})
		m := openai.New(openai.WithBaseURL(srv.URL), openai.WithAPIKey("k"))
		var sent atomic.Int32
		var lastAmount atomic.Int32
		ts := tools(&sent)
		ts[1] = tool.Must(tool.New("transfer_money", "", func(_ context.Context, a transferArgs) (string, error) {
			sent.Add(1)
			lastAmount.Store(int32(a.Amount))
			return "sent", nil
		}))
		g, err := agent.New(m, ts, agent.WithApproval("transfer_money"),
			agent.WithCompileOptions(engine.WithSaver(openStore(t, filepath.Join(t.TempDir(), "a.db")))))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.Invoke(ctx, engine.Values{"messages": []engine.Message{{ID: "u1", Role: engine.RoleUser, Content: "go"}}}, engine.WithThread("th")); err != nil {
			t.Fatal(err)
		}
		res, err := g.Invoke(ctx, engine.Command{Resume: c.answer}, engine.WithThread("th"))
		if err != nil {
			t.Fatalf("%v: %v", c.answer, err)
		}
		msgs := engine.Messages("messages").Get(engine.StateOf(res.Values))
		var result string
		for _, msg := range msgs {
			if msg.ToolCallID == "t1" {
				result = msg.Content
			}
		}
		if sent.Load() != c.sent || result != c.result {
			t.Errorf("%v: %d transfers, result %q", c.answer, sent.Load(), result)
		}
		if c.sent == 1 && (lastAmount.Load() != 100 || msgs[1].ToolCalls[1].Args != `{"amount":100,"to":"Alice"}`) {
			t.Errorf("edit: ran with %d; stored call %+v", lastAmount.Load(), msgs[1].ToolCalls[1])
		}
	}
}

func TestBadConfigurations(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.OpenAI{}, modeltest.Response{Reply: askTools})
	m := openai.New(openai.WithBaseURL(srv.URL), openai.WithAPIKey("k"))
	ts := tools(new(atomic.Int32))
	if _, err := agent.New(m, ts, agent.WithApproval("launch_rockets")); err == nil || !strings.Contains(err.Error(), "launch_rockets") {
		t.Errorf("unknown approval tool: %v", err)
	}
	if _, err := agent.New(m, append(ts, ts[0])); err == nil || !strings.Contains(err.Error(), "two tools") {
		t.Errorf("duplicate tool: %v", err)
	}
	if _, err := agent.New(nil, ts); err == nil {
		t.Error("nil model accepted")
	}
	var cm model.ChatModel = m
	g, err := agent.New(cm, ts, agent.WithApproval("transfer_money"))
	if err != nil {
		t.Fatalf("an agent without a saver: %v", err)
	}
	if got := strings.Join(g.Nodes(), ","); got != "agent,approve,tools" {
		t.Errorf("nodes %s", got)
	}
	// Without a saver the approval cannot be answered: the run says so.
	_, err = g.Invoke(context.Background(), engine.Values{"messages": []engine.Message{{Role: engine.RoleUser, Content: "x"}}})
	if !errors.Is(err, engine.ErrNoSaver) {
		t.Errorf("an unanswerable approval: %v", err)
	}
}

// changing is a tool whose description changes, as an MCP server's can.
type changing struct{ desc atomic.Value }

func (c *changing) Spec() model.ToolSpec {
	return model.ToolSpec{Name: "probe", Description: c.desc.Load().(string), Parameters: []byte(`{"type":"object"}`)}
}
func (c *changing) Call(context.Context, string) (string, error) { return "ok", nil }

// The model is offered the tools as they are at each call, not as they
// were when the graph was built.
func TestToolSpecsReadAtEachCall(t *testing.T) {
	probe := &changing{}
	probe.desc.Store("first")
	var offered []string
	m := scripted.New(func(req *model.Request) (scripted.Turn, error) {
		offered = append(offered, req.Tools[0].Description)
		return scripted.Turn{Text: "fine"}, nil
	})
	g, err := agent.New(m, []tool.Tool{probe})
	if err != nil {
		t.Fatal(err)
	}
	in := engine.Values{"messages": []engine.Message{{Role: engine.RoleUser, Content: "hi"}}}
	if _, err := g.Invoke(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	probe.desc.Store("second")
	if _, err := g.Invoke(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	if strings.Join(offered, ",") != "first,second" {
		t.Errorf("offered %q, want the description of the moment", offered)
	}
}
