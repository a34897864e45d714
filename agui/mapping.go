package agui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/internal/jsondiff"
)

// StreamModes are the engine stream modes the mapping consumes.
const StreamModes = engine.ModeValues | engine.ModeUpdates | engine.ModeCustom | engine.ModeMessages | engine.ModeTasks

// CustomEvent is a value a node passes to engine.Emit to choose the name of
// the CUSTOM event it becomes. Other values become CUSTOM events named
// "custom", except maps with a string "name" and a "value", which are read
// as a CustomEvent. A nil Value is sent as {}.
type CustomEvent struct {
	Name  string `json:"name"`
	Value any    `json:"value"`
}

// Mapper turns the events of one engine run into AG-UI events. It keeps
// what the ordering rules need: which steps, messages and tool calls are
// open, which messages the client already has, and the last state sent.
// Create one per run with NewMapper; it is not safe for concurrent use.
type Mapper struct {
	emit    func(Event)
	newID   func() string
	msgChan string // the []engine.Message channel, "" when the graph has none

	steps     map[string]int      // running root tasks per node name
	openText  map[string]bool     // open text message ids
	openTools map[string]bool     // open tool call ids
	taskText  map[string]string   // task id → its open text message id
	taskTools map[string][]string // task id → its open tool call ids, in order
	taskAnon  map[string]string   // task id → id made up for its id-less chunks
	streamed  map[string]bool     // message and tool call ids already streamed
	known     map[string]bool     // message ids the client has or was sent
	order     []string            // open steps, in start order

	// state is the last state sent, by key: each value's JSON, or the
	// omission marker of a value too large to send; sent is false before
	// the first.
	state map[string][]byte
	sent  bool
	// strs remembers the JSON of string values by key: an unchanged string
	// (the same string, compared in constant time) is not encoded again.
	strs map[string]encodedString
	// maxEvent is the largest event in bytes of JSON (0: DefaultMaxEvent).
	maxEvent int
}

type encodedString struct {
	s    string
	json []byte
}

// NewMapper returns a Mapper for a run of g that passes AG-UI events to
// emit. newID makes ids for streamed chunks that have none. known lists the
// ids of messages the thread already holds, which are not announced again.
func NewMapper(g *engine.Graph, emit func(Event), newID func() string, known []string) *Mapper {
	m := &Mapper{emit: emit, newID: newID, msgChan: MessagesChannel(g),
		steps: map[string]int{}, openText: map[string]bool{}, openTools: map[string]bool{},
		taskText: map[string]string{}, taskTools: map[string][]string{}, taskAnon: map[string]string{},
		streamed: map[string]bool{}, known: map[string]bool{}}
	for _, id := range known {
		m.known[id] = true
	}
	return m
}

// MessagesChannel returns the name of g's first channel holding
// []engine.Message, or "" when it has none.
func MessagesChannel(g *engine.Graph) string {
	for _, c := range g.Channels() {
		if c.Type == "[]engine.Message" {
			return c.Name
		}
	}
	return ""
}

// Handle maps one engine event.
func (m *Mapper) Handle(ev engine.Event) {
	switch ev.Mode {
	case engine.ModeTasks:
		m.task(ev)
	case engine.ModeMessages:
		if ev.Message != nil {
			m.chunk(ev.Message)
		}
	case engine.ModeUpdates:
		if ev.Update != nil {
			m.update(ev.Update)
		}
	case engine.ModeCustom:
		m.custom(ev.Custom)
	case engine.ModeValues:
		if ev.NS == "" && ev.Interrupts == nil { // a stop, not a new state
			m.State(ev.Values, false)
		}
	}
}

func (m *Mapper) task(ev engine.Event) {
	t := ev.Task
	if t == nil {
		return
	}
	root := ev.NS == "" && t.Name != engine.START
	if !t.Done {
		if root {
			if m.steps[t.Name] == 0 {
				m.order = append(m.order, t.Name)
				m.emit(&StepStarted{StepName: t.Name})
			}
			m.steps[t.Name]++
		}
		return
	}
	m.closeTask(t.ID)
	if root && m.steps[t.Name] > 0 {
		m.steps[t.Name]--
		if m.steps[t.Name] == 0 {
			m.finishStep(t.Name)
		}
	}
}

func (m *Mapper) finishStep(name string) {
	delete(m.steps, name)
	m.order = slices.DeleteFunc(m.order, func(s string) bool { return s == name })
	m.emit(&StepFinished{StepName: name})
}

