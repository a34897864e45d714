package sqlite_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
)

// A run whose node writes a value over checkpoint.MaxValueSize fails with
// an error naming the channel, the size and the limit, and the thread stays
// readable at the checkpoint before; a large repetitive value under the
// limit (12 MB of one letter, as a topic typed over AG-UI may be) is stored
// and read back by state and history.
func TestEngineValueLimit(t *testing.T) {
	s := openTemp(t)
	topic := engine.LastValue[string]("topic")
	size := 0 // the node's topic length
	g, err := engine.NewGraph("limit", topic).
		AddNode("grow", func(_ context.Context, st engine.State) (engine.Output, error) {
			return engine.Updates(topic.Set(strings.Repeat("x", size))), nil
		}).
		AddEdge(engine.START, "grow").AddEdge("grow", engine.END).
		Compile(engine.WithSaver(s))
	if err != nil {
		t.Fatal(err)
	}

	size = 12 << 20
	if _, err := g.Invoke(t.Context(), engine.Values{"topic": "hi"}, engine.WithThread("ok")); err != nil {
		t.Fatalf("a run writing a 12 MB topic: %v", err)
	}
	snap, err := g.GetState(t.Context(), engine.WithThread("ok"))
	if err != nil || len(snap.Values["topic"].(string)) != size {
		t.Fatalf("state after a 12 MB topic: %v", err)
	}
	if _, err := g.History(t.Context(), checkpoint.ListOptions{}, engine.WithThread("ok")); err != nil {
		t.Fatalf("history after a 12 MB topic: %v", err)
	}

	size = checkpoint.MaxValueSize // its JSON, with quotes, is 2 bytes over
	_, err = g.Invoke(t.Context(), engine.Values{"topic": "hi"}, engine.WithThread("big"))
	if !errors.Is(err, checkpoint.ErrValueTooLarge) || !strings.Contains(err.Error(), `channel "topic"`) ||
		!strings.Contains(err.Error(), strconv.Itoa(size+2)) || !strings.Contains(err.Error(), strconv.Itoa(checkpoint.MaxValueSize)) {
		t.Fatalf("a run writing a value over the limit = %v; want checkpoint.ErrValueTooLarge naming channel \"topic\", %d bytes and the limit", err, size+2)
	}
	t.Logf("refused: %v", err)
	snap, err = g.GetState(t.Context(), engine.WithThread("big"))
	if err != nil {
		t.Fatalf("state of the thread whose run was refused: %v", err)
	}
	if got := snap.Values["topic"]; got != "hi" {
		t.Fatalf("state of the refused thread has topic of %d bytes; want the input %q", len(got.(string)), "hi")
	}
	if _, err := g.History(t.Context(), checkpoint.ListOptions{}, engine.WithThread("big")); err != nil {
		t.Fatalf("history of the refused thread: %v", err)
	}
}
