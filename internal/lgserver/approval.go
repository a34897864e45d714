package lgserver

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/weftstudio/weft/agentserver"
	"github.com/weftstudio/weft/engine"
)

// ApprovalGraph is the approval graph of app/src/approval.ts written with
// Weft's engine, for the tests that drive a LangGraph server and weft serve
// alike, following LangGraph.js: plan (slowed by
// configurable.delay_ms) → research, a subgraph (gather → pick, which asks
// which note to keep) → review (asks for approval of a draft) → finalize.
func ApprovalGraph(t testing.TB) *engine.Graph {
	t.Helper()
	topic := engine.LastValue[string]("topic")
	notes := engine.List[string]("notes")
	chosen := engine.LastValue[string]("chosen")
	draft := engine.LastValue[string]("draft")
	approved := engine.LastValue[bool]("approved")
	log := engine.List[string]("log")
	js := engine.WithReference(engine.LangGraphJS)
	research, err := engine.NewGraph("research", topic, notes, chosen).
		AddNode("gather", func(_ context.Context, s engine.State) (engine.Output, error) {
			return engine.Updates(notes.Add("fact A about "+topic.Get(s), "fact B about "+topic.Get(s))), nil
		}).
		AddNode("pick", func(ctx context.Context, s engine.State) (engine.Output, error) {
			ans, err := engine.Interrupt(ctx, map[string]any{"question": "Which note should we keep?", "options": notes.Get(s)})
			if err != nil {
				return nil, err
			}
			return engine.Updates(chosen.Set(fmt.Sprint(ans))), nil
		}).
		AddEdge(engine.START, "gather").AddEdge("gather", "pick").AddEdge("pick", engine.END).Compile(js)
	if err != nil {
		t.Fatal(err)
	}
	g, err := engine.NewGraph("approval", topic, notes, chosen, draft, approved, log).
		AddNode("plan", func(ctx context.Context, s engine.State) (engine.Output, error) {
			cfg, _ := engine.RunContext[agentserver.Configurable](ctx)
			if ms, _ := cfg["delay_ms"].(float64); ms > 0 {
				select {
				case <-time.After(time.Duration(ms) * time.Millisecond):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return engine.Updates(log.Add("plan:" + topic.Get(s))), nil
		}).
		AddSubgraph("research", research).
		AddNode("review", func(ctx context.Context, s engine.State) (engine.Output, error) {
			c, found := chosen.Lookup(s)
			if !found {
				c = "undefined" // what JavaScript's template string makes of a missing value
			}
			d := "Draft on " + topic.Get(s) + " using " + c
			verdict, err := engine.Interrupt(ctx, map[string]any{"question": "Approve this draft?", "draft": d})
			if err != nil {
				return nil, err
			}
			m, _ := verdict.(map[string]any)
			ok := verdict == true || verdict == "yes" || m["approved"] == true
			b, err := json.Marshal(verdict)
			if err != nil {
				return nil, err
			}
			return engine.Updates(draft.Set(d), approved.Set(ok), log.Add("review:"+string(b))), nil
		}).
		AddNode("finalize", func(_ context.Context, s engine.State) (engine.Output, error) {
			if approved.Get(s) {
				return engine.Updates(log.Add("published")), nil
			}
			return engine.Updates(log.Add("rejected")), nil
		}).
		AddEdge(engine.START, "plan").AddEdge("plan", "research").AddEdge("research", "review").
		AddEdge("review", "finalize").AddEdge("finalize", engine.END).Compile(js)
	if err != nil {
		t.Fatal(err)
	}
	return g
}
