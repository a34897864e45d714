package cli_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftstudio/weft/checkpoint/store"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/replay"
)

var counted = engine.LastValue[int]("n")

// counter counts to 3 in steps of step.
func counter(t *testing.T, step int) *engine.Graph {
	t.Helper()
	g, err := engine.NewGraph("counter", counted).
		AddNode("add", func(_ context.Context, s engine.State) (engine.Output, error) {
			return engine.Updates(counted.Set(counted.Get(s) + step)), nil
		}).
		AddEdge(engine.START, "add").
		AddConditionalEdges("add", func(_ context.Context, s engine.State) (engine.Route, error) {
			if counted.Get(s) < 3 {
				return engine.To("add"), nil
			}
			return engine.To(engine.END), nil
		}, engine.Targets("add", engine.END)).
		Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func fileSum(t *testing.T, path string) [32]byte {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func TestReplayCommand(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "weft.db")
	s, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := counter(t, 1).WithSaver(s).Invoke(ctx, engine.Values{"n": 0}, engine.WithThread("c")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	before := fileSum(t, db)

	out, errs, code := runCLI(t, []*engine.Graph{counter(t, 1)}, "replay", "c", "-db", db, "-strict")
	var rep replay.Report
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || !rep.Match || rep.Checkpoints != 5 || errs != "" {
		t.Fatalf("replay of the same code: code %d, out %s, err %s", code, out, errs)
	}

	// The node now adds 2: the first step differs.
	out, errs, code = runCLI(t, []*engine.Graph{counter(t, 2)}, "replay", "-db", db, "c")
	if code != 1 || json.Unmarshal([]byte(out), &rep) != nil || rep.Match || rep.Difference == nil {
		t.Fatalf("replay of changed code: code %d, out %s, err %s", code, out, errs)
	}
	if d := rep.Difference; d.Kind != replay.KindWrites || d.Index != 2 || d.Node != "add" {
		t.Errorf("difference %+v", d)
	}
	for _, want := range []string{`weft replay: replay of thread "c" differs from the recording at checkpoint 2`, "-1\n+2\n"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}

	// To an earlier checkpoint, before the change shows.
	second := rep.Difference.Recorded
	var hist []struct {
		CheckpointID string `json:"checkpoint_id"`
	}
	out, _, _ = runCLI(t, []*engine.Graph{counter(t, 1)}, "history", "c", "-db", db)
	if err := json.Unmarshal([]byte(out), &hist); err != nil {
		t.Fatal(err)
	}
	first := hist[len(hist)-2].CheckpointID
	if first == second {
		t.Fatal("history order")
	}
	if _, errs, code = runCLI(t, []*engine.Graph{counter(t, 2)}, "replay", "c", "-to", first, "-db", db); code != 0 {
		t.Errorf("replay to before the change: code %d, %s", code, errs)
	}

	if fileSum(t, db) != before {
		t.Error("replay changed the store")
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(db + suffix); err == nil {
			t.Errorf("replay left %s", db+suffix)
		}
	}
	if _, _, code = runCLI(t, []*engine.Graph{counter(t, 1)}, "replay", "-db", db); code != 2 {
		t.Errorf("replay without a thread: code %d", code)
	}
	if _, errs, code = runCLI(t, []*engine.Graph{counter(t, 1)}, "replay", "nope", "-db", db); code != 1 || !strings.Contains(errs, `thread "nope" not found`) {
		t.Errorf("replay of a missing thread: code %d, %s", code, errs)
	}
}
