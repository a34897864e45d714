package engine

import (
	"encoding/json"
	"strings"
)

// langchainRoles maps the "type" of a LangChain message as its JSON dict
// (what a LangGraph server sends: "human", "ai", …, and the classes'
// names, chunks included) to a Message role.
var langchainRoles = map[string]string{
	"human": RoleUser, "user": RoleUser, "HumanMessage": RoleUser,
	"ai": RoleAssistant, "assistant": RoleAssistant, "AIMessage": RoleAssistant,
	"system": RoleSystem, "developer": RoleSystem, "SystemMessage": RoleSystem,
	"tool": RoleTool, "function": RoleTool, "ToolMessage": RoleTool, "FunctionMessage": RoleTool,
	"remove": RoleRemove, "RemoveMessage": RoleRemove,
}

// MessageOf reads a message-shaped value, as LangGraph's add_messages
// coerces dicts into messages: a Message; an object with "role" and
// "content" (Weft's and OpenAI's shape); or a LangChain message as JSON,
// with "type" ("human", "ai", "tool", "system", or a class name such as
// "AIMessageChunk") and "content". List content keeps its text blocks;
// tool calls' args become their JSON text. ok is false for anything else,
// such as a map without a known role or without content.
func MessageOf(v any) (Message, bool) {
	switch m := v.(type) {
	case Message:
		return m, true
	case *Message:
		if m != nil {
			return *m, true
		}
		return Message{}, false
	case map[string]any:
		return messageOfMap(m)
	}
	return Message{}, false
}

func messageOfMap(m map[string]any) (Message, bool) {
	var msg Message
	content, has := m["content"]
	if !has {
		return msg, false
	}
	if r, ok := m["role"].(string); ok && r != "" {
		msg.Role = langchainRoles[r]
		if msg.Role == "" {
			msg.Role = r // a ChatMessage's own role
		}
	} else if t, ok := m["type"].(string); ok {
		if msg.Role = langchainRoles[strings.TrimSuffix(t, "Chunk")]; msg.Role == "" {
			return msg, false
		}
	} else {
		return msg, false
	}
	switch c := content.(type) {
	case string:
		msg.Content = c
	case []any:
		var b strings.Builder
		for _, block := range c {
			switch x := block.(type) {
			case string:
				b.WriteString(x)
			case map[string]any:
				if t, ok := x["text"].(string); ok && x["type"] == "text" {
					b.WriteString(t)
				}
			}
		}
		msg.Content = b.String()
	case nil:
	default:
		return msg, false
	}
	msg.ID, _ = m["id"].(string)
	msg.Name, _ = m["name"].(string)
	msg.ToolCallID, _ = m["tool_call_id"].(string)
	calls, _ := m["tool_calls"].([]any)
	for _, c := range calls {
		cm, ok := c.(map[string]any)
		if !ok {
			continue
		}
		tc := ToolCall{}
		tc.ID, _ = cm["id"].(string)
		tc.Name, _ = cm["name"].(string)
		if fn, ok := cm["function"].(map[string]any); ok && tc.Name == "" { // OpenAI's shape
			tc.Name, _ = fn["name"].(string)
			cm = fn
		}
		switch a := cm["args"].(type) {
		case string:
			tc.Args = a
		case nil:
			if s, ok := cm["arguments"].(string); ok {
				tc.Args = s
			}
		default:
			b, _ := json.Marshal(a)
			tc.Args = string(b)
		}
		msg.ToolCalls = append(msg.ToolCalls, tc)
	}
	return msg, true
}
