package tool

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/model"
)

// PendingCalls returns the tool calls of the last assistant message in msgs
// that no tool message answers yet, in order; nil when the last message is
// not an assistant's (or it has no calls).
func PendingCalls(msgs []engine.Message) []engine.ToolCall {
	last := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == engine.RoleAssistant {
			last = i
			break
		}
		if msgs[i].Role != engine.RoleTool {
			return nil
		}
	}
	if last < 0 {
		return nil
	}
	answered := map[string]bool{}
	for _, m := range msgs[last+1:] {
		answered[m.ToolCallID] = true
	}
	var out []engine.ToolCall
	for _, c := range msgs[last].ToolCalls {
		if !answered[c.ID] {
			out = append(out, c)
		}
	}
	return out
}

// ResultID is the id Node gives the tool message answering call id: a
// re-run of the node replaces its earlier answer instead of adding another.
func ResultID(callID string) string { return "result-" + callID }

// Node returns a node that runs the pending tool calls of the last
// assistant message (PendingCalls) concurrently and adds one tool message
// per call to msgs, in the order of the calls (LangGraph's ToolNode). Each
// call is recorded with engine.RecordCall. A call of an unknown tool,
// invalid arguments or an error of the tool become the call's result,
// "Error: …", for the model to read; only an interrupt (engine.Interrupt
// inside a tool) or the run's cancellation fail the node. Tools that ask a
// human with engine.Interrupt should be alone in their message's calls:
// answers are matched to questions by call order, which concurrent calls do
// not have.
//
// Inside a replay of a recorded thread (a model.CallReplayer in the run's
// context), a call the recording answers is served from it and the tool
// does not run.
func Node(msgs engine.MessagesKey, tools ...Tool) engine.NodeFunc {
	byName := make(map[string]Tool, len(tools))
	var names []string
	for _, t := range tools {
		n := t.Spec().Name
		byName[n] = t
		names = append(names, n)
	}
	slices.Sort(names)
	return func(ctx context.Context, s engine.State) (engine.Output, error) {
		calls := PendingCalls(msgs.Get(s))
		if len(calls) == 0 {
			return nil, nil
		}
		results := make([]engine.Message, len(calls))
		errs := make([]error, len(calls))
		var wg sync.WaitGroup
		for i, c := range calls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i], errs[i] = run(ctx, byName, names, c)
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return nil, err
			}
		}
		return engine.Updates(msgs.Add(results...)), nil
	}
}

// run makes one call and records it. Inside a replay (a
// model.CallReplayer in ctx) a call the recording answers is served from
// it and the tool does not run; a replayer's error fails the node.
func run(ctx context.Context, byName map[string]Tool, names []string, c engine.ToolCall) (engine.Message, error) {
	start := time.Now()
	if r := model.CallReplayerFrom(ctx); r != nil {
		rec, err := r.ReplayToolCall(ctx, c)
		if err != nil {
			return engine.Message{}, err
		}
		if rec != nil {
			engine.RecordCall(ctx, engine.CallRecord{Kind: engine.CallTool, Name: c.Name, Start: start, Latency: rec.Latency,
				ToolCallID: c.ID, Args: engine.CallText{Text: c.Args}, Error: rec.Error, Result: rec.Result})
			return engine.Message{ID: ResultID(c.ID), Role: engine.RoleTool, Name: c.Name, ToolCallID: c.ID, Content: rec.Result.Text}, nil
		}
	}
	var out, origin string
	var attached []engine.Attachment
	var err error
	if t, ok := byName[c.Name]; ok {
		if o, ok := t.(Origin); ok {
			origin = o.Origin()
		}
		if a, ok := t.(Attacher); ok {
			out, attached, err = a.CallAttached(ctx, c.Args)
		} else {
			out, err = t.Call(ctx, c.Args)
		}
	} else {
		err = fmt.Errorf("there is no tool %q; the tools are: %s", c.Name, strings.Join(names, ", "))
	}
	rec := engine.CallRecord{Kind: engine.CallTool, Name: c.Name, Provider: origin, Start: start, Latency: time.Since(start),
		ToolCallID: c.ID, Args: engine.CallText{Text: c.Args}}
	if err != nil {
		var ie *engine.InterruptError
		if errors.As(err, &ie) || ctx.Err() != nil {
			return engine.Message{}, err
		}
		rec.Error = err.Error()
		out, attached = "Error: "+err.Error(), nil
		var ae *ArgumentError
		if errors.As(err, &ae) {
			out += ". Call the tool again with arguments that fit its schema."
		}
	}
	rec.Result = engine.CallText{Text: out}
	engine.RecordCall(ctx, rec)
	return engine.Message{ID: ResultID(c.ID), Role: engine.RoleTool, Name: c.Name, ToolCallID: c.ID, Content: out, Attachments: attached}, nil
}

// Condition returns a path function that routes to the node named to when
// the last message is an assistant's with tool calls, and to END otherwise
// (LangGraph's tools_condition). Declare both with
// engine.Targets(to, engine.END).
func Condition(msgs engine.MessagesKey, to string) engine.PathFunc {
	return func(_ context.Context, s engine.State) (engine.Route, error) {
		if len(PendingCalls(msgs.Get(s))) > 0 {
			return engine.To(to), nil
		}
		return engine.To(engine.END), nil
	}
}
