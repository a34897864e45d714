// Package agent builds a ReAct agent in one call (LangGraph's
// create_react_agent): a model that answers or asks for tools, the tools
// run and their results go back to the model, until it answers. The result
// is an ordinary engine graph: the studio opens, steps, rewinds and
// answers it like any other.
//
//	START → agent ─┬─→ END                       (no tool calls)
//	               ├─→ tools → agent             (tool calls)
//	               └─→ approve → tools → agent   (a call of a tool that needs approval)
//
// With WithApproval, calls of the named tools wait for a human first: the
// approve node asks one question per call with engine.Interrupt (an
// ApprovalRequest) and the answer (a Decision) approves the call, rejects
// it (the model is told so, as the call's result) or edits its arguments.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/model"
	"github.com/weftstudio/weft/tool"
)

// Node names of the agent graph.
const (
	AgentNode   = "agent"
	ToolsNode   = "tools"
	ApproveNode = "approve"
)

// Option configures New.
type Option func(*config)

type config struct {
	name      string
	msgs      engine.MessagesKey
	hasMsgs   bool
	system    string
	approve   []string
	modelOpts []model.Option
	compile   []engine.CompileOption
}

// WithName names the graph (default "react agent").
func WithName(name string) Option { return func(c *config) { c.name = name } }

// WithMessages sets the conversation's channel (default a Messages channel
// named "messages").
func WithMessages(k engine.MessagesKey) Option {
	return func(c *config) { c.msgs, c.hasMsgs = k, true }
}

// WithSystemPrompt puts a system message before the conversation on every
// model call; it is not stored in the state.
func WithSystemPrompt(prompt string) Option { return func(c *config) { c.system = prompt } }

// WithApproval makes calls of the named tools wait for a human's Decision.
func WithApproval(tools ...string) Option {
	return func(c *config) { c.approve = append(c.approve, tools...) }
}

// WithModelOptions passes options to every model call (temperature, max
// tokens, …); the tools are always offered.
func WithModelOptions(opts ...model.Option) Option {
	return func(c *config) { c.modelOpts = append(c.modelOpts, opts...) }
}

// WithCompileOptions compiles the graph with opts (a saver, breakpoints,
// retry policy).
func WithCompileOptions(opts ...engine.CompileOption) Option {
	return func(c *config) { c.compile = append(c.compile, opts...) }
}

// ApprovalRequest is the question the approve node asks about one tool
// call. Its JSON form names the call the way AG-UI clients look for it
// (reason "tool_call", toolCallId).
type ApprovalRequest struct {
	Reason     string `json:"reason"` // always "tool_call"
	Message    string `json:"message"`
	ToolCallID string `json:"toolCallId"`
	Tool       string `json:"tool"`
	Args       string `json:"args"`
	// Options are the answers a front end can offer as buttons, "approve"
	// and "reject" (the studio does); an edit is a Decision.
	Options []string `json:"options"`
}

// Decision is a human's answer to an ApprovalRequest: Action "approve",
// "reject" (Reason tells the model why) or "edit" (Args replace the call's
// arguments, then it runs). The answer may also be given as the bare
// string "approve" or "reject", or as JSON data of this shape.
type Decision struct {
	Action string `json:"action"`
	Reason string `json:"reason,omitempty"`
	Args   string `json:"args,omitempty"`
}

// Build returns the agent's graph, not yet compiled, for adding to it; New
// compiles it.
func Build(m model.ChatModel, tools []tool.Tool, opts ...Option) (*engine.StateGraph, error) {
	c := config{name: "react agent"}
	for _, o := range opts {
		o(&c)
	}
	if m == nil {
		return nil, errors.New("agent: nil model")
	}
	if !c.hasMsgs {
		c.msgs = engine.Messages("messages")
	}
	specs := make([]model.ToolSpec, len(tools))
	known := map[string]bool{}
	for i, t := range tools {
		specs[i] = t.Spec()
		if known[specs[i].Name] {
			return nil, fmt.Errorf("agent: two tools named %q", specs[i].Name)
		}
		known[specs[i].Name] = true
	}
	needs := map[string]bool{}
	for _, n := range c.approve {
		if !known[n] {
			return nil, fmt.Errorf("agent: WithApproval names %q, which is not one of the tools", n)
		}
		needs[n] = true
	}
	msgs := c.msgs
	g := engine.NewGraph(c.name, msgs).
		AddNode(AgentNode, func(ctx context.Context, s engine.State) (engine.Output, error) {
			conv := msgs.Get(s)
			if c.system != "" {
				conv = append([]engine.Message{{ID: "system", Role: engine.RoleSystem, Content: c.system}}, conv...)
			}
			// Specs are read at each call: a tool whose server changed its
			// description or schema (an MCP tool) is offered as it is now.
			specs := make([]model.ToolSpec, len(tools))
			for i, t := range tools {
				specs[i] = t.Spec()
			}
			reply, err := m.Generate(ctx, conv, append(slices.Clone(c.modelOpts), model.WithTools(specs...))...)
			if err != nil {
				return nil, err
			}
			return engine.Updates(msgs.Add(reply.Message)), nil
		}).
		AddNode(ToolsNode, tool.Node(msgs, tools...)).
		AddEdge(engine.START, AgentNode).
		AddEdge(ToolsNode, AgentNode)
	if len(needs) == 0 {
		return g.AddConditionalEdges(AgentNode, tool.Condition(msgs, ToolsNode), engine.Targets(ToolsNode, engine.END)), nil
	}
	g.AddNode(ApproveNode, approveNode(msgs, needs)).AddEdge(ApproveNode, ToolsNode)
	return g.AddConditionalEdges(AgentNode, func(_ context.Context, s engine.State) (engine.Route, error) {
		calls := tool.PendingCalls(msgs.Get(s))
		switch {
		case len(calls) == 0:
			return engine.To(engine.END), nil
		case slices.ContainsFunc(calls, func(c engine.ToolCall) bool { return needs[c.Name] }):
			return engine.To(ApproveNode), nil
		}
		return engine.To(ToolsNode), nil
	}, engine.Targets(ToolsNode, ApproveNode, engine.END)), nil
}