// closeTask ends the task's open text message and tool calls.
func (m *Mapper) closeTask(taskID string) {
	m.closeText(taskID)
	for _, id := range m.taskTools[taskID] {
		if m.openTools[id] {
			delete(m.openTools, id)
			m.emit(&ToolCallEnd{ToolCallID: id})
		}
	}
	delete(m.taskTools, taskID)
	delete(m.taskAnon, taskID)
}

func (m *Mapper) closeText(taskID string) {
	if id, ok := m.taskText[taskID]; ok {
		delete(m.taskText, taskID)
		if m.openText[id] {
			delete(m.openText, id)
			m.emit(&TextMessageEnd{MessageID: id})
		}
	}
}

// Close ends everything still open: text messages, tool calls and steps,
// so RUN_FINISHED may follow.
func (m *Mapper) Close() {
	for _, task := range slices.Sorted(maps.Keys(m.taskText)) {
		m.closeText(task)
	}
	for _, task := range slices.Sorted(maps.Keys(m.taskTools)) {
		m.closeTask(task)
	}
	for _, id := range slices.Sorted(maps.Keys(m.openText)) {
		delete(m.openText, id)
		m.emit(&TextMessageEnd{MessageID: id})
	}
	for _, id := range slices.Sorted(maps.Keys(m.openTools)) {
		delete(m.openTools, id)
		m.emit(&ToolCallEnd{ToolCallID: id})
	}
	for len(m.order) > 0 {
		m.finishStep(m.order[len(m.order)-1])
	}
}

// chunk streams a piece of a message: text as TEXT_MESSAGE_*, tool calls as
// TOOL_CALL_*. Pieces are tied to their task: a new message id in the same
// task ends the previous message, and the task's end ends them all.
func (m *Mapper) chunk(c *engine.MessageChunk) {
	msg := c.Message
	id := msg.ID
	if id == "" {
		if m.taskAnon[c.TaskID] == "" {
			m.taskAnon[c.TaskID] = m.newID()
		}
		id = m.taskAnon[c.TaskID]
	}
	if msg.Content != "" {
		if cur, ok := m.taskText[c.TaskID]; ok && cur != id {
			m.closeText(c.TaskID)
		}
		if !m.openText[id] {
			m.openText[id] = true
			m.taskText[c.TaskID] = id
			m.streamed[id] = true
			m.emit(&TextMessageStart{MessageID: id, Role: textRole(msg.Role), Name: msg.Name})
		}
		m.emit(&TextMessageContent{MessageID: id, Delta: msg.Content})
	}
	for _, tc := range msg.ToolCalls {
		m.closeText(c.TaskID)
		open := m.taskTools[c.TaskID]
		callID := tc.ID
		if callID == "" && len(open) > 0 {
			callID = open[len(open)-1] // a continuation chunk: more arguments
		}
		if callID == "" {
			callID = m.newID()
		}
		if !m.openTools[callID] {
			if m.streamed[callID] {
				continue // already streamed and closed: ignore late pieces
			}
			// One tool call streams at a time per task, as models stream them.
			for _, prev := range open {
				if m.openTools[prev] {
					delete(m.openTools, prev)
					m.emit(&ToolCallEnd{ToolCallID: prev})
				}
			}
			m.openTools[callID] = true
			m.streamed[callID] = true
			m.taskTools[c.TaskID] = append(m.taskTools[c.TaskID], callID)
			m.emit(&ToolCallStart{ToolCallID: callID, ToolCallName: tc.Name, ParentMessageID: id})
		}
		if tc.Args != "" {
			m.emit(&ToolCallArgs{ToolCallID: callID, Delta: tc.Args})
		}
	}
}

// textRole maps a message role to the roles TEXT_MESSAGE_START allows.
func textRole(role string) string {
	switch role {
	case engine.RoleUser, engine.RoleSystem, "developer":
		return role
	}
	return engine.RoleAssistant
}

// update announces the messages a task wrote that the client has not seen:
// an assistant's text (unless it was streamed) and tool calls, and tool
// results.
func (m *Mapper) update(u *engine.NodeUpdate) {
	if u.Node == "__interrupt__" {
		return
	}
	// The task has returned: whatever it streamed is complete. Text it
	// streamed without a message id is taken to be its first assistant
	// message with text, so that message is not announced twice.
	anon := m.taskAnon[u.TaskID]
	m.closeTask(u.TaskID)
	if m.msgChan == "" {
		return
	}
	for _, w := range u.Writes {
		if w.Channel != m.msgChan {
			continue
		}
		v := w.Value
		if ow, ok := v.(engine.Overwrite); ok {
			v = ow.Value
		}
		msgs, _ := v.([]engine.Message)
		for _, msg := range msgs {
			if anon != "" && m.streamed[anon] && msg.Role == engine.RoleAssistant && msg.Content != "" && !m.streamed[msg.ID] {
				m.streamed[msg.ID] = true
				anon = ""
			}
			m.announce(msg)
		}
	}
}

