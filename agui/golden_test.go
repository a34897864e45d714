package agui

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/weftstudio/weft/engine"
)

// checkStream runs the checks every stream must pass, compares it with its
// golden file, and checks that the state the client ends with (snapshots
// and deltas applied) is the thread's state.
func checkStream(t *testing.T, ts *testServer, path, thread, golden string, s *stream, parallel ...string) {
	t.Helper()
	if s.status != 200 {
		t.Fatalf("status %d: %s", s.status, s.body)
	}
	if err := verify(s.lines); err != nil {
		t.Fatalf("%v\n%s", err, strings.Join(s.lines, "\n"))
	}
	checkGolden(t, golden, s, parallel...)
	got, err := replayState(s.lines)
	if err != nil {
		t.Fatal(err)
	}
	g := ts.h.Graph(path)
	snap, err := g.GetState(context.Background(), engine.WithThread(thread))
	if err != nil {
		t.Fatal(err)
	}
	m := NewMapper(g, func(Event) {}, counterIDs(), nil)
	want := m.StateJSON(snap.Values)
	if !jsonEqual(got, want) {
		t.Errorf("client state after the stream\n%s\nthread state\n%s", got, want)
	}
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ca, _ := json.Marshal(x)
	cb, _ := json.Marshal(y)
	return string(ca) == string(cb)
}

// A plain run: map-reduce with a subgraph, no messages, no interrupt.
func TestGoldenMapReduce(t *testing.T) {
	ts := newTestServer(t, demoGraphs(t), nil)
	path := "/agents/map-reduce"
	s := post(t, ts.URL+path, input("mr-1", "run-1", "state", map[string]any{"subjects": []string{"otters", "kelp", "gulls"}}))
	checkStream(t, ts, path, "mr-1", "mapreduce", s)
	fin := s.last()
	if fin["type"] != "RUN_FINISHED" || fin["outcome"].(map[string]any)["type"] != "success" {
		t.Fatalf("last event %v", fin)
	}
}

// The writing assistant streams research notes as text messages, then
// stops at the review interrupt; the resume approves and publishes.
func TestGoldenWriter(t *testing.T) {
	ts := newTestServer(t, demoGraphs(t), nil)
	path := "/agents/writing-assistant"
	s := post(t, ts.URL+path, input("w-1", "run-1", "state", map[string]any{"topic": "tide pools"}))
	checkStream(t, ts, path, "w-1", "writer_interrupt", s, "research")
	ids := s.interruptIDs()
	if len(ids) != 1 {
		t.Fatalf("interrupts %v", ids)
	}
	if n := len(s.find("TEXT_MESSAGE_START")); n < 3 {
		t.Errorf("%d streamed messages, want the three research notes", n)
	}
	if c := s.find("CUSTOM"); len(c) != 1 || c[0]["name"] != "on_interrupt" || !strings.Contains(c[0]["value"].(string), "Approve this draft") {
		t.Errorf("legacy interrupt event %v", c)
	}

	// The client resumes with what it now holds: the messages and state of
	// the snapshots, and the answer.
	msgs := s.find("MESSAGES_SNAPSHOT")[0]["messages"]
	state := s.find("STATE_SNAPSHOT")
	r := post(t, ts.URL+path, input("w-1", "run-1", "messages", msgs, "state", state[len(state)-1]["snapshot"],
		"resume", []map[string]any{{"interruptId": ids[0], "status": "resolved", "payload": map[string]any{"action": "approve"}}}))
	checkStream(t, ts, path, "w-1", "writer_resume", r)
	if out := r.last()["outcome"].(map[string]any); out["type"] != "success" {
		t.Fatalf("outcome %v", out)
	}
}

// The agent's tool calls become TOOL_CALL_* events, its transfer waits for
// approval, and the resumed run reports the tool results and the answer.
func TestGoldenAgent(t *testing.T) {
	ts := newTestServer(t, demoGraphs(t), nil)
	path := "/agents/tool-agent"
	user := []map[string]any{{"id": "u1", "role": "user", "content": "Check my balance, then send 250 to Alice."}}
	s := post(t, ts.URL+path, input("a-1", "run-1", "messages", user))
	checkStream(t, ts, path, "a-1", "agent_interrupt", s)
	ids := s.interruptIDs()
	if len(ids) != 1 {
		t.Fatalf("interrupts %v", ids)
	}
	if got := s.find("TOOL_CALL_START"); len(got) != 2 || got[1]["toolCallName"] != "transfer_money" {
		t.Errorf("tool calls %v", got)
	}
	msgs := s.find("MESSAGES_SNAPSHOT")[0]["messages"]
	r := post(t, ts.URL+path, input("a-1", "run-2", "messages", msgs,
		"resume", []map[string]any{{"interruptId": ids[0], "status": "resolved", "payload": "approve"}}))
	checkStream(t, ts, path, "a-1", "agent_resume", r)
	if got := r.find("TOOL_CALL_RESULT"); len(got) != 2 || got[1]["content"] != "Sent 250 to Alice." {
		t.Errorf("tool results %v", got)
	}
	final := r.find("MESSAGES_SNAPSHOT")[0]["messages"].([]any)
	last := final[len(final)-1].(map[string]any)
	if !strings.Contains(last["content"].(string), "Sent 250 to Alice.") {
		t.Errorf("final answer %v", last)
	}
}

