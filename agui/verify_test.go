package agui

import (
	"encoding/json"
	"fmt"
	"strings"
)

// verify checks a stream against the ordering rules @ag-ui/client enforces
// (verifyEvents), the required fields of each event, and that no field is
// null. The real client runs in the e2e test; this catches the same
// mistakes in every Go test.
func verify(lines []string) error {
	var (
		started, finished, errored bool
		steps                      = map[string]bool{}
		texts                      = map[string]bool{}
		tools                      = map[string]bool{}
	)
	required := map[string][]string{
		"RUN_STARTED": {"threadId", "runId"}, "RUN_FINISHED": {"threadId", "runId"}, "RUN_ERROR": {"message"},
		"STEP_STARTED": {"stepName"}, "STEP_FINISHED": {"stepName"},
		"TEXT_MESSAGE_START": {"messageId"}, "TEXT_MESSAGE_CONTENT": {"messageId", "delta"}, "TEXT_MESSAGE_END": {"messageId"},
		"TOOL_CALL_START": {"toolCallId", "toolCallName"}, "TOOL_CALL_ARGS": {"toolCallId", "delta"}, "TOOL_CALL_END": {"toolCallId"},
		"TOOL_CALL_RESULT": {"messageId", "toolCallId", "content"},
		"STATE_SNAPSHOT":   {"snapshot"}, "STATE_DELTA": {"delta"}, "MESSAGES_SNAPSHOT": {"messages"}, "CUSTOM": {"name", "value"},
	}
	for i, l := range lines {
		if strings.Contains(l, "null") {
			var v any
			_ = json.Unmarshal([]byte(l), &v)
			if hasNull(v) {
				return fmt.Errorf("event %d has a null: %s", i, l)
			}
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			return fmt.Errorf("event %d: %v", i, err)
		}
		typ, _ := ev["type"].(string)
		req, ok := required[typ]
		if !ok {
			return fmt.Errorf("event %d: unexpected type %q", i, typ)
		}
		for _, f := range req {
			if _, ok := ev[f]; !ok {
				return fmt.Errorf("event %d (%s) lacks %s", i, typ, f)
			}
		}
		if ts, ok := ev["timestamp"]; ok {
			if f, ok := ts.(float64); !ok || f != float64(int64(f)) {
				return fmt.Errorf("event %d: timestamp %v is not an integer", i, ts)
			}
		}
		str := func(k string) string { s, _ := ev[k].(string); return s }
		if i == 0 && typ != "RUN_STARTED" && typ != "RUN_ERROR" {
			return fmt.Errorf("first event is %s", typ)
		}
		if errored && typ != "RUN_STARTED" {
			return fmt.Errorf("event %d: %s after RUN_ERROR", i, typ)
		}
		if finished && typ != "RUN_STARTED" && typ != "RUN_ERROR" {
			return fmt.Errorf("event %d: %s after RUN_FINISHED", i, typ)
		}
		switch typ {
		case "RUN_STARTED":
			if started && !finished && !errored {
				return fmt.Errorf("event %d: second RUN_STARTED", i)
			}
			started, finished, errored = true, false, false
		case "RUN_FINISHED":
			if len(steps)+len(texts)+len(tools) > 0 {
				return fmt.Errorf("event %d: RUN_FINISHED with open steps %v, messages %v, tool calls %v", i, steps, texts, tools)
			}
			if out, ok := ev["outcome"].(map[string]any); ok {
				switch out["type"] {
				case "success":
					if len(out) != 1 {
						return fmt.Errorf("event %d: success outcome has extra keys: %s", i, l)
					}
				case "interrupt":
					ints, _ := out["interrupts"].([]any)
					if len(ints) == 0 {
						return fmt.Errorf("event %d: interrupt outcome without interrupts", i)
					}
					for _, it := range ints {
						m, _ := it.(map[string]any)
						if m["id"] == nil || m["reason"] == nil {
							return fmt.Errorf("event %d: interrupt lacks id or reason: %v", i, it)
						}
					}
				default:
					return fmt.Errorf("event %d: outcome %v", i, out["type"])
				}
			}
			finished = true
		case "RUN_ERROR":
			errored = true
		case "STEP_STARTED":
			if steps[str("stepName")] {
				return fmt.Errorf("event %d: step %q already active", i, str("stepName"))
			}
			steps[str("stepName")] = true
		case "STEP_FINISHED":
			if !steps[str("stepName")] {
				return fmt.Errorf("event %d: step %q is not active", i, str("stepName"))
			}
			delete(steps, str("stepName"))
		case "TEXT_MESSAGE_START":
			if texts[str("messageId")] {
				return fmt.Errorf("event %d: message %q already open", i, str("messageId"))
			}
			if r, ok := ev["role"]; ok && !strings.Contains(" developer system assistant user ", " "+fmt.Sprint(r)+" ") {
				return fmt.Errorf("event %d: role %v", i, r)
			}
			texts[str("messageId")] = true
		case "TEXT_MESSAGE_CONTENT":
			if !texts[str("messageId")] {
				return fmt.Errorf("event %d: content for message %q that is not open", i, str("messageId"))
			}
		case "TEXT_MESSAGE_END":
			if !texts[str("messageId")] {
				return fmt.Errorf("event %d: end of message %q that is not open", i, str("messageId"))
			}
			delete(texts, str("messageId"))
		case "TOOL_CALL_START":
			if tools[str("toolCallId")] {
				return fmt.Errorf("event %d: tool call %q already open", i, str("toolCallId"))
			}
			tools[str("toolCallId")] = true
		case "TOOL_CALL_ARGS":
			if !tools[str("toolCallId")] {
				return fmt.Errorf("event %d: args for tool call %q that is not open", i, str("toolCallId"))
			}
		case "TOOL_CALL_END":
			if !tools[str("toolCallId")] {
				return fmt.Errorf("event %d: end of tool call %q that is not open", i, str("toolCallId"))
			}
			delete(tools, str("toolCallId"))
		case "TOOL_CALL_RESULT":
			if _, ok := ev["content"].(string); !ok {
				return fmt.Errorf("event %d: tool result content must be a string", i)
			}
		case "MESSAGES_SNAPSHOT":
			msgs, ok := ev["messages"].([]any)
			if !ok {
				return fmt.Errorf("event %d: messages is not a list", i)
			}
			for _, m := range msgs {
				mm, _ := m.(map[string]any)
				switch mm["role"] {
				case "user", "system", "developer", "tool":
					if _, ok := mm["content"].(string); !ok {
						return fmt.Errorf("event %d: %v message without content", i, mm["role"])
					}
				case "assistant":
				default:
					return fmt.Errorf("event %d: message role %v", i, mm["role"])
				}
			}
		}
	}
	return nil
}

