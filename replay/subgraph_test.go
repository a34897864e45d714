package replay_test

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/examples"
	"github.com/weftstudio/weft/model"
	"github.com/weftstudio/weft/model/scripted"
	"github.com/weftstudio/weft/replay"
)

func TestMapReduceDemoReplayMatches(t *testing.T) {
	s := memory.New()
	d, err := examples.MapReduce(s)
	if err != nil {
		t.Fatal(err)
	}
	if res := invoke(t, d.Graph, d.Example, "m"); !res.Done {
		t.Fatalf("not done: %+v", res)
	}
	rep := replayOf(t, d.Graph, s, "m", replay.Strict())
	mustMatch(t, rep)
	if rep.Checkpoints < 4 {
		t.Errorf("only %d checkpoints replayed", rep.Checkpoints)
	}
}

// A map-reduce whose subgraph's condense node can be changed.
var (
	mrSubjects  = engine.LastValue[[]string]("subjects")
	mrSubject   = engine.LastValue[string]("subject")
	mrSummaries = engine.List[string]("summaries")
	mrReport    = engine.LastValue[string]("report")
)

// mrVariant changes the map-reduce's code: shout makes the subgraph's
// condense node upper-case its summary, reverse makes split send the
// subjects in reverse order.
type mrVariant struct{ shout, reverse bool }

