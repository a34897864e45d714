package bundle_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"github.com/weftstudio/weft/checkpoint"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint/bundle"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/examples"
)

// A thread with a fork (an edit at an older checkpoint, run on) is two
// branches from one checkpoint: export writes both, and import stores the
// same checkpoints, parents and writes.
func TestForkedThreadRoundTrips(t *testing.T) {
	src := memory.New()
	w, _ := examples.Writer(src)
	if _, err := w.Graph.Invoke(ctx, w.Example, engine.WithThread("w")); err != nil {
		t.Fatal(err)
	}
	hist, err := w.Graph.History(ctx, checkpoint.ListOptions{}, engine.WithThread("w"))
	if err != nil {
		t.Fatal(err)
	}
	old := hist[len(hist)-3].Ref.CheckpointID
	if _, err := w.Graph.UpdateState(ctx, engine.Update{{Channel: "topic", Value: "forked"}}, "", engine.WithThread("w"), engine.WithCheckpoint(old)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Graph.Invoke(ctx, nil, engine.WithThread("w")); err != nil {
		t.Fatal(err)
	}
	b, _ := bundle.Read(ctx, src, "w")
	data, _ := json.Marshal(b)
	dst := openSQLite(t)
	if _, err := bundle.Import(ctx, dst, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	if got, want := dump(t, dst, "w"), dump(t, src, "w"); !slices.Equal(got, want) {
		t.Fatalf("imported %d checkpoints, exported %d, or they differ", len(got), len(want))
	}
	children := map[string]int{}
	for _, c := range b.Checkpoints {
		children[c.ParentID]++
	}
	if children[old] != 2 {
		t.Fatalf("checkpoint %s has %d children; the fork should make it 2", old, children[old])
	}
}

// Two branches that both went on running from one checkpoint (a crafted
// bundle: no store writes that) are refused as a bad history, not blamed
// on "another writer".
func TestImportRefusesTwoRunningBranches(t *testing.T) {
	src := memory.New()
	w, _ := examples.Writer(src)
	if _, err := w.Graph.Invoke(ctx, w.Example, engine.WithThread("w")); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Read(ctx, src, "w")
	if err != nil {
		t.Fatal(err)
	}
	last := b.Checkpoints[len(b.Checkpoints)-1]
	if last.Metadata.Source != checkpoint.SourceLoop || last.ParentID == "" {
		t.Fatalf("the last checkpoint is %q with parent %q; the test needs a loop step", last.Metadata.Source, last.ParentID)
	}
	twin := last
	twin.ID = checkpoint.NewIDAfter(last.ID, time.Now())
	twin.PendingWrites = nil
	b.Checkpoints = append(b.Checkpoints, twin)
	data, _ := json.Marshal(b)
	_, err = bundle.Import(ctx, openSQLite(t), bytes.NewReader(data))
	if !errors.Is(err, bundle.ErrBadHistory) || strings.Contains(err.Error(), "another writer") || !strings.Contains(err.Error(), twin.ID) {
		t.Fatalf("err %v, want ErrBadHistory naming %s", err, twin.ID)
	}
}
