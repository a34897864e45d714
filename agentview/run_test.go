package agentview

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/weftstudio/weft/agentclient"
	"github.com/weftstudio/weft/engine"
)

// TestInputFields: the approval graph's input schema, as LangGraph's dev
// server gave it, becomes the new-thread form's fields.
func TestInputFields(t *testing.T) {
	schema := json.RawMessage(`{"type": "object", "properties": {"topic": {"type": "string"}, "notes": {"type": "array", "items": {"type": "string"}},
		"approved": {"type": ["null", "boolean"]}, "free": {}}, "required": ["topic"], "$schema": "http://json-schema.org/draft-07/schema#"}`)
	got := InputFields(schema)
	want := []InputField{{Name: "approved", Type: "boolean"}, {Name: "free"}, {Name: "notes", Type: "array"}, {Name: "topic", Type: "string", Required: true}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("fields %+v, want %+v", got, want)
	}
	if f := InputFields(json.RawMessage(`{"type": "object"}`)); f != nil {
		t.Errorf("a schema without properties gave %+v", f)
	}
}

// TestEventOf: the server's stream events (recorded from LangGraph's dev
// server) become the engine's task, update and message events.
func TestEventOf(t *testing.T) {
	ev := func(name, data string) agentclient.Event {
		e := agentclient.Event{Name: name, Mode: name, Data: json.RawMessage(data)}
		if m, ns, ok := strings.Cut(name, "|"); ok {
			e.Mode, e.Namespace = m, []string{ns}
		}
		return e
	}
	one := func(evs []engine.Event) (engine.Event, bool) {
		if len(evs) != 1 {
			return engine.Event{}, false
		}
		return evs[0], true
	}
	start, ok := one(eventsOf(ev("tasks|research:144", `{"id": "5f", "name": "gather", "input": {"topic": "otters"}, "triggers": ["branch:to:gather"], "interrupts": []}`)))
	if !ok || start.Mode != engine.ModeTasks || start.Task.Done || start.Task.Name != "gather" || start.NS != "research:144" {
		t.Errorf("task start %+v %+v", start, start.Task)
	}
	end, ok := one(eventsOf(ev("tasks|research:144", `{"id": "9f", "name": "pick", "result": {}, "interrupts": [{"id": "b3", "value": {"question": "Which?"}}], "error": null}`)))
	if !ok || !end.Task.Done || end.Task.Error != "" || len(end.Task.Interrupts) != 1 || end.Task.Interrupts[0].ID != "b3" {
		t.Errorf("task end %+v", end.Task)
	}
	up, ok := one(eventsOf(ev("updates", `{"plan": {"log": ["plan:otters"]}}`)))
	if !ok || up.Update.Node != "plan" || len(up.Update.Writes) != 1 || up.Update.Writes[0].Channel != "log" {
		t.Errorf("update %+v", up.Update)
	}
	msg, ok := one(eventsOf(ev("messages", `[{"content": "The ", "tool_calls": [], "id": "run-1", "type": "ai"}, {"langgraph_step": 4, "langgraph_node": "agent"}]`)))
	if !ok || msg.Message.Node != "agent" || msg.Message.Message.Role != engine.RoleAssistant || msg.Message.Message.Content != "The " || msg.Step != 4 {
		t.Errorf("message %+v", msg.Message)
	}
	if evs := eventsOf(ev("metadata", `{"run_id": "r"}`)); len(evs) != 0 {
		t.Error("a metadata event was converted")
	}
	if evs := eventsOf(ev("updates", `{"a": {"x": 1}, "b": {"y": 2}}`)); len(evs) != 2 || evs[1].Update.Node != "b" {
		t.Errorf("two nodes' writes gave %+v", evs)
	}
}