func mapReduce(t *testing.T, s checkpoint.Saver, v mrVariant) *engine.Graph {
	t.Helper()
	sub, err := engine.NewGraph("sum", mrSubject, mrSummaries).
		AddNode("condense", func(_ context.Context, st engine.State) (engine.Output, error) {
			out := "about " + mrSubject.Get(st)
			if v.shout {
				out = strings.ToUpper(out)
			}
			return engine.Updates(mrSummaries.Add(out)), nil
		}).
		AddEdge(engine.START, "condense").Compile()
	if err != nil {
		t.Fatal(err)
	}
	g, err := engine.NewGraph("mr", mrSubjects, mrSubject, mrSummaries, mrReport).
		AddNode("split", func(context.Context, engine.State) (engine.Output, error) { return nil, nil }).
		AddSubgraph("summarize", sub).
		AddNode("combine", func(_ context.Context, st engine.State) (engine.Output, error) {
			return engine.Updates(mrReport.Set(strings.Join(mrSummaries.Get(st), "; "))), nil
		}).
		AddEdge(engine.START, "split").
		AddConditionalEdges("split", func(_ context.Context, st engine.State) (engine.Route, error) {
			xs := slices.Clone(mrSubjects.Get(st))
			if v.reverse {
				slices.Reverse(xs)
			}
			var r engine.Route
			for _, x := range xs {
				r.Sends = append(r.Sends, engine.Send{Node: "summarize", Arg: engine.Values{"subject": x}})
			}
			return r, nil
		}, engine.SendsTo("summarize")).
		AddEdge("summarize", "combine").AddEdge("combine", engine.END).
		Compile(engine.WithSaver(s))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestChangedSubgraphNodeIsReportedAtTheFanOut(t *testing.T) {
	s := memory.New()
	g := mapReduce(t, s, mrVariant{})
	invoke(t, g, engine.Values{"subjects": []string{"otters", "kelp"}}, "m")
	rep := replayOf(t, mapReduce(t, memory.New(), mrVariant{shout: true}), s, "m")
	d := rep.Difference
	want := lineageIndex(t, g, "m", ran("summarize"))
	if rep.Match || d.Kind != replay.KindWrites || d.Index != want || d.TaskPath != "push:0:summarize" {
		t.Fatalf("difference %+v, want the first summarize's writes at checkpoint %d\n%s", d, want, rep.Text())
	}
	if string(d.Channels[0].Recorded) != `["about otters"]` || string(d.Channels[0].Replayed) != `["ABOUT OTTERS"]` {
		t.Errorf("channels %+v", d.Channels)
	}
}

func TestChangedSendArgumentIsReportedAsNext(t *testing.T) {
	s := memory.New()
	g := mapReduce(t, s, mrVariant{})
	invoke(t, g, engine.Values{"subjects": []string{"otters", "kelp"}}, "m")
	// split now sends the subjects in reverse.
	changed := mapReduce(t, memory.New(), mrVariant{reverse: true})
	rep := replayOf(t, changed, s, "m")
	d := rep.Difference
	want := lineageIndex(t, g, "m", ran("split"))
	if rep.Match || d.Kind != replay.KindNext || d.Index != want || d.TaskPath != "push:0:summarize" {
		t.Fatalf("difference %+v, want the Send argument at checkpoint %d\n%s", d, want, rep.Text())
	}
	if d.Channels[0].Channel != "argument of summarize[push:0]" || d.Channels[0].Path != ".subject" {
		t.Errorf("channels %+v", d.Channels)
	}
}

// A subgraph whose node asks a model, then a human: calls and answers
// inside a subgraph are found in the subgraph's own checkpoints.
var (
	sgQuestion = engine.LastValue[string]("question")
	sgAnswer   = engine.LastValue[string]("answer")
)

func askGraph(t *testing.T, s checkpoint.Saver, m model.ChatModel) *engine.Graph {
	t.Helper()
	sub, err := engine.NewGraph("inner", sgQuestion, sgAnswer).
		AddNode("think", func(ctx context.Context, st engine.State) (engine.Output, error) {
			reply, err := m.Generate(ctx, []engine.Message{{Role: engine.RoleUser, Content: sgQuestion.Get(st)}}, model.WithMessageID("think"))
			if err != nil {
				return nil, err
			}
			ok, err := engine.Interrupt(ctx, "keep "+reply.Message.Content+"?")
			if err != nil {
				return nil, err
			}
			if ok == "yes" {
				return engine.Updates(sgAnswer.Set(reply.Message.Content)), nil
			}
			return engine.Updates(sgAnswer.Set("(rejected)")), nil
		}).
		AddEdge(engine.START, "think").Compile()
	if err != nil {
		t.Fatal(err)
	}
	g, err := engine.NewGraph("outer", sgQuestion, sgAnswer).
		AddSubgraph("ask", sub).
		AddEdge(engine.START, "ask").AddEdge("ask", engine.END).
		Compile(engine.WithSaver(s))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func echo(calls *atomic.Int32, prefix string) model.ChatModel {
	return scripted.New(func(req *model.Request) (scripted.Turn, error) {
		calls.Add(1)
		return scripted.Turn{Text: prefix + req.Messages[len(req.Messages)-1].Content}, nil
	})
}

func TestSubgraphCallsAndAnswersReplay(t *testing.T) {
	s := memory.New()
	var calls atomic.Int32
	g := askGraph(t, s, echo(&calls, "echo: "))
	invoke(t, g, engine.Values{"question": "tides"}, "sg")
	res := invoke(t, g, engine.Command{Resume: "yes"}, "sg")
	if !res.Done || res.Values["answer"] != "echo: tides" {
		t.Fatalf("recorded: %+v", res)
	}
	var again atomic.Int32
	rep := replayOf(t, askGraph(t, memory.New(), echo(&again, "other: ")), s, "sg", replay.Strict())
	mustMatch(t, rep)
	if again.Load() != 0 || rep.Served.Model != 2 {
		t.Errorf("model called %d times in the replay; %d calls served (want 2: before and after the answer)", again.Load(), rep.Served.Model)
	}
}

func TestHeadWaitingForAnswerReplays(t *testing.T) {
	s := memory.New()
	var calls atomic.Int32
	g := askGraph(t, s, echo(&calls, "echo: "))
	if res := invoke(t, g, engine.Values{"question": "tides"}, "sg"); len(res.Interrupts) != 1 {
		t.Fatalf("recorded: %+v", res)
	}
	mustMatch(t, replayOf(t, askGraph(t, memory.New(), echo(&calls, "echo: ")), s, "sg", replay.Strict()))

	// A version that no longer asks runs past where the recording waits.
	noAsk, err := engine.NewGraph("outer", sgQuestion, sgAnswer).
		AddNode("ask", func(context.Context, engine.State) (engine.Output, error) {
			return engine.Updates(sgAnswer.Set("echo: tides")), nil
		}).
		AddEdge(engine.START, "ask").AddEdge("ask", engine.END).
		Compile(engine.WithSaver(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	rep := replayOf(t, noAsk, s, "sg")
	d := rep.Difference
	last := rep.Checkpoints - 1
	if rep.Match || d.Kind != replay.KindExtra || d.Index != last {
		t.Fatalf("difference %+v, want extra at the head (%d)\n%s", d, last, rep.Text())
	}
	if !strings.Contains(d.Summary, `"ask" waits for an answer`) {
		t.Errorf("summary %q", d.Summary)
	}
}
