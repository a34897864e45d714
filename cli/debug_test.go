package cli_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/store"
	"github.com/weftstudio/weft/cli"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/inspect"
)

// run stops at data breakpoints and continues; watch and compare read a
// thread's timeline.
func TestRunWatchCompare(t *testing.T) {
	graphs := demoGraphs(t)
	db := filepath.Join(t.TempDir(), "weft.db")
	out, errs, code := runCLI(t, graphs, "run", "writing assistant", "-input", `{"topic": "kelp"}`, "-thread", "t1",
		"-break", "len(notes) >= 3", "-db", db, "-create")
	var r cli.RunJSON
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || r.Breakpoint != "len(notes) >= 3" || strings.Join(r.Next, ",") != "structure" {
		t.Fatalf("run with a data breakpoint: code %d out %s err %s", code, out, errs)
	}
	out, errs, code = runCLI(t, graphs, "run", "-thread", "t1", "-break", "before:review", "-db", db)
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || r.Breakpoint != "before:review" || strings.Join(r.Next, ",") != "review" {
		t.Fatalf("continue to before:review: code %d out %s err %s", code, out, errs)
	}
	for args, want := range map[string]string{
		"run|writing assistant|-input|{}|-break|change:nope": `no channel "nope"`,
		"run|nope|-input|{}":    `unknown graph "nope"`,
		"run|writing assistant": "usage: run",
	} {
		_, errs, code := runCLI(t, graphs, append(strings.Split(args, "|"), "-db", db)...)
		if code != 2 || !strings.Contains(errs, want) {
			t.Errorf("%s: code %d err %s, want 2 and %q", args, code, errs, want)
		}
	}

	out, errs, code = runCLI(t, graphs, "watch", "t1", "len(notes)", "revisions", "-db", db)
	var rows []cli.WatchJSON
	if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) < 5 || rows[0].Values[0] != 3.0 || rows[len(rows)-1].Values[0] != 0.0 {
		t.Fatalf("watch: code %d out %s err %s", code, out, errs)
	}
	if _, errs, code := runCLI(t, graphs, "watch", "t1", "len(nope)", "-db", db); code != 2 || !strings.Contains(errs, "unknown name nope") {
		t.Errorf("watch with an unknown channel: code %d err %s", code, errs)
	}

	// A fork with another topic, compared with the original branch.
	s, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	g := graphs[0].WithSaver(s)
	hist, err := g.History(ctx, checkpoint.ListOptions{}, engine.WithThread("t1"))
	if err != nil {
		t.Fatal(err)
	}
	head := hist[0].Ref.CheckpointID
	ref, err := g.UpdateState(ctx, engine.Updates(engine.Write{Channel: "outline", Value: "a different outline"}), "structure",
		engine.WithThread("t1"), engine.WithCheckpoint(hist[1].Ref.CheckpointID))
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, errs, code = runCLI(t, graphs, "compare", "t1", head, ref.CheckpointID, "-db", db)
	var c inspect.Comparison
	if code != 0 || json.Unmarshal([]byte(out), &c) != nil || c.Ancestor != hist[1].Ref.CheckpointID || c.Differ == 0 {
		t.Fatalf("compare: code %d out %s err %s", code, out, errs)
	}
}
