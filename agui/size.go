package agui

// This file keeps what a run sends proportional to its data and every
// frame under what an AG-UI client accepts: @ag-ui/client's SSE parser
// fails a run whose frame exceeds 10 MB without a boundary.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"
)

// DefaultMaxEvent is the largest event, in bytes of JSON, a Handler sends
// unless WithMaxEventSize says otherwise: below the 10 MiB an official
// client buffers for one frame, with room for the framing.
const DefaultMaxEvent = 10<<20 - 64<<10

// WithMaxEventSize sets the largest event, in bytes of JSON, the handler
// sends (default DefaultMaxEvent; 0 or less keeps it). Streamed text and
// tool arguments are cut into several events, the state is sent in parts,
// and a state value that alone exceeds it is sent as an omission marker
// (see OmittedKey); any other event over it ends the run with RUN_ERROR
// code EVENT_TOO_LARGE instead of being sent.
func WithMaxEventSize(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxEvent = n
		}
	}
}

// CodeEventTooLarge is the RUN_ERROR code of a run that had to send an
// event larger than the client accepts.
const CodeEventTooLarge = "EVENT_TOO_LARGE"

// OmittedKey marks a state value too large to send: in its place the
// client gets {"$weft": "omitted", "bytes": N}, N being the size of the
// value's JSON. The thread keeps the value; a client that sends the marker
// back in RunAgentInput.state leaves it unchanged.
const OmittedKey = "$weft"

// omitted returns the marker sent instead of a value of n bytes of JSON.
func omitted(n int) []byte {
	return fmt.Appendf(nil, `{%q:"omitted","bytes":%d}`, OmittedKey, n)
}

// isOmitted reports whether raw is an omission marker.
func isOmitted(raw json.RawMessage) bool {
	var m map[string]any
	return len(raw) < 200 && json.Unmarshal(raw, &m) == nil && m[OmittedKey] == "omitted"
}

// maxWireID is the longest message or tool call id sent as it is; longer
// ones (a graph that builds ids from its input) are sent as a hash, since
// every event of a message repeats its id.
const maxWireID = 128

// wireID returns id as the client sees it: itself, or for an id longer
// than maxWireID a stable short one derived from it.
func wireID(id string) string {
	if len(id) <= maxWireID {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "weft-" + hex.EncodeToString(sum[:16])
}

// wireIDs caches wireID for one run: a streamed message repeats its id in
// every chunk, and hashing a long id each time would cost as much as the
// amplification it avoids.
type wireIDs map[string]string

func (w wireIDs) id(id string) string {
	if len(id) <= maxWireID {
		return id
	}
	short, ok := w[id]
	if !ok {
		short = wireID(id)
		w[id] = short
	}
	return short
}

// shorten rewrites the message and tool call ids of ev with wireID.
func (w wireIDs) shorten(ev Event) Event {
	wireID := w.id
	switch e := ev.(type) {
	case *TextMessageStart:
		e.MessageID = wireID(e.MessageID)
	case *TextMessageContent:
		e.MessageID = wireID(e.MessageID)
	case *TextMessageEnd:
		e.MessageID = wireID(e.MessageID)
	case *ToolCallStart:
		e.ToolCallID, e.ParentMessageID = wireID(e.ToolCallID), wireID(e.ParentMessageID)
	case *ToolCallArgs:
		e.ToolCallID = wireID(e.ToolCallID)
	case *ToolCallEnd:
		e.ToolCallID = wireID(e.ToolCallID)
	case *ToolCallResult:
		e.MessageID, e.ToolCallID = wireID(e.MessageID), wireID(e.ToolCallID)
	case *MessagesSnapshot:
		msgs := slices.Clone(e.Messages)
		for i := range msgs {
			m := &msgs[i]
			m.ID, m.ToolCallID = wireID(m.ID), wireID(m.ToolCallID)
			if len(m.ToolCalls) > 0 {
				m.ToolCalls = slices.Clone(m.ToolCalls)
				for j := range m.ToolCalls {
					m.ToolCalls[j].ID = wireID(m.ToolCalls[j].ID)
				}
			}
		}
		e.Messages = msgs
	}
	return ev
}

// splitDelta cuts the delta of a text or tool-argument event that encodes
// to more than limit bytes into events that each encode to at most about
// limit, at UTF-8 boundaries; other events come back alone.
func splitDelta(ev Event, size, limit int) []Event {
	var delta string
	var mk func(string) Event
	switch e := ev.(type) {
	case *TextMessageContent:
		delta, mk = e.Delta, func(d string) Event { return &TextMessageContent{Base: e.Base, MessageID: e.MessageID, Delta: d} }
	case *ToolCallArgs:
		delta, mk = e.Delta, func(d string) Event { return &ToolCallArgs{Base: e.Base, ToolCallID: e.ToolCallID, Delta: d} }
	default:
		return []Event{ev}
	}
	if size <= limit || len(delta) < 2 {
		return []Event{ev}
	}
	// JSON escaping can make a piece up to 6 times its bytes; aim for
	// pieces whose worst case fits.
	piece := max(1, (limit-(size-len(delta)))/6)
	var out []Event
	for len(delta) > 0 {
		n := min(piece, len(delta))
		for n < len(delta) && n > 0 && !utf8.RuneStart(delta[n]) {
			n--
		}
		if n == 0 {
			n = min(piece, len(delta))
		}
		out = append(out, mk(delta[:n]))
		delta = delta[n:]
	}
	return out
}
