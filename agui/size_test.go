package agui

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
)

// expectFramesUnder fails when a data frame of s exceeds limit bytes.
func expectFramesUnder(t *testing.T, s *stream, limit int) {
	t.Helper()
	for i, l := range s.lines {
		if len(l) > limit {
			t.Errorf("event %d (%s) is %d bytes, over the %d limit", i, s.events[i]["type"], len(l), limit)
		}
	}
}

// TestLargeTopicStaysUnderEventLimit: the writing assistant on a topic
// larger than one event may carry. No event exceeds the limit: streamed
// text is cut, the state is sent in parts with the topic as an omission
// marker, long message ids are shortened; the interrupt, whose payload
// cannot be cut, ends the run with a clear RUN_ERROR naming it, and the
// thread stays usable: the client answers it by id and the run finishes.
func TestLargeTopicStaysUnderEventLimit(t *testing.T) {
	const limit = 256 << 10
	ts := newTestServer(t, demoGraphs(t), nil, WithMaxEventSize(limit))
	url := ts.URL + "/agents/writing-assistant"
	topic := strings.Repeat("kelp forests ", 300<<10/13)
	s := post(t, url, input("big", "r1", "state", map[string]any{"topic": topic}))
	expectFramesUnder(t, s, limit)
	if err := verify(s.lines); err != nil {
		t.Fatal(err)
	}
	fin := s.last()
	msg, _ := fin["message"].(string)
	if fin["type"] != "RUN_ERROR" || fin["code"] != CodeEventTooLarge || !strings.Contains(msg, "more than the 262144 bytes") {
		t.Fatalf("last event %v", fin)
	}
	ids := regexp.MustCompile(`interrupt ([0-9a-f]+) \(resume them by id\)`).FindStringSubmatch(msg)
	if ids == nil {
		t.Fatalf("the RUN_ERROR does not name the pending interrupt: %s", msg)
	}
	var snapshot map[string]json.RawMessage
	for _, e := range s.find("STATE_SNAPSHOT") {
		b, _ := json.Marshal(e["snapshot"])
		json.Unmarshal(b, &snapshot)
	}
	if !isOmitted(snapshot["topic"]) {
		t.Errorf("the topic was not sent as an omission marker: %.100s", snapshot["topic"])
	}
	for _, e := range s.events {
		for _, k := range []string{"messageId", "toolCallId", "parentMessageId"} {
			if id, _ := e[k].(string); len(id) > maxWireID {
				t.Fatalf("%s %s of %d bytes", e["type"], k, len(id))
			}
		}
	}
	// The client hands its state back, marker included, and answers.
	state := map[string]any{}
	for k, v := range snapshot {
		var x any
		json.Unmarshal(v, &x)
		state[k] = x
	}
	s2 := post(t, url, input("big", "r2", "state", state, "resume", []any{map[string]any{"interruptId": ids[1], "status": "resolved", "payload": "approve"}}))
	expectFramesUnder(t, s2, limit)
	if err := verify(s2.lines); err != nil {
		t.Fatal(err)
	}
	if o, _ := s2.last()["outcome"].(map[string]any); o["type"] != "success" {
		t.Fatalf("answering by the id in the error: %v", s2.last())
	}
	snap, _ := ts.h.Graph("/agents/writing-assistant").GetState(t.Context(), engine.WithThread("big"))
	if snap.Values["topic"] != topic || snap.Values["published"] == "" {
		t.Errorf("the thread lost its topic or did not publish")
	}
}

// TestStateSentInParts: a state larger than one event, of values that each
// fit, arrives whole as a snapshot and patches, each under the limit.
func TestStateSentInParts(t *testing.T) {
	const limit = 64 << 10
	keys := []engine.Key[string]{engine.LastValue[string]("a"), engine.LastValue[string]("b"), engine.LastValue[string]("c"), engine.LastValue[string]("d")}
	b := engine.NewGraph("wide", keys[0], keys[1], keys[2], keys[3])
	b.AddNode("fill", func(_ context.Context, _ engine.State) (engine.Output, error) {
		var up engine.Update
		for i, k := range keys {
			up = append(up, k.Set(strings.Repeat(string(rune('a'+i)), 30<<10)))
		}
		return up, nil
	})
	b.AddEdge(engine.START, "fill")
	g, err := b.Compile()
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, []*engine.Graph{g}, memory.New(), WithMaxEventSize(limit))
	s := post(t, ts.URL+"/agents/wide", input("w", "r1"))
	expectFramesUnder(t, s, limit)
	if err := verify(s.lines); err != nil {
		t.Fatal(err)
	}
	// Replay the state events as a client does.
	state := map[string]any{}
	for _, e := range s.events {
		switch e["type"] {
		case "STATE_SNAPSHOT":
			state = map[string]any{}
			for k, v := range e["snapshot"].(map[string]any) {
				state[k] = v
			}
		case "STATE_DELTA":
			for _, op := range e["delta"].([]any) {
				o := op.(map[string]any)
				k := strings.TrimPrefix(o["path"].(string), "/")
				switch o["op"] {
				case "add", "replace":
					state[k] = o["value"]
				case "remove":
					delete(state, k)
				}
			}
		}
	}
	for i, k := range []string{"a", "b", "c", "d"} {
		if v, _ := state[k].(string); v != strings.Repeat(string(rune('a'+i)), 30<<10) {
			t.Errorf("key %s arrived as %d bytes", k, len(v))
		}
	}
	if n := len(s.find("STATE_DELTA")); n == 0 {
		t.Errorf("a state over the limit was sent as one snapshot")
	}
}
