package agentserver

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"strings"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
)

// This file turns engine values into the JSON documents LangGraph's server
// sends: states (StateSnapshot), interrupts, messages and task writes.

// lcTypes maps Weft message roles to LangChain message types.
var lcTypes = map[string]string{engine.RoleUser: "human", engine.RoleAssistant: "ai", engine.RoleSystem: "system", engine.RoleTool: "tool"}

// lcRoles is lcTypes the other way, with the roles clients also send.
var lcRoles = map[string]string{"human": engine.RoleUser, "user": engine.RoleUser, "ai": engine.RoleAssistant,
	"assistant": engine.RoleAssistant, "system": engine.RoleSystem, "tool": engine.RoleTool, "remove": engine.RoleRemove}

// lcMessage is a message as LangChain serializes it.
func lcMessage(m engine.Message, chunk bool) map[string]any {
	typ := lcTypes[m.Role]
	if typ == "" {
		typ = m.Role
	}
	out := map[string]any{"type": typ, "content": lcContent(m), "id": m.ID,
		"additional_kwargs": map[string]any{}, "response_metadata": map[string]any{}}
	if chunk {
		out["type"] = map[string]string{"ai": "AIMessageChunk", "human": "HumanMessageChunk", "tool": "ToolMessageChunk", "system": "SystemMessageChunk"}[typ]
	}
	if m.Name != "" {
		out["name"] = m.Name
	}
	if typ == "ai" {
		calls := []map[string]any{}
		for _, c := range m.ToolCalls {
			var args any = map[string]any{}
			if c.Args != "" {
				_ = json.Unmarshal([]byte(c.Args), &args)
			}
			calls = append(calls, map[string]any{"id": c.ID, "name": c.Name, "args": args, "type": "tool_call"})
		}
		out["tool_calls"], out["invalid_tool_calls"] = calls, []any{}
	}
	if m.ToolCallID != "" {
		out["tool_call_id"] = m.ToolCallID
	}
	return out
}

// fromLC reads a message a client sent: a LangChain dict ({"type": "human",
// "content": …}) or an OpenAI-style one ({"role": "user", …}).
func fromLC(raw map[string]any) engine.Message {
	str := func(k string) string { s, _ := raw[k].(string); return s }
	role := str("role")
	if role == "" {
		role = str("type")
	}
	m := engine.Message{Role: lcRoles[role], ID: str("id"), Name: str("name"), ToolCallID: str("tool_call_id")}
	if m.Role == "" {
		m.Role = role
	}
	switch c := raw["content"].(type) {
	case string:
		m.Content = c
	case []any: // content blocks: the text ones, and images and files given inline
		var b strings.Builder
		for _, blk := range c {
			o, _ := blk.(map[string]any)
			switch o["type"] {
			case "text":
				s, _ := o["text"].(string)
				b.WriteString(s)
			case "image", "audio", "file":
				if a, ok := attachmentOf(o); ok {
					m.Attachments = append(m.Attachments, a)
				} else { // a URL or a file id Weft cannot fetch: said, not dropped
					fmt.Fprintf(&b, "[%s block not read: it carries no base64 data]", o["type"])
				}
			}
		}
		m.Content = b.String()
	}
	if calls, ok := raw["tool_calls"].([]any); ok {
		for _, c := range calls {
			o, _ := c.(map[string]any)
			id, _ := o["id"].(string)
			name, _ := o["name"].(string)
			args, _ := json.Marshal(o["args"])
			m.ToolCalls = append(m.ToolCalls, engine.ToolCall{ID: id, Name: name, Args: string(args)})
		}
	}
	return m
}

