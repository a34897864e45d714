package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/store"
	"github.com/weftstudio/weft/cli"
)

func TestStorageCommand(t *testing.T) {
	graphs := demoGraphs(t)
	db := filepath.Join(t.TempDir(), "weft.db")
	seed(t, db, graphs)
	before, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}

	// The summary only reads: the file is untouched and no log is left.
	out, errs, code := runCLI(t, graphs, "storage", "-db", db, "-deep")
	if code != 0 {
		t.Fatalf("storage: exit %d: %s", code, errs)
	}
	var sum checkpoint.StorageSummary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("storage printed %q: %v", out, err)
	}
	if sum.Engine != "sqlite" || sum.Threads != 1 || sum.Checkpoints == 0 || sum.Bytes.Values == 0 || sum.FileBytes == 0 || len(sum.Channels) == 0 {
		t.Errorf("summary: %+v", sum)
	}
	if len(sum.LargestThreads) != 1 || sum.LargestThreads[0].ThreadID != "t1" {
		t.Errorf("largest threads: %+v", sum.LargestThreads)
	}
	after, err := os.Stat(db)
	if err != nil || !after.ModTime().Equal(before.ModTime()) || after.Size() != before.Size() {
		t.Errorf("the summary changed the file: %v %v", before, after)
	}
	if _, err := os.Stat(db + "-wal"); err == nil {
		t.Error("the summary left a -wal file")
	}
	if _, errs, code := runCLI(t, graphs, "storage", "-db", db, "-create"); code != 2 || !strings.Contains(errs, "only reads") {
		t.Errorf("storage -create: exit %d, %s", code, errs)
	}

	out, errs, code = runCLI(t, graphs, "storage", "-db", db, "-thread", "t1", "-checkpoints", "2")
	if code != 0 {
		t.Fatalf("storage -thread: exit %d: %s", code, errs)
	}
	var ts checkpoint.ThreadStorage
	if err := json.Unmarshal([]byte(out), &ts); err != nil {
		t.Fatal(err)
	}
	if ts.ThreadID != "t1" || ts.Checkpoints != sum.Checkpoints || len(ts.Newest) != 2 || len(ts.Channels) == 0 || len(ts.Growth) == 0 {
		t.Errorf("thread detail: %+v", ts)
	}
	if _, errs, code := runCLI(t, graphs, "storage", "-db", db, "-thread", "nope"); code != 1 || !strings.Contains(errs, `thread "nope" not found`) {
		t.Errorf("storage -thread nope: exit %d, %s", code, errs)
	}

	// Everything is newer than 2000: nothing goes.
	out, errs, code = runCLI(t, graphs, "storage", "prune", "-db", db, "-older-than", "2000-01-01")
	if code != 0 {
		t.Fatalf("storage prune -older-than 2000-01-01: exit %d: %s", code, errs)
	}
	var pr cli.PruneJSON
	if err := json.Unmarshal([]byte(out), &pr); err != nil {
		t.Fatal(err)
	}
	if pr.Checkpoints != 0 || pr.Examined != 1 || pr.KeptPerNamespace != 1 || pr.OlderThan == nil {
		t.Errorf("prune by an old date: %+v", pr)
	}
	for _, bad := range []string{"yesterday", "-3d", "12"} {
		if _, errs, code := runCLI(t, graphs, "storage", "prune", "-db", db, "-older-than", bad); code != 2 || !strings.Contains(errs, "-older-than") {
			t.Errorf("-older-than %s: exit %d, %s", bad, code, errs)
		}
	}
	if _, errs, code := runCLI(t, graphs, "storage", "prune", "-db", db); code != 2 || !strings.Contains(errs, "usage") {
		t.Errorf("prune without a policy: exit %d, %s", code, errs)
	}
	if _, errs, code := runCLI(t, graphs, "storage", "prune", "-db", db, "-keep", "1", "ghost"); code != 1 || !strings.Contains(errs, `"ghost" not found`) {
		t.Errorf("prune of a missing thread: exit %d, %s", code, errs)
	}

	// Everything is older than now: each namespace keeps its newest.
	out, errs, code = runCLI(t, graphs, "storage", "prune", "-db", db, "-older-than", "0d")
	if code != 0 {
		t.Fatalf("storage prune -older-than 0d: exit %d: %s", code, errs)
	}
	if err := json.Unmarshal([]byte(out), &pr); err != nil {
		t.Fatal(err)
	}
	if pr.Checkpoints != sum.Checkpoints-int64(ts.Namespaces) || pr.Threads != 1 || pr.Bytes.Total() == 0 {
		t.Errorf("prune to the newest: %+v (the store had %d checkpoints in %d namespaces)", pr, sum.Checkpoints, ts.Namespaces)
	}
	out, _, _ = runCLI(t, graphs, "state", "-db", db, "t1")
	if !strings.Contains(out, `"kelp"`) {
		t.Errorf("the thread's state is gone after the prune: %s", out)
	}

	out, errs, code = runCLI(t, graphs, "storage", "vacuum", "-db", db)
	if code != 0 {
		t.Fatalf("storage vacuum: exit %d: %s", code, errs)
	}
	var vr cli.VacuumJSON
	if err := json.Unmarshal([]byte(out), &vr); err != nil {
		t.Fatal(err)
	}
	if vr.BytesBefore == 0 || vr.BytesAfter == 0 || vr.Reclaimed != max(0, vr.BytesBefore-vr.BytesAfter) {
		t.Errorf("vacuum: %+v", vr)
	}
	if _, errs, code := runCLI(t, graphs, "storage", "bogus", "-db", db); code != 2 || !strings.Contains(errs, "unknown storage subcommand") {
		t.Errorf("storage bogus: exit %d, %s", code, errs)
	}
}

// A prune never runs under a thread another run holds: it fails naming the
// holder, and the thread keeps its checkpoints.
func TestStoragePruneRespectsLeases(t *testing.T) {
	graphs := demoGraphs(t)
	db := filepath.Join(t.TempDir(), "weft.db")
	seed(t, db, graphs)
	s, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	l := s.(checkpoint.Leaser)
	lease, err := l.AcquireLease(ctx, "t1", "desk pid 7 (weft worker)", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	_, errs, code := runCLI(t, graphs, "storage", "prune", "-keep", "1", "-db", db)
	if code != 1 || !strings.Contains(errs, "is being run by desk pid 7 (weft worker)") {
		t.Errorf("prune under a held thread: exit %d: %s", code, errs)
	}
	if err := l.ReleaseLease(ctx, lease); err != nil {
		t.Fatal(err)
	}
	s.Close()
	out, errs, code := runCLI(t, graphs, "history", "t1", "-db", db)
	var hist []cli.SnapshotJSON
	if code != 0 || json.Unmarshal([]byte(out), &hist) != nil || len(hist) != 6 {
		t.Fatalf("history after the refused prune: %d entries, %s", len(hist), errs)
	}
	if _, errs, code := runCLI(t, graphs, "storage", "prune", "-keep", "1", "-db", db); code != 0 {
		t.Errorf("prune once released: exit %d: %s", code, errs)
	}
}
