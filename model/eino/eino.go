// Package eino adapts any chat model of CloudWeGo Eino (its
// model.BaseChatModel: the models of eino-ext for OpenAI, Ark, Claude,
// Gemini, Ollama, Qwen, …) to Weft's model.Provider, so they get Weft's
// retries, token streaming into a run's messages stream, and call records.
//
// It is a Go module of its own, so Eino and its dependencies stay out of
// the build of anyone who does not import it.
//
// What Eino's interface cannot carry is said here rather than guessed:
//
//   - structured output (model.WithResponseFormat) is an error: Eino's
//     common options have no response format; configure it on the Eino
//     model itself;
//   - the reply's model name is the call's or WithModelName's, and its
//     response id is unknown: Eino messages carry neither;
//   - HTTP statuses are read from the Eino model's errors when they expose
//     them (an int field HTTPStatusCode or StatusCode, or a StatusCode()
//     method, as go-openai-based models do), so rate limits and server
//     errors are retried; a Retry-After is honoured only from errors with a
//     RetryAfter() time.Duration method, else the backoff applies.
package eino

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"time"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"
	"github.com/eino-contrib/jsonschema"

	"github.com/weftstudio/weft/engine"
	wmodel "github.com/weftstudio/weft/model"
)

// Option configures a Provider.
type Option func(*Provider)

// WithModelName sets the model name replies and records report when a call
// names none (default "eino").
func WithModelName(name string) Option { return func(p *Provider) { p.name = name } }

// WithOptions passes Eino options to every call (implementation-specific
// ones included).
func WithOptions(opts ...model.Option) Option {
	return func(p *Provider) { p.opts = append(p.opts, opts...) }
}

// WithCallOptions sets Weft options of every call of the model New
// returns (temperature, retry policy, …).
func WithCallOptions(opts ...wmodel.Option) Option {
	return func(p *Provider) { p.defaults = append(p.defaults, opts...) }
}

// Provider calls an Eino chat model. Make one with NewProvider.
type Provider struct {
	m        model.BaseChatModel
	name     string
	opts     []model.Option
	defaults []wmodel.Option
}

// NewProvider returns a Provider calling m.
func NewProvider(m model.BaseChatModel, opts ...Option) *Provider {
	p := &Provider{m: m, name: "eino"}
	for _, o := range opts {
		o(p)
	}
	return p
}

// New returns a model.Model on a Provider calling m.
func New(m model.BaseChatModel, opts ...Option) *wmodel.Model {
	p := NewProvider(m, opts...)
	return wmodel.New(p, p.defaults...)
}

// Name returns "eino".
func (p *Provider) Name() string { return "eino" }

// Stream asks the Eino model to stream its reply to req.
func (p *Provider) Stream(ctx context.Context, req *wmodel.Request, out func(wmodel.Delta)) (*wmodel.Result, error) {
	if req.ResponseFormat != nil {
		return nil, errors.New("eino: Eino's chat model options have no response format; configure structured output on the Eino model")
	}
	msgs, err := messages(req.Messages)
	if err != nil {
		return nil, err
	}
	opts, err := p.options(req)
	if err != nil {
		return nil, err
	}
	sr, err := p.m.Stream(ctx, msgs, opts...)
	if err != nil {
		return nil, p.wrap(ctx, err, 0)
	}
	defer sr.Close()
	res := &wmodel.Result{Model: req.Model}
	if res.Model == "" {
		res.Model = p.name
	}
	chunks, open := 0, -1
	ids := map[string]int{}
	for {
		msg, err := sr.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, p.wrap(ctx, err, chunks)
		}
		chunks++
		if msg == nil {
			continue
		}
		if msg.Content != "" {
			out(wmodel.Delta{Text: msg.Content})
		}
		for _, tc := range msg.ToolCalls {
			// A call is its Index when the model gives one, else its id; a
			// piece with neither continues the call in progress.
			i := open
			switch {
			case tc.Index != nil:
				i = *tc.Index
			case tc.ID != "":
				if j, ok := ids[tc.ID]; ok {
					i = j
				} else {
					i = len(ids)
				}
			}
			if i < 0 {
				i = 0
			}
			if tc.ID != "" {
				ids[tc.ID] = i
			}
			open = i
			out(wmodel.Delta{Tool: true, ToolIndex: i, ToolID: tc.ID, ToolName: tc.Function.Name, ToolArgs: tc.Function.Arguments})
		}
		if rm := msg.ResponseMeta; rm != nil {
			if rm.FinishReason != "" {
				res.FinishReason = finishReason(rm.FinishReason)
			}
			if u := rm.Usage; u != nil && (u.PromptTokens != 0 || u.CompletionTokens != 0) {
				res.Usage = wmodel.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}
			}
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if res.FinishReason == "" {
		return nil, fmt.Errorf("eino: %w: no finish reason after %d chunks", wmodel.ErrStreamCut, chunks)
	}
	return res, nil
}

