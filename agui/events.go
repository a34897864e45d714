package agui

import "encoding/json"

// EventType is the "type" of an AG-UI event, e.g. "RUN_STARTED".
type EventType string

// The event types this package emits.
const (
	TypeRunStarted         EventType = "RUN_STARTED"
	TypeRunFinished        EventType = "RUN_FINISHED"
	TypeRunError           EventType = "RUN_ERROR"
	TypeStepStarted        EventType = "STEP_STARTED"
	TypeStepFinished       EventType = "STEP_FINISHED"
	TypeTextMessageStart   EventType = "TEXT_MESSAGE_START"
	TypeTextMessageContent EventType = "TEXT_MESSAGE_CONTENT"
	TypeTextMessageEnd     EventType = "TEXT_MESSAGE_END"
	TypeToolCallStart      EventType = "TOOL_CALL_START"
	TypeToolCallArgs       EventType = "TOOL_CALL_ARGS"
	TypeToolCallEnd        EventType = "TOOL_CALL_END"
	TypeToolCallResult     EventType = "TOOL_CALL_RESULT"
	TypeStateSnapshot      EventType = "STATE_SNAPSHOT"
	TypeStateDelta         EventType = "STATE_DELTA"
	TypeMessagesSnapshot   EventType = "MESSAGES_SNAPSHOT"
	TypeCustom             EventType = "CUSTOM"
)

// Event is one AG-UI event. The concrete types are the structs of this file;
// each marshals to the exact wire form, with optional fields omitted rather
// than sent as null.
type Event interface {
	// EventType returns the event's "type".
	EventType() EventType
	base() *Base
}

// Base holds the fields every event carries. Type is filled in from the
// event's kind when the event is written; Timestamp is milliseconds since
// the epoch, 0 meaning none (the field is then omitted).
type Base struct {
	Type      EventType `json:"type"`
	Timestamp int64     `json:"timestamp,omitempty"`
}

func (b *Base) base() *Base { return b }

// RunStarted opens a run of thread ThreadID. ParentRunID is "" when the
// client gave none.
type RunStarted struct {
	Base
	ThreadID    string `json:"threadId"`
	RunID       string `json:"runId"`
	ParentRunID string `json:"parentRunId,omitempty"`
}

// RunFinished closes a run. Outcome is nil when the run stopped without
// finishing or being interrupted (a paused run).
type RunFinished struct {
	Base
	ThreadID string   `json:"threadId"`
	RunID    string   `json:"runId"`
	Outcome  *Outcome `json:"outcome,omitempty"`
}

// Outcome says how a run ended: Type "success", or "interrupt" with the
// Interrupts waiting for an answer (never empty then).
type Outcome struct {
	Type       string      `json:"type"`
	Interrupts []Interrupt `json:"interrupts,omitempty"`
}

