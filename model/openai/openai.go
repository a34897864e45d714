// Package openai is a model.Provider for OpenAI's Chat Completions API and
// every server that speaks it (Ollama, vLLM, llama.cpp's server, LM Studio,
// …), on OpenAI's own Go SDK (github.com/openai/openai-go).
//
// The key and base URL come from the options or, as the SDK reads them,
// from OPENAI_API_KEY and OPENAI_BASE_URL. A server that needs no key gets
// none. Replies are always streamed, with usage requested in the final
// chunk (stream_options.include_usage).
//
// The SDK's own retries are turned off: model.Model retries, with one
// policy for every provider.
package openai

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/model"
)

// DefaultModel is the model called when neither the provider nor the call
// names one.
const DefaultModel = "gpt-4.1-mini"

// Option configures a Provider.
type Option func(*Provider)

// WithAPIKey sets the API key (default: $OPENAI_API_KEY).
func WithAPIKey(key string) Option {
	return func(p *Provider) { p.opts = append(p.opts, option.WithAPIKey(key)) }
}

// WithBaseURL points the provider at another server speaking the API, such
// as "http://localhost:11434/v1" for Ollama (default: $OPENAI_BASE_URL, else
// OpenAI's).
func WithBaseURL(url string) Option {
	return func(p *Provider) {
		p.opts = append(p.opts, option.WithBaseURL(url))
		p.compatible = true
	}
}

// WithModel names the default model (default DefaultModel).
func WithModel(name string) Option { return func(p *Provider) { p.model = name } }

// WithHTTPClient sends requests through c.
func WithHTTPClient(c *http.Client) Option {
	return func(p *Provider) { p.opts = append(p.opts, option.WithHTTPClient(c)) }
}

// WithRequestOptions passes options to the SDK as they are (headers,
// organisation, middleware, …).
func WithRequestOptions(opts ...option.RequestOption) Option {
	return func(p *Provider) { p.opts = append(p.opts, opts...) }
}

// WithCallOptions sets options of every call of the model New returns
// (temperature, max tokens, retry policy, …); a call's own options come
// after them.
func WithCallOptions(opts ...model.Option) Option {
	return func(p *Provider) { p.defaults = append(p.defaults, opts...) }
}

// Provider calls the Chat Completions API. Make one with NewProvider.
type Provider struct {
	client   openai.Client
	opts     []option.RequestOption
	model    string
	defaults []model.Option
	// compatible is set for a server other than OpenAI's: it gets
	// max_tokens, which such servers know, instead of max_completion_tokens.
	compatible bool
}

// NewProvider returns a Provider with opts.
func NewProvider(opts ...Option) *Provider {
	p := &Provider{model: DefaultModel}
	for _, o := range opts {
		o(p)
	}
	p.opts = append(p.opts, option.WithMaxRetries(0))
	p.client = openai.NewClient(p.opts...)
	return p
}

// New returns a model.Model calling a Provider with opts.
func New(opts ...Option) *model.Model {
	p := NewProvider(opts...)
	return model.New(p, p.defaults...)
}

// Name returns "openai".
func (p *Provider) Name() string { return "openai" }

// Stream sends req as a streamed chat completion and passes its pieces to
// out.
func (p *Provider) Stream(ctx context.Context, req *model.Request, out func(model.Delta)) (*model.Result, error) {
	params, err := p.params(req)
	if err != nil {
		return nil, err
	}
	stream := p.client.Chat.Completions.NewStreaming(ctx, params)
	defer stream.Close()
	res := &model.Result{}
	finished, chunks := false, 0
	for stream.Next() {
		c := stream.Current()
		chunks++
		if c.Model != "" {
			res.Model = c.Model
		}
		if c.ID != "" {
			res.ResponseID = c.ID
		}
		if c.JSON.Usage.Valid() && (c.Usage.PromptTokens != 0 || c.Usage.CompletionTokens != 0) {
			res.Usage = model.Usage{InputTokens: int(c.Usage.PromptTokens), OutputTokens: int(c.Usage.CompletionTokens)}
		}
		for _, ch := range c.Choices {
			if ch.Index != 0 {
				continue // one reply asked for; n > 1 is not used
			}
			if ch.Delta.Content != "" {
				out(model.Delta{Text: ch.Delta.Content})
			}
			if ch.Delta.Refusal != "" {
				out(model.Delta{Text: ch.Delta.Refusal})
			}
			for _, tc := range ch.Delta.ToolCalls {
				out(model.Delta{Tool: true, ToolIndex: int(tc.Index), ToolID: tc.ID, ToolName: tc.Function.Name, ToolArgs: tc.Function.Arguments})
			}
			if ch.FinishReason != "" {
				finished = true
				res.FinishReason = finishReason(ch.FinishReason)
			}
		}
	}
	if err := stream.Err(); err != nil {
		return nil, p.wrap(ctx, err, chunks)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if !finished {
		return nil, fmt.Errorf("openai: %w: no finish_reason after %d chunks", model.ErrStreamCut, chunks)
	}
	return res, nil
}

// wrap turns the SDK's errors into the ones model.Provider promises.
func (p *Provider) wrap(ctx context.Context, err error, chunks int) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var ae *openai.Error
	if errors.As(err, &ae) {
		msg := ae.Message
		if msg == "" {
			msg = strings.TrimSpace(ae.RawJSON())
		}
		var h http.Header
		if ae.Response != nil {
			h = ae.Response.Header
		}
		return &model.APIError{Provider: "openai", Status: ae.StatusCode, RetryAfter: model.RetryAfterOf(h), Message: msg}
	}
	if chunks > 0 {
		return fmt.Errorf("openai: %w after %d chunks: %w", model.ErrStreamCut, chunks, err)
	}
	return fmt.Errorf("openai: %w", err)
}

