package sqlite_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
)

// WriteKinds is Get's pending writes without their values, in Get's order,
// for every checkpoint of a thread whose steps wrote values, a question
// and a failure (big values too); a missing checkpoint is ErrNotFound.
func TestWriteKindsAreGetsWrites(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	log := engine.List[string]("log")
	g, err := engine.NewGraph("kinds", log).
		AddNode("big", func(context.Context, engine.State) (engine.Output, error) {
			return engine.Updates(log.Add(strings.Repeat("x", 1<<20), "b")), nil
		}).
		AddNode("ask", func(ctx context.Context, _ engine.State) (engine.Output, error) {
			a, err := engine.Interrupt(ctx, "go on?")
			if err != nil {
				return nil, err
			}
			return engine.Updates(log.Add(a.(string))), nil
		}).
		AddNode("fail", func(context.Context, engine.State) (engine.Output, error) { return nil, errors.New("no") }).
		AddEdge(engine.START, "big").AddEdge(engine.START, "ask").AddEdge("big", "fail").AddEdge("ask", "fail").
		Compile(engine.WithSaver(s))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Invoke(ctx, engine.Values{}, engine.WithThread("k")); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Invoke(ctx, engine.Command{Resume: "yes"}, engine.WithThread("k")); err == nil {
		t.Fatal("the failing node did not fail")
	}
	var kinds checkpoint.WriteKindsReader = s
	seen := 0
	for tp, err := range s.List(ctx, checkpoint.ListOptions{ThreadID: "k"}) {
		if err != nil {
			t.Fatal(err)
		}
		got, err := kinds.WriteKinds(ctx, tp.Ref)
		if err != nil {
			t.Fatal(err)
		}
		want := []checkpoint.PendingWrite{}
		for _, w := range tp.PendingWrites {
			w.Value = nil
			want = append(want, w)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("checkpoint %s: write kinds %+v, want %+v", tp.Ref.CheckpointID, got, want)
		}
		seen += len(want)
	}
	if seen < 4 {
		t.Fatalf("only %d writes compared: the run wrote too little to test", seen)
	}
	if _, err := kinds.WriteKinds(ctx, checkpoint.Ref{ThreadID: "k", CheckpointID: "nope"}); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("a missing checkpoint: %v", err)
	}
	if _, err := kinds.WriteKinds(ctx, checkpoint.Ref{CheckpointID: "x"}); !errors.Is(err, checkpoint.ErrNoThread) {
		t.Errorf("no thread: %v", err)
	}
}
