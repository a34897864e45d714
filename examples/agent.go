package examples

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/longterm"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/model"
	"github.com/weftstudio/weft/model/scripted"
	"github.com/weftstudio/weft/tool"
)

// Channels of the agent demo.
var (
	AgentMessages = engine.Messages("messages")
	// AgentLedger records the transfers the bank confirmed, as "id: amount → to".
	AgentLedger = engine.List[string]("ledger")
)

// Bank is the agent demo's outside world: a fake bank whose Transfer is
// idempotent by key, the way real payment APIs make retries safe. The agent's
// tools node passes the tool call id as the key, so a transfer happens once
// even when the node runs again after a resume or a crash.
type Bank struct {
	mu        sync.Mutex
	Balance   int
	transfers map[string]string
	order     []string
}

// NewBank returns a bank holding balance.
func NewBank(balance int) *Bank { return &Bank{Balance: balance, transfers: map[string]string{}} }

// Transfer moves amount to whom once per key and returns the confirmation.
func (b *Bank) Transfer(key string, amount int, to string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if c, ok := b.transfers[key]; ok {
		return c, nil
	}
	if amount <= 0 || amount > b.Balance {
		return "", fmt.Errorf("cannot transfer %d: balance is %d", amount, b.Balance)
	}
	b.Balance -= amount
	c := fmt.Sprintf("%s: %d → %s", key, amount, to)
	b.transfers[key] = c
	b.order = append(b.order, c)
	return c, nil
}

// Transfers returns the confirmations of every transfer made, in order.
func (b *Bank) Transfers() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.order...)
}

// Approval is what a human answers to a transfer request: "approve", "reject",
// or {"action": "approve"|"reject"}.
type Approval struct {
	Action string `json:"action"`
}

// Agent builds the tool-using agent with a bank of its own holding 1,000,
// on the scripted model (ScriptedAgentModel).
func Agent(saver checkpoint.Saver) (Demo, error) { return AgentWithBank(saver, NewBank(1000)) }

// AgentWithBank builds the agent loop on the bank and the scripted model:
// agent (a chat model) asks for tools, tools runs them and loops back,
// until agent answers. The transfer_money tool asks a human for approval
// with Interrupt before calling the bank.
func AgentWithBank(saver checkpoint.Saver, bank *Bank) (Demo, error) {
	return AgentWithModel(saver, bank, ScriptedAgentModel(demoPace()))
}

// AgentWithModel builds the agent loop on bank with m as its model.
func AgentWithModel(saver checkpoint.Saver, bank *Bank, m model.ChatModel) (Demo, error) {
	b := engine.NewGraph("tool agent", AgentMessages, AgentLedger).
		AddNode("agent", func(ctx context.Context, s engine.State) (engine.Output, error) { return callModel(ctx, s, m) }).
		AddNode("tools", func(ctx context.Context, s engine.State) (engine.Output, error) { return runTools(ctx, s, bank) },
			engine.WithRetry(engine.RetryPolicy{MaxAttempts: 2})).
		AddEdge(engine.START, "agent").
		AddConditionalEdges("agent", func(_ context.Context, s engine.State) (engine.Route, error) {
			msgs := AgentMessages.Get(s)
			if len(msgs) > 0 && len(msgs[len(msgs)-1].ToolCalls) > 0 {
				return engine.To("tools"), nil
			}
			return engine.To("done"), nil
		}, engine.PathMap(map[string]string{"tools": "tools", "done": engine.END})).
		AddEdge("tools", "agent")
	g, err := compileWith(b, saver)
	if err != nil {
		return Demo{}, err
	}
	return Demo{Graph: g, Description: "An agent loop with tools; a money transfer waits for human approval and happens exactly once, and a preference you tell it is remembered in the long-term store for later threads.",
		Example: engine.Values{"messages": []engine.Message{{ID: "u1", Role: engine.RoleUser, Content: "Check my balance, then send 250 to Alice."}}}}, nil
}

// The agent's tools: their schemas come from these argument structs, and
// the tools node validates the model's arguments against them.
var (
	balanceTool = tool.Must(tool.New("get_balance", "Returns the account's balance.",
		func(context.Context, struct{}) (string, error) { return "", nil }))
	transferTool = tool.Must(tool.New("transfer_money", "Sends money from the account; a human approves each transfer.",
		func(context.Context, TransferArgs) (string, error) { return "", nil }))
	rememberTool = tool.Must(tool.New("remember_preference", "Remembers one of the user's preferences for later conversations.",
		func(context.Context, RememberArgs) (string, error) { return "", nil }))
)

// RememberArgs are the arguments of remember_preference.
type RememberArgs struct {
	Preference string `json:"preference" jsonschema:"minLength=1,description=The preference in the user's words"`
}