func finishReason(r string) string {
	switch r {
	case "end_turn", "stop_sequence", "STOP":
		return wmodel.FinishStop
	case "tool_use", "function_call":
		return wmodel.FinishToolCalls
	case "max_tokens", "MAX_TOKENS":
		return wmodel.FinishLength
	}
	return r
}

func (p *Provider) options(req *wmodel.Request) ([]model.Option, error) {
	opts := append([]model.Option(nil), p.opts...)
	if req.Model != "" {
		opts = append(opts, model.WithModel(req.Model))
	}
	if req.Temperature != nil {
		opts = append(opts, model.WithTemperature(float32(*req.Temperature)))
	}
	if req.MaxTokens > 0 {
		opts = append(opts, model.WithMaxTokens(req.MaxTokens))
	}
	if len(req.Stop) > 0 {
		opts = append(opts, model.WithStop(req.Stop))
	}
	if len(req.Tools) > 0 {
		infos := make([]*schema.ToolInfo, len(req.Tools))
		for i, t := range req.Tools {
			info := &schema.ToolInfo{Name: t.Name, Desc: t.Description}
			params := t.Parameters
			if len(params) == 0 {
				params = json.RawMessage(`{"type":"object","properties":{}}`)
			}
			var js jsonschema.Schema
			if err := json.Unmarshal(params, &js); err != nil {
				return nil, fmt.Errorf("eino: tool %q: parameters: %w", t.Name, err)
			}
			info.ParamsOneOf = schema.NewParamsOneOfByJSONSchema(&js)
			infos[i] = info
		}
		opts = append(opts, model.WithTools(infos))
	}
	switch req.ToolChoice.Mode {
	case wmodel.ToolAuto:
		opts = append(opts, model.WithToolChoice(schema.ToolChoiceAllowed))
	case wmodel.ToolNone:
		opts = append(opts, model.WithToolChoice(schema.ToolChoiceForbidden))
	case wmodel.ToolRequired:
		opts = append(opts, model.WithToolChoice(schema.ToolChoiceForced))
	case wmodel.ToolForced:
		opts = append(opts, model.WithToolChoice(schema.ToolChoiceForced, req.ToolChoice.Name))
	}
	return opts, nil
}

