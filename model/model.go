// Package model is Weft's small interface to chat models: a ChatModel
// generates or streams a reply (text and tool calls) to a conversation of
// engine.Messages, offered tools and options, and says what it cost (token
// usage), why it stopped, which model answered and how long it took.
//
// Providers plug in as a Provider: one streamed request, nothing else.
// Model wraps a Provider with what every provider needs and a node should
// not have to write:
//
//   - retries: a rate limit (429) or a server error (5xx) is retried after
//     the provider's Retry-After (or an exponential backoff), as long as
//     nothing of the reply has been streamed; other 4xx are not retried and
//     come back wrapped in engine.Permanent, so a node's retry policy does
//     not repeat them either;
//   - tokens stream by themselves: inside a node, every piece of the reply
//     is passed to engine.EmitMessage as it arrives, so a run streaming
//     engine.ModeMessages shows the tokens tagged with node, task and
//     message id, with no code in the node;
//   - every call is recorded with engine.RecordCall (request, tools, reply,
//     tokens in and out, time to first token, latency, attempts), so the
//     studio shows it live and at any past checkpoint;
//   - a stream that ends before the reply is complete is an error
//     (ErrStreamCut), never a shorter reply, so nothing partial reaches the
//     state; cancelling the context stops the stream at once.
//   - inside a replay of a recorded thread (a CallReplayer in the
//     context, see WithCallReplayer), a call the recording answers is
//     served from it and never reaches the provider.
//
// # Streamed pieces
//
// A piece is an engine.Message with the reply's ID and role assistant,
// carrying either Content (a text delta) or one ToolCalls entry: the call's
// ID on every piece, its Name on the first piece of the call, and a
// fragment of its Args. Join reassembles pieces into the reply's message,
// exactly as Generate returns it: contents concatenated, tool calls in the
// order they started with their argument fragments concatenated.
//
// Adapters live in sub-packages on the providers' own SDKs: openai (OpenAI
// and every OpenAI-compatible server), anthropic (Claude), and eino (any
// chat model of CloudWeGo Eino, in a module of its own). scripted is a
// model that plays a script offline; modeltest is the conformance suite
// every adapter passes.
package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/weftstudio/weft/engine"
)

// ChatModel generates a reply to msgs. Generate returns the whole reply;
// Stream yields it piece by piece and ends with a chunk carrying the reply
// (or with an error). Both stream the pieces to a running node's messages
// stream and record the call (see the package doc).
type ChatModel interface {
	Generate(ctx context.Context, msgs []engine.Message, opts ...Option) (*Reply, error)
	Stream(ctx context.Context, msgs []engine.Message, opts ...Option) iter.Seq2[Chunk, error]
}

// Chunk is one step of a Stream: a Piece of the reply as it arrives, or,
// last, the complete Reply (and no piece).
type Chunk struct {
	Piece engine.Message
	Reply *Reply
}

// Reply is a model's complete answer and what it took.
type Reply struct {
	// Message is the assistant's message: its text and tool calls, with the
	// ID its streamed pieces carried.
	Message engine.Message
	// FinishReason says why the model stopped (FinishStop, FinishToolCalls,
	// FinishLength, FinishContentFilter, or the provider's own word).
	FinishReason string
	Usage        Usage
	// Model is the model that answered, as the provider names it.
	Model string
	// ResponseID is the provider's id of the response; "" when it gives none.
	ResponseID string
	// Latency runs from the first request to the end of the reply, retries
	// included; FirstToken to the first streamed piece carrying text or a
	// tool call (0 when none came).
	Latency    time.Duration
	FirstToken time.Duration
	// Attempts counts the requests sent.
	Attempts int
}

// Usage is what a reply cost in tokens; zero when the provider did not say.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// Finish reasons, as providers' own words are normalised to.
const (
	FinishStop          = "stop"           // the model finished its answer (or hit a stop sequence)
	FinishToolCalls     = "tool_calls"     // the model wants tools to run
	FinishLength        = "length"         // the reply hit the token limit
	FinishContentFilter = "content_filter" // the provider withheld content (or the model refused)
)

// ToolSpec describes a tool a model may call: its name, what it does, and
// the JSON Schema of its arguments object (nil means no arguments).
type ToolSpec struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// Provider is one provider's API: Stream sends one request and calls out
// with every piece of the reply as it arrives, in order and on the
// goroutine that called Stream, then returns how the reply ended. It makes
// no retries (Model does) and must return:
//
//   - an *APIError when the provider answered with an HTTP error status;
//   - an error wrapping ErrStreamCut when the stream ended before the
//     reply was complete;
//   - the context's error, promptly, when ctx is cancelled.
type Provider interface {
	// Name names the provider in errors and call records ("openai", …).
	Name() string
	Stream(ctx context.Context, req *Request, out func(Delta)) (*Result, error)
}

