// Package modeltest is the conformance suite every model adapter passes
// (Run), and the fake provider servers it runs them against: httptest
// servers that stream scripted replies in a provider's real wire format
// (server-sent events exactly as the provider's API reference shows them)
// and answer with its real error bodies. No test here reaches a real
// provider.
package modeltest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/weftstudio/weft/model"
)

// Reply is a scripted reply: text pieces, then tool calls whose argument
// fragments are streamed one by one, then the finish and the usage.
type Reply struct {
	ID    string
	Model string
	Text  []string
	Calls []Call
	// Finish is a model.Finish* reason; "" is FinishToolCalls when there are
	// calls, else FinishStop.
	Finish string
	Usage  model.Usage
}

// Call is a scripted tool call; Args are the fragments its arguments
// stream in.
type Call struct {
	ID   string
	Name string
	Args []string
}

func (r Reply) finish() string {
	switch {
	case r.Finish != "":
		return r.Finish
	case len(r.Calls) > 0:
		return model.FinishToolCalls
	}
	return model.FinishStop
}

// Wire is a provider's HTTP API as the fake server speaks it.
type Wire interface {
	// Name names the wire format ("openai", "anthropic").
	Name() string
	// Path is the path the API's streaming requests go to.
	Path() string
	// Events returns the SSE frames streaming r, each whole with its
	// terminating blank line.
	Events(r Reply) []string
	// ErrorBody returns the body of an error response.
	ErrorBody(status int, message string) []byte
	// Decode reads a request body into what the suite checks.
	Decode(body []byte) (Seen, error)
}

// Seen is a request as the server received it, in provider-neutral terms.
type Seen struct {
	Model       string
	Stream      bool
	Messages    []SeenMessage
	Tools       []SeenTool
	Temperature *float64
	MaxTokens   int
	// ToolChoice is "" (not sent), "auto", "none", "required" or
	// "tool:<name>".
	ToolChoice string
	// Schema is the structured-output schema (canonical JSON), "" if none.
	Schema string
	Stop   []string
}

// SeenMessage is one message of a request. Args of calls are canonical
// JSON.
type SeenMessage struct {
	Role       string
	Content    string
	ToolCalls  []Call
	ToolCallID string
	// Attachments are the message's images and files, each as the data
	// URL's tail: "image/png;base64,iVBOR…".
	Attachments []string
}

// SeenTool is one offered tool; Parameters is canonical JSON.
type SeenTool struct {
	Name        string
	Description string
	Parameters  string
}

func frame(event string, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	if event == "" {
		return "data: " + string(b) + "\n\n"
	}
	return "event: " + event + "\ndata: " + string(b) + "\n\n"
}