// lcContent is a message's content as LangChain has it: its text, or,
// with attachments, content blocks (a text block, then base64 data blocks
// in the form langchain-core 0.3 and 1.x both read).
func lcContent(m engine.Message) any {
	if len(m.Attachments) == 0 {
		return m.Content
	}
	blocks := []any{map[string]any{"type": "text", "text": m.Content}}
	for _, a := range m.Attachments {
		typ := map[string]string{engine.AttachImage: "image", engine.AttachAudio: "audio"}[a.Kind]
		if typ == "" {
			typ = "file"
		}
		b := map[string]any{"type": typ, "source_type": "base64", "mime_type": a.MIMEType, "data": base64.StdEncoding.EncodeToString(a.Data)}
		if a.URI != "" {
			b["metadata"] = map[string]any{"uri": a.URI}
		}
		blocks = append(blocks, b)
	}
	return blocks
}

// attachmentOf reads a LangChain data block with its data inline (0.3's
// "source_type": "base64" with "data", or 1.x's "base64"); a block that
// points at a URL or an uploaded file carries no data and is not one.
func attachmentOf(o map[string]any) (engine.Attachment, bool) {
	str := func(k string) string { s, _ := o[k].(string); return s }
	data := str("base64")
	if str("source_type") == "base64" {
		data = str("data")
	}
	raw, err := base64.StdEncoding.DecodeString(data)
	if data == "" || err != nil {
		return engine.Attachment{}, false
	}
	kind := map[string]string{"image": engine.AttachImage, "audio": engine.AttachAudio}[str("type")]
	if kind == "" {
		kind = engine.AttachResource
	}
	a := engine.Attachment{Kind: kind, MIMEType: str("mime_type"), Data: raw}
	if md, ok := o["metadata"].(map[string]any); ok {
		a.URI, _ = md["uri"].(string)
	}
	return a, true
}

// wireValue turns a state value into JSON-ready data: messages become
// LangChain messages, anything else goes as its JSON encoding.
func wireValue(v any) any {
	switch x := v.(type) {
	case []engine.Message:
		out := make([]any, len(x))
		for i, m := range x {
			out[i] = lcMessage(m, false)
		}
		return out
	case engine.Message:
		return lcMessage(x, false)
	case engine.Overwrite:
		return wireValue(x.Value)
	}
	return v
}

// wireValues is wireValue over a state.
func wireValues(vals engine.Values) map[string]any {
	out := make(map[string]any, len(vals))
	for k, v := range vals {
		out[k] = wireValue(v)
	}
	return out
}

// wireWrites is a task's writes as LangGraph shows them: one object from
// channel to value (a channel written twice keeps the last value); nil
// when there are none.
func wireWrites(ws []engine.Write) map[string]any {
	if len(ws) == 0 {
		return nil
	}
	out := make(map[string]any, len(ws))
	for _, wr := range ws {
		if strings.HasPrefix(wr.Channel, "__") || strings.HasPrefix(wr.Channel, "branch:") {
			continue // edges and control channels are the engine's business
		}
		out[wr.Channel] = wireValue(wr.Value)
	}
	return out
}

// wireInterrupts is interrupts as LangGraph's [{"id", "value"}].
func wireInterrupts(its []engine.PendingInterrupt) []map[string]any {
	out := make([]map[string]any, 0, len(its))
	for _, it := range its {
		out = append(out, map[string]any{"id": it.ID, "value": it.Value})
	}
	return out
}

// wireRef is a checkpoint as LangGraph's {thread_id, checkpoint_ns,
// checkpoint_id, checkpoint_map}; nil for no checkpoint.
func wireRef(r *checkpoint.Ref) map[string]any {
	if r == nil {
		return nil
	}
	return map[string]any{"thread_id": r.ThreadID, "checkpoint_ns": r.NS, "checkpoint_id": r.CheckpointID, "checkpoint_map": nil}
}

// nestedRef is wireRef of a subgraph's checkpoint r with LangGraph's
// checkpoint_map: the checkpoint id of each namespace above it (parents, its
// metadata's), and its own under its namespace when self is set (a
// snapshot's address; a debug event carries the map the subgraph was
// started with, without itself). A root checkpoint's map is null.
func nestedRef(r *checkpoint.Ref, parents map[string]string, self bool) map[string]any {
	out := wireRef(r)
	if out == nil || r.NS == "" {
		return out
	}
	cm := map[string]any{}
	for ns, id := range parents {
		cm[ns] = id
	}
	if self {
		cm[r.NS] = r.CheckpointID
	}
	out["checkpoint_map"] = cm
	return out
}

