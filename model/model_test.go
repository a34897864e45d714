package model_test

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/model"
)

func TestRetryAfterOf(t *testing.T) {
	for h, want := range map[[2]string]time.Duration{
		{"Retry-After-Ms", "250"}: 250 * time.Millisecond,
		{"Retry-After", "2"}:      2 * time.Second,
		{"Retry-After", "0.5"}:    500 * time.Millisecond,
		{"Retry-After", "soon"}:   0,
		{"Retry-After", "-3"}:     0,
		{"X-Other", "1"}:          0,
	} {
		if got := model.RetryAfterOf(http.Header{h[0]: {h[1]}}); got != want {
			t.Errorf("%s: %s = %s, want %s", h[0], h[1], got, want)
		}
	}
	date := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	if got := model.RetryAfterOf(http.Header{"Retry-After": {date}}); got < 80*time.Second || got > 90*time.Second {
		t.Errorf("an HTTP date 90 s ahead gave %s", got)
	}
}

// Join reassembles pieces by call id whatever the order they interleave in.
func TestJoin(t *testing.T) {
	pieces := []engine.Message{
		{ID: "m", Role: engine.RoleAssistant, Content: "Hi "},
		{ID: "m", Role: engine.RoleAssistant, ToolCalls: []engine.ToolCall{{ID: "a", Name: "f", Args: `{"x":`}}},
		{ID: "m", Role: engine.RoleAssistant, ToolCalls: []engine.ToolCall{{ID: "b", Name: "g"}}},
		{ID: "m", Role: engine.RoleAssistant, ToolCalls: []engine.ToolCall{{ID: "a", Args: `1}`}}},
		{ID: "m", Role: engine.RoleAssistant, Content: "there"},
		{ID: "m", Role: engine.RoleAssistant, ToolCalls: []engine.ToolCall{{ID: "b", Args: `{}`}}},
	}
	want := engine.Message{ID: "m", Role: engine.RoleAssistant, Content: "Hi there",
		ToolCalls: []engine.ToolCall{{ID: "a", Name: "f", Args: `{"x":1}`}, {ID: "b", Name: "g", Args: `{}`}}}
	if got := model.Join(pieces); !reflect.DeepEqual(got, want) {
		t.Errorf("Join = %+v", got)
	}
	var acc model.Accumulator
	acc.ID = "m"
	p := acc.Add(model.Delta{Tool: true, ToolIndex: 3, ToolName: "f", ToolArgs: "{"})
	acc.Add(model.Delta{Tool: true, ToolIndex: 3, ToolArgs: "}"})
	if id := p.ToolCalls[0].ID; id == "" || acc.Message().ToolCalls[0].ID != id || acc.Message().ToolCalls[0].Args != "{}" {
		t.Errorf("a call without an id: piece %+v, message %+v", p, acc.Message())
	}
}

// fakeProvider answers from a list of steps: pieces to stream, then an
// error or a result.
type fakeProvider struct {
	steps []fakeStep
	calls int
	ctxs  []context.Context
}

type fakeStep struct {
	pieces []string
	err    error
	block  bool // wait for ctx after the pieces
}

func (f *fakeProvider) Name() string { return "fake" }

func (f *fakeProvider) Stream(ctx context.Context, req *model.Request, out func(model.Delta)) (*model.Result, error) {
	s := f.steps[min(f.calls, len(f.steps)-1)]
	f.calls++
	f.ctxs = append(f.ctxs, ctx)
	for _, p := range s.pieces {
		out(model.Delta{Text: p})
	}
	if s.block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if s.err != nil {
		return nil, s.err
	}
	return &model.Result{FinishReason: model.FinishStop, Model: "fake-1"}, nil
}

