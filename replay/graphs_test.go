package replay_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
)

// The review graph: write writes a draft (and a message without an id, so
// ids are generated in each run), review asks a human, and the answer
// sends the draft back (with feedback) or on to publish. variant changes
// one node's code, as a user editing it would.
var (
	rvTopic     = engine.LastValue[string]("topic")
	rvDraft     = engine.LastValue[string]("draft")
	rvFeedback  = engine.LastValue[string]("feedback")
	rvRevisions = engine.LastValue[int]("revisions")
	rvMessages  = engine.Messages("messages")
	rvPublished = engine.LastValue[string]("published")
)

type variant struct {
	// draftSuffix is added to every draft: a changed node.
	draftSuffix string
	// reviseApproves makes review treat "revise" as approval: a changed
	// answer path.
	reviseApproves bool
	// askTwice makes review ask for a confirmation after the answer: a
	// question the recording never answered.
	askTwice bool
	// failWrite makes write fail.
	failWrite bool
}

func reviewGraph(t *testing.T, s checkpoint.Saver, v variant) *engine.Graph {
	t.Helper()
	g, err := engine.NewGraph("review", rvTopic, rvDraft, rvFeedback, rvRevisions, rvMessages, rvPublished).
		AddNode("write", func(_ context.Context, st engine.State) (engine.Output, error) {
			if v.failWrite {
				return nil, errors.New("the draft service is down")
			}
			n := rvRevisions.Get(st) + 1
			text := fmt.Sprintf("Draft %d about %s.%s", n, rvTopic.Get(st), v.draftSuffix)
			if fb := rvFeedback.Get(st); fb != "" {
				text += " Revised: " + fb
			}
			return engine.Updates(rvDraft.Set(text), rvRevisions.Set(n), rvFeedback.Set(""),
				rvMessages.Add(engine.Message{Role: engine.RoleAssistant, Content: text})), nil
		}).
		AddNode("review", func(ctx context.Context, st engine.State) (engine.Output, error) {
			ans, err := engine.Interrupt(ctx, map[string]any{"draft": rvDraft.Get(st)})
			if err != nil {
				return nil, err
			}
			if v.askTwice {
				if _, err := engine.Interrupt(ctx, "sure?"); err != nil {
					return nil, err
				}
			}
			m, _ := ans.(map[string]any)
			if m["action"] == "revise" && !v.reviseApproves {
				fb, _ := m["feedback"].(string)
				return engine.Updates(rvFeedback.Set(fb)), nil
			}
			return engine.Updates(rvFeedback.Set("")), nil
		}).
		AddNode("publish", func(_ context.Context, st engine.State) (engine.Output, error) {
			return engine.Updates(rvPublished.Set(rvDraft.Get(st))), nil
		}).
		AddEdge(engine.START, "write").
		AddEdge("write", "review").
		AddConditionalEdges("review", func(_ context.Context, st engine.State) (engine.Route, error) {
			if rvFeedback.Get(st) != "" {
				return engine.To("write"), nil
			}
			return engine.To("publish"), nil
		}, engine.Targets("write", "publish")).
		AddEdge("publish", engine.END).
		Compile(engine.WithSaver(s))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// recordReview records a review thread: a revision, then approval. The
// input message has no id.
func recordReview(t *testing.T, s checkpoint.Saver) *engine.Graph {
	t.Helper()
	g := reviewGraph(t, s, variant{})
	invoke(t, g, engine.Values{"topic": "kelp", "messages": []engine.Message{{Role: engine.RoleUser, Content: "Write about kelp."}}}, "r")
	invoke(t, g, engine.Command{Resume: map[string]any{"action": "revise", "feedback": "shorter"}}, "r")
	if res := invoke(t, g, engine.Command{Resume: map[string]any{"action": "approve"}}, "r"); !res.Done {
		t.Fatalf("recorded thread not done: %+v", res)
	}
	return g
}

// lineage returns the thread's lineage: its head and the head's
// ancestors, oldest first.
func lineage(t *testing.T, g *engine.Graph, thread string) []*engine.Snapshot {
	t.Helper()
	hist, err := g.History(ctx, checkpoint.ListOptions{}, engine.WithThread(thread))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*engine.Snapshot{}
	for _, s := range hist {
		byID[s.Ref.CheckpointID] = s
	}
	var chain []*engine.Snapshot
	for s := hist[0]; s != nil; {
		chain = append([]*engine.Snapshot{s}, chain...)
		if s.Parent == nil {
			break
		}
		s = byID[s.Parent.CheckpointID]
	}
	return chain
}

// lineageIndex returns the position in the thread's lineage of the first
// checkpoint for which match holds, or -1.
func lineageIndex(t *testing.T, g *engine.Graph, thread string, match func(*engine.Snapshot) bool) int {
	t.Helper()
	for i, s := range lineage(t, g, thread) {
		if match(s) {
			return i
		}
	}
	return -1
}

// ran reports whether the checkpoint's step ran node.
func ran(node string) func(*engine.Snapshot) bool {
	return func(s *engine.Snapshot) bool {
		for _, n := range s.Metadata.Tasks {
			if n == node {
				return true
			}
		}
		return false
	}
}
