package examples

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
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

// Agent builds the tool-using agent with a bank of its own holding 1,000.
func Agent(saver checkpoint.Saver) (Demo, error) { return AgentWithBank(saver, NewBank(1000)) }

// AgentWithBank builds the agent loop: agent (a scripted model) asks for
// tools, tools runs them and loops back, until agent answers. The
// transfer_money tool asks a human for approval with Interrupt before
// calling the bank.
func AgentWithBank(saver checkpoint.Saver, bank *Bank) (Demo, error) {
	b := engine.NewGraph("tool agent", AgentMessages, AgentLedger).
		AddNode("agent", scriptedAgent).
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
	return Demo{Graph: g, Description: "An agent loop with tools; a money transfer waits for human approval and happens exactly once.",
		Example: engine.Values{"messages": []engine.Message{{ID: "u1", Role: engine.RoleUser, Content: "Check my balance, then send 250 to Alice."}}}}, nil
}

var amountTo = regexp.MustCompile(`(?i)send (\d+) to (\w+)`)

// scriptedAgent plays the model: on a fresh request it calls get_balance and,
// when asked to send money, transfer_money; once tool results are in, it
// answers.
func scriptedAgent(_ context.Context, s engine.State) (engine.Output, error) {
	msgs := AgentMessages.Get(s)
	if len(msgs) == 0 {
		return nil, engine.Permanent(fmt.Errorf("no messages: start the thread with a user message"))
	}
	last := msgs[len(msgs)-1]
	turn := len(msgs)
	if last.Role == engine.RoleUser {
		calls := []engine.ToolCall{{ID: fmt.Sprintf("call-%d-balance", turn), Name: "get_balance", Args: "{}"}}
		if m := amountTo.FindStringSubmatch(last.Content); m != nil {
			args, _ := json.Marshal(map[string]any{"amount": atoi(m[1]), "to": m[2]})
			calls = append(calls, engine.ToolCall{ID: fmt.Sprintf("call-%d-transfer", turn), Name: "transfer_money", Args: string(args)})
		}
		return engine.Updates(AgentMessages.Add(engine.Message{ID: fmt.Sprintf("ai-%d", turn), Role: engine.RoleAssistant, ToolCalls: calls})), nil
	}
	var results []string
	for i := len(msgs) - 1; i >= 0 && msgs[i].Role == engine.RoleTool; i-- {
		results = append([]string{msgs[i].Content}, results...)
	}
	return engine.Updates(AgentMessages.Add(engine.Message{ID: fmt.Sprintf("ai-%d", turn), Role: engine.RoleAssistant,
		Content: "Done. " + strings.Join(results, " ")})), nil
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

func runTools(ctx context.Context, s engine.State, bank *Bank) (engine.Output, error) {
	msgs := AgentMessages.Get(s)
	calls := msgs[len(msgs)-1].ToolCalls
	var up engine.Update
	for _, c := range calls {
		switch c.Name {
		case "get_balance":
			bank.mu.Lock()
			bal := bank.Balance
			bank.mu.Unlock()
			up = append(up, AgentMessages.Add(engine.Message{ID: "result-" + c.ID, Role: engine.RoleTool, ToolCallID: c.ID, Content: fmt.Sprintf("Balance: %d.", bal)}))
		case "transfer_money":
			var args struct {
				Amount int    `json:"amount"`
				To     string `json:"to"`
			}
			if err := json.Unmarshal([]byte(c.Args), &args); err != nil {
				return nil, engine.Permanent(fmt.Errorf("tool call %s: bad arguments %s: %w", c.ID, c.Args, err))
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
				up = append(up, AgentMessages.Add(engine.Message{ID: "result-" + c.ID, Role: engine.RoleTool, ToolCallID: c.ID, Content: "Transfer rejected by the reviewer."}))
				continue
			}
			conf, err := bank.Transfer(c.ID, args.Amount, args.To)
			if err != nil {
				up = append(up, AgentMessages.Add(engine.Message{ID: "result-" + c.ID, Role: engine.RoleTool, ToolCallID: c.ID, Content: "Transfer failed: " + err.Error()}))
				continue
			}
			up = append(up, AgentLedger.Add(conf),
				AgentMessages.Add(engine.Message{ID: "result-" + c.ID, Role: engine.RoleTool, ToolCallID: c.ID, Content: fmt.Sprintf("Sent %d to %s.", args.Amount, args.To)}))
		default:
			up = append(up, AgentMessages.Add(engine.Message{ID: "result-" + c.ID, Role: engine.RoleTool, ToolCallID: c.ID, Content: "Unknown tool " + c.Name + "."}))
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