// PreferencesNamespace is where the agent keeps the user's preferences in
// the graph's long-term store (engine.WithStore): one item per preference,
// {"preference": text}, read into the prompt of every conversation.
var PreferencesNamespace = longterm.Namespace{"users", "demo", "preferences"}

// TransferArgs are the arguments of transfer_money.
type TransferArgs struct {
	Amount int    `json:"amount" jsonschema:"minimum=1,description=Whole units of money to send"`
	To     string `json:"to" jsonschema:"description=Who receives it"`
}

const agentPrompt = "You are a bank assistant. Use get_balance to read the balance and transfer_money to send money; " +
	"every transfer is approved by a human first. When the user tells you a preference, keep it with remember_preference. " +
	"Answer briefly once the tools have answered."

// callModel asks the model for the next step. The reply's id follows the
// conversation's length, so a re-run of the node replaces its message.
func callModel(ctx context.Context, s engine.State, m model.ChatModel) (engine.Output, error) {
	msgs := AgentMessages.Get(s)
	if len(msgs) == 0 {
		return nil, engine.Permanent(fmt.Errorf("no messages: start the thread with a user message"))
	}
	prompt, err := withPreferences(ctx, agentPrompt)
	if err != nil {
		return nil, err
	}
	conv := append([]engine.Message{{ID: "system", Role: engine.RoleSystem, Content: prompt}}, msgs...)
	reply, err := m.Generate(ctx, conv, model.WithTools(balanceTool.Spec(), transferTool.Spec(), rememberTool.Spec()),
		model.WithMessageID(fmt.Sprintf("ai-%d", len(msgs))))
	if err != nil {
		return nil, err
	}
	return engine.Updates(AgentMessages.Add(reply.Message)), nil
}

// withPreferences adds to prompt the preferences remembered in the run's
// long-term store; prompt as it is without a store (none was given).
func withPreferences(ctx context.Context, prompt string) (string, error) {
	rt, _ := engine.RuntimeOf(ctx)
	if rt.Store == nil {
		return prompt, nil
	}
	items, err := rt.Store.Search(ctx, longterm.SearchQuery{Prefix: PreferencesNamespace, Limit: 50})
	if err != nil {
		return "", fmt.Errorf("reading the remembered preferences: %w", err)
	}
	var prefs []string
	for i := len(items) - 1; i >= 0; i-- { // oldest first: the order they were told
		if p, ok := items[i].Value["preference"].(string); ok {
			prefs = append(prefs, p)
		}
	}
	if len(prefs) == 0 {
		return prompt, nil
	}
	return prompt + "\n" + preferencesLead + strings.Join(prefs, "; ") + ".", nil
}

// preferencesLead starts the prompt's line of remembered preferences.
const preferencesLead = "The user's preferences, remembered from earlier conversations: "

// DemoPaceEnv names the variable that sets the scripted model's pace in
// tokens per second (0 streams at once).
const DemoPaceEnv = "WEFT_DEMO_PACE"

// demoPace is the scripted model's pace: $WEFT_DEMO_PACE, else 30 tokens a
// second — slow enough to watch tokens arrive, pause and cancel — and no
// waiting at all in tests.
func demoPace() float64 {
	if v := os.Getenv(DemoPaceEnv); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 {
			return f
		}
	}
	if testing.Testing() {
		return 0
	}
	return 30
}

var amountTo = regexp.MustCompile(`(?i)send (\d+) to (\w+)`)

// ScriptedAgentModel is the demo's offline model, streaming at pace tokens
// a second: on a fresh request it calls get_balance and, when asked to send
// money, transfer_money; once tool results are in, it answers with them.
func ScriptedAgentModel(pace float64) model.ChatModel {
	return scripted.New(scriptedAgent, scripted.WithPace(pace), scripted.WithModelName("scripted-bank-clerk"))
}

