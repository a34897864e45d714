// Package scripted is a model.Provider that plays a script instead of
// calling a provider: demos that run offline, tests and benchmarks that must
// not reach a network. Its replies stream like a real model's, token by
// token (tool call arguments too), at a pace that can be slowed down to a
// human-visible rate so a studio shows tokens arriving, running highlights,
// Pause and Cancel.
package scripted

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/model"
)

// Turn is a scripted reply: its text, then its tool calls (an empty ID gets
// one made by model.Model).
type Turn struct {
	Text  string
	Calls []engine.ToolCall
}

// Script returns the reply to a request: the scripted model's "thinking".
// An error fails the call as a provider's would.
type Script func(req *model.Request) (Turn, error)

// Replies returns a Script playing turns in order, one per request; it
// fails once they run out.
func Replies(turns ...Turn) Script {
	var mu sync.Mutex
	i := 0
	return func(*model.Request) (Turn, error) {
		mu.Lock()
		defer mu.Unlock()
		if i >= len(turns) {
			return Turn{}, fmt.Errorf("scripted: no reply left after %d", len(turns))
		}
		i++
		return turns[i-1], nil
	}
}

// Option configures a Provider.
type Option func(*Provider)

// WithPace streams tokens at tokensPerSecond (0, the default, streams them
// at once).
func WithPace(tokensPerSecond float64) Option {
	return func(p *Provider) {
		p.gap = 0
		if tokensPerSecond > 0 {
			p.gap = time.Duration(float64(time.Second) / tokensPerSecond)
		}
	}
}

// WithModelName sets the model name replies report (default "scripted").
func WithModelName(name string) Option { return func(p *Provider) { p.name = name } }

// WithCallOptions sets options of every call of the model New returns.
func WithCallOptions(opts ...model.Option) Option {
	return func(p *Provider) { p.defaults = append(p.defaults, opts...) }
}

// Provider plays a Script. Make one with NewProvider.
type Provider struct {
	script   Script
	gap      time.Duration
	name     string
	defaults []model.Option
}

// NewProvider returns a Provider playing script.
func NewProvider(script Script, opts ...Option) *Provider {
	p := &Provider{script: script, name: "scripted"}
	for _, o := range opts {
		o(p)
	}
	return p
}

// New returns a model.Model on a Provider playing script.
func New(script Script, opts ...Option) *model.Model {
	p := NewProvider(script, opts...)
	return model.New(p, p.defaults...)
}

// Name returns "scripted".
func (p *Provider) Name() string { return "scripted" }

// Stream plays the script's reply to req, token by token.
func (p *Provider) Stream(ctx context.Context, req *model.Request, out func(model.Delta)) (*model.Result, error) {
	if p.script == nil {
		return nil, errors.New("scripted: no script")
	}
	turn, err := p.script(req)
	if err != nil {
		return nil, err
	}
	res := &model.Result{Model: p.name, FinishReason: model.FinishStop}
	if req.Model != "" {
		res.Model = req.Model
	}
	n := 0
	emit := func(d model.Delta) error {
		if n > 0 && p.gap > 0 {
			t := time.NewTimer(p.gap)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			}
		} else if err := ctx.Err(); err != nil {
			return err
		}
		n++
		out(d)
		return nil
	}
	for _, tok := range Tokens(turn.Text) {
		if err := emit(model.Delta{Text: tok}); err != nil {
			return nil, err
		}
	}
	for i, c := range turn.Calls {
		if err := emit(model.Delta{Tool: true, ToolIndex: i, ToolID: c.ID, ToolName: c.Name}); err != nil {
			return nil, err
		}
		for _, tok := range Tokens(c.Args) {
			if err := emit(model.Delta{Tool: true, ToolIndex: i, ToolArgs: tok}); err != nil {
				return nil, err
			}
		}
		res.FinishReason = model.FinishToolCalls
	}
	in := 0
	for _, m := range req.Messages {
		in += len(Tokens(m.Content))
	}
	res.Usage = model.Usage{InputTokens: in, OutputTokens: n}
	return res, nil
}

// Tokens splits s the way the scripted model streams it: each word with
// the spaces before it, words longer than four characters in pieces of four.
func Tokens(s string) []string {
	var out []string
	start, chars, prevSpace := 0, 0, false
	for i, r := range s {
		space := r == ' ' || r == '\n'
		if i > start && (space && !prevSpace || !space && chars == 4) {
			out = append(out, s[start:i])
			start, chars = i, 0
		}
		if !space {
			chars++
		}
		prevSpace = space
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}