func (m *Mapper) announce(msg engine.Message) {
	if msg.Role == engine.RoleRemove || msg.ID != "" && m.known[msg.ID] {
		return
	}
	id := msg.ID
	if id == "" {
		id = m.newID()
	}
	m.known[id] = true
	switch msg.Role {
	case engine.RoleAssistant:
		if msg.Content != "" && !m.streamed[id] {
			m.emit(&TextMessageStart{MessageID: id, Role: engine.RoleAssistant, Name: msg.Name})
			m.emit(&TextMessageContent{MessageID: id, Delta: msg.Content})
			m.emit(&TextMessageEnd{MessageID: id})
		}
		for _, tc := range msg.ToolCalls {
			if tc.ID == "" || m.streamed[tc.ID] {
				continue
			}
			m.streamed[tc.ID] = true
			m.emit(&ToolCallStart{ToolCallID: tc.ID, ToolCallName: tc.Name, ParentMessageID: id})
			if tc.Args != "" {
				m.emit(&ToolCallArgs{ToolCallID: tc.ID, Delta: tc.Args})
			}
			m.emit(&ToolCallEnd{ToolCallID: tc.ID})
		}
	case engine.RoleTool:
		if msg.ToolCallID != "" {
			m.emit(&ToolCallResult{MessageID: id, ToolCallID: msg.ToolCallID, Content: msg.Content, Role: "tool"})
		}
	}
}

func (m *Mapper) custom(v any) {
	ce := CustomEvent{Name: "custom", Value: v}
	switch x := v.(type) {
	case CustomEvent:
		ce = x
	case *CustomEvent:
		if x != nil {
			ce = *x
		}
	case map[string]any:
		if name, ok := x["name"].(string); ok && name != "" {
			if val, ok := x["value"]; ok && len(x) == 2 {
				ce = CustomEvent{Name: name, Value: val}
			}
		}
	}
	if ce.Name == "" {
		ce.Name = "custom"
	}
	if ce.Value == nil {
		ce.Value = map[string]any{}
	}
	m.emit(&Custom{Name: ce.Name, Value: ce.Value})
}

// StateJSON returns the client's view of vals: a JSON object of every
// channel with a value except the messages channel. Values that cannot be
// marshalled are left out; a value whose JSON exceeds the largest event is
// an omission marker (OmittedKey).
func (m *Mapper) StateJSON(vals engine.Values) []byte {
	parts := m.stateParts(vals)
	obj := make(map[string]json.RawMessage, len(parts))
	for k, v := range parts {
		obj[k] = v
	}
	b, _ := json.Marshal(obj) // keys sorted, raw values already valid
	return b
}

func (m *Mapper) limit() int {
	if m.maxEvent > 0 {
		return m.maxEvent
	}
	return DefaultMaxEvent
}

// stateOverhead is room left in an event for its type, keys and framing.
const stateOverhead = 1 << 10

// stateParts returns the JSON of each value of the client's state.
func (m *Mapper) stateParts(vals engine.Values) map[string][]byte {
	out := make(map[string][]byte, len(vals))
	for k, v := range vals {
		if k == m.msgChan {
			continue
		}
		var b []byte
		if s, ok := v.(string); ok {
			if c, ok := m.strs[k]; ok && c.s == s {
				b = c.json
			} else {
				b, _ = json.Marshal(s)
				if m.strs == nil {
					m.strs = map[string]encodedString{}
				}
				m.strs[k] = encodedString{s, b}
			}
		} else {
			var err error
			if b, err = json.Marshal(v); err != nil {
				continue
			}
		}
		if string(b) == "null" {
			// An empty list or map channel: its natural empty value. Other
			// nulls are left out, as AG-UI clients take absent for unset.
			switch reflect.ValueOf(v).Kind() {
			case reflect.Slice:
				b = []byte("[]")
			case reflect.Map:
				b = []byte("{}")
			default:
				continue
			}
		}
		if len(b) > m.limit()-stateOverhead {
			b = omitted(len(b))
		}
		out[k] = b
	}
	return out
}

