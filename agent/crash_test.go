package agent_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weftstudio/weft/agent"
	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/sqlite"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/model/modeltest"
	"github.com/weftstudio/weft/model/openai"
	"github.com/weftstudio/weft/tool"
)

// crashAgent is the agent of TestKillDuringToolResumes. mark, when set, is
// a file the lookup tool creates before it hangs until the process dies.
func crashAgent(t *testing.T, db, url, mark string) *engine.Graph {
	lookup := tool.Must(tool.New("lookup", "Looks a city up.", func(ctx context.Context, a weatherArgs) (string, error) {
		if mark != "" {
			if err := os.WriteFile(mark, nil, 0o644); err != nil {
				return "", err
			}
			select {} // killed here
		}
		return "Paris: 2.1 million people", nil
	}))
	s, err := sqlite.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	g, err := agent.New(openai.New(openai.WithBaseURL(url), openai.WithAPIKey("k")), []tool.Tool{lookup},
		agent.WithCompileOptions(engine.WithSaver(s)))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestAgentCrashChild is the child process of TestKillDuringToolResumes.
func TestAgentCrashChild(t *testing.T) {
	db := os.Getenv("WEFT_AGENT_CRASH_DB")
	if db == "" {
		t.Skip("child process of TestKillDuringToolResumes")
	}
	g := crashAgent(t, db, os.Getenv("WEFT_AGENT_CRASH_URL"), os.Getenv("WEFT_AGENT_CRASH_MARK"))
	g.Invoke(context.Background(), engine.Values{"messages": []engine.Message{{ID: "u1", Role: engine.RoleUser, Content: "How big is Paris?"}}},
		engine.WithThread("crash"), engine.WithDurability(engine.DurabilitySync))
	t.Fatal("the run should never end: the parent kills this process")
}

// The process running the agent is killed with SIGKILL while a tool runs;
// a new process resumes the thread from the store: the tool runs again, the
// model is not asked the first question twice, the conversation ends as an
// uninterrupted one would, and the first model call is still on record.
func TestKillDuringToolResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	srv := modeltest.NewServerFunc(t, modeltest.OpenAI{}, func(seen modeltest.Seen) modeltest.Response {
		if seen.Messages[len(seen.Messages)-1].Role == "tool" {
			return modeltest.Response{Reply: modeltest.Reply{ID: "r2", Model: "gpt-fake", Text: []string{"About 2.1 million."}}}
		}
		return modeltest.Response{Reply: modeltest.Reply{ID: "r1", Model: "gpt-fake", Calls: []modeltest.Call{{ID: "c1", Name: "lookup", Args: []string{`{"city":`, `"Paris"}`}}}}}
	})
	dir := t.TempDir()
	db, mark := filepath.Join(dir, "agent.db"), filepath.Join(dir, "tool-started")
	cmd := exec.Command(os.Args[0], "-test.run=^TestAgentCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "WEFT_AGENT_CRASH_DB="+db, "WEFT_AGENT_CRASH_URL="+srv.URL, "WEFT_AGENT_CRASH_MARK="+mark)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	deadline := time.Now().Add(60 * time.Second) // a safety net, not a timing assertion
	for {
		if _, err := os.Stat(mark); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the child never started the tool")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	g := crashAgent(t, db, srv.URL, "")
	// The killed run's lease would hold the thread until it lapsed: the
	// test knows its holder is dead and releases it, as an operator may.
	l := g.Saver().(checkpoint.Leaser)
	held, err := l.Leases(context.Background(), "crash")
	if err != nil || len(held) != 1 {
		t.Fatalf("the killed run's lease: %v, %v", held, err)
	}
	if err := l.ReleaseLease(context.Background(), held[0]); err != nil {
		t.Fatal(err)
	}
	res, err := g.Invoke(context.Background(), nil, engine.WithThread("crash"))
	if err != nil {
		t.Fatal(err)
	}
	msgs := engine.Messages("messages").Get(engine.StateOf(res.Values))
	var got []string
	for _, m := range msgs {
		got = append(got, m.Role+":"+m.Content)
	}
	want := "user:How big is Paris?|assistant:|tool:Paris: 2.1 million people|assistant:About 2.1 million."
	if !res.Done || strings.Join(got, "|") != want {
		t.Errorf("conversation\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("the model was asked %d times, want 2 (the first answer was checkpointed)", n)
	}
	hist, err := g.History(context.Background(), checkpoint.ListOptions{}, engine.WithThread("crash"))
	if err != nil {
		t.Fatal(err)
	}
	var calls []engine.CallRecord
	for _, s := range hist {
		for _, ts := range s.Tasks {
			if ts.Name == agent.AgentNode {
				calls = append(calls, ts.Calls...)
			}
		}
	}
	if len(calls) != 2 || calls[1].Reply == nil || len(calls[1].Reply.ToolCalls) != 1 {
		t.Errorf("model calls on record: %+v", calls)
	}
}