func TestRetries(t *testing.T) {
	ctx := context.Background()
	fast := model.WithRetry(model.Retry{MaxAttempts: 3, Backoff: time.Millisecond, MaxWait: time.Second})
	rateLimited := &model.APIError{Provider: "fake", Status: 429, RetryAfter: 2 * time.Millisecond}
	for name, c := range map[string]struct {
		steps     []fakeStep
		calls     int
		ok        bool
		permanent bool
	}{
		"429 then success":         {[]fakeStep{{err: rateLimited}, {pieces: []string{"ok"}}}, 2, true, false},
		"500 three times":          {[]fakeStep{{err: &model.APIError{Status: 500}}}, 3, false, false},
		"400 once":                 {[]fakeStep{{err: &model.APIError{Status: 400}}}, 1, false, true},
		"401 once":                 {[]fakeStep{{err: &model.APIError{Status: 401}}}, 1, false, true},
		"Retry-After past the cap": {[]fakeStep{{err: &model.APIError{Status: 429, RetryAfter: time.Hour}}}, 1, false, false},
		"cut after a piece":        {[]fakeStep{{pieces: []string{"par"}, err: model.ErrStreamCut}}, 1, false, false},
		"cut before a piece":       {[]fakeStep{{err: model.ErrStreamCut}, {pieces: []string{"ok"}}}, 2, true, false},
		"other errors":             {[]fakeStep{{err: errors.New("bad schema")}}, 1, false, false},
	} {
		p := &fakeProvider{steps: c.steps}
		reply, err := model.New(p, fast).Generate(ctx, nil)
		if p.calls != c.calls || (err == nil) != c.ok {
			t.Errorf("%s: %d calls, err %v", name, p.calls, err)
			continue
		}
		if c.ok && (reply.Attempts != c.calls || reply.Message.Content != "ok" || reply.Model != "fake-1") {
			t.Errorf("%s: reply %+v", name, reply)
		}
		if c.ok {
			continue
		}
		// In a node with a retry policy of two attempts, an error a retry
		// cannot fix (4xx) is not retried by the node either.
		p = &fakeProvider{steps: c.steps}
		m := model.New(p, fast)
		g, err := engine.NewGraph("g", engine.LastValue[int]("n")).AddNode("a", func(ctx context.Context, _ engine.State) (engine.Output, error) {
			_, err := m.Generate(ctx, nil)
			return nil, err
		}, engine.WithRetry(engine.RetryPolicy{MaxAttempts: 2})).AddEdge(engine.START, "a").Compile()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.Invoke(ctx, engine.Values{"n": 1}); err == nil {
			t.Errorf("%s: the node succeeded", name)
		}
		want := 2 * c.calls
		if c.permanent {
			want = c.calls
		}
		if p.calls != want {
			t.Errorf("%s: %d requests through a node retrying twice, want %d", name, p.calls, want)
		}
	}
}

// Leaving a Stream early cancels the provider's request.
func TestStopReadingCancels(t *testing.T) {
	p := &fakeProvider{steps: []fakeStep{{pieces: []string{"a", "b", "c"}, block: true}}}
	n := 0
	for c, err := range model.New(p).Stream(context.Background(), nil) {
		if err != nil || c.Reply != nil {
			t.Fatalf("%v %+v", err, c)
		}
		if n++; n == 2 {
			break
		}
	}
	if err := p.ctxs[0].Err(); !errors.Is(err, context.Canceled) {
		t.Errorf("the provider's context after the reader left: %v", err)
	}
}

// slowStartProvider streams an empty (role-only) piece at once, then text
// only after the clock has moved on: the reply's first token is the text.
type slowStartProvider struct{ start, text time.Time }

func (p *slowStartProvider) Name() string { return "slow-start" }

func (p *slowStartProvider) Stream(ctx context.Context, req *model.Request, out func(model.Delta)) (*model.Result, error) {
	p.start = time.Now()
	out(model.Delta{})
	for time.Since(p.start) < time.Millisecond {
		time.Sleep(100 * time.Microsecond)
	}
	p.text = time.Now()
	out(model.Delta{Text: "hello"})
	return &model.Result{FinishReason: model.FinishStop}, nil
}

// The first-token time counts from the first piece that carries text or a
// tool call: a role-only piece sent at once is no token.
func TestFirstTokenIgnoresEmptyPieces(t *testing.T) {
	p := &slowStartProvider{}
	reply, err := model.New(p).Generate(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if min := p.text.Sub(p.start); reply.FirstToken < min {
		t.Errorf("first token at %v, but the text came %v after the request", reply.FirstToken, min)
	}
	if reply.Message.Content != "hello" {
		t.Errorf("reply %q", reply.Message.Content)
	}
}
