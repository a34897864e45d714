package replay_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/examples"
	"github.com/weftstudio/weft/replay"
)

var ctx = context.Background()

func invoke(t *testing.T, g *engine.Graph, in engine.Input, thread string, opts ...engine.RunOption) *engine.Result {
	t.Helper()
	res, err := g.Invoke(ctx, in, append([]engine.RunOption{engine.WithThread(thread)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// replayOf runs a replay and fails the test when it could not be made.
func replayOf(t *testing.T, g *engine.Graph, s checkpoint.Saver, thread string, opts ...replay.Option) *replay.Report {
	t.Helper()
	rep, err := replay.Run(ctx, g, s, thread, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func mustMatch(t *testing.T, rep *replay.Report) {
	t.Helper()
	if !rep.Match {
		t.Fatalf("replay differs:\n%s", rep.Text())
	}
}

// recordWriter records the writing assistant's demo thread: an invalid
// review answer (asked again), a revision with feedback, then approval.
func recordWriter(t *testing.T) (checkpoint.Saver, *engine.Graph) {
	t.Helper()
	s := memory.New()
	d, err := examples.Writer(s)
	if err != nil {
		t.Fatal(err)
	}
	invoke(t, d.Graph, d.Example, "w")
	invoke(t, d.Graph, engine.Command{Resume: "maybe"}, "w")
	invoke(t, d.Graph, engine.Command{Resume: map[string]any{"action": "revise", "feedback": "add a safety tip"}}, "w")
	if res := invoke(t, d.Graph, engine.Command{Resume: "approve"}, "w"); !res.Done {
		t.Fatalf("the recorded thread did not finish: %+v", res)
	}
	return s, d.Graph
}

func TestWriterReplayMatches(t *testing.T) {
	s, g := recordWriter(t)
	rep := replayOf(t, g, s, "w", replay.Strict())
	mustMatch(t, rep)
	hist, err := g.History(ctx, checkpoint.ListOptions{}, engine.WithThread("w"))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Checkpoints != len(hist) || rep.Matched != len(hist) {
		t.Errorf("replayed %d checkpoints, matched %d; the thread has %d", rep.Checkpoints, rep.Matched, len(hist))
	}
	if !strings.Contains(rep.Text(), "matches the recording") {
		t.Errorf("text: %s", rep.Text())
	}
}

func TestReviewReplayPairsGeneratedMessageIDs(t *testing.T) {
	s := memory.New()
	g := recordReview(t, s)
	mustMatch(t, replayOf(t, g, s, "r", replay.Strict()))
}

func TestChangedNodeIsReportedWhereItFirstRan(t *testing.T) {
	s := memory.New()
	g := recordReview(t, s)
	changed := reviewGraph(t, memory.New(), variant{draftSuffix: " (edited)"})
	rep := replayOf(t, changed, s, "r")
	if rep.Match {
		t.Fatal("a changed node replayed as a match")
	}
	d := rep.Difference
	want := lineageIndex(t, g, "r", ran("write"))
	if d.Kind != replay.KindWrites || d.Index != want || d.Node != "write" || d.TaskPath != "pull:write" {
		t.Fatalf("difference %+v, want writes of write at checkpoint %d\n%s", d, want, rep.Text())
	}
	if rep.Matched != want {
		t.Errorf("matched %d, want %d", rep.Matched, want)
	}
	var chans []string
	for _, c := range d.Channels {
		chans = append(chans, c.Channel)
	}
	if fmt.Sprint(chans) != "[draft messages]" {
		t.Errorf("channels %v, want draft and messages", chans)
	}
	if string(d.Channels[0].Recorded) != `"Draft 1 about kelp."` || string(d.Channels[0].Replayed) != `"Draft 1 about kelp. (edited)"` {
		t.Errorf("draft values %s / %s", d.Channels[0].Recorded, d.Channels[0].Replayed)
	}
	text := rep.Text()
	for _, want := range []string{"-\"Draft 1 about kelp.\"", "+\"Draft 1 about kelp. (edited)\"", `task "write" wrote other values`} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
}

func TestChangedAnswerPathIsReportedAtTheAnsweredStep(t *testing.T) {
	s := memory.New()
	g := recordReview(t, s)
	changed := reviewGraph(t, memory.New(), variant{reviseApproves: true})
	rep := replayOf(t, changed, s, "r")
	d := rep.Difference
	want := lineageIndex(t, g, "r", ran("review"))
	if rep.Match || d.Kind != replay.KindWrites || d.Index != want || d.Node != "review" {
		t.Fatalf("difference %+v, want writes of review at checkpoint %d\n%s", d, want, rep.Text())
	}
	if len(d.Channels) != 1 || d.Channels[0].Channel != "feedback" || string(d.Channels[0].Recorded) != `"shorter"` || string(d.Channels[0].Replayed) != `""` {
		t.Errorf("channels %+v", d.Channels)
	}
}
