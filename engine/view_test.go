package engine

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// plainRunner runs nothing; followRunner also follows runs started
// elsewhere, feeding the events it was given.
type plainRunner struct{}

func (plainRunner) RunView(context.Context, ViewRun) (*Result, error) { return &Result{}, nil }

type followRunner struct {
	plainRunner
	events []Event
	err    error
}

func (f followRunner) FollowView(_ context.Context, _ string, obs func(Event)) error {
	for _, ev := range f.events {
		obs(ev)
	}
	return f.err
}

func (f followRunner) CancelView(context.Context, string) error { return f.err }

func TestFollowView(t *testing.T) {
	evs := []Event{{Mode: ModeTasks, Task: &TaskEvent{Name: "plan"}}, {Mode: ModeUpdates, Update: &NodeUpdate{Node: "plan"}}}
	view := NewView(&Topology{Name: "v"}, nil, "")
	plain, err := NewGraph("plain", LastValue[int]("x")).
		AddNode("a", func(context.Context, State) (Output, error) { return nil, nil }).
		AddEdge(START, "a").Compile()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		g       *Graph
		follows bool
		want    []string // the nodes obs saw
		err     error
	}{
		{"not a view", plain, false, nil, ErrView},
		{"a view that cannot run", view, false, nil, ErrView},
		{"a view that runs but cannot follow", view.WithViewRunner(plainRunner{}), false, nil, ErrView},
		{"a run followed to its end", view.WithViewRunner(followRunner{events: evs}), true, []string{"plan", "plan"}, nil},
		{"no run in progress", view.WithViewRunner(followRunner{err: ErrNoRun}), true, nil, ErrNoRun},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.g.ViewFollows(); got != tc.follows {
				t.Errorf("ViewFollows() = %v", got)
			}
			var seen []string
			dropped, err := tc.g.FollowView(context.Background(), "t1", func(ev Event) {
				if ev.Task != nil {
					seen = append(seen, ev.Task.Name)
				} else {
					seen = append(seen, ev.Update.Node)
				}
			})
			if !errors.Is(err, tc.err) || dropped != 0 || !slices.Equal(seen, tc.want) {
				t.Errorf("FollowView: saw %v, dropped %d, err %v; want %v, %v", seen, dropped, err, tc.want, tc.err)
			}
			if err != nil && tc.err == ErrNoRun && !strings.Contains(err.Error(), `"t1"`) {
				t.Errorf("the error %q does not name the thread", err)
			}
			if err := tc.g.CancelView(context.Background(), "t1"); !errors.Is(err, tc.err) {
				t.Errorf("CancelView: %v, want %v", err, tc.err)
			}
		})
	}
}
