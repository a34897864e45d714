package model

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"time"
)

// Option sets something of a call: given to New, for every call of the
// model, or to one call.
type Option func(*config)

type config struct {
	req       Request
	messageID string
	retry     Retry
}

func newConfig(defaults, opts []Option) *config {
	c := &config{retry: DefaultRetry}
	for _, o := range defaults {
		o(c)
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// WithModel names the model to call (for example "gpt-4.1-mini").
func WithModel(name string) Option { return func(c *config) { c.req.Model = name } }

// WithTemperature sets the sampling temperature.
func WithTemperature(t float64) Option { return func(c *config) { c.req.Temperature = &t } }

// WithMaxTokens limits the reply to n tokens (0: the provider's default).
func WithMaxTokens(n int) Option { return func(c *config) { c.req.MaxTokens = n } }

// WithTools offers tools to the model, replacing tools offered before.
func WithTools(tools ...ToolSpec) Option {
	return func(c *config) { c.req.Tools = append([]ToolSpec(nil), tools...) }
}

// WithToolChoice says whether the model may, must or must not call tools:
// ToolAuto, ToolNone or ToolRequired. Use WithForcedTool to name the tool.
func WithToolChoice(mode ToolMode) Option {
	return func(c *config) { c.req.ToolChoice = ToolChoice{Mode: mode} }
}

// WithForcedTool makes the model call the tool named name.
func WithForcedTool(name string) Option {
	return func(c *config) { c.req.ToolChoice = ToolChoice{Mode: ToolForced, Name: name} }
}

// WithResponseFormat asks for structured output: a reply whose text is JSON
// valid against schema (a JSON Schema object), for example one made with
// tool.SchemaFor. name names the format (letters, digits, _ and -).
func WithResponseFormat(name string, schema json.RawMessage) Option {
	return func(c *config) { c.req.ResponseFormat = &ResponseFormat{Name: name, Schema: schema} }
}

// WithStop ends the reply at the first of the stop sequences.
func WithStop(seqs ...string) Option {
	return func(c *config) { c.req.Stop = append([]string(nil), seqs...) }
}

// WithMessageID gives the reply's message (and its streamed pieces) the id
// instead of a fresh random one: a node that must be deterministic (tests,
// replays) chooses its ids.
func WithMessageID(id string) Option { return func(c *config) { c.messageID = id } }

// WithRetry replaces the retry policy (DefaultRetry).
func WithRetry(r Retry) Option { return func(c *config) { c.retry = r } }

// Retry is how a Model retries a request that failed with a rate limit
// (429), a server error (5xx) or a broken connection before anything of the
// reply arrived. The zero Retry makes one attempt.
type Retry struct {
	// MaxAttempts counts every request, the first included; ≤ 1 means no
	// retry.
	MaxAttempts int
	// Backoff is the wait before the second attempt when the provider does
	// not say how long to wait; it doubles for each later attempt, with up
	// to a quarter more at random. 0 retries at once.
	Backoff time.Duration
	// MaxWait caps a wait: a provider asking for longer (Retry-After) gets
	// the error returned at once, saying how long it asked for. 0 means no
	// cap.
	MaxWait time.Duration
}

// DefaultRetry makes 3 attempts, waiting what the provider asks or 0.5 s
// then 1 s, and never more than a minute.
var DefaultRetry = Retry{MaxAttempts: 3, Backoff: 500 * time.Millisecond, MaxWait: time.Minute}

func (r Retry) attempts() int { return max(r.MaxAttempts, 1) }

// Do runs call until it succeeds, fails in a way r does not retry, or r's
// attempts are spent, waiting between attempts as r says (and no longer
// than ctx lasts); it returns the last error. For requests that are not a
// Model's streamed replies, such as an embeddings call.
func (r Retry) Do(ctx context.Context, call func() error) error {
	for attempt := 1; ; attempt++ {
		err := call()
		if err == nil || attempt >= r.attempts() {
			return err
		}
		d, retry := r.wait(err, attempt)
		if !retry {
			return err
		}
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
	}
}

// wait says how long to wait before retrying after err (attempt requests
// made so far), and whether to retry at all.
func (r Retry) wait(err error, attempt int) (time.Duration, bool) {
	var ae *APIError
	var d time.Duration
	switch {
	case errors.As(err, &ae):
		if !ae.Temporary() {
			return 0, false
		}
		d = ae.RetryAfter
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return 0, false
	case errors.Is(err, ErrStreamCut), errors.Is(err, io.ErrUnexpectedEOF), isNetError(err):
		// the connection broke before the first piece of the reply
	default:
		return 0, false
	}
	if d == 0 {
		d = r.Backoff << (attempt - 1)
		if d > 0 {
			d += time.Duration(rand.Int64N(int64(d)/4 + 1))
		}
	}
	if r.MaxWait > 0 && d > r.MaxWait {
		if ae != nil && ae.RetryAfter > r.MaxWait {
			return 0, false
		}
		d = r.MaxWait
	}
	return d, true
}

func isNetError(err error) bool {
	var ne net.Error
	return errors.As(err, &ne)
}
