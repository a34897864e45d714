package engine_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
)

// Channel defaults: a key made WithDefault starts out holding its value in a
// fresh run, in the state a run returns, in every snapshot, and after a
// checkpoint is loaded in which it was never written; a written value
// replaces it and is what later runs and snapshots see.
func TestChannelDefaults(t *testing.T) {
	note := engine.LastValue[string]("note").WithDefault(func() string { return "none" })
	count := engine.Reducer("count", "sum", engine.Sum[int]).WithDefault(func() int { return 10 })
	log := engine.List[string]("log").WithDefault(func() []string { return []string{"seed"} })
	plainAny := engine.Reducer[any]("plain", "last", func(_, v any) any { return v })
	handle := engine.Untracked[string]("handle").WithDefault(func() string { return "h0" })

	type seen struct{ Note, Handle string }
	cases := []struct {
		name string
		in   engine.Values
		// body is what node "n" writes; it also reports what it read.
		body func(s engine.State) engine.Update
		// want are the values of the first run's result and of GetState
		// after it, wantRead what n read, want2 the result of a second run
		// on the thread with empty input.
		want, want2 engine.Values
		wantRead    seen
	}{
		{
			name:     "unwritten defaults read and show",
			in:       engine.Values{},
			body:     func(engine.State) engine.Update { return nil },
			want:     engine.Values{"note": "none", "count": 10, "log": []string{"seed"}, "handle": "h0"},
			want2:    engine.Values{"note": "none", "count": 10, "log": []string{"seed"}, "handle": "h0"},
			wantRead: seen{"none", "h0"},
		},
		{
			name: "writes fold into the default and are kept",
			in:   engine.Values{"count": 5},
			body: func(engine.State) engine.Update {
				return engine.Updates(note.Set("written"), count.Add(1), log.Add("x"), plainAny.Add("p"))
			},
			want:     engine.Values{"note": "written", "count": 16, "log": []string{"seed", "x"}, "plain": "p", "handle": "h0"},
			want2:    engine.Values{"note": "written", "count": 17, "log": []string{"seed", "x", "x"}, "plain": "p", "handle": "h0"},
			wantRead: seen{"none", "h0"},
		},
		{
			name:     "an input replaces a LastValue default",
			in:       engine.Values{"note": "from input"},
			body:     func(engine.State) engine.Update { return nil },
			want:     engine.Values{"note": "from input", "count": 10, "log": []string{"seed"}, "handle": "h0"},
			want2:    engine.Values{"note": "from input", "count": 10, "log": []string{"seed"}, "handle": "h0"},
			wantRead: seen{"from input", "h0"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var read []seen
			g, err := engine.NewGraph("defaults", note, count, log, plainAny, handle).
				AddNode("n", func(_ context.Context, s engine.State) (engine.Output, error) {
					read = append(read, seen{note.Get(s), handle.Get(s)})
					return tc.body(s), nil
				}).
				AddEdge(engine.START, "n").
				Compile(engine.WithSaver(memory.New()))
			if err != nil {
				t.Fatal(err)
			}
			th := engine.WithThread("t")
			res, err := g.Invoke(context.Background(), tc.in, th)
			if err != nil {
				t.Fatal(err)
			}
			// The result is the state as the run last reported it: empty
			// when no step changed a state channel (LangGraph's invoke).
			if wrote := len(tc.in) > 0 || tc.body(engine.StateOf(nil)) != nil; wrote && !reflect.DeepEqual(res.Values, tc.want) {
				t.Errorf("result = %v, want %v", res.Values, tc.want)
			} else if !wrote && len(res.Values) != 0 {
				t.Errorf("result = %v, want none (the run changed nothing)", res.Values)
			}
			if len(read) != 1 || read[0] != tc.wantRead {
				t.Errorf("node read %v, want %v", read, tc.wantRead)
			}
			snap, err := g.GetState(context.Background(), th)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(snap.Values, tc.want) {
				t.Errorf("GetState = %v, want %v", snap.Values, tc.want)
			}
			hist, err := g.History(context.Background(), checkpoint.ListOptions{}, th)
			if err != nil {
				t.Fatal(err)
			}
			first := hist[len(hist)-1] // the input checkpoint, before any write
			for _, k := range []string{"note", "count", "log"} {
				want := map[string]any{"note": "none", "count": 10, "log": []string{"seed"}}[k]
				if !reflect.DeepEqual(first.Values[k], want) {
					t.Errorf("input checkpoint %s = %v, want the default %v", k, first.Values[k], want)
				}
			}
			// The defaults are not stored: the input checkpoint stores
			// only what the input wrote.
			if _, err := g.Invoke(context.Background(), engine.Values{}, th); err != nil {
				t.Fatal(err)
			}
			snap2, err := g.GetState(context.Background(), th)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(snap2.Values, tc.want2) {
				t.Errorf("second run = %v, want %v", snap2.Values, tc.want2)
			}
		})
	}
}

// Each run gets its own default value: a factory result is never shared.
func TestChannelDefaultIsFreshPerRun(t *testing.T) {
	calls := 0
	box := engine.LastValue[map[string]int]("box").WithDefault(func() map[string]int {
		calls++
		return map[string]int{"n": calls}
	})
	var read []map[string]int
	g, err := engine.NewGraph("fresh", box).
		AddNode("n", func(_ context.Context, s engine.State) (engine.Output, error) {
			read = append(read, box.Get(s))
			return nil, nil
		}).
		AddEdge(engine.START, "n").
		Compile()
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := g.Invoke(context.Background(), engine.Values{}); err != nil {
			t.Fatal(err)
		}
	}
	if len(read) != 2 || read[0]["n"] == read[1]["n"] {
		t.Errorf("two runs share one default value: %v", read)
	}
}

func TestChannelDefaultRejectedOnClearingKeys(t *testing.T) {
	for _, k := range []engine.Key[int]{engine.Ephemeral[int]("e"), engine.AnyValue[int]("e")} {
		g := engine.NewGraph("bad", k.WithDefault(func() int { return 1 }))
		if err := g.Err(); err == nil || !strings.Contains(err.Error(), `channel "e": a default is only for LastValue and Untracked keys`) {
			t.Errorf("default on %s channel: err = %v", k.Name(), err)
		}
		if err := engine.NewGraph("ok", k.WithDefault(func() int { return 1 }).WithDefault(nil)).Err(); err != nil {
			t.Errorf("removing the default: %v", err)
		}
	}
}
