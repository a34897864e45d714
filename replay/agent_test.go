package replay_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/weftstudio/weft/agent"
	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/examples"
	"github.com/weftstudio/weft/model"
	"github.com/weftstudio/weft/model/scripted"
	"github.com/weftstudio/weft/replay"
	"github.com/weftstudio/weft/tool"
)

// offline is a model that fails the test if it is ever called: a replay
// served from the recording must not reach it.
func offline(t *testing.T, calls *atomic.Int32) model.ChatModel {
	return scripted.New(func(req *model.Request) (scripted.Turn, error) {
		calls.Add(1)
		return scripted.Turn{}, errors.New("the model was called during a replay")
	})
}

func TestAgentDemoReplayServesModelCalls(t *testing.T) {
	s := memory.New()
	d, err := examples.AgentWithModel(s, examples.NewBank(1000), examples.ScriptedAgentModel(0))
	if err != nil {
		t.Fatal(err)
	}
	invoke(t, d.Graph, d.Example, "a")
	if res := invoke(t, d.Graph, engine.Command{Resume: "approve"}, "a"); !res.Done {
		t.Fatalf("recorded thread not done: %+v", res)
	}
	var called atomic.Int32
	again, err := examples.AgentWithModel(memory.New(), examples.NewBank(1000), offline(t, &called))
	if err != nil {
		t.Fatal(err)
	}
	rep := replayOf(t, again.Graph, s, "a", replay.Strict())
	mustMatch(t, rep)
	if called.Load() != 0 {
		t.Errorf("the model was called %d times", called.Load())
	}
	if rep.Served.Model != 2 {
		t.Errorf("served %d model calls, want 2 (the tool calls, then the answer)", rep.Served.Model)
	}
}

// The ReAct agent of package agent: its tools node is tool.Node, whose
// calls are served too.
type cityArgs struct {
	City string `json:"city"`
}

type payArgs struct {
	Amount int    `json:"amount"`
	To     string `json:"to"`
}

// agentTools returns the tools, counting their runs in ran.
func agentTools(ran *atomic.Int32) []tool.Tool {
	return []tool.Tool{
		tool.Must(tool.New("get_weather", "Weather in a city.", func(_ context.Context, a cityArgs) (string, error) {
			ran.Add(1)
			return "Sunny in " + a.City, nil
		})),
		tool.Must(tool.New("pay", "Sends money.", func(_ context.Context, a payArgs) (string, error) {
			ran.Add(1)
			return "paid", nil
		})),
	}
}

// clerk answers a fresh question with two tool calls and, once their
// results are in, with a summary of them; prefix starts every answer (a
// model that answers differently).
func clerk(prefix string, calls *atomic.Int32) model.ChatModel {
	return scripted.New(func(req *model.Request) (scripted.Turn, error) {
		calls.Add(1)
		last := req.Messages[len(req.Messages)-1]
		if last.Role == engine.RoleUser {
			return scripted.Turn{Text: prefix + "Checking.", Calls: []engine.ToolCall{
				{ID: "c1", Name: "get_weather", Args: `{"city":"Oslo"}`},
				{ID: "c2", Name: "pay", Args: `{"amount":5,"to":"Bo"}`},
			}}, nil
		}
		var results []string
		for _, m := range req.Messages {
			if m.Role == engine.RoleTool {
				results = append(results, m.Content)
			}
		}
		return scripted.Turn{Text: prefix + strings.Join(results, "; ")}, nil
	}, scripted.WithModelName("clerk"))
}

const prompt = "You are a clerk."