// wireConfig is a checkpoint as a RunnableConfig ({"configurable": …}),
// as debug events carry it; a subgraph's names the checkpoints above it
// (parents) as its checkpoint_map.
func wireConfig(r *checkpoint.Ref, parents map[string]string) map[string]any {
	if r == nil {
		return nil
	}
	c := map[string]any{"thread_id": r.ThreadID, "checkpoint_ns": r.NS, "checkpoint_id": r.CheckpointID}
	if r.NS != "" {
		c["checkpoint_map"] = nestedRef(r, parents, false)["checkpoint_map"]
	}
	return map[string]any{"configurable": c}
}

// wireMetadata is a checkpoint's metadata as one flat object: source, step,
// parents and run id beside the user's keys.
func wireMetadata(md checkpoint.Metadata) map[string]any {
	out := maps.Clone(md.Extra)
	if out == nil {
		out = map[string]any{}
	}
	parents := md.Parents
	if parents == nil {
		parents = map[string]string{}
	}
	out["source"], out["step"], out["parents"] = string(md.Source), md.Step, parents
	if md.RunID != "" {
		out["run_id"] = md.RunID
	}
	return out
}

// taskPath turns an engine task path ("pull:review", "push:0:research")
// into LangGraph's (["__pregel_pull", "review"]).
func taskPath(p string) []any {
	parts := strings.Split(p, ":")
	out := make([]any, len(parts))
	for i, s := range parts {
		out[i] = s
	}
	switch parts[0] {
	case "pull":
		out[0] = "__pregel_pull"
	case "push":
		out[0] = "__pregel_push"
	}
	return out
}

// wireTask is a snapshot's task as LangGraph's PregelTask.
func wireTask(thread string, t engine.TaskState) map[string]any {
	var cp any
	if t.NS != "" {
		cp = map[string]any{"thread_id": thread, "checkpoint_ns": t.NS}
	}
	var st any
	if t.State != nil {
		st = wireState(t.State)
	}
	var errv any
	if t.Error != "" {
		errv = t.Error
	}
	var result any
	if t.Finished {
		result = wireWrites(t.Result)
	}
	return map[string]any{"id": t.ID, "name": t.Name, "path": taskPath(t.Path), "error": errv,
		"interrupts": wireInterrupts(t.Interrupts), "checkpoint": cp, "state": st, "result": result}
}

// wireState is a snapshot as LangGraph's StateSnapshot.
func wireState(s *engine.Snapshot) map[string]any {
	tasks := make([]map[string]any, 0, len(s.Tasks))
	for _, t := range s.Tasks {
		tasks = append(tasks, wireTask(s.Ref.ThreadID, t))
	}
	next := s.Next
	if next == nil {
		next = []string{}
	}
	ref := s.Ref
	return map[string]any{
		"values": wireValues(s.Values), "next": next, "tasks": tasks, "metadata": wireMetadata(s.Metadata),
		"created_at": s.CreatedAt.UTC().Format(timeFormat), "checkpoint": nestedRef(&ref, s.Metadata.Parents, true), "parent_checkpoint": wireRef(s.Parent),
		"interrupts": wireInterrupts(s.OpenInterrupts()),
	}
}

// jsonEqual compares two values as JSON.
func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		return false
	}
	var u, v any
	_ = json.Unmarshal(x, &u)
	_ = json.Unmarshal(y, &v)
	return reflect.DeepEqual(u, v)
}

// subset reports whether every key of want is in have with an equal value.
func subset(want, have map[string]any) bool {
	for k, v := range want {
		hv, ok := have[k]
		if !ok || !jsonEqual(v, hv) {
			return false
		}
	}
	return true
}