// State sends vals when they differ from the last state sent in this run: a
// STATE_SNAPSHOT the first time, and afterwards a STATE_DELTA when the patch
// is smaller than the snapshot. force sends a snapshot even when nothing
// changed. Only values whose JSON changed are compared, and a snapshot or
// patch larger than one event is sent in parts (a snapshot of some keys,
// then patches adding the others), so no event exceeds the limit.
func (m *Mapper) State(vals engine.Values, force bool) {
	cur := m.stateParts(vals)
	if !force && m.sent && maps.EqualFunc(cur, m.state, bytes.Equal) {
		return
	}
	if !force && m.sent {
		ops, size := m.keyDiff(cur)
		if size < snapshotSize(cur) {
			m.state = cur
			m.sendOps(ops)
			return
		}
	}
	m.state, m.sent = cur, true
	m.sendSnapshot(cur)
}

func snapshotSize(parts map[string][]byte) int {
	n := 2
	for k, v := range parts {
		n += len(k) + len(v) + 4
	}
	return n
}

// keyDiff returns the patch from the last state sent to cur, and roughly
// its size in bytes of JSON. Only keys whose JSON differs are decoded.
func (m *Mapper) keyDiff(cur map[string][]byte) ([]PatchOp, int) {
	var ops []PatchOp
	for _, k := range slices.Sorted(maps.Keys(m.state)) {
		if _, ok := cur[k]; !ok {
			ops = append(ops, PatchOp{Op: "remove", Path: "/" + jsondiff.EscapePointer(k)})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(cur)) {
		v, path := cur[k], "/"+jsondiff.EscapePointer(k)
		old, had := m.state[k]
		switch {
		case !had:
			ops = append(ops, PatchOp{Op: "add", Path: path, Value: json.RawMessage(v)})
		case bytes.Equal(old, v):
		default:
			a, errA := jsondiff.Decode(old)
			b, errB := jsondiff.Decode(v)
			if errA != nil || errB != nil {
				ops = append(ops, PatchOp{Op: "replace", Path: path, Value: json.RawMessage(v)})
				continue
			}
			ops = diffValues(ops, jsondiff.Path(nil).Key(k), a, b)
		}
	}
	size := 0
	for _, op := range ops {
		size += opSize(op)
	}
	return ops, size
}

func opSize(op PatchOp) int {
	b, _ := op.MarshalJSON()
	return len(b) + 1
}

// sendSnapshot sends parts as one STATE_SNAPSHOT, or when that would be
// too large, as a snapshot of the keys that fit followed by patches adding
// the rest.
func (m *Mapper) sendSnapshot(parts map[string][]byte) {
	room := m.limit() - stateOverhead
	var snap bytes.Buffer
	snap.WriteByte('{')
	var rest []PatchOp
	for _, k := range slices.Sorted(maps.Keys(parts)) {
		kj, _ := json.Marshal(k)
		v := parts[k]
		if rest != nil || snap.Len()+len(kj)+len(v)+2 > room {
			rest = append(rest, PatchOp{Op: "add", Path: "/" + jsondiff.EscapePointer(k), Value: json.RawMessage(v)})
			continue
		}
		if snap.Len() > 1 {
			snap.WriteByte(',')
		}
		snap.Write(kj)
		snap.WriteByte(':')
		snap.Write(v)
	}
	snap.WriteByte('}')
	m.emit(&StateSnapshot{Snapshot: snap.Bytes()})
	m.sendOps(rest)
}

// sendOps sends ops as STATE_DELTA events, as many ops to an event as fit.
func (m *Mapper) sendOps(ops []PatchOp) {
	room := m.limit() - stateOverhead
	for len(ops) > 0 {
		n, size := 0, 0
		for n < len(ops) {
			s := opSize(ops[n])
			if n > 0 && size+s > room {
				break
			}
			size += s
			n++
		}
		m.emit(&StateDelta{Delta: ops[:n:n]})
		ops = ops[n:]
	}
}

// Messages sends the MESSAGES_SNAPSHOT of msgs. When it would exceed the
// largest event, the longest contents are replaced by a note saying how
// large they are, until it fits: the client keeps every message, and the
// thread keeps the full text.
func (m *Mapper) Messages(msgs []engine.Message) {
	out := ToAGUIMessages(msgs)
	size := 0
	for _, msg := range out {
		b, _ := json.Marshal(msg)
		size += len(b) + 1
	}
	if size > m.limit()-stateOverhead {
		byLen := make([]int, len(out))
		for i := range byLen {
			byLen[i] = i
		}
		slices.SortStableFunc(byLen, func(a, b int) int { return contentLen(out[b]) - contentLen(out[a]) })
		for _, i := range byLen {
			if size <= m.limit()-stateOverhead {
				break
			}
			n := contentLen(out[i])
			note := fmt.Sprintf("[%d bytes not shown: more than an AG-UI event may carry; the thread keeps them]", n)
			size -= n - len(note)
			out[i].Content = note
		}
	}
	m.emit(&MessagesSnapshot{Messages: out})
}

func contentLen(msg Message) int {
	s, _ := msg.Content.(string)
	return len(s)
}

// ToAGUIMessages converts engine messages to AG-UI's shape. Roles AG-UI
// does not know become "assistant"; the result is never nil.
func ToAGUIMessages(msgs []engine.Message) []Message {
	out := make([]Message, 0, len(msgs))
	for _, em := range msgs {
		if em.Role == engine.RoleRemove {
			continue
		}
		msg := Message{ID: em.ID, Role: em.Role, Name: em.Name}
		switch em.Role {
		case engine.RoleUser, engine.RoleSystem, "developer":
			msg.Content = em.Content
		case engine.RoleTool:
			msg.Content = em.Content
			msg.ToolCallID = em.ToolCallID
			msg.Name = "" // AG-UI's tool messages have no name: 1.0 clients strip it with a warning
		default:
			msg.Role = engine.RoleAssistant
			if em.Content != "" {
				msg.Content = em.Content
			}
			for _, tc := range em.ToolCalls {
				msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: tc.ID, Type: "function",
					Function: FunctionCall{Name: tc.Name, Arguments: tc.Args}})
			}
		}
		out = append(out, msg)
	}
	return out
}

