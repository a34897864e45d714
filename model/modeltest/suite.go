package modeltest

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/model"
)

// Harness is what the suite needs of an adapter.
type Harness struct {
	// Wire is the API the adapter speaks.
	Wire Wire
	// New returns the adapter's model calling the fake server at baseURL
	// (the server's root; the adapter adds its own path prefix, if any).
	New func(baseURL string) model.ChatModel
	// NoResponseID is set for adapters whose underlying client does not
	// report the provider's response id.
	NoResponseID bool
	// NoResponseFormat is set for adapters that cannot ask for structured
	// output; the suite then checks that asking is an error.
	NoResponseFormat bool
	// NoFileAttachments is set for adapters whose API takes images but no
	// other files in a request; the suite then checks a PDF is left out
	// (its tool message's text still names it).
	NoFileAttachments bool
	// NoRetryAfter is set for adapters whose underlying client hides the
	// response headers: a 429 is still retried, after the backoff rather
	// than the Retry-After, and a Retry-After past the cap cannot be seen.
	NoRetryAfter bool
}

// Scripts the suite streams; exported so adapters' own tests can reuse
// them.
var (
	TextReply = Reply{ID: "resp-text-1", Model: "fake-model-1", Text: []string{"Hel", "lo, ", "wörld", "!"}, Usage: model.Usage{InputTokens: 11, OutputTokens: 7}}
	ToolReply = Reply{ID: "resp-tools-1", Model: "fake-model-1", Text: []string{"Let me ", "check."},
		Calls: []Call{
			{ID: "call_a", Name: "lookup", Args: []string{`{"ci`, `ty": "Pa`, `ris", "days"`, `: 3}`}},
			{ID: "call_b", Name: "convert", Args: strings.Split(`{"amount": 12.5, "to": "€"}`, "")},
		},
		Usage: model.Usage{InputTokens: 40, OutputTokens: 25}}
)

