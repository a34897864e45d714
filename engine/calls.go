package engine

// This file keeps the model and tool calls a task makes with its records,
// so history can show them at any checkpoint, and streams them as they
// happen (ModeCalls).

import (
	"context"
	"encoding/json"
	"time"
	"unicode/utf8"

	"github.com/weftstudio/weft/checkpoint"
)

// CallKind says what a CallRecord describes.
type CallKind string

// Kinds of calls.
const (
	CallModel CallKind = "model" // a request to a language model
	CallTool  CallKind = "tool"  // a tool run for a model's tool call
)

// CallRecord is one model or tool call a node made, as RecordCall keeps
// it. Long texts are cut to keep a task's records small (see CallText);
// zero fields are unknown or do not apply to the Kind.
type CallRecord struct {
	Kind CallKind `json:"kind"`
	// Name is the model as the provider named it, or the tool's name.
	Name string `json:"name"`
	// Provider names the API a model call went to ("openai", "anthropic",
	// …), or where a tool call ran when the tool says (tool.Origin: the MCP
	// server and its name for the tool); "" for a tool that is a Go
	// function.
	Provider string    `json:"provider,omitempty"`
	Start    time.Time `json:"start"`
	// Latency is the whole call, retries included; FirstToken the time from
	// the start to the first streamed token of the reply (0 when nothing was
	// streamed).
	Latency    time.Duration `json:"latency"`
	FirstToken time.Duration `json:"first_token,omitempty"`
	// Error says why the call failed; "" when it succeeded. A tool call
	// whose error went back to the model as its result has both.
	Error string `json:"error,omitempty"`

	// Request is what a model was sent. Omitted counts the messages left
	// out of it (the oldest after the first) to keep the record bounded.
	Request []CallMessage `json:"request,omitempty"`
	Omitted int           `json:"omitted,omitempty"`
	// Tools are the tools the model was offered.
	Tools []CallToolSpec `json:"tools,omitempty"`
	// Reply is the model's reply; nil when the call failed before one was
	// complete.
	Reply        *CallMessage `json:"reply,omitempty"`
	InputTokens  int          `json:"input_tokens,omitempty"`
	OutputTokens int          `json:"output_tokens,omitempty"`
	FinishReason string       `json:"finish_reason,omitempty"`
	// Attempts counts the requests sent (more than 1 after retries).
	Attempts int `json:"attempts,omitempty"`

	// ToolCallID is the model's id of the tool call; Args its arguments
	// (JSON) and Result what went back to the model.
	ToolCallID string   `json:"tool_call_id,omitempty"`
	Args       CallText `json:"args,omitzero"`
	Result     CallText `json:"result,omitzero"`
}

// CallText is a text a CallRecord keeps, cut to MaxCallText bytes (at a
// character boundary) when longer. Size is then the full length in bytes;
// 0 means Text is whole.
type CallText struct {
	Text string `json:"text"`
	Size int    `json:"size,omitempty"`
}

// CallMessage is a message a CallRecord keeps: Content and tool call
// arguments cut to MaxCallText bytes; Size is the full length of Content in
// bytes when it was cut, 0 when it is whole.
type CallMessage struct {
	Message
	Size int `json:"size,omitempty"`
}

// CallToolSpec is a tool offered to a model: its name, description and JSON
// Schema of arguments.
type CallToolSpec struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Parameters  CallText `json:"parameters,omitzero"`
}

// CallEvent is a recorded call as the calls stream reports it (ModeCalls),
// with the task that made it.
type CallEvent struct {
	Record CallRecord
	Node   string
	TaskID string
}

// Bounds of what a task's records keep.
const (
	// MaxCallText is the most bytes a record keeps of one text.
	MaxCallText = 4 << 10
	// MaxCallRequest is the most bytes of message content a model call's
	// record keeps of its request: the first message and the newest that
	// fit.
	MaxCallRequest = 32 << 10
	// MaxCalls is the most records a task keeps; later calls are counted
	// in TaskState.CallsDropped (and still streamed).
	MaxCalls = 64
)