func hasNull(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		for _, e := range x {
			if hasNull(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasNull(e) {
				return true
			}
		}
	}
	return false
}

// replayState applies the stream's STATE_SNAPSHOT and STATE_DELTA events in
// order, as the client does, and returns the final state's JSON.
func replayState(lines []string) ([]byte, error) {
	var state any
	for i, l := range lines {
		var ev struct {
			Type     string          `json:"type"`
			Snapshot json.RawMessage `json:"snapshot"`
			Delta    json.RawMessage `json:"delta"`
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			return nil, err
		}
		switch ev.Type {
		case "STATE_SNAPSHOT":
			if err := json.Unmarshal(ev.Snapshot, &state); err != nil {
				return nil, err
			}
		case "STATE_DELTA":
			if state == nil {
				return nil, fmt.Errorf("event %d: STATE_DELTA before any snapshot", i)
			}
			var ops []PatchOp
			if err := json.Unmarshal(ev.Delta, &ops); err != nil {
				return nil, err
			}
			var err error
			if state, err = applyPatch(state, ops); err != nil {
				return nil, fmt.Errorf("event %d: %v", i, err)
			}
		}
	}
	return json.Marshal(state)
}

// applyPatch applies add, remove and replace operations (RFC 6902).
func applyPatch(doc any, ops []PatchOp) (any, error) {
	for _, op := range ops {
		// Round-trip the value so it has the decoded JSON shape.
		var val any
		if op.Op != "remove" {
			b, _ := json.Marshal(op.Value)
			_ = json.Unmarshal(b, &val)
		}
		if op.Path == "" {
			if op.Op != "replace" {
				return nil, fmt.Errorf("%s at the root", op.Op)
			}
			doc = val
			continue
		}
		toks := strings.Split(op.Path[1:], "/")
		for i := range toks {
			toks[i] = strings.NewReplacer("~1", "/", "~0", "~").Replace(toks[i])
		}
		var err error
		doc, err = patchAt(doc, toks, op.Op, val)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %v", op.Op, op.Path, err)
		}
	}
	return doc, nil
}

func patchAt(doc any, toks []string, op string, val any) (any, error) {
	tok := toks[0]
	last := len(toks) == 1
	switch d := doc.(type) {
	case map[string]any:
		if !last {
			child, ok := d[tok]
			if !ok {
				return nil, fmt.Errorf("no key %q", tok)
			}
			v, err := patchAt(child, toks[1:], op, val)
			d[tok] = v
			return d, err
		}
		_, exists := d[tok]
		switch op {
		case "add":
			d[tok] = val
		case "replace":
			if !exists {
				return nil, fmt.Errorf("replace of missing key %q", tok)
			}
			d[tok] = val
		case "remove":
			if !exists {
				return nil, fmt.Errorf("remove of missing key %q", tok)
			}
			delete(d, tok)
		}
		return d, nil
	case []any:
		var i int
		if tok == "-" {
			i = len(d)
		} else if _, err := fmt.Sscan(tok, &i); err != nil || i < 0 || i > len(d) {
			return nil, fmt.Errorf("bad index %q for a list of %d", tok, len(d))
		}
		if !last {
			if i >= len(d) {
				return nil, fmt.Errorf("index %d out of range", i)
			}
			v, err := patchAt(d[i], toks[1:], op, val)
			d[i] = v
			return d, err
		}
		switch op {
		case "add":
			d = append(d[:i], append([]any{val}, d[i:]...)...)
		case "replace":
			if i >= len(d) {
				return nil, fmt.Errorf("index %d out of range", i)
			}
			d[i] = val
		case "remove":
			if i >= len(d) {
				return nil, fmt.Errorf("index %d out of range", i)
			}
			d = append(d[:i], d[i+1:]...)
		}
		return d, nil
	}
	return nil, fmt.Errorf("cannot descend into %T", doc)
}