func finishReason(r string) string {
	switch r {
	case "function_call":
		return model.FinishToolCalls
	}
	return r // stop, length, tool_calls, content_filter: already ours
}

func (p *Provider) params(req *model.Request) (openai.ChatCompletionNewParams, error) {
	name := req.Model
	if name == "" {
		name = p.model
	}
	params := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(name),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)},
	}
	for _, m := range model.LiftAttachments(req.Messages) { // tool messages take only text
		mp, err := message(m)
		if err != nil {
			return params, err
		}
		params.Messages = append(params.Messages, mp)
	}
	for _, t := range req.Tools {
		fp := shared.FunctionParameters{"type": "object", "properties": map[string]any{}}
		if len(t.Parameters) > 0 {
			fp = shared.FunctionParameters{}
			if err := json.Unmarshal(t.Parameters, &fp); err != nil {
				return params, fmt.Errorf("openai: tool %q: parameters are not a JSON object: %w", t.Name, err)
			}
		}
		def := shared.FunctionDefinitionParam{Name: t.Name, Parameters: fp}
		if t.Description != "" {
			def.Description = param.NewOpt(t.Description)
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(def))
	}
	if req.Temperature != nil {
		params.Temperature = param.NewOpt(*req.Temperature)
	}
	if req.MaxTokens > 0 {
		if p.compatible {
			params.MaxTokens = param.NewOpt(int64(req.MaxTokens))
		} else {
			params.MaxCompletionTokens = param.NewOpt(int64(req.MaxTokens))
		}
	}
	switch req.ToolChoice.Mode {
	case model.ToolAuto:
		params.ToolChoice.OfAuto = param.NewOpt("auto")
	case model.ToolNone:
		params.ToolChoice.OfAuto = param.NewOpt("none")
	case model.ToolRequired:
		params.ToolChoice.OfAuto = param.NewOpt("required")
	case model.ToolForced:
		params.ToolChoice = openai.ToolChoiceOptionFunctionToolChoice(openai.ChatCompletionNamedToolChoiceFunctionParam{Name: req.ToolChoice.Name})
	}
	if rf := req.ResponseFormat; rf != nil {
		var schema map[string]any
		if err := json.Unmarshal(rf.Schema, &schema); err != nil {
			return params, fmt.Errorf("openai: response format %q: schema is not a JSON object: %w", rf.Name, err)
		}
		params.ResponseFormat.OfJSONSchema = &shared.ResponseFormatJSONSchemaParam{JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{
			Name: rf.Name, Schema: schema, Strict: param.NewOpt(true)}}
	}
	if len(req.Stop) > 0 {
		params.Stop.OfStringArray = req.Stop
	}
	return params, nil
}

func message(m engine.Message) (openai.ChatCompletionMessageParamUnion, error) {
	switch m.Role {
	case engine.RoleSystem:
		return openai.SystemMessage(m.Content), nil
	case "developer":
		return openai.DeveloperMessage(m.Content), nil
	case engine.RoleUser:
		u := openai.UserMessage(m.Content)
		if len(m.Attachments) > 0 {
			u = openai.UserMessage(userParts(m))
		}
		if m.Name != "" {
			u.OfUser.Name = param.NewOpt(m.Name)
		}
		return u, nil
	case engine.RoleTool:
		return openai.ToolMessage(m.Content, m.ToolCallID), nil
	case engine.RoleAssistant:
		a := openai.ChatCompletionAssistantMessageParam{}
		if m.Content != "" {
			a.Content.OfString = param.NewOpt(m.Content)
		}
		if m.Name != "" {
			a.Name = param.NewOpt(m.Name)
		}
		for _, c := range m.ToolCalls {
			args := c.Args
			if args == "" {
				args = "{}"
			}
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
				ID: c.ID, Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: args}}})
		}
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	}
	return openai.ChatCompletionMessageParamUnion{}, fmt.Errorf("openai: message %q has role %q, which the API does not take", m.ID, m.Role)
}

// userParts is a user message with attachments as content parts: images
// as data URLs, WAV and MP3 audio as input audio, other files (a PDF) as
// file data. What the API takes nowhere (other audio) is left out: the
// text that names it still reaches the model.
func userParts(m engine.Message) []openai.ChatCompletionContentPartUnionParam {
	var parts []openai.ChatCompletionContentPartUnionParam
	if m.Content != "" {
		parts = append(parts, openai.TextContentPart(m.Content))
	}
	for i, a := range m.Attachments {
		b64 := base64.StdEncoding.EncodeToString(a.Data)
		switch a.Kind {
		case engine.AttachImage:
			parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: "data:" + a.MIMEType + ";base64," + b64}))
		case engine.AttachAudio:
			if f, ok := audioFormats[a.MIMEType]; ok {
				parts = append(parts, openai.InputAudioContentPart(openai.ChatCompletionContentPartInputAudioInputAudioParam{Data: b64, Format: f}))
			}
		default:
			name := path.Base(a.URI)
			if a.URI == "" || name == "/" || name == "." {
				name = fmt.Sprintf("attachment-%d", i+1)
			}
			parts = append(parts, openai.FileContentPart(openai.ChatCompletionContentPartFileFileParam{
				FileData: param.NewOpt("data:" + a.MIMEType + ";base64," + b64), Filename: param.NewOpt(name)}))
		}
	}
	return parts
}

// audioFormats are the audio types chat completions take, by MIME type.
var audioFormats = map[string]string{"audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav", "audio/mpeg": "mp3", "audio/mp3": "mp3"}
