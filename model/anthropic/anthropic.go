// Package anthropic is a model.Provider for Anthropic's Messages API
// (Claude), on Anthropic's own Go SDK (github.com/anthropics/anthropic-sdk-go).
//
// The key and base URL come from the options or, as the SDK reads them,
// from ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) and ANTHROPIC_BASE_URL.
// Replies are always streamed.
//
// Engine messages map onto the API's content blocks: system messages
// become the system prompt (wherever they are in the conversation), an
// assistant's tool calls become tool_use blocks, and tool messages become
// tool_result blocks of a user turn (consecutive ones in one turn, as the
// API wants). The API requires max_tokens: DefaultMaxTokens when the call
// sets none. Extended thinking blocks, when a model streams them, are not
// part of the reply's text. The SDK's own retries are turned off:
// model.Model retries.
package anthropic

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/model"
)

// Defaults of a call that names no model or token limit.
const (
	DefaultModel     = string(anthropic.ModelClaudeSonnet4_6)
	DefaultMaxTokens = 4096
)

// Option configures a Provider.
type Option func(*Provider)

// WithAPIKey sets the API key (default: $ANTHROPIC_API_KEY).
func WithAPIKey(key string) Option {
	return func(p *Provider) { p.opts = append(p.opts, option.WithAPIKey(key)) }
}

// WithBaseURL points the provider at another server speaking the API
// (default: $ANTHROPIC_BASE_URL, else Anthropic's).
func WithBaseURL(url string) Option {
	return func(p *Provider) { p.opts = append(p.opts, option.WithBaseURL(url)) }
}

// WithModel names the default model (default DefaultModel).
func WithModel(name string) Option { return func(p *Provider) { p.model = name } }

// WithHTTPClient sends requests through c.
func WithHTTPClient(c *http.Client) Option {
	return func(p *Provider) { p.opts = append(p.opts, option.WithHTTPClient(c)) }
}

// WithRequestOptions passes options to the SDK as they are.
func WithRequestOptions(opts ...option.RequestOption) Option {
	return func(p *Provider) { p.opts = append(p.opts, opts...) }
}

// WithCallOptions sets options of every call of the model New returns
// (max tokens, retry policy, …); a call's own options come after them.
func WithCallOptions(opts ...model.Option) Option {
	return func(p *Provider) { p.defaults = append(p.defaults, opts...) }
}

// Provider calls the Messages API. Make one with NewProvider.
type Provider struct {
	client   anthropic.Client
	opts     []option.RequestOption
	model    string
	defaults []model.Option
}

// NewProvider returns a Provider with opts.
func NewProvider(opts ...Option) *Provider {
	p := &Provider{model: DefaultModel}
	for _, o := range opts {
		o(p)
	}
	p.opts = append(p.opts, option.WithMaxRetries(0))
	p.client = anthropic.NewClient(p.opts...)
	return p
}

// New returns a model.Model calling a Provider with opts.
func New(opts ...Option) *model.Model {
	p := NewProvider(opts...)
	return model.New(p, p.defaults...)
}

// Name returns "anthropic".
func (p *Provider) Name() string { return "anthropic" }

