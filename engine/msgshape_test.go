package engine

import (
	"reflect"
	"testing"
)

// TestMessageOf: the message shapes add_messages coerces (a LangChain
// message as a server sends it, Weft's and OpenAI's role/content) read as
// Messages; anything else does not.
func TestMessageOf(t *testing.T) {
	cases := []struct {
		name string
		in   any
		want Message
		ok   bool
	}{
		{"langchain ai with a tool call", map[string]any{"type": "ai", "content": "", "id": "m1",
			"tool_calls": []any{map[string]any{"id": "c1", "name": "add", "args": map[string]any{"a": 1.0}, "type": "tool_call"}}},
			Message{Role: RoleAssistant, ID: "m1", ToolCalls: []ToolCall{{ID: "c1", Name: "add", Args: `{"a":1}`}}}, true},
		{"langchain tool", map[string]any{"type": "tool", "content": "42", "tool_call_id": "c1", "name": "add"},
			Message{Role: RoleTool, Content: "42", ToolCallID: "c1", Name: "add"}, true},
		{"chunk class, list content", map[string]any{"type": "AIMessageChunk", "content": []any{map[string]any{"type": "text", "text": "The "}, map[string]any{"type": "image_url"}, "answer"}},
			Message{Role: RoleAssistant, Content: "The answer"}, true},
		{"openai shape", map[string]any{"role": "user", "content": "hi"}, Message{Role: RoleUser, Content: "hi"}, true},
		{"a Message", Message{Role: RoleSystem, Content: "s"}, Message{Role: RoleSystem, Content: "s"}, true},
		{"unknown type", map[string]any{"type": "note", "content": "x"}, Message{}, false},
		{"no content", map[string]any{"type": "ai"}, Message{}, false},
		{"not a map", "hello", Message{}, false},
	}
	for _, c := range cases {
		got, ok := MessageOf(c.in)
		if ok != c.ok || (ok && !reflect.DeepEqual(got, c.want)) {
			t.Errorf("%s: %+v %v, want %+v %v", c.name, got, ok, c.want, c.ok)
		}
	}
}