// Request is what a Provider is asked: the conversation, the tools and the
// options of the call. Zero fields are the provider's defaults.
type Request struct {
	Messages []engine.Message
	Tools    []ToolSpec
	// Model names the model; "" is the adapter's default.
	Model       string
	Temperature *float64
	MaxTokens   int
	ToolChoice  ToolChoice
	// ResponseFormat asks for a reply that is JSON of a schema (structured
	// output); nil means free text.
	ResponseFormat *ResponseFormat
	Stop           []string
}

// ToolChoice says whether and which tools the model must call. The zero
// ToolChoice leaves it to the provider (which lets the model decide).
type ToolChoice struct {
	Mode ToolMode
	// Name is the tool the model must call, with Mode ToolForced.
	Name string
}

// ToolMode is how a model may use tools.
type ToolMode int

// Tool modes.
const (
	ToolDefault  ToolMode = iota // the provider's default
	ToolAuto                     // the model decides
	ToolNone                     // no tool calls
	ToolRequired                 // at least one tool call
	ToolForced                   // a call to ToolChoice.Name
)

// ResponseFormat asks for structured output: a reply whose text is JSON
// valid against Schema. Name names the format for the provider.
type ResponseFormat struct {
	Name   string
	Schema json.RawMessage
}

// Delta is one piece of a reply as a Provider streams it: Text, or a piece
// of the tool call at ToolIndex (its position among the reply's tool
// calls). The first piece of a call carries its ID (when the provider gives
// one) and Name; every piece may carry a fragment of its arguments.
type Delta struct {
	Text      string
	Tool      bool
	ToolIndex int
	ToolID    string
	ToolName  string
	ToolArgs  string
}

// Result is how a streamed reply ended.
type Result struct {
	FinishReason string
	Usage        Usage
	Model        string
	ResponseID   string
}

// ErrStreamCut is wrapped by the error of a reply whose stream ended before
// the reply was complete.
var ErrStreamCut = errors.New("the reply stream ended before the reply was complete")

// APIError is an error status a provider answered with.
type APIError struct {
	Provider string
	Status   int
	// RetryAfter is how long the provider asked to wait (Retry-After or
	// retry-after-ms); 0 when it did not say.
	RetryAfter time.Duration
	// Message is the provider's explanation.
	Message string
}

// Error describes the APIError.
func (e *APIError) Error() string {
	s := fmt.Sprintf("%s: %d %s", e.Provider, e.Status, http.StatusText(e.Status))
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.RetryAfter > 0 {
		s += fmt.Sprintf(" (retry after %s)", e.RetryAfter)
	}
	return s
}

// Temporary reports whether the request may succeed later: a rate limit
// (429) or a server error (5xx).
func (e *APIError) Temporary() bool {
	return e.Status == http.StatusTooManyRequests || e.Status >= 500
}

