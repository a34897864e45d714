package replay_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/examples"
	"github.com/weftstudio/weft/replay"
)

var ctx = context.Background()

func invoke(t testing.TB, g *engine.Graph, in engine.Input, thread string, opts ...engine.RunOption) *engine.Result {
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
func recordWriter(t testing.TB) (checkpoint.Saver, *engine.Graph) {
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
	for _, want := range []string{"-Draft 1 about kelp.\n", "+Draft 1 about kelp. (edited)\n", `-    "content": "Draft 1 about kelp.",`, `task "write" wrote other values`} {
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

func TestQuestionTheRecordingCannotAnswer(t *testing.T) {
	s := memory.New()
	g := recordReview(t, s)
	rep := replayOf(t, reviewGraph(t, memory.New(), variant{askTwice: true}), s, "r")
	d := rep.Difference
	want := lineageIndex(t, g, "r", ran("review"))
	if rep.Match || d.Kind != replay.KindInterrupt || d.Index != want || d.Node != "review" || d.ReplayedValue != `"sure?"` {
		t.Fatalf("difference %+v, want review's unanswered question at checkpoint %d\n%s", d, want, rep.Text())
	}
}

func TestFailingNodeIsReported(t *testing.T) {
	s := memory.New()
	g := recordReview(t, s)
	rep := replayOf(t, reviewGraph(t, memory.New(), variant{failWrite: true}), s, "r")
	d := rep.Difference
	want := lineageIndex(t, g, "r", ran("write"))
	if rep.Match || d.Kind != replay.KindError || d.Index != want || d.Node != "write" || !strings.Contains(d.ReplayedValue, "the draft service is down") {
		t.Fatalf("difference %+v, want write's failure at checkpoint %d\n%s", d, want, rep.Text())
	}
}

func TestCommandUpdateGivenWithAnAnswerIsReapplied(t *testing.T) {
	s := memory.New()
	g := reviewGraph(t, s, variant{})
	invoke(t, g, engine.Values{"topic": "kelp"}, "cu")
	// The reviewer changes the topic along with asking for a revision.
	invoke(t, g, engine.Command{Resume: map[string]any{"action": "revise", "feedback": "on seaweed"}, Update: engine.Updates(rvTopic.Set("seaweed"))}, "cu")
	res := invoke(t, g, engine.Command{Resume: map[string]any{"action": "approve"}}, "cu")
	if !res.Done || !strings.Contains(res.Values["published"].(string), "about seaweed") {
		t.Fatalf("recorded: %+v", res.Values)
	}
	mustMatch(t, replayOf(t, g, s, "cu", replay.Strict()))
}

var (
	user  = engine.LastValue[string]("user")
	stamp = engine.LastValue[string]("stamp")
)

// greeter greets the run context's user and stamps the time.
func greeter(t *testing.T, s checkpoint.Saver) *engine.Graph {
	t.Helper()
	g, err := engine.NewGraph("greeter", user, stamp).
		AddNode("greet", func(ctx context.Context, _ engine.State) (engine.Output, error) {
			name, _ := engine.RunContext[string](ctx)
			return engine.Updates(user.Set("hello "+name), stamp.Set(time.Now().Format(time.RFC3339Nano))), nil
		}).
		AddEdge(engine.START, "greet").AddEdge("greet", engine.END).
		Compile(engine.WithSaver(s))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestRunOptionsAndIgnoredChannels(t *testing.T) {
	s := memory.New()
	g := greeter(t, s)
	invoke(t, g, engine.Values{"user": ""}, "g", engine.WithRunContext("ada"))
	time.Sleep(time.Millisecond)
	rep := replayOf(t, g, s, "g", replay.WithRunOptions(engine.WithRunContext("ada")))
	if rep.Match || rep.Difference.Channels[0].Channel != "stamp" {
		t.Fatalf("a time stamp replayed equal: %+v", rep.Difference)
	}
	mustMatch(t, replayOf(t, g, s, "g", replay.WithRunOptions(engine.WithRunContext("ada")), replay.IgnoreChannels("stamp")))
	rep = replayOf(t, g, s, "g", replay.IgnoreChannels("stamp"))
	if rep.Match || rep.Difference.Channels[0].Channel != "user" || string(rep.Difference.Channels[0].Replayed) != `"hello "` {
		t.Fatalf("a replay without the run context matched: %+v", rep.Difference)
	}
}
