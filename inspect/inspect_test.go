package inspect_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/inspect"
)

var (
	notes     = engine.List[string]("notes")
	draft     = engine.LastValue[string]("draft")
	revisions = engine.LastValue[int]("revisions")
)

// writer loops research → write until revisions reaches 3, each write
// adding a note and a revision.
func writer(t testing.TB) *engine.Graph {
	t.Helper()
	g, err := engine.NewGraph("writer", notes, draft, revisions).
		AddNode("research", func(_ context.Context, s engine.State) (engine.Output, error) {
			return engine.Updates(notes.Add(fmt.Sprintf("note %d", len(notes.Get(s))+1))), nil
		}).
		AddNode("write", func(_ context.Context, s engine.State) (engine.Output, error) {
			r := revisions.Get(s) + 1
			text := fmt.Sprintf("draft %d from %d notes", r, len(notes.Get(s)))
			if r == 2 {
				text += " TODO"
			}
			return engine.Updates(draft.Set(text), revisions.Set(r)), nil
		}).
		AddEdge(engine.START, "research").AddEdge("research", "write").
		AddConditionalEdges("write", func(_ context.Context, s engine.State) (engine.Route, error) {
			if revisions.Get(s) >= 3 {
				return engine.To(engine.END), nil
			}
			return engine.To("research"), nil
		}, engine.Targets("research", engine.END)).
		Compile(engine.WithSaver(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestCompileChecksNamesAndTypes(t *testing.T) {
	env := inspect.NewEnv(writer(t))
	for src, want := range map[string]string{
		"len(notes) > 3":         "",
		`draft contains "TODO"`:  "",
		"revisions + 1":          "",
		"len(nope) > 1":          "unknown name nope",
		`revisions contains "x"`: "mismatched types",
		"":                       "empty expression",
		"notes[0].Missing == 1":  "type string has no field Missing",
	} {
		_, err := env.Compile(src)
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v", src, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%q: err = %v, want one containing %q", src, err, want)
		}
	}
	if _, err := env.CompileBool("revisions + 1"); err == nil {
		t.Error("a condition that is not boolean compiled")
	}
	e, err := env.Compile("revisions > 1 && len(notes) > 0")
	if err != nil || !slices.Equal(e.Reads(), []string{"revisions", "notes"}) {
		t.Errorf("reads %v, %v", e.Reads(), err)
	}
}

func TestEvalErrorsAreReported(t *testing.T) {
	env := inspect.NewEnv(writer(t))
	e, err := env.Compile("notes[5]")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Eval(engine.Values{"notes": []string{"a"}}); err == nil || !strings.Contains(err.Error(), "notes[5]") {
		t.Errorf("out of range: err = %v", err)
	}
	long, err := env.Compile("len(filter(1..1000000, sum(1..1000) > 0)) > 0")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := long.Eval(nil); err == nil {
		t.Error("an evaluation too large for its budget or its time succeeded")
	}
}

// Each kind of breakpoint pauses the run where it should; continuing runs
// on to the next.
func TestBreakpoints(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		spec     string
		wantStep int
		wantNext string
	}{
		{"change:draft", 2, "research"},
		{"len(notes) > 1", 3, "write"},
		{`when:draft contains "TODO"`, 4, "research"},
		{"write:write:revisions", 2, "research"},
		{"before:write if revisions == 1", 4, "write"},
		{"after:research if len(notes) == 3", 5, "write"},
	}
	for _, c := range cases {
		t.Run(c.spec, func(t *testing.T) {
			g := writer(t)
			b, err := inspect.Parse(g, inspect.NewEnv(g), c.spec)
			if err != nil {
				t.Fatal(err)
			}
			bs := &inspect.Breakpoints{List: []inspect.Breakpoint{b}}
			th := engine.WithThread("t")
			res, err := g.Invoke(ctx, engine.Values{}, th, engine.WithPhases(bs.Phases()))
			if err != nil {
				t.Fatal(err)
			}
			hit := bs.Hit()
			if res.Breakpoint != "phase" || hit == nil || hit.Step != c.wantStep || strings.Join(res.Next, ",") != c.wantNext {
				t.Fatalf("stopped %q at step %+v, next %v; want step %d next %s", res.Breakpoint, hit, res.Next, c.wantStep, c.wantNext)
			}
			res, err = g.Invoke(ctx, nil, th)
			if err != nil || !res.Done || revisions.Get(engine.StateOf(res.Values)) != 3 {
				t.Fatalf("continuing: %+v, %v", res, err)
			}
		})
	}
	g := writer(t)
	env := inspect.NewEnv(g)
	for spec, want := range map[string]string{
		"change:nope":          `no channel "nope"`,
		"write:nobody:draft":   `no node "nobody"`,
		"before:write if nope": "unknown name nope",
		"sometimes:write":      "unknown kind",
		"when:1 > 0":           "reads no channel",
		"write:write":          "write:NODE:CHANNEL",
	} {
		if _, err := inspect.Parse(g, env, spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want one containing %q", spec, err, want)
		}
	}
}