// RetryAfterOf reads how long a response asks to wait: retry-after-ms, or
// Retry-After in seconds or as an HTTP date. 0 when it says nothing.
func RetryAfterOf(h http.Header) time.Duration {
	if h == nil {
		return 0
	}
	if v := h.Get("Retry-After-Ms"); v != "" {
		var ms float64
		if _, err := fmt.Sscan(v, &ms); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	var s float64
	if _, err := fmt.Sscan(v, &s); err == nil {
		if s > 0 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

// Model is a ChatModel on a Provider, with retries, token streaming and call
// records (see the package doc). Make one with New; it is safe for
// concurrent use.
type Model struct {
	p        Provider
	defaults []Option
}

// New returns a Model calling p, with defaults applied to every call before
// the call's own options.
func New(p Provider, defaults ...Option) *Model { return &Model{p: p, defaults: defaults} }

// Provider returns the provider the model calls.
func (m *Model) Provider() Provider { return m.p }

// Generate returns the whole reply to msgs.
func (m *Model) Generate(ctx context.Context, msgs []engine.Message, opts ...Option) (*Reply, error) {
	var reply *Reply
	for c, err := range m.Stream(ctx, msgs, opts...) {
		if err != nil {
			return nil, err
		}
		if c.Reply != nil {
			reply = c.Reply
		}
	}
	if reply == nil { // cannot happen: Stream ends with a reply or an error
		return nil, fmt.Errorf("%s: no reply", m.p.Name())
	}
	return reply, nil
}

// Stream yields the reply to msgs piece by piece, then a chunk with the
// whole Reply; or, on failure, an error as the last element. Leaving the
// loop early cancels the request.
func (m *Model) Stream(ctx context.Context, msgs []engine.Message, opts ...Option) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		cfg := newConfig(m.defaults, opts)
		cfg.req.Messages = msgs
		reply, err := m.call(ctx, cfg, yield)
		switch {
		case errors.Is(err, errStopped):
		case err != nil:
			yield(Chunk{}, err)
		default:
			yield(Chunk{Reply: reply}, nil)
		}
	}
}

// errStopped ends a call whose consumer stopped reading.
var errStopped = errors.New("stopped by the consumer")

// call runs the request with retries, streaming pieces to yield and to the
// node's messages stream, and records it.
func (m *Model) call(ctx context.Context, cfg *config, yield func(Chunk, error) bool) (*Reply, error) {
	if reply, served, err := m.replayed(ctx, cfg, yield); served {
		return reply, err
	}
	id := cfg.messageID
	if id == "" {
		id = uuid.NewString()
	}
	start := time.Now()
	var (
		acc        Accumulator
		firstToken time.Duration
		streamed   bool // a piece went out: a retry would repeat it
		res        *Result
		err        error
		attempts   int
		stopped    bool
	)
	ictx, cancel := context.WithCancel(ctx)
	defer cancel()
	for {
		attempts++
		acc = Accumulator{ID: id}
		res, err = m.p.Stream(ictx, &cfg.req, func(d Delta) {
			if stopped {
				return
			}
			piece := acc.Add(d)
			streamed = true
			// A token is text or a piece of a tool call: providers open
			// with role-only or empty pieces long before the model answers.
			if firstToken == 0 && (d.Text != "" || d.Tool) {
				firstToken = max(time.Since(start), 1)
			}
			engine.EmitMessage(ctx, piece)
			if yield != nil && !yield(Chunk{Piece: piece}, nil) {
				stopped = true
				cancel()
			}
		})
		if stopped {
			m.record(ctx, cfg, start, &Reply{Latency: time.Since(start), FirstToken: firstToken, Attempts: attempts, Model: cfg.req.Model}, errStopped)
			return nil, errStopped
		}
		if err == nil || streamed || attempts >= cfg.retry.attempts() {
			break
		}
		wait, ok := cfg.retry.wait(err, attempts)
		if !ok {
			break
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			err = ctx.Err()
		}
		if ctx.Err() != nil {
			break
		}
	}
	reply := &Reply{Latency: time.Since(start), FirstToken: firstToken, Attempts: attempts}
	if err == nil {
		reply.Message = acc.Message()
		reply.FinishReason, reply.Usage, reply.Model, reply.ResponseID = res.FinishReason, res.Usage, res.Model, res.ResponseID
	}
	if reply.Model == "" {
		reply.Model = cfg.req.Model
	}
	m.record(ctx, cfg, start, reply, err)
	if err != nil {
		return nil, classify(m.p.Name(), err, ctx)
	}
	return reply, nil
}

// classify makes err say which provider failed, and marks errors a retry
// cannot fix as permanent for the node's retry policy.
func classify(provider string, err error, ctx context.Context) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", provider, ctx.Err())
	}
	var ae *APIError
	if errors.As(err, &ae) {
		if !ae.Temporary() {
			return engine.Permanent(err)
		}
		return err
	}
	return err
}

func (m *Model) record(ctx context.Context, cfg *config, start time.Time, reply *Reply, err error) {
	if _, ok := engine.RuntimeOf(ctx); !ok {
		return // RecordCall would drop it: spare building it
	}
	rec := engine.CallRecord{Kind: engine.CallModel, Name: reply.Model, Provider: m.p.Name(), Start: start,
		Latency: reply.Latency, FirstToken: reply.FirstToken, Attempts: reply.Attempts,
		InputTokens: reply.Usage.InputTokens, OutputTokens: reply.Usage.OutputTokens, FinishReason: reply.FinishReason}
	rec.Request = make([]engine.CallMessage, len(cfg.req.Messages))
	for i, msg := range cfg.req.Messages {
		rec.Request[i] = engine.CallMessage{Message: msg}
	}
	for _, t := range cfg.req.Tools {
		rec.Tools = append(rec.Tools, engine.CallToolSpec{Name: t.Name, Description: t.Description, Parameters: engine.CallText{Text: string(t.Parameters)}})
	}
	if err != nil {
		rec.Error = err.Error()
	} else {
		rec.Reply = &engine.CallMessage{Message: reply.Message}
	}
	engine.RecordCall(ctx, rec)
}