// Stream sends req as a streamed message and passes its pieces to out.
func (p *Provider) Stream(ctx context.Context, req *model.Request, out func(model.Delta)) (*model.Result, error) {
	params, err := p.params(req)
	if err != nil {
		return nil, err
	}
	var extra []option.RequestOption
	if req.Temperature != nil {
		// The SDK's v2 params no longer carry it; the API judges whether the
		// model takes it, and says so if not.
		extra = append(extra, option.WithJSONSet("temperature", *req.Temperature))
	}
	stream := p.client.Messages.NewStreaming(ctx, params, extra...)
	defer stream.Close()
	res := &model.Result{}
	var (
		events  int
		stopped bool
		tools   = map[int64]int{} // content block index → tool call index
	)
	for stream.Next() {
		ev := stream.Current()
		events++
		switch ev.Type {
		case "message_start":
			res.Model, res.ResponseID = string(ev.Message.Model), ev.Message.ID
			res.Usage.InputTokens = int(ev.Message.Usage.InputTokens + ev.Message.Usage.CacheCreationInputTokens + ev.Message.Usage.CacheReadInputTokens)
			res.Usage.OutputTokens = int(ev.Message.Usage.OutputTokens)
		case "content_block_start":
			if ev.ContentBlock.Type == "tool_use" {
				i := len(tools)
				tools[ev.Index] = i
				out(model.Delta{Tool: true, ToolIndex: i, ToolID: ev.ContentBlock.ID, ToolName: ev.ContentBlock.Name})
			} else if ev.ContentBlock.Type == "text" && ev.ContentBlock.Text != "" {
				out(model.Delta{Text: ev.ContentBlock.Text})
			}
		case "content_block_delta":
			switch ev.Delta.Type {
			case "text_delta":
				if ev.Delta.Text != "" {
					out(model.Delta{Text: ev.Delta.Text})
				}
			case "input_json_delta":
				if i, ok := tools[ev.Index]; ok && ev.Delta.PartialJSON != "" {
					out(model.Delta{Tool: true, ToolIndex: i, ToolArgs: ev.Delta.PartialJSON})
				}
			}
		case "message_delta":
			res.FinishReason = finishReason(string(ev.Delta.StopReason))
			// Counts here are cumulative totals for the message.
			res.Usage.OutputTokens = int(ev.Usage.OutputTokens)
			if ev.Usage.JSON.InputTokens.Valid() && ev.Usage.InputTokens > 0 {
				res.Usage.InputTokens = int(ev.Usage.InputTokens + ev.Usage.CacheCreationInputTokens + ev.Usage.CacheReadInputTokens)
			}
		case "message_stop":
			stopped = true
		}
	}
	if err := stream.Err(); err != nil {
		return nil, p.wrap(ctx, err, events)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if !stopped {
		return nil, fmt.Errorf("anthropic: %w: no message_stop after %d events", model.ErrStreamCut, events)
	}
	// Tool calls whose input streamed no delta have the empty object.
	return res, nil
}

func (p *Provider) wrap(ctx context.Context, err error, events int) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var ae *anthropic.Error
	if errors.As(err, &ae) {
		status := ae.StatusCode
		if status < 400 { // an error event in the middle of a 200 stream
			switch ae.Type() {
			case "rate_limit_error":
				status = http.StatusTooManyRequests
			case "overloaded_error":
				status = 529
			default:
				status = http.StatusInternalServerError
			}
		}
		msg := ae.Message
		if msg == "" {
			msg = strings.TrimSpace(ae.RawJSON())
		}
		var h http.Header
		if ae.Response != nil && ae.StatusCode >= 400 {
			h = ae.Response.Header
		}
		return &model.APIError{Provider: "anthropic", Status: status, RetryAfter: model.RetryAfterOf(h), Message: msg}
	}
	if events > 0 {
		return fmt.Errorf("anthropic: %w after %d events: %w", model.ErrStreamCut, events, err)
	}
	return fmt.Errorf("anthropic: %w", err)
}

func finishReason(r string) string {
	switch r {
	case "end_turn", "stop_sequence", "pause_turn":
		return model.FinishStop
	case "tool_use":
		return model.FinishToolCalls
	case "max_tokens", "model_context_window_exceeded":
		return model.FinishLength
	case "refusal":
		return model.FinishContentFilter
	}
	return r
}

