package engine

import (
	"fmt"
	"slices"

	"github.com/google/uuid"
)

// Roles of a Message.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
	// RoleRemove marks a Message that, written to a Messages channel, deletes
	// the message with the same ID (LangGraph's RemoveMessage). With ID
	// RemoveAll it clears the list.
	RoleRemove = "remove"
)

// RemoveAll is the ID of a removal marker that deletes every message.
const RemoveAll = "__remove_all__"

// Message is one chat message, as LangGraph's add_messages understands them.
// The zero Message has no role; ID "" gets an id assigned when the message is
// added to a Messages channel.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ID         string     `json:"id,omitempty"`
	Name       string     `json:"name,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"` // for RoleTool: the call this answers
	// Attachments are the images, audio and files that come with the
	// text, whole: what a tool returned beside its text (an MCP server's
	// screenshot), for the model to see. nil is a text-only message.
	Attachments []Attachment `json:"attachments,omitempty"`
}

// Attachment is a binary part of a Message. The message's Content should
// name it (the tool node's MCP tools write "[attachment 1: image
// image/png, 12.0 kB]"), so a model or a front end that cannot take
// the kind still knows it is there.
type Attachment struct {
	// Kind is AttachImage, AttachAudio or AttachResource.
	Kind string `json:"kind"`
	// MIMEType is the data's media type ("image/png"); "" is unknown.
	MIMEType string `json:"mime_type,omitempty"`
	// URI names a resource (Kind AttachResource) where it came from; ""
	// when it has no name.
	URI  string `json:"uri,omitempty"`
	Data []byte `json:"data,omitempty"`
	// Size is the length of Data where a call record left the bytes out
	// (CallRecord keeps no attachment's data); 0 where Data is whole.
	Size int `json:"size,omitempty"`
}

// Kinds of an Attachment.
const (
	AttachImage    = "image"
	AttachAudio    = "audio"
	AttachResource = "resource" // any other file: a PDF, a document
)

// ToolCall is a model's request to call a tool. Args is the JSON object of
// arguments as the model produced it.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Args string `json:"args"`
}

// RemoveMessage returns the marker that deletes the message with id.
func RemoveMessage(id string) Message { return Message{Role: RoleRemove, ID: id} }

// AddMessages merges right into left as LangGraph's add_messages does
// (langgraph/graph/message.py):
//   - messages without an ID get a fresh one (in the result: left and right
//     are never modified);
//   - a message whose ID is already in left replaces it in place, others
//     are appended;
//   - a RoleRemove marker deletes the message with its ID, unless a later
//     message of right brings that ID back; a marker for an ID that is not
//     in left or earlier in right is an error;
//   - a marker with ID RemoveAll discards everything before it: the result
//     is what follows the last such marker in right, as given.
func AddMessages(left, right []Message) ([]Message, error) {
	right = withIDs(right)
	for i := len(right) - 1; i >= 0; i-- {
		if right[i].Role == RoleRemove && right[i].ID == RemoveAll {
			return slices.Clone(right[i+1:]), nil
		}
	}
	out := append(make([]Message, 0, len(left)+len(right)), left...)
	for i := range out {
		if out[i].ID == "" {
			out[i].ID = uuid.NewString()
		}
	}
	index := make(map[string]int, len(out)+len(right))
	for i, m := range out {
		index[m.ID] = i
	}
	var remove map[string]bool
	for _, m := range right {
		if i, ok := index[m.ID]; ok {
			if m.Role == RoleRemove {
				if remove == nil {
					remove = map[string]bool{}
				}
				remove[m.ID] = true
			} else {
				delete(remove, m.ID)
				out[i] = m
			}
			continue
		}
		if m.Role == RoleRemove {
			return nil, fmt.Errorf("attempting to delete a message with an ID that doesn't exist ('%s')", m.ID)
		}
		index[m.ID] = len(out)
		out = append(out, m)
	}
	if len(remove) == 0 {
		return out, nil
	}
	kept := out[:0]
	for _, m := range out {
		if !remove[m.ID] {
			kept = append(kept, m)
		}
	}
	return kept, nil
}

// withIDs returns msgs with a fresh ID on each message that has none: msgs
// itself when all have one, else a copy.
func withIDs(msgs []Message) []Message {
	if !slices.ContainsFunc(msgs, func(m Message) bool { return m.ID == "" }) {
		return msgs
	}
	out := slices.Clone(msgs)
	for i := range out {
		if out[i].ID == "" {
			out[i].ID = uuid.NewString()
		}
	}
	return out
}

// MessagesKey is a typed handle to a []Message channel merged with
// AddMessages.
type MessagesKey struct{ s *chanSpec }

// Messages declares a []Message channel merged with AddMessages.
func Messages(name string) MessagesKey {
	s := &chanSpec{name: name, kind: "reducer", codec: typedCodec[[]Message]{}, reducer: "add_messages"}
	zero := zeroFor[[]Message]()
	merge := func(acc, v any) (any, error) {
		a, ok1 := acc.([]Message)
		b, ok2 := v.([]Message)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("add_messages got %T and %T, want []engine.Message", acc, v)
		}
		return AddMessages(a, b)
	}
	s.newCh = func() channel { return newReducer(name, s.codec, zero, merge) }
	return MessagesKey{s}
}

// Name returns the channel's name.
func (k MessagesKey) Name() string    { return k.s.name }
func (k MessagesKey) spec() *chanSpec { return k.s }

// Get returns the messages (nil when empty).
func (k MessagesKey) Get(s State) []Message { v, _ := lookup[[]Message](s, k.s.name); return v }

// Add merges msgs into the list with AddMessages.
func (k MessagesKey) Add(msgs ...Message) Write { return Write{k.s.name, msgs} }

// Overwrite replaces the whole list.
func (k MessagesKey) Overwrite(msgs []Message) Write { return Write{k.s.name, Overwrite{msgs}} }