// Run runs the conformance suite against the adapter h describes.
func Run(t *testing.T, h Harness) {
	fast := model.WithRetry(model.Retry{MaxAttempts: 3, Backoff: 5 * time.Millisecond, MaxWait: time.Minute})
	ctx := context.Background()
	user := []engine.Message{{ID: "u1", Role: engine.RoleUser, Content: "Hi"}}

	t.Run("text streams and adds up", func(t *testing.T) {
		srv := NewServer(t, h.Wire, Response{Reply: TextReply})
		m := h.New(srv.URL)
		var pieces []engine.Message
		var reply *model.Reply
		for c, err := range m.Stream(ctx, user, model.WithModel("fake-model-1")) {
			if err != nil {
				t.Fatal(err)
			}
			if c.Reply != nil {
				reply = c.Reply
				continue
			}
			pieces = append(pieces, c.Piece)
		}
		if reply == nil {
			t.Fatal("the stream ended without a reply")
		}
		want := engine.Message{ID: reply.Message.ID, Role: engine.RoleAssistant, Content: "Hello, wörld!"}
		if !reflect.DeepEqual(reply.Message, want) || reply.Message.ID == "" {
			t.Errorf("message %+v, want %+v", reply.Message, want)
		}
		if len(pieces) != len(TextReply.Text) {
			t.Errorf("%d pieces streamed, want %d", len(pieces), len(TextReply.Text))
		}
		for i, p := range pieces {
			if p.ID != reply.Message.ID || p.Role != engine.RoleAssistant || (i < len(TextReply.Text) && p.Content != TextReply.Text[i]) {
				t.Errorf("piece %d = %+v", i, p)
			}
		}
		if got := model.Join(pieces); !reflect.DeepEqual(got, reply.Message) {
			t.Errorf("joined pieces %+v, reply %+v", got, reply.Message)
		}
		if reply.FinishReason != model.FinishStop || reply.Usage != TextReply.Usage || reply.Model != "fake-model-1" || reply.Attempts != 1 {
			t.Errorf("reply %+v", reply)
		}
		if !h.NoResponseID && reply.ResponseID != TextReply.ID {
			t.Errorf("response id %q, want %q", reply.ResponseID, TextReply.ID)
		}
		if reply.FirstToken <= 0 || reply.Latency < reply.FirstToken {
			t.Errorf("first token after %s, latency %s", reply.FirstToken, reply.Latency)
		}
	})

	t.Run("tool call arguments split across chunks", func(t *testing.T) {
		srv := NewServer(t, h.Wire, Response{Reply: ToolReply})
		m := h.New(srv.URL)
		var pieces []engine.Message
		var reply *model.Reply
		for c, err := range m.Stream(ctx, user) {
			if err != nil {
				t.Fatal(err)
			}
			if c.Reply != nil {
				reply = c.Reply
			} else {
				pieces = append(pieces, c.Piece)
			}
		}
		want := []engine.ToolCall{{ID: "call_a", Name: "lookup", Args: `{"city": "Paris", "days": 3}`}, {ID: "call_b", Name: "convert", Args: `{"amount": 12.5, "to": "€"}`}}
		if !reflect.DeepEqual(reply.Message.ToolCalls, want) || reply.Message.Content != "Let me check." {
			t.Errorf("message %+v", reply.Message)
		}
		if reply.FinishReason != model.FinishToolCalls || reply.Usage != ToolReply.Usage {
			t.Errorf("finish %q usage %+v", reply.FinishReason, reply.Usage)
		}
		if got := model.Join(pieces); !reflect.DeepEqual(got, reply.Message) {
			t.Errorf("joined pieces %+v, reply %+v", got, reply.Message)
		}
		args := 0
		for _, p := range pieces {
			for _, c := range p.ToolCalls {
				if c.ID == "" {
					t.Errorf("a tool call piece without its call id: %+v", p)
				}
				if c.Args != "" {
					args++
				}
			}
		}
		if args < 10 {
			t.Errorf("tool call arguments came in %d pieces, want them as streamed", args)
		}
	})

	t.Run("request carries the conversation, tools and options", func(t *testing.T) {
		srv := NewServer(t, h.Wire, Response{Reply: TextReply})
		m := h.New(srv.URL)
		conv := []engine.Message{
			{ID: "s", Role: engine.RoleSystem, Content: "Be brief."},
			{ID: "u1", Role: engine.RoleUser, Content: "Weather in Paris?"},
			{ID: "a1", Role: engine.RoleAssistant, Content: "Checking.", ToolCalls: []engine.ToolCall{
				{ID: "call_1", Name: "lookup", Args: `{"city":"Paris"}`}, {ID: "call_2", Name: "lookup", Args: `{"city":"Lyon"}`}}},
			{ID: "t1", Role: engine.RoleTool, ToolCallID: "call_1", Content: "sunny"},
			{ID: "t2", Role: engine.RoleTool, ToolCallID: "call_2", Content: "rain"},
			{ID: "u2", Role: engine.RoleUser, Content: "Thanks. And tomorrow?"},
		}
		params := `{"type":"object","properties":{"city":{"type":"string","description":"City name"}},"required":["city"]}`
		tool := model.ToolSpec{Name: "lookup", Description: "Looks up the weather.", Parameters: []byte(params)}
		if _, err := m.Generate(ctx, conv, model.WithModel("fake-model-2"), model.WithTools(tool), model.WithTemperature(0.25),
			model.WithMaxTokens(300), model.WithForcedTool("lookup"), model.WithStop("END")); err != nil {
			t.Fatal(err)
		}
		seen, body := onlyRequest(t, h.Wire, srv)
		temp := 0.25
		want := Seen{Model: "fake-model-2", Stream: true, Temperature: &temp, MaxTokens: 300, ToolChoice: "tool:lookup", Stop: []string{"END"},
			Messages: []SeenMessage{
				{Role: "system", Content: "Be brief."},
				{Role: "user", Content: "Weather in Paris?"},
				{Role: "assistant", Content: "Checking.", ToolCalls: []Call{{ID: "call_1", Name: "lookup", Args: []string{`{"city":"Paris"}`}}, {ID: "call_2", Name: "lookup", Args: []string{`{"city":"Lyon"}`}}}},
				{Role: "tool", Content: "sunny", ToolCallID: "call_1"},
				{Role: "tool", Content: "rain", ToolCallID: "call_2"},
				{Role: "user", Content: "Thanks. And tomorrow?"},
			},
			Tools: []SeenTool{{Name: "lookup", Description: "Looks up the weather.", Parameters: canonical(params)}},
		}
		if !reflect.DeepEqual(seen, want) {
			t.Errorf("the server saw\n%+v\nwant\n%+v\nbody: %s", seen, want, body)
		}
	})

	t.Run("a tool's image and file reach the model", func(t *testing.T) {
		srv := NewServer(t, h.Wire, Response{Reply: TextReply})
		m := h.New(srv.URL)
		png := []byte("\x89PNG\r\n\x1a\nfake image")
		pdf := []byte("%PDF-1.7 fake document")
		conv := []engine.Message{
			{ID: "u1", Role: engine.RoleUser, Content: "What is on the screen?"},
			{ID: "a1", Role: engine.RoleAssistant, ToolCalls: []engine.ToolCall{{ID: "call_1", Name: "screenshot", Args: `{}`}, {ID: "call_2", Name: "fetch", Args: `{}`}}},
			{ID: "t1", Role: engine.RoleTool, ToolCallID: "call_1", Name: "screenshot", Content: "[attachment 1: image image/png]",
				Attachments: []engine.Attachment{{Kind: engine.AttachImage, MIMEType: "image/png", Data: png}}},
			{ID: "t2", Role: engine.RoleTool, ToolCallID: "call_2", Name: "fetch", Content: "[attachment 1: resource file:///r.pdf, application/pdf]",
				Attachments: []engine.Attachment{{Kind: engine.AttachResource, MIMEType: "application/pdf", URI: "file:///r.pdf", Data: pdf}}},
		}
		if _, err := m.Generate(ctx, conv); err != nil {
			t.Fatal(err)
		}
		seen, body := onlyRequest(t, h.Wire, srv)
		// Each attachment is on its tool message, or on a user message
		// after the turn's tool messages that names its call.
		where := func(data []byte, mime string) (string, int) {
			url := mime + ";base64," + base64.StdEncoding.EncodeToString(data)
			n, at := 0, ""
			for i, sm := range seen.Messages {
				for _, a := range sm.Attachments {
					if a == url {
						n++
						at = sm.Role + " " + sm.ToolCallID
						if sm.Role == "user" && i > 0 && seen.Messages[i-1].Role == "tool" {
							at = "user after " + seen.Messages[i-1].ToolCallID + ": " + sm.Content
						}
					}
				}
			}
			return at, n
		}
		check := func(call string, data []byte, mime string, want bool) {
			at, n := where(data, mime)
			switch {
			case !want && n != 0:
				t.Errorf("%s of %s was sent (%s), though the API does not take it", mime, call, at)
			case want && n != 1:
				t.Errorf("%s of %s was sent %d times, want once\nbody: %s", mime, call, n, body)
			case want && at != "tool "+call && !(strings.HasPrefix(at, "user after ") && strings.Contains(at, "call "+call+" ")):
				t.Errorf("%s of %s was sent on %q, not with its call", mime, call, at)
			}
		}
		check("call_1", png, "image/png", true)
		check("call_2", pdf, "application/pdf", !h.NoFileAttachments)
		var texts []string
		for _, sm := range seen.Messages {
			if sm.Role == "tool" {
				texts = append(texts, sm.ToolCallID+": "+sm.Content)
			}
		}
		if want := []string{"call_1: " + conv[2].Content, "call_2: " + conv[3].Content}; !reflect.DeepEqual(texts, want) {
			t.Errorf("tool results sent as %q, want %q", texts, want)
		}
	})

	t.Run("structured output", func(t *testing.T) {
		srv := NewServer(t, h.Wire, Response{Reply: Reply{ID: "r", Model: "m", Text: []string{`{"answer":`, `42}`}}})
		m := h.New(srv.URL)
		schema := `{"type":"object","properties":{"answer":{"type":"integer"}},"required":["answer"],"additionalProperties":false}`
		reply, err := m.Generate(ctx, user, model.WithResponseFormat("answer", []byte(schema)))
		if h.NoResponseFormat {
			if err == nil {
				t.Errorf("asking for structured output succeeded; the adapter says it cannot")
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		seen, err := h.Wire.Decode(srv.Requests()[0].Body)
		if err != nil {
			t.Fatal(err)
		}
		if seen.Schema != canonical(schema) || reply.Message.Content != `{"answer":42}` {
			t.Errorf("schema sent %s, reply %q", seen.Schema, reply.Message.Content)
		}
	})

	t.Run("429 is retried after Retry-After", func(t *testing.T) {
		srv := NewServer(t, h.Wire,
			Response{Status: http.StatusTooManyRequests, Message: "Rate limit reached", Header: http.Header{"Retry-After": {"1"}}},
			Response{Reply: TextReply})
		reply, err := h.New(srv.URL).Generate(ctx, user, fast)
		if err != nil {
			t.Fatal(err)
		}
		reqs := srv.Requests()
		if len(reqs) != 2 || reply.Attempts != 2 || reply.Message.Content != "Hello, wörld!" {
			t.Fatalf("%d requests, %d attempts, reply %q", len(reqs), reply.Attempts, reply.Message.Content)
		}
		if gap := reqs[1].At.Sub(reqs[0].At); gap < time.Second && !h.NoRetryAfter {
			t.Errorf("retried after %s; the server asked for 1s", gap)
		}
	})

	t.Run("5xx is retried with backoff, then given up", func(t *testing.T) {
		srv := NewServer(t, h.Wire, Response{Status: 503, Message: "busy"}, Response{Status: 500, Message: "oops"}, Response{Reply: TextReply})
		reply, err := h.New(srv.URL).Generate(ctx, user, fast)
		if err != nil || reply.Attempts != 3 || len(srv.Requests()) != 3 {
			t.Fatalf("err %v after %d requests", err, len(srv.Requests()))
		}
		srv = NewServer(t, h.Wire, Response{Status: 503, Message: "still busy"})
		_, err = h.New(srv.URL).Generate(ctx, user, model.WithRetry(model.Retry{MaxAttempts: 2, Backoff: time.Millisecond}))
		var ae *model.APIError
		if !errors.As(err, &ae) || ae.Status != 503 || !strings.Contains(err.Error(), "still busy") || len(srv.Requests()) != 2 {
			t.Errorf("err %v after %d requests", err, len(srv.Requests()))
		}
	})

	t.Run("400 is not retried, by the model or the node", func(t *testing.T) {
		srv := NewServer(t, h.Wire, Response{Status: 400, Message: "messages: bad role"})
		m := h.New(srv.URL)
		_, err := m.Generate(ctx, user, fast)
		var ae *model.APIError
		if !errors.As(err, &ae) || ae.Status != 400 || !strings.Contains(err.Error(), "messages: bad role") {
			t.Fatalf("err = %v, want the provider's 400", err)
		}
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("%d requests for a 400", n)
		}
		msgs := engine.Messages("messages")
		g, err := engine.NewGraph("g", msgs).AddNode("agent", func(ctx context.Context, s engine.State) (engine.Output, error) {
			_, err := m.Generate(ctx, msgs.Get(s), fast)
			return nil, err
		}, engine.WithRetry(engine.RetryPolicy{MaxAttempts: 3})).AddEdge(engine.START, "agent").Compile()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.Invoke(ctx, engine.Values{"messages": user}); !errors.As(err, &ae) {
			t.Errorf("node error %v", err)
		}
		if n := len(srv.Requests()); n != 2 {
			t.Errorf("the node's retry policy repeated a 400: %d requests in all", n)
		}
	})

	t.Run("Retry-After past the cap fails at once", func(t *testing.T) {
		if h.NoRetryAfter {
			return // the adapter cannot see it (see Harness)
		}
		srv := NewServer(t, h.Wire, Response{Status: 429, Message: "quota", Header: http.Header{"Retry-After": {"3600"}}})
		_, err := h.New(srv.URL).Generate(ctx, user, fast)
		var ae *model.APIError
		if !errors.As(err, &ae) || ae.RetryAfter != time.Hour || len(srv.Requests()) != 1 {
			t.Errorf("err %v after %d requests", err, len(srv.Requests()))
		}
	})

	t.Run("a stream cut mid-way is an error", func(t *testing.T) {
		for name, resp := range map[string]Response{
			"connection dropped": {Reply: ToolReply, CutAfter: 6},
			"ended early":        {Reply: ToolReply, EndAfter: 6},
		} {
			srv := NewServer(t, h.Wire, resp, Response{Reply: ToolReply})
			var pieces int
			var err error
			for c, e := range h.New(srv.URL).Stream(ctx, user, fast) {
				if e != nil {
					err = e
				} else if c.Reply == nil {
					pieces++
				} else {
					t.Errorf("%s: a reply from a cut stream: %+v", name, c.Reply.Message)
				}
			}
			if !errors.Is(err, model.ErrStreamCut) || pieces == 0 {
				t.Errorf("%s: err = %v after %d pieces, want ErrStreamCut", name, err, pieces)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%s: retried after pieces were streamed: %d requests", name, n)
			}
		}
	})

	t.Run("a stream cut before its first piece is retried", func(t *testing.T) {
		srv := NewServer(t, h.Wire, Response{Reply: TextReply, CutAfter: 1}, Response{Reply: TextReply})
		reply, err := h.New(srv.URL).Generate(ctx, user, fast)
		if err != nil || reply.Attempts != 2 || reply.Message.Content != "Hello, wörld!" {
			t.Errorf("err %v, reply %+v", err, reply)
		}
	})

	t.Run("cancelling stops the stream", func(t *testing.T) {
		srv := NewServer(t, h.Wire, Response{Reply: ToolReply, HangAfter: 5})
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		var err error
		for c, e := range h.New(srv.URL).Stream(cctx, user, fast) {
			if e != nil {
				err = e
			} else if c.Reply == nil {
				cancel()
			}
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		select {
		case <-srv.Gone():
		case <-time.After(10 * time.Second): // a safety net, not a timing assertion
			t.Error("the server still streams to a cancelled client")
		}
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("%d requests after a cancel", n)
		}
	})

	t.Run("in a graph, tokens stream and the call is recorded", func(t *testing.T) {
		srv := NewServer(t, h.Wire, Response{Reply: ToolReply}, Response{Reply: ToolReply, CutAfter: 7})
		m := h.New(srv.URL)
		msgs := engine.Messages("messages")
		g, err := engine.NewGraph("g", msgs).AddNode("agent", func(ctx context.Context, s engine.State) (engine.Output, error) {
			reply, err := m.Generate(ctx, msgs.Get(s), fast)
			if err != nil {
				return nil, err
			}
			return engine.Updates(msgs.Add(reply.Message)), nil
		}).AddEdge(engine.START, "agent").Compile(engine.WithSaver(memory.New()))
		if err != nil {
			t.Fatal(err)
		}
		var chunks []engine.Message
		var taskID string
		for ev, err := range g.Stream(ctx, engine.Values{"messages": user}, engine.ModeMessages, engine.WithThread("t")) {
			if err != nil {
				t.Fatal(err)
			}
			if ev.Message.Node != "agent" || ev.Message.TaskID == "" {
				t.Errorf("chunk tagged %q %q", ev.Message.Node, ev.Message.TaskID)
			}
			taskID = ev.Message.TaskID
			chunks = append(chunks, ev.Message.Message)
		}
		st, err := g.GetState(ctx, engine.WithThread("t"))
		if err != nil {
			t.Fatal(err)
		}
		stored := msgs.Get(engine.StateOf(st.Values))
		if len(stored) != 2 || len(chunks) == 0 {
			t.Fatalf("stored %d messages after %d chunks", len(stored), len(chunks))
		}
		if got := model.Join(chunks); !reflect.DeepEqual(got, stored[1]) {
			t.Errorf("chunks join into\n%+v\nstored\n%+v", got, stored[1])
		}
		hist, err := g.History(ctx, checkpoint.ListOptions{}, engine.WithThread("t"))
		if err != nil {
			t.Fatal(err)
		}
		var rec *engine.CallRecord
		for _, s := range hist {
			for _, ts := range s.Tasks {
				if ts.ID == taskID && len(ts.Calls) == 1 {
					rec = &ts.Calls[0]
				}
			}
		}
		if rec == nil {
			t.Fatal("no checkpoint holds the call's record")
		}
		if rec.Kind != engine.CallModel || rec.Name != "fake-model-1" || rec.InputTokens != 40 || rec.OutputTokens != 25 ||
			rec.FinishReason != model.FinishToolCalls || rec.FirstToken <= 0 || rec.Latency < rec.FirstToken ||
			rec.Reply == nil || !reflect.DeepEqual(rec.Reply.Message, stored[1]) || len(rec.Request) != 1 || rec.Request[0].Content != "Hi" {
			t.Errorf("record %+v", rec)
		}

		// A cut stream fails the node and writes nothing to the state.
		_, err = g.Invoke(ctx, engine.Values{"messages": []engine.Message{{ID: "u2", Role: engine.RoleUser, Content: "Again"}}}, engine.WithThread("t"))
		if !errors.Is(err, model.ErrStreamCut) {
			t.Fatalf("err = %v, want ErrStreamCut", err)
		}
		st, err = g.GetState(ctx, engine.WithThread("t"))
		if err != nil {
			t.Fatal(err)
		}
		if n := len(msgs.Get(engine.StateOf(st.Values))); n != 3 {
			t.Errorf("%d messages after the cut stream, want the 3 from before the call", n)
		}
		if len(st.Tasks) != 1 || st.Tasks[0].Error == "" || len(st.Tasks[0].Calls) != 1 || st.Tasks[0].Calls[0].Error == "" {
			t.Errorf("the failed task: %+v", st.Tasks)
		}
	})
}

// onlyRequest is the one request srv got, as w decodes it, and its body.
func onlyRequest(t *testing.T, w Wire, srv *Server) (Seen, []byte) {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	seen, err := w.Decode(reqs[0].Body)
	if err != nil {
		t.Fatalf("decoding the request: %v\n%s", err, reqs[0].Body)
	}
	return seen, reqs[0].Body
}
