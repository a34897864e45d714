package engine

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// step is one update of a channel in a table test: the values written, then
// whether the channel reports a change and what it holds.
type step struct {
	vals      []any
	changed   bool
	available bool
	value     any
	err       string // a substring of the expected error
}

func runSteps(t *testing.T, c channel, steps []step) {
	t.Helper()
	for i, s := range steps {
		changed, err := c.update(s.vals)
		if s.err != "" {
			if err == nil || !strings.Contains(err.Error(), s.err) {
				t.Fatalf("step %d: err = %v, want %q", i, err, s.err)
			}
			var iu *InvalidUpdateError
			if !errors.As(err, &iu) {
				t.Fatalf("step %d: %T is not an InvalidUpdateError", i, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		v, ok := c.get()
		if changed != s.changed || ok != s.available || c.available() != s.available {
			t.Fatalf("step %d: changed=%v available=%v, want %v %v", i, changed, ok, s.changed, s.available)
		}
		if s.available && s.value != nil && !reflect.DeepEqual(v, s.value) {
			t.Fatalf("step %d: value %#v, want %#v", i, v, s.value)
		}
	}
}

func TestChannelKinds(t *testing.T) {
	str := typedCodec[string]{}
	list := List[string]("l").s
	sum := Reducer("n", "add", Sum[int]).s
	topicKey := Topic[int]("t", false).s
	acc := Topic[int]("t", true).s
	cases := []struct {
		name  string
		ch    func() channel
		steps []step
	}{
		{"last value keeps one write", func() channel { return &lastValue{name: "k", codec: str} }, []step{
			{vals: nil, changed: false, available: false},
			{vals: []any{"a"}, changed: true, available: true, value: "a"},
			{vals: nil, changed: false, available: true, value: "a"},
			{vals: []any{"b"}, changed: true, available: true, value: "b"},
			{vals: []any{"x", "y"}, err: "At key 'k': Can receive only one value per step"},
		}},
		{"any value keeps the last and clears on an empty step", func() channel { return &anyValue{lastValue{name: "k", codec: str}} }, []step{
			{vals: []any{"x", "y"}, changed: true, available: true, value: "y"},
			{vals: nil, changed: true, available: false},
			{vals: nil, changed: false, available: false},
		}},
		{"ephemeral lasts one step and guards", func() channel {
			return &ephemeral{lastValue: lastValue{name: "k", codec: str}, guard: true}
		}, []step{
			{vals: []any{"a"}, changed: true, available: true, value: "a"},
			{vals: nil, changed: true, available: false},
			{vals: []any{"x", "y"}, err: "Can receive only one value per step"},
		}},
		{"untracked keeps its value across steps", func() channel {
			return &untracked{lastValue: lastValue{name: "k", codec: str}, guard: true}
		}, []step{
			{vals: []any{"a"}, changed: true, available: true, value: "a"},
			{vals: nil, changed: false, available: true, value: "a"},
		}},
		{"topic starts afresh each step", func() channel { return topicKey.newCh() }, []step{
			{vals: []any{[]int{1, 2}, []int{3}}, changed: true, available: true, value: []int{1, 2, 3}},
			{vals: []any{[]int{4}}, changed: true, available: true, value: []int{4}},
			{vals: nil, changed: true, available: false},
		}},
		{"accumulating topic keeps everything", func() channel { return acc.newCh() }, []step{
			{vals: []any{[]int{1}}, changed: true, available: true, value: []int{1}},
			{vals: nil, changed: false, available: true, value: []int{1}},
			{vals: []any{[]int{2}}, changed: true, available: true, value: []int{1, 2}},
		}},
		{"list reducer starts empty and appends in order", func() channel { return list.newCh() }, []step{
			{vals: nil, changed: false, available: true, value: []string{}},
			{vals: []any{[]string{"a"}, []string{"b", "c"}}, changed: true, available: true, value: []string{"a", "b", "c"}},
		}},
		{"overwrite replaces and skips later writes of the step", func() channel { return list.newCh() }, []step{
			{vals: []any{[]string{"a"}}, changed: true, available: true, value: []string{"a"}},
			{vals: []any{[]string{"b"}, Overwrite{[]string{"o"}}, []string{"c"}}, changed: true, available: true, value: []string{"o"}},
			{vals: []any{Overwrite{[]string{"1"}}, Overwrite{[]string{"2"}}}, err: "only one Overwrite"},
		}},
		{"sum reducer folds numbers", func() channel { return sum.newCh() }, []step{
			{vals: []any{1, 2, 3}, changed: true, available: true, value: 6},
			{vals: []any{4}, changed: true, available: true, value: 10},
		}},
		{"named barrier opens when all arrived", func() channel {
			return &namedBarrier{name: "j", names: []string{"a", "b"}}
		}, []step{
			{vals: []any{"a"}, changed: true, available: false},
			{vals: []any{"a"}, changed: false, available: false},
			{vals: []any{"b"}, changed: true, available: true},
			{vals: []any{"z"}, err: "not one of the waited-for nodes"},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { runSteps(t, c.ch(), c.steps) })
	}
}

func TestConsumeAndFinish(t *testing.T) {
	b := &namedBarrier{name: "j", names: []string{"a", "b"}}
	b.update([]any{"a", "b"})
	if !b.available() || !b.consume() || b.available() || b.consume() {
		t.Error("a full barrier is consumed once and then closed")
	}
	af := &namedBarrier{name: "j", names: []string{"a", "b"}, afterFinish: true}
	af.update([]any{"a", "b"})
	if af.available() || af.consume() {
		t.Error("an after-finish barrier stays closed until finish")
	}
	if !af.finish() || !af.available() || af.finish() || !af.consume() || af.available() {
		t.Error("finish opens it once; consume closes it")
	}
	d := &lastValueAfterFinish{name: "branch:to:x"}
	d.update([]any{nil})
	if d.available() || !d.finish() || !d.available() || !d.consume() || d.available() {
		t.Error("a deferred trigger is available only between finish and consume")
	}
	lv := &lastValue{name: "k", codec: typedCodec[string]{}}
	lv.update([]any{"x"})
	if lv.consume() || lv.finish() {
		t.Error("a last value neither consumes nor finishes")
	}
}

// Every channel's checkpoint form restores the same contents, with its Go
// type.
func TestChannelSaveLoad(t *testing.T) {
	type point struct{ X, Y int }
	msgs := Messages("m").s
	cases := []struct {
		name string
		ch   func() channel
		vals []any
	}{
		{"last value of a struct", LastValue[point]("p").s.newCh, []any{point{1, 2}}},
		{"messages", msgs.newCh, []any{[]Message{{Role: RoleUser, Content: "hi", ID: "1", ToolCalls: []ToolCall{{ID: "c", Name: "f", Args: "{}"}}}}}},
		{"list", List[int]("l").s.newCh, []any{[]int{1, 2}}},
		{"topic", Topic[string]("t", true).s.newCh, []any{[]string{"a", "b"}}},
		{"any-typed value keeps its registered type", LastValue[any]("a").s.newCh, []any{[]string{"x"}}},
		{"barrier", Barrier("b", false, "x", "y").s.newCh, []any{"x"}},
		{"deferred trigger", func() channel { return &lastValueAfterFinish{name: "d"} }, []any{"__start__"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := c.ch()
			if _, err := a.update(c.vals); err != nil {
				t.Fatal(err)
			}
			data, ok, err := a.save()
			if err != nil || !ok {
				t.Fatalf("save: %v %v", ok, err)
			}
			b := c.ch()
			if err := b.load(data); err != nil {
				t.Fatal(err)
			}
			va, oka := a.get()
			vb, okb := b.get()
			if oka != okb || !reflect.DeepEqual(va, vb) {
				t.Errorf("restored %#v (%v), want %#v (%v)", vb, okb, va, oka)
			}
			if fmt.Sprintf("%T", vb) != fmt.Sprintf("%T", va) {
				t.Errorf("type %T, want %T", vb, va)
			}
		})
	}
	if _, ok, _ := (&untracked{lastValue: lastValue{name: "u", codec: typedCodec[string]{}, v: "x", set: true}}).save(); ok {
		t.Error("an untracked channel must never be saved")
	}
}