func reactAgent(t *testing.T, s checkpoint.Saver, m model.ChatModel, system string, ran *atomic.Int32) *engine.Graph {
	t.Helper()
	g, err := agent.New(m, agentTools(ran), agent.WithSystemPrompt(system), agent.WithApproval("pay"),
		agent.WithCompileOptions(engine.WithSaver(s)))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// recordAgent records a ReAct thread: the question (a message without an
// id), the approval of pay, the answer.
func recordAgent(t *testing.T) (checkpoint.Saver, *engine.Graph) {
	t.Helper()
	s := memory.New()
	var calls, runs atomic.Int32
	g := reactAgent(t, s, clerk("", &calls), prompt, &runs)
	invoke(t, g, engine.Values{"messages": []engine.Message{{Role: engine.RoleUser, Content: "Weather in Oslo, and pay Bo 5."}}}, "ag")
	res := invoke(t, g, engine.Command{Resume: "approve"}, "ag")
	if !res.Done || calls.Load() != 2 || runs.Load() != 2 {
		t.Fatalf("recorded thread: done %v, %d model calls, %d tool runs", res.Done, calls.Load(), runs.Load())
	}
	return s, g
}

func TestReactAgentReplayServesModelAndToolCalls(t *testing.T) {
	s, _ := recordAgent(t)
	var calls, runs atomic.Int32
	g := reactAgent(t, memory.New(), offline(t, &calls), prompt, &runs)
	rep := replayOf(t, g, s, "ag", replay.Strict())
	mustMatch(t, rep)
	if calls.Load() != 0 || runs.Load() != 0 {
		t.Errorf("a replay called the model %d times and ran tools %d times", calls.Load(), runs.Load())
	}
	if rep.Served != (replay.CallCount{Model: 2, Tool: 2}) {
		t.Errorf("served %+v, want 2 model and 2 tool calls", rep.Served)
	}
}

func TestChangedModelReplyIsServedFromTheRecording(t *testing.T) {
	// The model now answers otherwise, but the requests are the same: the
	// recording answers them, so the replay matches without calling it.
	s, _ := recordAgent(t)
	var calls, runs atomic.Int32
	g := reactAgent(t, memory.New(), clerk("Well: ", &calls), prompt, &runs)
	mustMatch(t, replayOf(t, g, s, "ag"))
	if calls.Load() != 0 {
		t.Errorf("the model was called %d times", calls.Load())
	}
}

func TestChangedPromptStrictFailsAtTheModelCall(t *testing.T) {
	s, rec := recordAgent(t)
	var calls, runs atomic.Int32
	g := reactAgent(t, memory.New(), clerk("Well: ", &calls), "You are a terse clerk.", &runs)
	rep := replayOf(t, g, s, "ag", replay.Strict())
	d := rep.Difference
	want := lineageIndex(t, rec, "ag", ran("agent"))
	if rep.Match || d.Kind != replay.KindCall || d.Index != want || d.Node != "agent" || d.Call == nil {
		t.Fatalf("difference %+v, want a refused call of agent at checkpoint %d\n%s", d, want, rep.Text())
	}
	c := d.Call
	if c.Kind != engine.CallModel || c.Index != 1 || c.What != "message 1 content" || c.Recorded != prompt || c.Replayed != "You are a terse clerk." {
		t.Errorf("call %+v", c)
	}
	if calls.Load() != 0 {
		t.Errorf("a strict replay called the model %d times", calls.Load())
	}
	if !strings.Contains(rep.Text(), `model call 1 (clerk) of node "agent"`) {
		t.Errorf("text:\n%s", rep.Text())
	}
}

func TestChangedPromptLenientCallsTheModelAndReportsItsReply(t *testing.T) {
	s, rec := recordAgent(t)
	var calls, runs atomic.Int32
	g := reactAgent(t, memory.New(), clerk("Well: ", &calls), "You are a terse clerk.", &runs)
	rep := replayOf(t, g, s, "ag")
	d := rep.Difference
	want := lineageIndex(t, rec, "ag", ran("agent"))
	if rep.Match || d.Kind != replay.KindWrites || d.Index != want || d.Node != "agent" {
		t.Fatalf("difference %+v, want the agent's writes at checkpoint %d\n%s", d, want, rep.Text())
	}
	if len(d.Channels) != 1 || d.Channels[0].Channel != "messages" || !strings.Contains(string(d.Channels[0].Replayed), "Well: Checking.") {
		t.Errorf("channels %+v", d.Channels)
	}
	if calls.Load() != 1 || len(rep.Live) != 1 || rep.Live[0].What != "message 1 content" {
		t.Errorf("%d live model calls, report lists %+v", calls.Load(), rep.Live)
	}
}