func messages(in []engine.Message) ([]*schema.Message, error) {
	out := make([]*schema.Message, 0, len(in))
	for _, m := range wmodel.LiftAttachments(in) { // Eino's tool messages take only text
		sm := &schema.Message{Content: m.Content, Name: m.Name}
		switch m.Role {
		case engine.RoleSystem:
			sm.Role = schema.System
		case engine.RoleUser:
			sm.Role = schema.User
			if sm.UserInputMultiContent = userParts(m); sm.UserInputMultiContent != nil {
				sm.Content = "" // the text is the first part: Eino takes one or the other
			}
		case engine.RoleAssistant:
			sm.Role = schema.Assistant
			for _, c := range m.ToolCalls {
				args := c.Args
				if args == "" {
					args = "{}"
				}
				sm.ToolCalls = append(sm.ToolCalls, schema.ToolCall{ID: c.ID, Type: "function", Function: schema.FunctionCall{Name: c.Name, Arguments: args}})
			}
		case engine.RoleTool:
			sm.Role = schema.Tool
			sm.ToolCallID = m.ToolCallID
			sm.ToolName, sm.Name = m.Name, ""
		default:
			return nil, fmt.Errorf("eino: message %q has role %q, which Eino does not take", m.ID, m.Role)
		}
		out = append(out, sm)
	}
	return out, nil
}

// wrap turns an Eino model's error into the ones model.Provider promises.
func (p *Provider) wrap(ctx context.Context, err error, chunks int) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if status := statusOf(err); status >= 400 {
		ae := &wmodel.APIError{Provider: "eino", Status: status, Message: err.Error()}
		var ra interface{ RetryAfter() time.Duration }
		if errors.As(err, &ra) {
			ae.RetryAfter = ra.RetryAfter()
		}
		return ae
	}
	if chunks > 0 {
		return fmt.Errorf("eino: %w after %d chunks: %w", wmodel.ErrStreamCut, chunks, err)
	}
	return fmt.Errorf("eino: %w", err)
}

// statusOf finds an HTTP status in err's chain: a StatusCode() method, or an
// int field HTTPStatusCode or StatusCode.
func statusOf(err error) int {
	for _, e := range chain(err) {
		if s, ok := e.(interface{ StatusCode() int }); ok {
			return s.StatusCode()
		}
		v := reflect.ValueOf(e)
		for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
			if v.IsNil() {
				break
			}
			v = v.Elem()
		}
		if v.Kind() != reflect.Struct {
			continue
		}
		for _, name := range []string{"HTTPStatusCode", "StatusCode"} {
			if f := v.FieldByName(name); f.IsValid() && f.CanInt() && f.Int() >= 100 && f.Int() < 600 {
				return int(f.Int())
			}
		}
	}
	return 0
}

// chain lists err and every error it wraps, depth first.
func chain(err error) []error {
	var out []error
	var walk func(error)
	walk = func(e error) {
		if e == nil || len(out) > 64 {
			return
		}
		out = append(out, e)
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		case interface{ Unwrap() []error }:
			for _, x := range u.Unwrap() {
				walk(x)
			}
		}
	}
	walk(err)
	return out
}

// userParts is a user message with attachments as Eino's input parts:
// images, and WAV audio, which Eino's OpenAI model sends; nil
// without attachments. Other files are left out (Eino's OpenAI model
// refuses them); the text that names them still reaches the model.
func userParts(m engine.Message) []schema.MessageInputPart {
	if len(m.Attachments) == 0 {
		return nil
	}
	parts := []schema.MessageInputPart{{Type: schema.ChatMessagePartTypeText, Text: m.Content}}
	for _, a := range m.Attachments {
		b64 := base64.StdEncoding.EncodeToString(a.Data)
		common := schema.MessagePartCommon{Base64Data: &b64, MIMEType: a.MIMEType}
		switch {
		case a.Kind == engine.AttachImage && a.MIMEType != "":
			parts = append(parts, schema.MessageInputPart{Type: schema.ChatMessagePartTypeImageURL, Image: &schema.MessageInputImage{MessagePartCommon: common}})
		case a.Kind == engine.AttachAudio && a.MIMEType == "audio/wav":
			// Only WAV: Eino's OpenAI model (eino-ext acl/openai v0.1.11) maps
			// audio/mpeg to "wav", so MP3 would be sent mislabelled.
			parts = append(parts, schema.MessageInputPart{Type: schema.ChatMessagePartTypeAudioURL, Audio: &schema.MessageInputAudio{MessagePartCommon: common}})
		}
	}
	return parts
}