// RecordCall records a model or tool call the running node made: it is
// streamed at once (ModeCalls) and stored with the task's writes, so
// GetState and History show it in TaskState.Calls. Texts are cut to the
// bounds above. Outside a node it does nothing; like every use of a node's
// context, it must happen before the node returns. Model adapters and tool
// nodes call it for you.
func RecordCall(ctx context.Context, rec CallRecord) {
	tc := taskFrom(ctx)
	if tc == nil {
		return
	}
	rec = boundCall(rec)
	tc.mu.Lock()
	tc.t.calls.add(rec)
	tc.mu.Unlock()
	if tc.rt.em.on(ModeCalls) {
		tc.rt.em.emit(Event{Mode: ModeCalls, Step: tc.step, Call: &CallEvent{Record: rec, Node: tc.t.name, TaskID: tc.t.id}})
	}
}

// callLog is the calls a task recorded.
type callLog struct {
	recs    []CallRecord
	dropped int
}

func (l *callLog) add(rec CallRecord) {
	if len(l.recs) >= MaxCalls {
		l.dropped++
		return
	}
	l.recs = append(l.recs, rec)
}

// storedCalls is the stored form of a task's calls.
type storedCalls struct {
	Calls   []CallRecord `json:"calls"`
	Dropped int          `json:"dropped,omitempty"`
}

// appendTo adds the special write holding the calls to ws, if there are any.
func (l *callLog) appendTo(ws []checkpoint.Write) []checkpoint.Write {
	if len(l.recs) == 0 && l.dropped == 0 {
		return ws
	}
	b, err := json.Marshal(storedCalls{Calls: l.recs, Dropped: l.dropped})
	if err != nil { // records hold only strings and numbers: cannot happen
		return ws
	}
	return append(ws, checkpoint.Write{Channel: checkpoint.Calls, Value: b})
}

func decodeCalls(b []byte) ([]CallRecord, int, error) {
	var s storedCalls
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, 0, err
	}
	return s.Calls, s.Dropped, nil
}

// boundCall copies rec with its texts cut to the bounds.
func boundCall(rec CallRecord) CallRecord {
	rec.Args = cutText(rec.Args.Text, rec.Args.Size)
	rec.Result = cutText(rec.Result.Text, rec.Result.Size)
	if rec.Reply != nil {
		r := boundMessage(*rec.Reply)
		rec.Reply = &r
	}
	if rec.Tools != nil {
		tools := make([]CallToolSpec, len(rec.Tools))
		for i, t := range rec.Tools {
			t.Parameters = cutText(t.Parameters.Text, t.Parameters.Size)
			tools[i] = t
		}
		rec.Tools = tools
	}
	if rec.Request != nil {
		rec.Request, rec.Omitted = boundRequest(rec.Request, rec.Omitted)
	}
	return rec
}

// boundRequest keeps the first message and the newest that fit in
// MaxCallRequest bytes of content, each cut to MaxCallText.
func boundRequest(msgs []CallMessage, omitted int) ([]CallMessage, int) {
	if len(msgs) == 0 {
		return msgs, omitted
	}
	cut := make([]CallMessage, len(msgs))
	for i, m := range msgs {
		cut[i] = boundMessage(m)
	}
	budget := MaxCallRequest - len(cut[0].Content)
	from := len(cut)
	for from > 1 && len(cut[from-1].Content) <= budget {
		from--
		budget -= len(cut[from].Content)
	}
	if from == 1 {
		return cut, omitted
	}
	out := make([]CallMessage, 0, 1+len(cut)-from)
	out = append(out, cut[0])
	out = append(out, cut[from:]...)
	return out, omitted + from - 1
}

func boundMessage(m CallMessage) CallMessage {
	t := cutText(m.Content, m.Size)
	m.Content, m.Size = t.Text, t.Size
	if len(m.ToolCalls) > 0 {
		calls := make([]ToolCall, len(m.ToolCalls))
		for i, c := range m.ToolCalls {
			c.Args = cutText(c.Args, 0).Text
			calls[i] = c
		}
		m.ToolCalls = calls
	}
	if len(m.Attachments) > 0 {
		// A record says what was attached, not the bytes: a screenshot per
		// call would outweigh the rest of the record many times.
		as := make([]Attachment, len(m.Attachments))
		for i, a := range m.Attachments {
			if a.Data != nil {
				a.Size, a.Data = len(a.Data), nil
			}
			as[i] = a
		}
		m.Attachments = as
	}
	return m
}

// cutText cuts s to MaxCallText bytes at a character boundary. size is a
// full size already known (s was cut before); 0 means s is whole.
func cutText(s string, size int) CallText {
	if len(s) <= MaxCallText {
		return CallText{Text: s, Size: size}
	}
	n := MaxCallText
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return CallText{Text: s[:n], Size: max(size, len(s))}
}
