package agui

import (
	"context"
	"strings"
	"testing"

	"github.com/weftstudio/weft/agent"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/model/modeltest"
	"github.com/weftstudio/weft/model/openai"
	"github.com/weftstudio/weft/tool"
)

// reactWeatherArgs is what the model streams, one character a chunk.
const reactWeatherArgs = `{"city": "Paris", "units": "metric"}`

// reactGraph is the ReAct agent on a fake OpenAI server: its tokens and
// tool calls come through OpenAI's SDK from real Chat Completions SSE, the
// tool call's arguments split over many chunks.
func reactGraph(t testing.TB) *engine.Graph {
	srv := modeltest.NewServerFunc(t, modeltest.OpenAI{}, func(seen modeltest.Seen) modeltest.Response {
		if last := seen.Messages[len(seen.Messages)-1]; last.Role == "tool" {
			return modeltest.Response{Reply: modeltest.Reply{ID: "r2", Model: "gpt-fake", Text: []string{"It is ", "18°C ", "in Paris."}}}
		}
		return modeltest.Response{Reply: modeltest.Reply{ID: "r1", Model: "gpt-fake", Text: []string{"Checking ", "the weather."},
			Calls: []modeltest.Call{{ID: "call_weather", Name: "get_weather", Args: strings.Split(reactWeatherArgs, "")}}}}
	})
	weather := tool.Must(tool.New("get_weather", "Weather in a city.", func(_ context.Context, a struct {
		City  string `json:"city"`
		Units string `json:"units,omitempty" jsonschema:"enum=metric,enum=imperial"`
	}) (string, error) {
		return "18°C in " + a.City, nil
	}))
	g, err := agent.New(openai.New(openai.WithBaseURL(srv.URL), openai.WithAPIKey("test")), []tool.Tool{weather})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// The ReAct agent's streamed tokens and tool call pieces become AG-UI text
// and tool-call events that add up to the stored messages.
func TestReActStreamsModelTokens(t *testing.T) {
	ts := newTestServer(t, []*engine.Graph{reactGraph(t)}, nil)
	path := "/agents/react-agent"
	s := post(t, ts.URL+path, input("r-1", "run-1", "messages", []map[string]any{{"id": "u1", "role": "user", "content": "Weather in Paris?"}}))
	if s.status != 200 {
		t.Fatalf("status %d: %s", s.status, s.body)
	}
	if err := verify(s.lines); err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, e := range s.find("TOOL_CALL_ARGS") {
		if e["toolCallId"] == "call_weather" {
			args = append(args, e["delta"].(string))
		}
	}
	if strings.Join(args, "") != reactWeatherArgs || len(args) != len(reactWeatherArgs) {
		t.Errorf("arguments streamed in %d pieces: %q", len(args), strings.Join(args, ""))
	}
	var text []string
	for _, e := range s.find("TEXT_MESSAGE_CONTENT") {
		text = append(text, e["delta"].(string))
	}
	if strings.Join(text, "") != "Checking the weather.It is 18°C in Paris." {
		t.Errorf("text %q", text)
	}
	res := s.find("TOOL_CALL_RESULT")
	if len(res) != 1 || res[0]["toolCallId"] != "call_weather" || res[0]["content"] != "18°C in Paris" {
		t.Errorf("tool results %v", res)
	}
	msgs := s.find("MESSAGES_SNAPSHOT")[0]["messages"].([]any)
	ai := msgs[1].(map[string]any)
	call := ai["toolCalls"].([]any)[0].(map[string]any)["function"].(map[string]any)
	if call["arguments"] != reactWeatherArgs || ai["content"] != "Checking the weather." {
		t.Errorf("stored assistant message %v", ai)
	}
	// The tool message's name (the tool node sets it) is not part of AG-UI's
	// tool messages: 1.0 clients warn about it.
	if tm := msgs[2].(map[string]any); tm["role"] != "tool" || tm["name"] != nil {
		t.Errorf("tool message %v", tm)
	}
}