// FromAGUIMessage converts a client's message to an engine message. ok is
// false for roles a graph has no use for (activity, reasoning); content
// parts other than text are dropped.
func FromAGUIMessage(msg Message) (engine.Message, bool, error) {
	switch msg.Role {
	case engine.RoleUser, engine.RoleAssistant, engine.RoleSystem, engine.RoleTool, "developer":
	case "activity", "reasoning":
		return engine.Message{}, false, nil
	default:
		return engine.Message{}, false, fmt.Errorf("message %q has unknown role %q", msg.ID, msg.Role)
	}
	em := engine.Message{ID: msg.ID, Role: msg.Role, Name: msg.Name, ToolCallID: msg.ToolCallID}
	switch c := msg.Content.(type) {
	case nil:
	case string:
		em.Content = c
	case []any:
		for _, p := range c {
			part, _ := p.(map[string]any)
			if part["type"] == "text" {
				s, _ := part["text"].(string)
				em.Content += s
			}
		}
	default:
		return engine.Message{}, false, fmt.Errorf("message %q: content must be a string or a list of parts, got %T", msg.ID, c)
	}
	for _, tc := range msg.ToolCalls {
		em.ToolCalls = append(em.ToolCalls, engine.ToolCall{ID: tc.ID, Name: tc.Function.Name, Args: tc.Function.Arguments})
	}
	return em, true, nil
}

// interruptsToAGUI describes pending interrupts the AG-UI way, one per id.
func interruptsToAGUI(pending []engine.PendingInterrupt) []Interrupt {
	var out []Interrupt
	seen := map[string]bool{}
	for _, p := range pending {
		if seen[p.ID] {
			continue
		}
		seen[p.ID] = true
		it := Interrupt{ID: p.ID, Reason: "input_required"}
		raw := map[string]any{"node": p.Node}
		if v := jsonSafe(p.Value); v != nil {
			raw["value"] = v
		}
		if p.NS != "" {
			raw["ns"] = p.NS
		}
		it.Metadata = map[string]any{"weft": raw}
		switch v := jsonSafe(p.Value).(type) {
		case string:
			it.Message = v
		case map[string]any:
			if s, ok := v["reason"].(string); ok && s != "" {
				it.Reason = s
			}
			for _, k := range []string{"message", "question"} {
				if s, ok := v[k].(string); ok && s != "" {
					it.Message = s
					break
				}
			}
			for _, k := range []string{"toolCallId", "tool_call_id"} {
				if s, ok := v[k].(string); ok && s != "" {
					it.ToolCallID = s
					break
				}
			}
			for _, k := range []string{"responseSchema", "response_schema"} {
				if s, ok := v[k].(map[string]any); ok {
					it.ResponseSchema = s
					break
				}
			}
			for _, k := range []string{"expiresAt", "expires_at"} {
				if s, ok := v[k].(string); ok && s != "" {
					it.ExpiresAt = s
					break
				}
			}
		}
		out = append(out, it)
	}
	return out
}

// jsonSafe returns v as plain JSON data (maps, slices, strings, numbers),
// or its %v text when it cannot be marshalled. nil stays nil.
func jsonSafe(v any) any {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return fmt.Sprint(v)
	}
	return out
}

// legacyInterruptValue is the value of the CUSTOM on_interrupt event: the
// payload itself when it is a string, else its JSON text.
func legacyInterruptValue(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