func (p *Provider) params(req *model.Request) (anthropic.MessageNewParams, error) {
	name := req.Model
	if name == "" {
		name = p.model
	}
	params := anthropic.MessageNewParams{Model: anthropic.Model(name), MaxTokens: DefaultMaxTokens}
	if req.MaxTokens > 0 {
		params.MaxTokens = int64(req.MaxTokens)
	}
	var turn *anthropic.MessageParam // the user turn tool results and text gather in
	for _, m := range req.Messages {
		switch m.Role {
		case engine.RoleSystem, "developer":
			params.System = append(params.System, anthropic.TextBlockParam{Text: m.Content})
			continue
		case engine.RoleUser, engine.RoleTool:
			var blocks []anthropic.ContentBlockParamUnion
			if m.Role == engine.RoleTool {
				// A tool result takes images and documents beside its text.
				block := anthropic.NewToolResultBlock(m.ToolCallID, m.Content, false)
				for _, b := range attachmentBlocks(m.Attachments) {
					block.OfToolResult.Content = append(block.OfToolResult.Content,
						anthropic.ToolResultBlockParamContentUnion{OfImage: b.OfImage, OfDocument: b.OfDocument})
				}
				blocks = []anthropic.ContentBlockParamUnion{block}
			} else {
				blocks = attachmentBlocks(m.Attachments)
				if m.Content != "" || len(blocks) == 0 {
					blocks = append([]anthropic.ContentBlockParamUnion{anthropic.NewTextBlock(m.Content)}, blocks...)
				}
			}
			if turn != nil {
				turn.OfUser.Content = append(turn.OfUser.Content, blocks...)
				continue
			}
			params.Messages = append(params.Messages, anthropic.NewUserMessage(blocks...))
			turn = &params.Messages[len(params.Messages)-1]
			continue
		case engine.RoleAssistant:
			var blocks []anthropic.ContentBlockParamUnion
			if m.Content != "" {
				blocks = append(blocks, anthropic.NewTextBlock(m.Content))
			}
			for _, c := range m.ToolCalls {
				args := json.RawMessage(c.Args)
				if strings.TrimSpace(c.Args) == "" {
					args = json.RawMessage("{}")
				}
				if !json.Valid(args) {
					return params, fmt.Errorf("anthropic: message %q: tool call %q has arguments that are not JSON", m.ID, c.ID)
				}
				blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, args, c.Name))
			}
			if len(blocks) > 0 { // the API rejects empty text blocks: an empty reply is left out
				params.Messages = append(params.Messages, anthropic.NewAssistantMessage(blocks...))
			}
		default:
			return params, fmt.Errorf("anthropic: message %q has role %q, which the API does not take", m.ID, m.Role)
		}
		turn = nil
	}
	for _, t := range req.Tools {
		schema := anthropic.ToolInputSchemaParam{Properties: map[string]any{}}
		if len(t.Parameters) > 0 {
			var obj map[string]any
			if err := json.Unmarshal(t.Parameters, &obj); err != nil {
				return params, fmt.Errorf("anthropic: tool %q: parameters are not a JSON object: %w", t.Name, err)
			}
			if props, ok := obj["properties"]; ok {
				schema.Properties = props
			}
			if req, ok := obj["required"].([]any); ok {
				for _, r := range req {
					if s, ok := r.(string); ok {
						schema.Required = append(schema.Required, s)
					}
				}
			}
			delete(obj, "properties")
			delete(obj, "required")
			delete(obj, "type")
			if len(obj) > 0 {
				schema.ExtraFields = obj
			}
		}
		tp := anthropic.ToolParam{Name: t.Name, InputSchema: schema}
		if t.Description != "" {
			tp.Description = param.NewOpt(t.Description)
		}
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: &tp})
	}
	switch req.ToolChoice.Mode {
	case model.ToolAuto:
		params.ToolChoice.OfAuto = &anthropic.ToolChoiceAutoParam{}
	case model.ToolNone:
		params.ToolChoice.OfNone = &anthropic.ToolChoiceNoneParam{}
	case model.ToolRequired:
		params.ToolChoice.OfAny = &anthropic.ToolChoiceAnyParam{}
	case model.ToolForced:
		params.ToolChoice.OfTool = &anthropic.ToolChoiceToolParam{Name: req.ToolChoice.Name}
	}
	if rf := req.ResponseFormat; rf != nil {
		var schema map[string]any
		if err := json.Unmarshal(rf.Schema, &schema); err != nil {
			return params, fmt.Errorf("anthropic: response format %q: schema is not a JSON object: %w", rf.Name, err)
		}
		params.OutputConfig.Format = anthropic.JSONOutputFormatParam{Schema: schema}
	}
	if len(req.Stop) > 0 {
		params.StopSequences = req.Stop
	}
	return params, nil
}

// attachmentBlocks are the attachments the Messages API takes as content:
// JPEG, PNG, GIF and WebP images, and PDFs. Others are left out; the text
// that names them still reaches the model.
func attachmentBlocks(as []engine.Attachment) []anthropic.ContentBlockParamUnion {
	var out []anthropic.ContentBlockParamUnion
	for _, a := range as {
		b64 := base64.StdEncoding.EncodeToString(a.Data)
		switch {
		case a.Kind == engine.AttachImage && imageTypes[a.MIMEType]:
			out = append(out, anthropic.NewImageBlockBase64(a.MIMEType, b64))
		case a.MIMEType == "application/pdf":
			out = append(out, anthropic.NewDocumentBlock(anthropic.Base64PDFSourceParam{Data: b64}))
		}
	}
	return out
}

// imageTypes are the image types the Messages API reads.
var imageTypes = map[string]bool{"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true}