func scriptedAgent(req *model.Request) (scripted.Turn, error) {
	msgs := req.Messages
	for len(msgs) > 0 && msgs[0].Role == engine.RoleSystem {
		msgs = msgs[1:]
	}
	if len(msgs) == 0 {
		return scripted.Turn{}, errors.New("no messages")
	}
	last := msgs[len(msgs)-1]
	turn := len(msgs)
	if last.Role == engine.RoleUser {
		if m := rememberThat.FindStringSubmatch(last.Content); m != nil {
			args, _ := json.Marshal(RememberArgs{Preference: strings.TrimSpace(m[1])})
			return scripted.Turn{Text: "I'll remember that.", Calls: []engine.ToolCall{
				{ID: fmt.Sprintf("call-%d-remember", turn), Name: "remember_preference", Args: string(args)}}}, nil
		}
		calls := []engine.ToolCall{{ID: fmt.Sprintf("call-%d-balance", turn), Name: "get_balance", Args: "{}"}}
		text := "Let me check your balance first."
		if m := amountTo.FindStringSubmatch(last.Content); m != nil {
			args, _ := json.Marshal(map[string]any{"amount": atoi(m[1]), "to": m[2]})
			calls = append(calls, engine.ToolCall{ID: fmt.Sprintf("call-%d-transfer", turn), Name: "transfer_money", Args: string(args)})
			text = "Let me check your balance, then ask you to approve the transfer."
		}
		return scripted.Turn{Text: text, Calls: calls}, nil
	}
	var results []string
	for i := len(msgs) - 1; i >= 0 && msgs[i].Role == engine.RoleTool; i-- {
		results = append([]string{msgs[i].Content}, results...)
	}
	text := "Done. " + strings.Join(results, " ")
	for _, m := range req.Messages {
		if _, prefs, ok := strings.Cut(m.Content, preferencesLead); ok && m.Role == engine.RoleSystem && (len(results) == 0 || !strings.HasPrefix(results[0], "Remembered: ")) {
			text += " (I remember: " + strings.TrimSuffix(prefs, ".") + ".)"
		}
	}
	return scripted.Turn{Text: text}, nil
}

var rememberThat = regexp.MustCompile(`(?i)^remember (?:that )?(.+)$`)

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// runTools runs the last message's tool calls. Bad arguments and unknown
// tools go back to the model as the call's result; each call is recorded
// for the studio.
func runTools(ctx context.Context, s engine.State, bank *Bank) (engine.Output, error) {
	msgs := AgentMessages.Get(s)
	calls := msgs[len(msgs)-1].ToolCalls
	var up engine.Update
	result := func(c engine.ToolCall, start time.Time, text string, err error) {
		rec := engine.CallRecord{Kind: engine.CallTool, Name: c.Name, Start: start, Latency: time.Since(start), ToolCallID: c.ID,
			Args: engine.CallText{Text: c.Args}, Result: engine.CallText{Text: text}}
		if err != nil {
			rec.Error = err.Error()
		}
		engine.RecordCall(ctx, rec)
		up = append(up, AgentMessages.Add(engine.Message{ID: "result-" + c.ID, Role: engine.RoleTool, ToolCallID: c.ID, Content: text}))
	}
	for _, c := range calls {
		start := time.Now()
		switch c.Name {
		case "remember_preference":
			args, err := rememberTool.Decode(c.Args)
			if err != nil {
				result(c, start, "Error: "+err.Error(), err)
				continue
			}
			rt, _ := engine.RuntimeOf(ctx)
			if rt.Store == nil {
				err := errors.New("no long-term store: the graph was compiled without one (engine.WithStore)")
				result(c, start, "Error: "+err.Error(), err)
				continue
			}
			// The key is the thread and the call's id: a re-run of the node puts
			// the same item again, and another thread's call of the same id
			// (the scripted model's ids repeat) does not replace it.
			if err := rt.Store.Put(ctx, PreferencesNamespace, rt.ThreadID+":"+c.ID, map[string]any{"preference": args.Preference}); err != nil {
				return nil, fmt.Errorf("remembering a preference: %w", err)
			}
			result(c, start, "Remembered: "+args.Preference+".", nil)
		case "get_balance":
			bank.mu.Lock()
			bal := bank.Balance
			bank.mu.Unlock()
			result(c, start, fmt.Sprintf("Balance: %d.", bal), nil)
		case "transfer_money":
			args, err := transferTool.Decode(c.Args)
			if err != nil {
				result(c, start, "Error: "+err.Error(), err)
				continue
			}
			ans, err := engine.Interrupt(ctx, map[string]any{
				"question": fmt.Sprintf("Transfer %d to %s?", args.Amount, args.To),
				"tool":     "transfer_money", "amount": args.Amount, "to": args.To,
				"options": []string{"approve", "reject"},
			})
			if err != nil {
				return nil, err
			}
			if approvalAction(ans) != "approve" {
				result(c, start, "Transfer rejected by the reviewer.", nil)
				continue
			}
			conf, err := bank.Transfer(c.ID, args.Amount, args.To)
			if err != nil {
				result(c, start, "Transfer failed: "+err.Error(), err)
				continue
			}
			up = append(up, AgentLedger.Add(conf))
			result(c, start, fmt.Sprintf("Sent %d to %s.", args.Amount, args.To), nil)
		default:
			err := fmt.Errorf("unknown tool %q", c.Name)
			result(c, start, "Error: "+err.Error()+"; the tools are get_balance, transfer_money and remember_preference.", err)
		}
	}
	return up, nil
}

func approvalAction(v any) string {
	switch a := v.(type) {
	case string:
		return a
	case map[string]any:
		s, _ := a["action"].(string)
		return s
	case Approval:
		return a.Action
	}
	return ""
}