// Interrupt is a question a run stopped at, as AG-UI reports it. Empty
// optional fields are omitted.
type Interrupt struct {
	// ID is the engine's interrupt id; a resume names it.
	ID string `json:"id"`
	// Reason is the payload's "reason" when it has one, else
	// "input_required".
	Reason string `json:"reason"`
	// Message is the payload itself when it is a string, else its
	// "message" or "question" field.
	Message    string `json:"message,omitempty"`
	ToolCallID string `json:"toolCallId,omitempty"`
	// ResponseSchema is the payload's "responseSchema" (or
	// "response_schema") when it is a JSON object.
	ResponseSchema map[string]any `json:"responseSchema,omitempty"`
	ExpiresAt      string         `json:"expiresAt,omitempty"`
	// Metadata carries {"weft": {"node", "ns", "value"}}: where the
	// interrupt was raised and its raw payload.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// RunError ends a run that failed. Code is a short machine-readable class
// ("" for none): see the Code constants.
type RunError struct {
	Base
	Message string `json:"message"`
	Code    string `json:"code,omitempty"`
}

// Codes of RunError.
const (
	CodeInvalidInput  = "INVALID_INPUT"  // the request cannot be turned into graph input
	CodeInvalidResume = "INVALID_RESUME" // resume[] does not match the pending interrupts
	CodeWrongGraph    = "WRONG_GRAPH"    // the thread was written by another graph
	CodeRunFailed     = "RUN_FAILED"     // the graph run failed (node error, recursion limit…)
	CodeStore         = "STORE_ERROR"    // the checkpoint store failed
)

// StepStarted marks a node starting; parallel tasks of one node share one
// step.
type StepStarted struct {
	Base
	StepName string `json:"stepName"`
}

// StepFinished marks the last running task of a node ending.
type StepFinished struct {
	Base
	StepName string `json:"stepName"`
}

// TextMessageStart opens a streamed message. Role is "assistant" unless the
// node streamed another role.
type TextMessageStart struct {
	Base
	MessageID string `json:"messageId"`
	Role      string `json:"role,omitempty"`
	Name      string `json:"name,omitempty"`
}

// TextMessageContent is a piece of an open message's text.
type TextMessageContent struct {
	Base
	MessageID string `json:"messageId"`
	Delta     string `json:"delta"`
}

// TextMessageEnd closes a message.
type TextMessageEnd struct {
	Base
	MessageID string `json:"messageId"`
}

// ToolCallStart opens a tool call of the assistant message ParentMessageID
// ("" when unknown).
type ToolCallStart struct {
	Base
	ToolCallID      string `json:"toolCallId"`
	ToolCallName    string `json:"toolCallName"`
	ParentMessageID string `json:"parentMessageId,omitempty"`
}

// ToolCallArgs is a piece of an open tool call's JSON arguments.
type ToolCallArgs struct {
	Base
	ToolCallID string `json:"toolCallId"`
	Delta      string `json:"delta"`
}

// ToolCallEnd closes a tool call.
type ToolCallEnd struct {
	Base
	ToolCallID string `json:"toolCallId"`
}

// ToolCallResult is a tool's answer: MessageID is the id of the tool
// message that carries it, Role is "tool".
type ToolCallResult struct {
	Base
	MessageID  string `json:"messageId"`
	ToolCallID string `json:"toolCallId"`
	Content    string `json:"content"`
	Role       string `json:"role,omitempty"`
}

// StateSnapshot is the whole state as the client sees it: every channel
// with a value except the messages channel, which MessagesSnapshot carries.
type StateSnapshot struct {
	Base
	Snapshot json.RawMessage `json:"snapshot"`
}

// StateDelta is an RFC 6902 patch from the last state sent in this run to
// the current one.
type StateDelta struct {
	Base
	Delta []PatchOp `json:"delta"`
}

// MessagesSnapshot is the full conversation; the client replaces its list
// with it.
type MessagesSnapshot struct {
	Base
	Messages []Message `json:"messages"`
}

// Custom is an application event: Name says what it is, Value is any JSON.
type Custom struct {
	Base
	Name  string `json:"name"`
	Value any    `json:"value"`
}

// EventType returns TypeRunStarted.
func (*RunStarted) EventType() EventType { return TypeRunStarted }

// EventType returns TypeRunFinished.
func (*RunFinished) EventType() EventType { return TypeRunFinished }

// EventType returns TypeRunError.
func (*RunError) EventType() EventType { return TypeRunError }

// EventType returns TypeStepStarted.
func (*StepStarted) EventType() EventType { return TypeStepStarted }

// EventType returns TypeStepFinished.
func (*StepFinished) EventType() EventType { return TypeStepFinished }

// EventType returns TypeTextMessageStart.
func (*TextMessageStart) EventType() EventType { return TypeTextMessageStart }

// EventType returns TypeTextMessageContent.
func (*TextMessageContent) EventType() EventType { return TypeTextMessageContent }

// EventType returns TypeTextMessageEnd.
func (*TextMessageEnd) EventType() EventType { return TypeTextMessageEnd }

// EventType returns TypeToolCallStart.
func (*ToolCallStart) EventType() EventType { return TypeToolCallStart }

// EventType returns TypeToolCallArgs.
func (*ToolCallArgs) EventType() EventType { return TypeToolCallArgs }

// EventType returns TypeToolCallEnd.
func (*ToolCallEnd) EventType() EventType { return TypeToolCallEnd }

// EventType returns TypeToolCallResult.
func (*ToolCallResult) EventType() EventType { return TypeToolCallResult }

// EventType returns TypeStateSnapshot.
func (*StateSnapshot) EventType() EventType { return TypeStateSnapshot }

// EventType returns TypeStateDelta.
func (*StateDelta) EventType() EventType { return TypeStateDelta }

// EventType returns TypeMessagesSnapshot.
func (*MessagesSnapshot) EventType() EventType { return TypeMessagesSnapshot }

// EventType returns TypeCustom.
func (*Custom) EventType() EventType { return TypeCustom }

// Message is a chat message in AG-UI's shape. Content is a string (or, in
// input, a list of content parts); nil omits it, which only assistant
// messages may do.
type Message struct {
	ID         string     `json:"id"`
	Role       string     `json:"role"`
	Content    any        `json:"content,omitempty"`
	Name       string     `json:"name,omitempty"`
	ToolCalls  []ToolCall `json:"toolCalls,omitempty"`
	ToolCallID string     `json:"toolCallId,omitempty"`
}

// ToolCall is an assistant's request to call a function; Type is always
// "function".
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// FunctionCall names the function of a ToolCall and holds its arguments as
// JSON text.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// RunAgentInput is the body a client POSTs to start or continue a run.
// ThreadID is required; RunID is made up when empty. State, Tools, Context
// and ForwardedProps are kept as raw JSON (nil when absent).
type RunAgentInput struct {
	ThreadID       string          `json:"threadId"`
	RunID          string          `json:"runId"`
	ParentRunID    string          `json:"parentRunId,omitempty"`
	State          json.RawMessage `json:"state,omitempty"`
	Messages       []Message       `json:"messages"`
	Tools          json.RawMessage `json:"tools,omitempty"`
	Context        json.RawMessage `json:"context,omitempty"`
	ForwardedProps json.RawMessage `json:"forwardedProps,omitempty"`
	// Resume answers the thread's pending interrupts, one entry each.
	Resume          []ResumeEntry `json:"resume,omitempty"`
	ProtocolVersion string        `json:"protocolVersion,omitempty"`
}

// ResumeEntry answers one interrupt: Status "resolved" with Payload as the
// answer (nil payload answers null), or "cancelled".
type ResumeEntry struct {
	InterruptID string          `json:"interruptId"`
	Status      string          `json:"status"`
	Payload     json.RawMessage `json:"payload,omitempty"`
	Metadata    json.RawMessage `json:"metadata,omitempty"`
}
