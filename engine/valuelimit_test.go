package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
)

// History with WithValueLimit plans the same next tasks, finished and
// waiting, as without it, while every value, result, Send argument and
// interrupt payload stored over the limit is an Omitted of its size.
func TestHistoryWithValueLimit(t *testing.T) {
	const limit = 16 << 10
	big := strings.Repeat(`x"\`, 20<<10) // over the limit, escapes and all
	topic := engine.LastValue[string]("topic")
	notes := engine.List[string]("notes")
	g, err := engine.NewGraph("limited", topic, notes).
		AddNode("plan", func(context.Context, engine.State) (engine.Output, error) { return nil, nil }).
		AddNode("work", func(_ context.Context, st engine.State) (engine.Output, error) {
			arg, _ := engine.ArgAs[string](st)
			return engine.Updates(notes.Add(arg)), nil
		}).
		AddNode("review", func(ctx context.Context, st engine.State) (engine.Output, error) {
			_, err := engine.Interrupt(ctx, map[string]any{"draft": topic.Get(st), "q": "ok?"})
			return nil, err
		}).
		AddEdge(engine.START, "plan").
		AddConditionalEdges("plan", func(_ context.Context, st engine.State) (engine.Route, error) {
			return engine.Route{Sends: []engine.Send{{Node: "work", Arg: topic.Get(st)}, {Node: "work", Arg: "small"}}}, nil
		}, engine.SendsTo("work")).
		AddEdge("work", "review").
		Compile(engine.WithSaver(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := g.Invoke(ctx, engine.Values{"topic": big}, engine.WithThread("t")); err != nil {
		t.Fatal(err)
	}
	full, err := g.History(ctx, checkpoint.ListOptions{}, engine.WithThread("t"))
	if err != nil {
		t.Fatal(err)
	}
	short, err := g.History(ctx, checkpoint.ListOptions{}, engine.WithThread("t"), engine.WithValueLimit(limit))
	if err != nil {
		t.Fatal(err)
	}
	if len(full) != len(short) || len(full) < 4 {
		t.Fatalf("%d and %d checkpoints", len(full), len(short))
	}
	omitted := func(what string, v, want any) {
		t.Helper()
		b, _ := json.Marshal(want)
		o, ok := v.(engine.Omitted)
		switch {
		case len(b) > limit && (!ok || o.Bytes <= limit):
			t.Errorf("%s: %.60v, want it left out", what, v)
		case len(b) <= limit && !reflect.DeepEqual(v, want):
			t.Errorf("%s: %.60v, want %.60v", what, v, want)
		}
	}
	var sawSend, sawResult, sawInterrupt bool
	for i, f := range full {
		s := short[i]
		where := fmt.Sprintf("checkpoint of step %d", f.Metadata.Step)
		if !slices.Equal(f.Next, s.Next) || len(f.Tasks) != len(s.Tasks) {
			t.Fatalf("%s: next %v / %v, %d / %d tasks", where, f.Next, s.Next, len(f.Tasks), len(s.Tasks))
		}
		if len(f.Values) != len(s.Values) {
			t.Errorf("%s: values %v, want the keys of %v", where, slices.Sorted(maps.Keys(s.Values)), slices.Sorted(maps.Keys(f.Values)))
		}
		for k, v := range f.Values {
			omitted(where+" value "+k, s.Values[k], v)
		}
		for j, ft := range f.Tasks {
			st := s.Tasks[j]
			if ft.ID != st.ID || ft.Name != st.Name || ft.Finished != st.Finished || ft.Error != st.Error || len(ft.Result) != len(st.Result) || len(ft.Interrupts) != len(st.Interrupts) {
				t.Fatalf("%s task %d: %+v, want %+v", where, j, st, ft)
			}
			if ft.Input != nil {
				sawSend = sawSend || len(ft.Input.(string)) > limit
				omitted(where+" Send argument", st.Input, ft.Input)
			}
			for r, w := range ft.Result {
				sawResult = sawResult || w.Channel == "notes"
				omitted(where+" result "+w.Channel, st.Result[r].Value, w.Value)
			}
		}
		if len(f.Interrupts) != len(s.Interrupts) {
			t.Fatalf("%s: %d interrupts, want %d", where, len(s.Interrupts), len(f.Interrupts))
		}
		for j, in := range f.Interrupts {
			got := s.Interrupts[j]
			if got.ID != in.ID || got.Node != in.Node || got.TaskID != in.TaskID || got.NS != in.NS {
				t.Errorf("%s: interrupt %+v, want %+v", where, got, in)
			}
			sawInterrupt = true
			omitted(where+" interrupt", got.Value, in.Value)
		}
	}
	if !sawSend || !sawResult || !sawInterrupt {
		t.Errorf("the thread lacks a large Send (%v), result (%v) or interrupt (%v)", sawSend, sawResult, sawInterrupt)
	}
}
