package model

// This file is the hook a replay of a recorded thread uses to serve model
// and tool calls from the recording, so a replay is deterministic, offline
// and free. The replay machinery (package replay) implements CallReplayer;
// this package only asks it, so it does not depend on that machinery.

import (
	"context"
	"errors"
	"time"

	"github.com/weftstudio/weft/engine"
)

// CallReplayer answers calls from a recording instead of making them. A
// replay passes one down the run's context with WithCallReplayer; Model
// asks it before every model call made inside a node, and tool.Node before
// every tool call. Both methods are called from the node's goroutine (tool
// calls concurrently), with the node's context: engine.RuntimeOf says
// which node and task is calling. Package replay implements it and
// documents when a call matches a recorded one.
type CallReplayer interface {
	// ReplayModelCall returns the recorded call answering req. A record is
	// served in place of the provider's reply: its Reply (or, when it has
	// none, its Error as the call's error). A nil record and a nil error
	// let the call go to the provider; an error fails the call with that
	// error, as it is (a strict replay's mismatch).
	ReplayModelCall(ctx context.Context, req *Request) (*engine.CallRecord, error)
	// ReplayToolCall does the same for a tool call run by tool.Node: a
	// record's Result (and Error) is served in place of running the tool.
	ReplayToolCall(ctx context.Context, call engine.ToolCall) (*engine.CallRecord, error)
}

type replayerKey struct{}

// WithCallReplayer returns ctx carrying r: model and tool calls made by
// nodes of a run given that context are served by r.
func WithCallReplayer(ctx context.Context, r CallReplayer) context.Context {
	return context.WithValue(ctx, replayerKey{}, r)
}

// CallReplayerFrom returns the CallReplayer ctx carries, or nil.
func CallReplayerFrom(ctx context.Context) CallReplayer {
	r, _ := ctx.Value(replayerKey{}).(CallReplayer)
	return r
}

// replayed asks the context's replayer, if any and inside a node, for the
// recorded answer to the call cfg describes. served reports whether the
// call was answered (with reply or err) and must not go to the provider.
func (m *Model) replayed(ctx context.Context, cfg *config, yield func(Chunk, error) bool) (reply *Reply, served bool, err error) {
	r := CallReplayerFrom(ctx)
	if r == nil {
		return nil, false, nil
	}
	if _, inNode := engine.RuntimeOf(ctx); !inNode {
		return nil, false, nil
	}
	rec, err := r.ReplayModelCall(ctx, &cfg.req)
	if err != nil {
		return nil, true, err
	}
	if rec == nil {
		return nil, false, nil
	}
	start := time.Now()
	reply = &Reply{FinishReason: rec.FinishReason, Usage: Usage{InputTokens: rec.InputTokens, OutputTokens: rec.OutputTokens},
		Model: rec.Name, Latency: rec.Latency, FirstToken: rec.FirstToken, Attempts: max(rec.Attempts, 1)}
	if rec.Reply == nil {
		msg := rec.Error
		if msg == "" {
			msg = "the recorded call has neither a reply nor an error"
		}
		err := errors.New(msg)
		m.record(ctx, cfg, start, reply, err)
		return nil, true, err
	}
	reply.Message = rec.Reply.Message
	if cfg.messageID != "" {
		reply.Message.ID = cfg.messageID // the node's choice of id is its own code, not the model's
	}
	// Stream the recorded reply as a provider would: its text, then each
	// tool call, so messages streams and Stream's callers see it arrive.
	acc := Accumulator{ID: reply.Message.ID}
	deltas := []Delta{}
	if reply.Message.Content != "" {
		deltas = append(deltas, Delta{Text: reply.Message.Content})
	}
	for i, c := range reply.Message.ToolCalls {
		deltas = append(deltas, Delta{Tool: true, ToolIndex: i, ToolID: c.ID, ToolName: c.Name, ToolArgs: c.Args})
	}
	for _, d := range deltas {
		piece := acc.Add(d)
		engine.EmitMessage(ctx, piece)
		if yield != nil && !yield(Chunk{Piece: piece}, nil) {
			m.record(ctx, cfg, start, reply, errStopped)
			return nil, true, errStopped
		}
	}
	m.record(ctx, cfg, start, reply, nil)
	return reply, true, nil
}
