package replay_test

import (
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/replay"
)

var (
	revise  = engine.Command{Resume: map[string]any{"action": "revise", "feedback": "more"}}
	approve = engine.Command{Resume: map[string]any{"action": "approve"}}
)

func startReview(t *testing.T, g *engine.Graph, thread string) {
	t.Helper()
	invoke(t, g, engine.Values{"topic": "kelp", "messages": []engine.Message{{Role: engine.RoleUser, Content: "Write about kelp."}}}, thread)
}

// has reports whether the thread's lineage has a checkpoint of source src.
func has(t *testing.T, g *engine.Graph, thread string, src checkpoint.Source) bool {
	return lineageIndex(t, g, thread, func(s *engine.Snapshot) bool { return s.Metadata.Source == src }) >= 0
}

func TestManualUpdatesReplay(t *testing.T) {
	s := memory.New()
	g := reviewGraph(t, s, variant{})
	startReview(t, g, "u")
	// The reviewer rewrites the draft and the assistant's message (a
	// reducer channel, replaced whole; its messages' ids were generated).
	st, err := g.GetState(ctx, engine.WithThread("u"))
	if err != nil {
		t.Fatal(err)
	}
	msgs := append([]engine.Message(nil), st.Values["messages"].([]engine.Message)...)
	msgs[len(msgs)-1].Content = "Hand-written draft."
	w, err := g.Replace("messages", msgs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.UpdateState(ctx, engine.Updates(rvDraft.Set("Hand-written draft."), w), "write", engine.WithThread("u")); err != nil {
		t.Fatal(err)
	}
	invoke(t, g, nil, "u")
	if res := invoke(t, g, approve, "u"); !res.Done || res.Values["published"] != "Hand-written draft." {
		t.Fatalf("recorded: %+v", res.Values)
	}
	if !has(t, g, "u", checkpoint.SourceUpdate) {
		t.Fatal("the lineage has no update")
	}
	mustMatch(t, replayOf(t, g, s, "u", replay.Strict()))

	// A write node changed after the update: the update still applies,
	// and the change shows where write first ran.
	rep := replayOf(t, reviewGraph(t, memory.New(), variant{draftSuffix: "!"}), s, "u")
	if rep.Match || rep.Difference.Node != "write" {
		t.Fatalf("changed write node: %+v", rep.Difference)
	}
}

func TestReRunFromAnEarlierCheckpointReplaysItsBranch(t *testing.T) {
	s := memory.New()
	g := recordReview(t, s)
	// Re-run from the checkpoint after the first draft, and revise this
	// time round before approving: the head is on the new branch.
	hist, err := g.History(ctx, checkpoint.ListOptions{}, engine.WithThread("r"))
	if err != nil {
		t.Fatal(err)
	}
	var afterDraft string
	for _, h := range hist {
		if h.Metadata.Step == 1 {
			afterDraft = h.Ref.CheckpointID
		}
	}
	invoke(t, g, nil, "r", engine.WithCheckpoint(afterDraft))
	invoke(t, g, revise, "r")
	invoke(t, g, revise, "r")
	if res := invoke(t, g, approve, "r"); !res.Done {
		t.Fatalf("recorded: %+v", res)
	}
	if !has(t, g, "r", checkpoint.SourceFork) {
		t.Fatal("the lineage has no fork")
	}
	rep := replayOf(t, g, s, "r", replay.Strict())
	mustMatch(t, rep)
	all, err := g.History(ctx, checkpoint.ListOptions{}, engine.WithThread("r"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(lineage(t, g, "r")); rep.Checkpoints != n || n >= len(all) {
		t.Errorf("replayed %d checkpoints; the branch has %d, the thread %d", rep.Checkpoints, n, len(all))
	}
}

func TestCopiedCheckpointReplays(t *testing.T) {
	s := memory.New()
	g := reviewGraph(t, s, variant{})
	startReview(t, g, "c")
	st, err := g.GetState(ctx, engine.WithThread("c"))
	if err != nil {
		t.Fatal(err)
	}
	// Copy the waiting checkpoint as a sibling and go on from the copy.
	if _, err := g.UpdateState(ctx, nil, engine.AsCopy, engine.WithThread("c"), engine.WithCheckpoint(st.Ref.CheckpointID)); err != nil {
		t.Fatal(err)
	}
	invoke(t, g, nil, "c")
	if res := invoke(t, g, approve, "c"); !res.Done {
		t.Fatalf("recorded: %+v", res)
	}
	if !has(t, g, "c", checkpoint.SourceFork) {
		t.Fatal("the lineage has no fork")
	}
	mustMatch(t, replayOf(t, g, s, "c", replay.Strict()))
}

func TestEditedStepReplays(t *testing.T) {
	s := memory.New()
	g := reviewGraph(t, s, variant{})
	startReview(t, g, "e")
	// Edit the write step's draft after the fact: a fork of its step with
	// the draft replaced, then go on from it.
	hist, err := g.History(ctx, checkpoint.ListOptions{}, engine.WithThread("e"))
	if err != nil {
		t.Fatal(err)
	}
	var beforeWrite *engine.Snapshot
	for _, h := range hist {
		if len(h.Next) == 1 && h.Next[0] == "write" {
			beforeWrite = h
		}
	}
	var edits []engine.StepEdit
	for _, task := range beforeWrite.Tasks {
		for i, w := range task.Result {
			if w.Channel == "draft" {
				edits = append(edits, engine.StepEdit{TaskID: task.ID, Write: i, Value: "An edited draft."})
			}
		}
	}
	if len(edits) != 1 {
		t.Fatalf("edits %+v", edits)
	}
	if _, err := g.ForkEdited(ctx, edits, engine.WithThread("e"), engine.WithCheckpoint(beforeWrite.Ref.CheckpointID)); err != nil {
		t.Fatal(err)
	}
	invoke(t, g, nil, "e")
	if res := invoke(t, g, approve, "e"); !res.Done || res.Values["published"] != "An edited draft." {
		t.Fatalf("recorded: %+v", res.Values)
	}
	mustMatch(t, replayOf(t, g, s, "e", replay.Strict()))
}

func TestReplayToACheckpoint(t *testing.T) {
	s := memory.New()
	g := recordReview(t, s)
	hist, err := g.History(ctx, checkpoint.ListOptions{}, engine.WithThread("r"))
	if err != nil {
		t.Fatal(err)
	}
	mid := hist[len(hist)/2]
	rep := replayOf(t, g, s, "r", replay.To(mid.Ref.CheckpointID), replay.Strict())
	mustMatch(t, rep)
	if rep.Checkpoints != len(hist)-len(hist)/2 {
		t.Errorf("replayed %d checkpoints to the middle of %d", rep.Checkpoints, len(hist))
	}
	if _, err := replay.Run(ctx, g, s, "r", replay.To("nope")); err == nil {
		t.Error("a missing checkpoint replayed")
	}
	if _, err := replay.Run(ctx, g, s, "nobody"); err == nil {
		t.Error("a missing thread replayed")
	}
}

func TestStepRunAgainFromAnUpdateReplaysItsLastRun(t *testing.T) {
	// A re-run from an update checkpoint makes no fork: the step from it
	// is stored on the same checkpoint again, under the same task ids.
	s := memory.New()
	g := reviewGraph(t, s, variant{})
	startReview(t, g, "twice")
	up, err := g.UpdateState(ctx, engine.Updates(rvDraft.Set("Hand-written draft.")), "write", engine.WithThread("twice"))
	if err != nil {
		t.Fatal(err)
	}
	invoke(t, g, nil, "twice")
	if res := invoke(t, g, approve, "twice"); !res.Done {
		t.Fatalf("first branch: %+v", res)
	}
	// Back to the update; this time the reviewer asks for a revision.
	invoke(t, g, nil, "twice", engine.WithCheckpoint(up.CheckpointID))
	invoke(t, g, revise, "twice", engine.WithCheckpoint(up.CheckpointID))
	invoke(t, g, nil, "twice")
	if res := invoke(t, g, approve, "twice"); !res.Done || res.Values["revisions"] != 2 {
		t.Fatalf("second branch: %+v", res.Values)
	}
	mustMatch(t, replayOf(t, g, s, "twice", replay.Strict()))
}

func TestNewInputMidThreadReplays(t *testing.T) {
	s := memory.New()
	g := recordReview(t, s)
	// The finished thread gets a new topic: a second input checkpoint.
	invoke(t, g, engine.Values{"topic": "otters"}, "r")
	if res := invoke(t, g, approve, "r"); !res.Done || res.Values["published"] != "Draft 3 about otters." {
		t.Fatalf("recorded: %+v", res.Values)
	}
	inputs := 0
	for _, c := range lineage(t, g, "r") {
		if c.Metadata.Source == checkpoint.SourceInput {
			inputs++
		}
	}
	if inputs != 2 {
		t.Fatalf("%d inputs in the lineage", inputs)
	}
	mustMatch(t, replayOf(t, g, s, "r", replay.Strict()))
	// A changed node shows after the second input too.
	rep := replayOf(t, reviewGraph(t, memory.New(), variant{reviseApproves: true}), s, "r")
	if rep.Match || rep.Difference.Node != "review" {
		t.Fatalf("%+v", rep.Difference)
	}
}