func TestWatchTimeline(t *testing.T) {
	ctx := context.Background()
	g := writer(t)
	th := engine.WithThread("t")
	if _, err := g.Invoke(ctx, engine.Values{}, th); err != nil {
		t.Fatal(err)
	}
	env := inspect.NewEnv(g)
	var exprs []*inspect.Expr
	for _, src := range []string{"revisions", "len(notes)", "revisions > 2"} {
		e, err := env.Compile(src)
		if err != nil {
			t.Fatal(err)
		}
		exprs = append(exprs, e)
	}
	rows, err := inspect.WatchTimeline(ctx, g, exprs, th)
	if err != nil {
		t.Fatal(err)
	}
	hist, _ := g.History(ctx, checkpoint.ListOptions{}, th)
	if len(rows) != len(hist) {
		t.Fatalf("%d rows for %d checkpoints", len(rows), len(hist))
	}
	var col []string
	for i := len(rows) - 1; i >= 0; i-- {
		col = append(col, fmt.Sprint(rows[i].Values[0]))
	}
	if got := strings.Join(col, " "); got != "0 0 0 1 1 2 2 3" {
		t.Errorf("revisions along the timeline: %s", got)
	}
	if rows[0].Values[2] != true || rows[0].Values[1] != 3 {
		t.Errorf("newest row %v", rows[0].Values)
	}
}

// Two branches from one checkpoint: where they part, what each ran, what
// differs (strings by word) and which task wrote it.
func TestCompare(t *testing.T) {
	ctx := context.Background()
	g := writer(t)
	th := engine.WithThread("t")
	if _, err := g.Invoke(ctx, engine.Values{}, th); err != nil {
		t.Fatal(err)
	}
	hist, _ := g.History(ctx, checkpoint.ListOptions{}, th)
	original := hist[0]
	var fork *engine.Snapshot // the checkpoint after the first write
	for _, s := range hist {
		if revisions.Get(engine.StateOf(s.Values)) == 1 && slices.Equal(s.Next, []string{"research"}) {
			fork = s
		}
	}
	ref, err := g.UpdateState(ctx, engine.Updates(notes.Add("extra 1", "extra 2")), "research", th, engine.WithCheckpoint(fork.Ref.CheckpointID))
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.Invoke(ctx, nil, th, engine.WithCheckpoint(ref.CheckpointID))
	if err != nil {
		t.Fatal(err)
	}
	c, err := inspect.Compare(ctx, g, original.Ref.CheckpointID, res.Ref.CheckpointID, th)
	if err != nil {
		t.Fatal(err)
	}
	if c.Ancestor != fork.Ref.CheckpointID || len(c.StepsA) != 4 || len(c.StepsB) != 4 || c.StepsB[0].Source != "update" {
		t.Errorf("ancestor %s (want %s), %d and %d steps, first of B %+v", c.Ancestor, fork.Ref.CheckpointID, len(c.StepsA), len(c.StepsB), c.StepsB[0])
	}
	byName := map[string]inspect.ChannelDiff{}
	for _, d := range c.Channels {
		byName[d.Channel] = d
	}
	if d := byName["revisions"]; !d.Equal {
		t.Errorf("revisions differ: %+v", d)
	}
	d := byName["draft"]
	if d.Equal || d.WriterA == nil || d.WriterA.Node != "write" || d.WriterB == nil || d.WriterB.Node != "write" {
		t.Fatalf("draft: %+v", d)
	}
	if fmt.Sprint(d.Words) != "[{= draft 3 from } {- 3 } {+ 4 } {= notes}]" {
		t.Errorf("word diff %v", d.Words)
	}
	if n := byName["notes"]; n.Equal || n.WriterB == nil || n.WriterB.Node != "research" {
		t.Errorf("notes: %+v", n)
	}
	if c.Differ != 2 {
		t.Errorf("%d channels differ, want 2", c.Differ)
	}
	if _, err := inspect.Compare(ctx, g, "nope", original.Ref.CheckpointID, th); err == nil {
		t.Error("an unknown checkpoint compared")
	}
}

func TestDiffWords(t *testing.T) {
	for _, c := range []struct{ a, b, want string }{
		{"same text", "same text", "[{= same text}]"},
		{"the cat sat", "the dog sat", "[{= the } {- cat } {+ dog } {= sat}]"},
		{"", "new words", "[{+ new words}]"},
		{"old words", "", "[{- old words}]"},
		{"a b c d e", "a c e f", "[{= a } {- b } {= c } {- d } {= e } {+ f}]"},
	} {
		if got := fmt.Sprint(inspect.DiffWords(c.a, c.b)); got != c.want {
			t.Errorf("DiffWords(%q, %q) = %s, want %s", c.a, c.b, got, c.want)
		}
	}
}