// New returns the compiled agent graph: model m with tools.
func New(m model.ChatModel, tools []tool.Tool, opts ...Option) (*engine.Graph, error) {
	g, err := Build(m, tools, opts...)
	if err != nil {
		return nil, err
	}
	var c config
	for _, o := range opts {
		o(&c)
	}
	return g.Compile(c.compile...)
}

// approveNode asks about each pending call of a tool in needs, in order,
// and writes the rejections (as the calls' results) and edits.
func approveNode(msgs engine.MessagesKey, needs map[string]bool) engine.NodeFunc {
	return func(ctx context.Context, s engine.State) (engine.Output, error) {
		conv := msgs.Get(s)
		var ai engine.Message
		for i := len(conv) - 1; i >= 0; i-- {
			if conv[i].Role == engine.RoleAssistant {
				ai = conv[i]
				break
			}
		}
		var out []engine.Message
		edited := false
		calls := slices.Clone(ai.ToolCalls)
		pending := map[string]bool{}
		for _, c := range tool.PendingCalls(conv) {
			pending[c.ID] = true
		}
		for i, c := range calls {
			if !pending[c.ID] || !needs[c.Name] {
				continue
			}
			ans, err := engine.Interrupt(ctx, ApprovalRequest{Reason: "tool_call", ToolCallID: c.ID, Tool: c.Name, Args: c.Args,
				Message: fmt.Sprintf("Run %s with %s?", c.Name, c.Args), Options: []string{"approve", "reject"}})
			if err != nil {
				return nil, err
			}
			d, err := decision(ans)
			if err != nil {
				return nil, engine.Permanent(fmt.Errorf("the answer about tool call %s: %w", c.ID, err))
			}
			switch d.Action {
			case "approve":
			case "reject":
				text := "The reviewer rejected this call."
				if d.Reason != "" {
					text += " Reason: " + d.Reason
				}
				out = append(out, engine.Message{ID: tool.ResultID(c.ID), Role: engine.RoleTool, Name: c.Name, ToolCallID: c.ID, Content: text})
			case "edit":
				if !json.Valid([]byte(d.Args)) {
					return nil, engine.Permanent(fmt.Errorf("the edited arguments of tool call %s are not JSON: %q", c.ID, d.Args))
				}
				calls[i].Args = d.Args
				edited = true
			}
		}
		var up engine.Update
		if edited {
			ai.ToolCalls = calls
			up = append(up, msgs.Add(ai)) // same id: replaces the message
		}
		if len(out) > 0 {
			up = append(up, msgs.Add(out...))
		}
		return up, nil
	}
}

// decision reads an answer: "approve", "reject", a Decision, or JSON data
// of one.
func decision(v any) (Decision, error) {
	var d Decision
	switch a := v.(type) {
	case string:
		d.Action = a
	case Decision:
		d = a
	case *Decision:
		if a != nil {
			d = *a
		}
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return d, err
		}
		if err := json.Unmarshal(b, &d); err != nil {
			return d, fmt.Errorf("want {\"action\": \"approve\"|\"reject\"|\"edit\"}, got %s", b)
		}
	}
	switch d.Action {
	case "approve", "reject", "edit":
		return d, nil
	}
	return d, fmt.Errorf("action %q: want \"approve\", \"reject\" or \"edit\"", d.Action)
}

func init() {
	// Stored questions and answers keep their types across restarts.
	engine.RegisterType[ApprovalRequest]("agent.ApprovalRequest")
	engine.RegisterType[Decision]("agent.Decision")
}
