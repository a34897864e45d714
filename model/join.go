package model

import (
	"fmt"
	"strings"

	"github.com/weftstudio/weft/engine"
)

// Accumulator builds a reply's message from its Deltas and turns each delta
// into the piece that is streamed. ID is the message's id. Its zero value
// (with ID set) is ready to use; it is not safe for concurrent use.
type Accumulator struct {
	ID string

	text  strings.Builder
	calls []engine.ToolCall
	index map[int]int        // provider's tool index → position in calls
	args  []*strings.Builder // pointers: a Builder must not be copied once written
}

// Add folds d into the message and returns it as a streamed piece. A tool
// call the provider gave no id gets one made from the message id and its
// position.
func (a *Accumulator) Add(d Delta) engine.Message {
	piece := engine.Message{ID: a.ID, Role: engine.RoleAssistant}
	if !d.Tool {
		a.text.WriteString(d.Text)
		piece.Content = d.Text
		return piece
	}
	if a.index == nil {
		a.index = map[int]int{}
	}
	i, ok := a.index[d.ToolIndex]
	if !ok {
		i = len(a.calls)
		a.index[d.ToolIndex] = i
		id := d.ToolID
		if id == "" {
			id = fmt.Sprintf("call_%s_%d", a.ID, i)
		}
		a.calls = append(a.calls, engine.ToolCall{ID: id, Name: d.ToolName})
		a.args = append(a.args, new(strings.Builder))
		piece.ToolCalls = []engine.ToolCall{{ID: id, Name: d.ToolName, Args: d.ToolArgs}}
	} else {
		if a.calls[i].Name == "" && d.ToolName != "" {
			a.calls[i].Name = d.ToolName
		}
		piece.ToolCalls = []engine.ToolCall{{ID: a.calls[i].ID, Args: d.ToolArgs}}
	}
	a.args[i].WriteString(d.ToolArgs)
	return piece
}

// Message returns the message so far: every text delta concatenated, and
// the tool calls in the order they started.
func (a *Accumulator) Message() engine.Message {
	m := engine.Message{ID: a.ID, Role: engine.RoleAssistant, Content: a.text.String()}
	if len(a.calls) > 0 {
		m.ToolCalls = make([]engine.ToolCall, len(a.calls))
		for i, c := range a.calls {
			c.Args = a.args[i].String()
			m.ToolCalls[i] = c
		}
	}
	return m
}

// Join reassembles streamed pieces of one message: their contents
// concatenated, their tool calls by ID in the order they started (the Name
// of a call's first piece, its Args fragments concatenated). The message
// takes the ID, Role and Name of the first piece.
func Join(pieces []engine.Message) engine.Message {
	var out engine.Message
	var text strings.Builder
	pos := map[string]int{}
	var args []*strings.Builder
	for i, p := range pieces {
		if i == 0 {
			out.ID, out.Role, out.Name = p.ID, p.Role, p.Name
		}
		text.WriteString(p.Content)
		for _, c := range p.ToolCalls {
			j, ok := pos[c.ID]
			if !ok {
				j = len(out.ToolCalls)
				pos[c.ID] = j
				out.ToolCalls = append(out.ToolCalls, engine.ToolCall{ID: c.ID, Name: c.Name})
				args = append(args, new(strings.Builder))
			} else if out.ToolCalls[j].Name == "" {
				out.ToolCalls[j].Name = c.Name
			}
			args[j].WriteString(c.Args)
		}
	}
	out.Content = text.String()
	for j := range out.ToolCalls {
		out.ToolCalls[j].Args = args[j].String()
	}
	return out
}