var (
	streamMessages = engine.Messages("messages")
	streamCity     = engine.LastValue[string]("city")
)

// streamingGraph plays a model that streams text and two tool calls (the
// first one's arguments in two pieces, the second id-less piece continuing
// it), emits custom events, and a tools node that answers; then the model
// streams its answer without message ids.
func streamingGraph(t testing.TB) *engine.Graph {
	g, err := engine.NewGraph("streaming", streamMessages, streamCity).
		AddNode("model", func(ctx context.Context, s engine.State) (engine.Output, error) {
			msgs := streamMessages.Get(s)
			if msgs[len(msgs)-1].Role == engine.RoleTool {
				engine.EmitMessage(ctx, engine.Message{Role: engine.RoleAssistant, Content: "It is 18°C "})
				engine.EmitMessage(ctx, engine.Message{Role: engine.RoleAssistant, Content: "in Paris."})
				return engine.Updates(streamMessages.Add(engine.Message{ID: "m2", Role: engine.RoleAssistant, Content: "It is 18°C in Paris."})), nil
			}
			engine.Emit(ctx, CustomEvent{Name: "progress", Value: map[string]any{"pct": 10}})
			engine.EmitMessage(ctx, engine.Message{ID: "m1", Role: engine.RoleAssistant, Content: "Let me "})
			engine.EmitMessage(ctx, engine.Message{ID: "m1", Role: engine.RoleAssistant, Content: "check."})
			engine.EmitMessage(ctx, engine.Message{ID: "m1", Role: engine.RoleAssistant,
				ToolCalls: []engine.ToolCall{{ID: "call-w", Name: "get_weather", Args: `{"city":`}}})
			engine.EmitMessage(ctx, engine.Message{ID: "m1", Role: engine.RoleAssistant,
				ToolCalls: []engine.ToolCall{{Args: `"Paris"}`}}})
			engine.EmitMessage(ctx, engine.Message{ID: "m1", Role: engine.RoleAssistant,
				ToolCalls: []engine.ToolCall{{ID: "call-t", Name: "get_time", Args: "{}"}}})
			engine.Emit(ctx, "plain value")
			return engine.Updates(streamMessages.Add(engine.Message{ID: "m1", Role: engine.RoleAssistant, Content: "Let me check.",
				ToolCalls: []engine.ToolCall{{ID: "call-w", Name: "get_weather", Args: `{"city":"Paris"}`}, {ID: "call-t", Name: "get_time", Args: "{}"}}})), nil
		}).
		AddNode("tools", func(ctx context.Context, s engine.State) (engine.Output, error) {
			return engine.Updates(streamCity.Set("Paris"), streamMessages.Add(
				engine.Message{ID: "t1", Role: engine.RoleTool, ToolCallID: "call-w", Content: `{"tempC":18}`},
				engine.Message{ID: "t2", Role: engine.RoleTool, ToolCallID: "call-t", Content: "12:00"})), nil
		}).
		AddEdge(engine.START, "model").
		AddConditionalEdges("model", func(_ context.Context, s engine.State) (engine.Route, error) {
			msgs := streamMessages.Get(s)
			if len(msgs[len(msgs)-1].ToolCalls) > 0 {
				return engine.To("tools"), nil
			}
			return engine.To(engine.END), nil
		}, engine.Targets("tools", engine.END)).
		AddEdge("tools", "model").
		Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Streamed text and tool-call chunks, custom events, tool results and an
// answer streamed without ids, in one run.
func TestGoldenStreaming(t *testing.T) {
	ts := newTestServer(t, []*engine.Graph{streamingGraph(t)}, nil)
	path := "/agents/streaming"
	user := []map[string]any{{"id": "u1", "role": "user", "content": "Weather in Paris?"}}
	s := post(t, ts.URL+path, input("s-1", "run-1", "messages", user))
	checkStream(t, ts, path, "s-1", "streaming", s)
	var args string
	for _, e := range s.find("TOOL_CALL_ARGS") {
		if e["toolCallId"] == "call-w" {
			args += e["delta"].(string)
		}
	}
	if args != `{"city":"Paris"}` {
		t.Errorf("streamed arguments %q", args)
	}
	if got := len(s.find("TEXT_MESSAGE_START")); got != 2 {
		t.Errorf("%d text messages, want m1 and the id-less answer, each once", got)
	}
	custom := s.find("CUSTOM")
	if len(custom) != 2 || custom[0]["name"] != "progress" || custom[1]["name"] != "custom" || custom[1]["value"] != "plain value" {
		t.Errorf("custom events %v", custom)
	}
}