// canonical re-encodes JSON text with sorted keys and no spaces; text that
// is not JSON is returned as it is.
func canonical(s string) string {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func canonicalValue(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// OpenAI is the Chat Completions wire: "data: {chunk}" frames, the role in
// the first chunk, tool calls keyed by index with the id and name in their
// first chunk, the finish_reason in a chunk of its own, usage in a last
// chunk with no choices (stream_options.include_usage), then "data: [DONE]".
type OpenAI struct{}

// Name returns "openai".
func (OpenAI) Name() string { return "openai" }

// Path returns "/chat/completions".
func (OpenAI) Path() string { return "/chat/completions" }

// Events streams r as chat.completion.chunk objects.
func (OpenAI) Events(r Reply) []string {
	chunk := func(delta map[string]any, finish any) string {
		return frame("", map[string]any{"id": r.ID, "object": "chat.completion.chunk", "created": 1767225600, "model": r.Model,
			"system_fingerprint": "fp_weft", "choices": []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}},
			"usage": nil})
	}
	out := []string{chunk(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil)}
	for _, t := range r.Text {
		out = append(out, chunk(map[string]any{"content": t}, nil))
	}
	for i, c := range r.Calls {
		first := map[string]any{"index": i, "type": "function", "function": map[string]any{"name": c.Name, "arguments": ""}}
		if c.ID != "" {
			first["id"] = c.ID
		}
		out = append(out, chunk(map[string]any{"tool_calls": []any{first}}, nil))
		for _, a := range c.Args {
			out = append(out, chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": a}}}}, nil))
		}
	}
	out = append(out, chunk(map[string]any{}, r.finish()))
	out = append(out, frame("", map[string]any{"id": r.ID, "object": "chat.completion.chunk", "created": 1767225600, "model": r.Model,
		"system_fingerprint": "fp_weft", "choices": []any{}, "usage": map[string]any{
			"prompt_tokens": r.Usage.InputTokens, "completion_tokens": r.Usage.OutputTokens, "total_tokens": r.Usage.InputTokens + r.Usage.OutputTokens,
			"prompt_tokens_details":     map[string]any{"cached_tokens": 0, "audio_tokens": 0},
			"completion_tokens_details": map[string]any{"reasoning_tokens": 0, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}}))
	out = append(out, "data: [DONE]\n\n")
	return out
}

// ErrorBody is OpenAI's error object.
func (OpenAI) ErrorBody(status int, message string) []byte {
	typ := "invalid_request_error"
	code := any(nil)
	switch {
	case status == http.StatusTooManyRequests:
		typ, code = "requests", "rate_limit_exceeded"
	case status >= 500:
		typ = "server_error"
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": message, "type": typ, "param": nil, "code": code}})
	return b
}

// Decode reads a chat completion request.
func (OpenAI) Decode(body []byte) (Seen, error) {
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools []struct {
			Type     string `json:"type"`
			Function struct {
				Name        string         `json:"name"`
				Description string         `json:"description"`
				Parameters  map[string]any `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
		Temperature         *float64        `json:"temperature"`
		MaxTokens           int             `json:"max_tokens"`
		MaxCompletionTokens int             `json:"max_completion_tokens"`
		ToolChoice          json.RawMessage `json:"tool_choice"`
		ResponseFormat      *struct {
			Type       string `json:"type"`
			JSONSchema struct {
				Schema any `json:"schema"`
			} `json:"json_schema"`
		} `json:"response_format"`
		Stop json.RawMessage `json:"stop"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return Seen{}, err
	}
	s := Seen{Model: req.Model, Stream: req.Stream, Temperature: req.Temperature, MaxTokens: max(req.MaxTokens, req.MaxCompletionTokens)}
	for _, m := range req.Messages {
		sm := SeenMessage{Role: m.Role, ToolCallID: m.ToolCallID}
		var text string
		if json.Unmarshal(m.Content, &text) == nil {
			sm.Content = text
		} else {
			var parts []struct {
				Type     string
				Text     string
				ImageURL struct {
					URL string `json:"url"`
				} `json:"image_url"`
				InputAudio struct {
					Data   string `json:"data"`
					Format string `json:"format"`
				} `json:"input_audio"`
				File struct {
					FileData string `json:"file_data"`
				} `json:"file"`
			}
			_ = json.Unmarshal(m.Content, &parts)
			for _, p := range parts {
				switch p.Type {
				case "image_url":
					sm.Attachments = append(sm.Attachments, strings.TrimPrefix(p.ImageURL.URL, "data:"))
				case "input_audio":
					sm.Attachments = append(sm.Attachments, "audio/"+p.InputAudio.Format+";base64,"+p.InputAudio.Data)
				case "file":
					sm.Attachments = append(sm.Attachments, strings.TrimPrefix(p.File.FileData, "data:"))
				default:
					sm.Content += p.Text
				}
			}
		}
		for _, c := range m.ToolCalls {
			sm.ToolCalls = append(sm.ToolCalls, Call{ID: c.ID, Name: c.Function.Name, Args: []string{canonical(c.Function.Arguments)}})
		}
		s.Messages = append(s.Messages, sm)
	}
	for _, t := range req.Tools {
		s.Tools = append(s.Tools, SeenTool{Name: t.Function.Name, Description: t.Function.Description, Parameters: canonicalValue(t.Function.Parameters)})
	}
	if len(req.ToolChoice) > 0 {
		var mode string
		if json.Unmarshal(req.ToolChoice, &mode) == nil {
			s.ToolChoice = mode
		} else {
			var named struct{ Function struct{ Name string } }
			_ = json.Unmarshal(req.ToolChoice, &named)
			s.ToolChoice = "tool:" + named.Function.Name
		}
	}
	if req.ResponseFormat != nil && req.ResponseFormat.Type == "json_schema" {
		s.Schema = canonicalValue(req.ResponseFormat.JSONSchema.Schema)
	}
	if len(req.Stop) > 0 {
		var one string
		if json.Unmarshal(req.Stop, &one) == nil {
			s.Stop = []string{one}
		} else {
			_ = json.Unmarshal(req.Stop, &s.Stop)
		}
	}
	return s, nil
}

// Anthropic is the Messages wire: "event: <type>\ndata: {…}" frames —
// message_start (with input usage), a content block per text and tool_use
// (tool input as input_json_delta fragments), a ping, message_delta with the
// stop_reason and output usage, then message_stop.
type Anthropic struct{}

// Name returns "anthropic".
func (Anthropic) Name() string { return "anthropic" }

// Path returns "/v1/messages".
func (Anthropic) Path() string { return "/v1/messages" }

// Events streams r as Messages API events.
func (Anthropic) Events(r Reply) []string {
	out := []string{frame("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": r.ID, "type": "message", "role": "assistant", "model": r.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": r.Usage.InputTokens, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 1}}})}
	idx := 0
	if len(r.Text) > 0 {
		out = append(out, frame("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "text", "text": ""}}))
		out = append(out, frame("ping", map[string]any{"type": "ping"}))
		for _, t := range r.Text {
			out = append(out, frame("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "text_delta", "text": t}}))
		}
		out = append(out, frame("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx}))
		idx++
	}
	for _, c := range r.Calls {
		out = append(out, frame("content_block_start", map[string]any{"type": "content_block_start", "index": idx,
			"content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}}))
		out = append(out, frame("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "input_json_delta", "partial_json": ""}}))
		for _, a := range c.Args {
			out = append(out, frame("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "input_json_delta", "partial_json": a}}))
		}
		out = append(out, frame("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx}))
		idx++
	}
	stop := map[string]string{model.FinishStop: "end_turn", model.FinishToolCalls: "tool_use", model.FinishLength: "max_tokens", model.FinishContentFilter: "refusal"}[r.finish()]
	out = append(out, frame("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": r.Usage.OutputTokens}}))
	out = append(out, frame("message_stop", map[string]any{"type": "message_stop"}))
	return out
}

// ErrorBody is Anthropic's error object.
func (Anthropic) ErrorBody(status int, message string) []byte {
	typ := "invalid_request_error"
	switch {
	case status == http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case status == 529:
		typ = "overloaded_error"
	case status >= 500:
		typ = "api_error"
	}
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": message}, "request_id": "req_weft"})
	return b
}

// Decode reads a Messages request: the system prompt becomes a leading
// system message, tool_result blocks tool messages, tool_use blocks tool
// calls.
func (Anthropic) Decode(body []byte) (Seen, error) {
	var req struct {
		Model     string `json:"model"`
		Stream    bool   `json:"stream"`
		MaxTokens int    `json:"max_tokens"`
		System    []struct {
			Text string `json:"text"`
		} `json:"system"`
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type      string          `json:"type"`
				Text      string          `json:"text"`
				ID        string          `json:"id"`
				Name      string          `json:"name"`
				Input     json.RawMessage `json:"input"`
				ToolUseID string          `json:"tool_use_id"`
				Content   json.RawMessage `json:"content"`
				Source    source          `json:"source"`
			} `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name        string         `json:"name"`
			Description string         `json:"description"`
			InputSchema map[string]any `json:"input_schema"`
		} `json:"tools"`
		Temperature *float64 `json:"temperature"`
		ToolChoice  *struct {
			Type string `json:"type"`
			Name string `json:"name"`
		} `json:"tool_choice"`
		OutputConfig *struct {
			Format *struct {
				Schema any `json:"schema"`
			} `json:"format"`
		} `json:"output_config"`
		StopSequences []string `json:"stop_sequences"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return Seen{}, err
	}
	s := Seen{Model: req.Model, Stream: req.Stream, MaxTokens: req.MaxTokens, Temperature: req.Temperature, Stop: req.StopSequences}
	for _, sys := range req.System {
		s.Messages = append(s.Messages, SeenMessage{Role: "system", Content: sys.Text})
	}
	for _, m := range req.Messages {
		var cur *SeenMessage
		flush := func() {
			if cur != nil {
				s.Messages = append(s.Messages, *cur)
				cur = nil
			}
		}
		for _, b := range m.Content {
			switch b.Type {
			case "text":
				if cur == nil {
					cur = &SeenMessage{Role: m.Role}
				}
				cur.Content += b.Text
			case "tool_use":
				if cur == nil {
					cur = &SeenMessage{Role: m.Role}
				}
				cur.ToolCalls = append(cur.ToolCalls, Call{ID: b.ID, Name: b.Name, Args: []string{canonical(string(b.Input))}})
			case "image", "document":
				if cur == nil {
					cur = &SeenMessage{Role: m.Role}
				}
				cur.Attachments = append(cur.Attachments, b.Source.dataURL())
			case "tool_result":
				flush()
				tm := SeenMessage{Role: "tool", ToolCallID: b.ToolUseID}
				if json.Unmarshal(b.Content, &tm.Content) != nil {
					var parts []struct {
						Type   string
						Text   string
						Source source
					}
					_ = json.Unmarshal(b.Content, &parts)
					for _, p := range parts {
						if p.Type == "image" || p.Type == "document" {
							tm.Attachments = append(tm.Attachments, p.Source.dataURL())
						}
						tm.Content += p.Text
					}
				}
				s.Messages = append(s.Messages, tm)
			default:
				return s, fmt.Errorf("content block of type %q", b.Type)
			}
		}
		flush()
	}
	for _, t := range req.Tools {
		s.Tools = append(s.Tools, SeenTool{Name: t.Name, Description: t.Description, Parameters: canonicalValue(t.InputSchema)})
	}
	if tc := req.ToolChoice; tc != nil {
		switch tc.Type {
		case "any":
			s.ToolChoice = "required"
		case "tool":
			s.ToolChoice = "tool:" + tc.Name
		default:
			s.ToolChoice = tc.Type
		}
	}
	if oc := req.OutputConfig; oc != nil && oc.Format != nil {
		s.Schema = canonicalValue(oc.Format.Schema)
	}
	return s, nil
}

// source is the base64 source of an Anthropic image or document block.
type source struct {
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

func (s source) dataURL() string { return s.MediaType + ";base64," + s.Data }