// A run continued after a breakpoint before a step does not stop before
// that same step again when told where it stopped (ResumeAt), and stops
// at the next step the breakpoint holds for.
func TestBreakBeforeResumes(t *testing.T) {
	ctx := context.Background()
	g := writer(t)
	b, err := inspect.Parse(g, inspect.NewEnv(g), "before:write if revisions >= 1")
	if err != nil {
		t.Fatal(err)
	}
	bs := &inspect.Breakpoints{List: []inspect.Breakpoint{b}}
	th := engine.WithThread("t")
	res, err := g.Invoke(ctx, engine.Values{}, th, engine.WithPhases(bs.Phases()))
	if err != nil || bs.Hit() == nil || bs.Hit().Step != 4 {
		t.Fatalf("first stop: %+v %+v %v", res, bs.Hit(), err)
	}
	first := bs.Hit()
	if first.Checkpoint != res.Ref.CheckpointID {
		t.Errorf("hit at checkpoint %q, the run stopped at %q", first.Checkpoint, res.Ref.CheckpointID)
	}
	// Without ResumeAt the same plan stops the run again at once.
	if _, err := g.Invoke(ctx, nil, th, engine.WithPhases(bs.Phases())); err != nil || bs.Hit() == nil || bs.Hit().Checkpoint != first.Checkpoint {
		t.Fatalf("continuing without ResumeAt: hit %+v, %v", bs.Hit(), err)
	}
	bs.ResumeAt = first.Checkpoint
	res, err = g.Invoke(ctx, nil, th, engine.WithPhases(bs.Phases()))
	if err != nil || bs.Hit() == nil || bs.Hit().Step != 6 || revisions.Get(engine.StateOf(res.Values)) != 2 {
		t.Fatalf("continuing from the stop: %+v at step %+v, %v", res.Values, bs.Hit(), err)
	}
}

// Compile errors say what is wrong in words and where, as an ExprError.
func TestExprErrorsAreReadable(t *testing.T) {
	env := inspect.NewEnv(writer(t))
	for src, want := range map[string]struct {
		msg string
		col int
	}{
		"len(nope) > 1": {"unknown name nope: no channel or function has that name; the channels are draft, notes, revisions", 5},
		"revisions >":   {"the expression ends too soon", 11},
		"len(nots)":     {"unknown name nots: did you mean notes? (the channels are draft, notes, revisions)", 5},
		"revisions + 1": {"a condition must be true or false, and this gives int", 0},
	} {
		_, err := env.CompileBool(src)
		var ee *inspect.ExprError
		if !errors.As(err, &ee) || ee.Msg != want.msg || ee.Column != want.col || ee.Src != src {
			t.Errorf("%q: %#v", src, err)
		}
	}
}

// Breakpoints look at the graph's own phases only: the same phase inside a
// subgraph (engine.WithSubgraphPhases, as the studio's step into runs)
// holds the subgraph's state, which the expressions do not describe.
func TestBreakpointsIgnoreSubgraphPhases(t *testing.T) {
	g := writer(t)
	b, err := inspect.Parse(g, inspect.NewEnv(g), "len(notes) > 1")
	if err != nil {
		t.Fatal(err)
	}
	bs := &inspect.Breakpoints{List: []inspect.Breakpoint{b}}
	hook := bs.Phases()
	info := func(ns string) *engine.PhaseInfo {
		return &engine.PhaseInfo{Phase: engine.PhaseApply, NS: ns, Step: 3, Updated: []string{"notes"},
			Values: engine.Values{"notes": []string{"a", "b"}, "draft": "", "revisions": 0}}
	}
	if err := hook(context.Background(), info("sub:1")); err != nil || bs.Hit() != nil {
		t.Fatalf("inside a subgraph: %v, hit %+v; want no stop", err, bs.Hit())
	}
	if err := hook(context.Background(), info("")); !errors.Is(err, engine.ErrPause) || bs.Hit() == nil {
		t.Fatalf("in the graph itself: %v, hit %+v; want a stop", err, bs.Hit())
	}
}

// A view's graph (a LangGraph store's or server's) declares no channels:
// its expressions may name any state key, read as nil where the state has
// none, and Reads lists the keys named.
func TestViewExpressions(t *testing.T) {
	env := inspect.NewEnv(engine.NewView(&engine.Topology{Name: "lg"}, nil, ""))
	e, err := env.Compile(`len(log) + (missing == nil ? 1 : 0)`)
	if err != nil {
		t.Fatal(err)
	}
	v, err := e.Eval(engine.Values{"log": []any{"a", "b"}, "other": 1})
	if err != nil || v != 3 {
		t.Errorf("Eval = %v, %v; want 3", v, err)
	}
	if got := e.Reads(); !slices.Equal(got, []string{"log", "missing"}) {
		t.Errorf("Reads() = %v", got)
	}
	// A graph with channels still checks names against them.
	g, err := engine.NewGraph("chans", notes).
		AddNode("a", func(context.Context, engine.State) (engine.Output, error) { return nil, nil }).
		AddEdge(engine.START, "a").Compile()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inspect.NewEnv(g).Compile("len(log)"); err == nil {
		t.Error("an unknown name compiled on a graph with channels")
	}
}
