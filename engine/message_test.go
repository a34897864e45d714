package engine_test

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
)

func msg(id, content string) engine.Message {
	return engine.Message{Role: engine.RoleUser, ID: id, Content: content}
}

// AddMessages follows LangGraph's add_messages, case by case.
func TestAddMessages(t *testing.T) {
	rm := engine.RemoveMessage
	all := engine.RemoveMessage(engine.RemoveAll)
	cases := []struct {
		name        string
		left, right []engine.Message
		want        string // id:content, joined by spaces
		err         string
	}{
		{"append", []engine.Message{msg("1", "a")}, []engine.Message{msg("2", "b")}, "1:a 2:b", ""},
		{"replace in place", []engine.Message{msg("1", "a"), msg("2", "b")}, []engine.Message{msg("1", "A")}, "1:A 2:b", ""},
		{"remove", []engine.Message{msg("1", "a"), msg("2", "b")}, []engine.Message{rm("1")}, "2:b", ""},
		{"remove twice in one write", []engine.Message{msg("1", "a"), msg("2", "b")}, []engine.Message{rm("1"), rm("1")}, "2:b", ""},
		{"remove then bring back keeps the place", []engine.Message{msg("1", "a"), msg("2", "b")}, []engine.Message{rm("1"), msg("1", "again")}, "1:again 2:b", ""},
		{"remove a message added in the same write", nil, []engine.Message{msg("1", "a"), rm("1")}, "", ""},
		{"remove an unknown id", []engine.Message{msg("1", "a")}, []engine.Message{rm("9")}, "", "doesn't exist ('9')"},
		{"remove all keeps what follows", []engine.Message{msg("1", "a")}, []engine.Message{msg("2", "b"), all, msg("3", "c")}, "3:c", ""},
		{"remove all last", []engine.Message{msg("1", "a")}, []engine.Message{all}, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			leftCopy := slices.Clone(c.left)
			got, err := engine.AddMessages(c.left, c.right)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var parts []string
			for _, m := range got {
				parts = append(parts, m.ID+":"+m.Content)
			}
			if s := strings.Join(parts, " "); s != c.want {
				t.Errorf("got %q, want %q", s, c.want)
			}
			if !reflect.DeepEqual(c.left, leftCopy) {
				t.Error("left was modified")
			}
		})
	}
	// Messages without an ID get one, in the result only.
	right := []engine.Message{{Role: engine.RoleUser, Content: "x"}}
	left := []engine.Message{{Role: engine.RoleUser, Content: "old"}}
	got, err := engine.AddMessages(left, right)
	if err != nil || len(got) != 2 || got[0].ID == "" || got[1].ID == "" || got[0].ID == got[1].ID {
		t.Errorf("ids: %+v, %v", got, err)
	}
	if right[0].ID != "" || left[0].ID != "" {
		t.Error("an argument was given an id in place")
	}
}

// A Messages channel merges every write of a step with AddMessages, in
// task order, and a failed removal is an error of the step.
func TestMessagesChannel(t *testing.T) {
	ctx := context.Background()
	msgs := engine.Messages("messages")
	say := func(ms ...engine.Message) engine.NodeFunc {
		return func(context.Context, engine.State) (engine.Output, error) {
			return engine.Updates(msgs.Add(ms...)), nil
		}
	}
	g, err := engine.NewGraph("chat", msgs).
		AddNode("a", say(msg("a1", "hello"))).
		AddNode("b", say(engine.RemoveMessage("u1"), msg("b1", "bye"))).
		AddNode("c", say(engine.RemoveMessage("nope"))).
		AddEdge(engine.START, "a").AddEdge(engine.START, "b").AddEdge("b", "c").
		Compile(engine.WithSaver(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.Invoke(ctx, engine.Values{"messages": []engine.Message{msg("u1", "hi")}}, engine.WithThread("t"))
	if err == nil || !strings.Contains(err.Error(), "('nope')") {
		t.Fatalf("err = %v, want c's removal of an unknown id to fail", err)
	}
	// As in LangGraph, GetState applies the stored writes of the failed
	// step and fails the same way; the checkpoint itself holds a and b.
	if _, err := g.GetState(ctx, engine.WithThread("t")); err == nil || !strings.Contains(err.Error(), "('nope')") {
		t.Errorf("GetState err = %v, want the same removal error", err)
	}
	hist, err := g.History(ctx, checkpointListAll, engine.WithThread("t"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range msgs.Get(engine.StateOf(hist[0].Values)) {
		ids = append(ids, m.ID)
	}
	if !slices.Equal(ids, []string{"a1", "b1"}) {
		t.Errorf("messages after a and b = %v, want [a1 b1]", ids)
	}
}
