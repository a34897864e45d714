package model_test

import (
	"context"
	"errors"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/model"
)

// replayer serves rec (or fails with err) and counts the requests it saw.
type replayer struct {
	rec  *engine.CallRecord
	err  error
	seen []*model.Request
}

func (r *replayer) ReplayModelCall(_ context.Context, req *model.Request) (*engine.CallRecord, error) {
	r.seen = append(r.seen, req)
	return r.rec, r.err
}

func (r *replayer) ReplayToolCall(context.Context, engine.ToolCall) (*engine.CallRecord, error) {
	return nil, nil
}

// runNode calls m once in a node of a graph with a saver and returns the
// reply, the streamed pieces and what the task recorded.
//
//lint:ignore ST1008 the reply and its error are one result, the rest what it left
func runNode(t *testing.T, ctx context.Context, m model.ChatModel) (*model.Reply, error, []engine.Message, []engine.CallRecord) {
	t.Helper()
	var reply *model.Reply
	var callErr error
	g, err := engine.NewGraph("g", engine.LastValue[int]("n")).AddNode("a", func(ctx context.Context, _ engine.State) (engine.Output, error) {
		reply, callErr = m.Generate(ctx, []engine.Message{{Role: engine.RoleUser, Content: "hi"}}, model.WithMessageID("m1"))
		return nil, nil
	}).AddEdge(engine.START, "a").Compile(engine.WithSaver(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	var pieces []engine.Message
	if _, err := g.Invoke(ctx, engine.Values{"n": 1}, engine.WithThread("t"),
		engine.WithObserver(engine.ModeMessages, func(ev engine.Event) { pieces = append(pieces, ev.Message.Message) })); err != nil {
		t.Fatal(err)
	}
	hist, err := g.History(ctx, checkpoint.ListOptions{}, engine.WithThread("t"))
	if err != nil {
		t.Fatal(err)
	}
	var calls []engine.CallRecord
	for _, s := range hist {
		for _, ts := range s.Tasks {
			calls = append(calls, ts.Calls...)
		}
	}
	return reply, callErr, pieces, calls
}

func TestReplayedCallIsServedWithoutTheProvider(t *testing.T) {
	p := &fakeProvider{steps: []fakeStep{{pieces: []string{"live"}}}}
	m := model.New(p)
	rec := &engine.CallRecord{Kind: engine.CallModel, Name: "fake-1", FinishReason: model.FinishToolCalls, InputTokens: 3, OutputTokens: 5,
		Reply: &engine.CallMessage{Message: engine.Message{ID: "recorded-id", Role: engine.RoleAssistant, Content: "from the recording",
			ToolCalls: []engine.ToolCall{{ID: "c1", Name: "f", Args: `{"x":1}`}}}}}
	r := &replayer{rec: rec}
	reply, err, pieces, calls := runNode(t, model.WithCallReplayer(context.Background(), r), m)
	if err != nil {
		t.Fatal(err)
	}
	if p.calls != 0 {
		t.Errorf("the provider was called %d times", p.calls)
	}
	if len(r.seen) != 1 || r.seen[0].Messages[0].Content != "hi" {
		t.Errorf("the replayer saw %+v", r.seen)
	}
	want := rec.Reply.Message
	want.ID = "m1" // the node asked for this id
	if reply.Message.Content != want.Content || reply.Message.ID != "m1" || len(reply.Message.ToolCalls) != 1 ||
		reply.FinishReason != model.FinishToolCalls || reply.Usage.OutputTokens != 5 || reply.Model != "fake-1" {
		t.Errorf("reply %+v", reply)
	}
	if got := model.Join(pieces); got.Content != want.Content || len(got.ToolCalls) != 1 || got.ToolCalls[0].Args != `{"x":1}` {
		t.Errorf("streamed pieces join to %+v", got)
	}
	if len(calls) != 1 || calls[0].Reply == nil || calls[0].Reply.Content != "from the recording" || calls[0].Provider != "fake" {
		t.Errorf("recorded %+v", calls)
	}
}

func TestReplayerErrorsAndPassThrough(t *testing.T) {
	// A recorded failure is served as the call's error.
	p := &fakeProvider{steps: []fakeStep{{pieces: []string{"live"}}}}
	r := &replayer{rec: &engine.CallRecord{Kind: engine.CallModel, Error: "fake: 400 Bad Request"}}
	_, err, _, calls := runNode(t, model.WithCallReplayer(context.Background(), r), model.New(p))
	if err == nil || err.Error() != "fake: 400 Bad Request" || p.calls != 0 || len(calls) != 1 || calls[0].Error == "" {
		t.Errorf("recorded failure: err %v, %d provider calls, records %+v", err, p.calls, calls)
	}
	// The replayer's own error fails the call as it is.
	strict := errors.New("not in the recording")
	r = &replayer{err: strict}
	if _, err, _, _ = runNode(t, model.WithCallReplayer(context.Background(), r), model.New(p)); !errors.Is(err, strict) || p.calls != 0 {
		t.Errorf("strict: err %v, %d provider calls", err, p.calls)
	}
	// Nothing recorded: the call goes to the provider.
	r = &replayer{}
	reply, err, _, _ := runNode(t, model.WithCallReplayer(context.Background(), r), model.New(p))
	if err != nil || reply.Message.Content != "live" || p.calls != 1 || len(r.seen) != 1 {
		t.Errorf("pass-through: %+v %v, %d provider calls", reply, err, p.calls)
	}
	// Outside a node the replayer is not asked.
	r = &replayer{err: strict}
	if _, err := model.New(p).Generate(model.WithCallReplayer(context.Background(), r), nil); err != nil || len(r.seen) != 0 {
		t.Errorf("outside a node: %v, replayer asked %d times", err, len(r.seen))
	}
}
