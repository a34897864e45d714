package model

import (
	"fmt"
	"strings"

	"github.com/weftstudio/weft/engine"
)

// LiftAttachments returns msgs with the attachments of tool messages moved
// onto a user message that follows the tool messages of their turn, for
// APIs whose tool messages take only text (OpenAI's chat completions and
// Eino's messages): the model then sees a tool's image right after the
// tool's answer. The user message's text says which calls they came from,
// in order. msgs is not modified; without attachments on tool messages it
// is returned as it is.
func LiftAttachments(msgs []engine.Message) []engine.Message {
	lifted := false
	for _, m := range msgs {
		if m.Role == engine.RoleTool && len(m.Attachments) > 0 {
			lifted = true
			break
		}
	}
	if !lifted {
		return msgs
	}
	out := make([]engine.Message, 0, len(msgs)+1)
	var held engine.Message // the user message the current turn's attachments gather in
	var from []string
	flush := func() {
		if len(held.Attachments) > 0 {
			held.Role = engine.RoleUser
			held.Content = "Attachments of the tool results above, in order: " + strings.Join(from, "; ") + "."
			out = append(out, held)
		}
		held, from = engine.Message{}, nil
	}
	for _, m := range msgs {
		if m.Role != engine.RoleTool {
			flush()
			out = append(out, m)
			continue
		}
		if len(m.Attachments) > 0 {
			from = append(from, fmt.Sprintf("%d from call %s (%s)", len(m.Attachments), m.ToolCallID, m.Name))
			held.Attachments = append(held.Attachments, m.Attachments...)
			m.Attachments = nil
		}
		out = append(out, m)
	}
	flush()
	return out
}
