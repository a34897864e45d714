package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"iter"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
)

// countingSaver counts the tuples its List yields.
type countingSaver struct {
	*memory.Saver
	listed atomic.Int64
}

func (c *countingSaver) List(ctx context.Context, opts checkpoint.ListOptions) iter.Seq2[*checkpoint.Tuple, error] {
	return func(yield func(*checkpoint.Tuple, error) bool) {
		for tp, err := range c.Saver.List(ctx, opts) {
			c.listed.Add(1)
			if !yield(tp, err) {
				return
			}
		}
	}
}

// firstWrite records how many tuples had been listed when the output got
// its first byte.
type firstWrite struct {
	bytes.Buffer
	s     *countingSaver
	first int64
}

func (w *firstWrite) Write(p []byte) (int, error) {
	if w.Len() == 0 && len(p) > 0 {
		w.first = w.s.listed.Load()
	}
	return w.Buffer.Write(p)
}

// TestHistoryStreams: history prints a thread's first checkpoints before
// it reads the rest, so it holds a few snapshots at a time, not the whole
// thread; the output is the same JSON array as before.
func TestHistoryStreams(t *testing.T) {
	s := &countingSaver{Saver: memory.New()}
	n := engine.LastValue[int]("n")
	notes := engine.List[map[string]any]("notes")
	g, err := engine.NewGraph("count", n, notes).
		AddNode("inc", func(_ context.Context, st engine.State) (engine.Output, error) {
			note := map[string]any{"n": n.Get(st), "text": "<i>" + strings.Repeat("ü", n.Get(st)) + "</i>", "tags": []string{"a", "b"}}
			return engine.Updates(n.Set(n.Get(st)+1), notes.Add(note)), nil
		}).
		AddEdge(engine.START, "inc").
		AddNode("ask", func(ctx context.Context, st engine.State) (engine.Output, error) {
			if _, err := engine.Interrupt(ctx, map[string]any{"question": "done?", "html": "<b>&</b>"}); err != nil {
				return nil, err
			}
			return nil, nil
		}).
		AddConditionalEdges("inc", func(_ context.Context, st engine.State) (engine.Route, error) {
			if n.Get(st) < 40 {
				return engine.To("inc"), nil
			}
			return engine.To("ask"), nil
		}, engine.Targets("inc", "ask")).
		Compile(engine.WithSaver(s))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := g.Invoke(ctx, engine.Values{"n": 0}, engine.WithThread("t"), engine.WithRecursionLimit(100)); err != nil {
		t.Fatal(err)
	}
	s.listed.Store(0)
	w := &firstWrite{s: s}
	if err := cmdHistory(ctx, s, []*engine.Graph{g}, []string{"t"}, w); err != nil {
		t.Fatal(err)
	}
	if total := s.listed.Load(); total < 41 || w.first > 2*historyPage {
		t.Errorf("the first output came after %d of %d checkpoints were read; want at most %d", w.first, total, 2*historyPage)
	}
	var got []SnapshotJSON
	if err := json.Unmarshal(w.Bytes(), &got); err != nil {
		t.Fatalf("output is not a JSON array: %v\n%s", err, w.String()[:200])
	}
	snaps, err := g.History(ctx, checkpoint.ListOptions{}, engine.WithThread("t"))
	if err != nil {
		t.Fatal(err)
	}
	want := make([]SnapshotJSON, len(snaps))
	for i, sn := range snaps {
		want[i] = toJSON(sn)
	}
	var wantOut bytes.Buffer
	printJSON(&wantOut, want)
	if w.String() != wantOut.String() {
		t.Errorf("streamed output differs from the whole array printed at once")
	}
	// -limit still cuts, and an empty page still prints an array.
	var lim bytes.Buffer
	if err := cmdHistory(ctx, s, []*engine.Graph{g}, []string{"t", "-limit", "6"}, &lim); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(lim.Bytes(), &got); err != nil || len(got) != 6 || got[0].CheckpointID != want[0].CheckpointID || got[5].CheckpointID != want[5].CheckpointID {
		t.Errorf("-limit 6: %d entries, %v", len(got), err)
	}
	if !strings.HasPrefix(lim.String(), "[\n  {") {
		t.Errorf("layout: %q", lim.String()[:10])
	}
}
