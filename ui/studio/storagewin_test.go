package studio

import (
	"context"
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/checkpoint/sqlite"
	"github.com/weftstudio/weft/engine"
)

// blobStore returns a SQLite store holding thread "big" (41 steps, each
// writing 2 KB of hex that compresses to about 1 KB) and "small" (5 steps).
func blobStore(t *testing.T) *sqlite.Saver {
	t.Helper()
	saver, err := sqlite.Open(filepath.Join(t.TempDir(), "blobs.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { saver.Close() })
	n := engine.LastValue[int]("n")
	limit := engine.LastValue[int]("limit")
	text := engine.LastValue[string]("text")
	rng := rand.New(rand.NewSource(1))
	g, err := engine.NewGraph("blobs", n, limit, text).
		AddNode("write", func(_ context.Context, s engine.State) (engine.Output, error) {
			b := make([]byte, 1024)
			rng.Read(b)
			return engine.Updates(n.Set(n.Get(s)+1), text.Set(fmt.Sprintf("%x", b))), nil
		}).
		AddEdge(engine.START, "write").
		AddConditionalEdges("write", func(_ context.Context, s engine.State) (engine.Route, error) {
			if n.Get(s) >= limit.Get(s) {
				return engine.To(engine.END), nil
			}
			return engine.To("write"), nil
		}, engine.Targets("write", engine.END)).
		Compile(engine.WithSaver(saver))
	if err != nil {
		t.Fatal(err)
	}
	for thread, steps := range map[string]int{"big": 40, "small": 5} {
		if _, err := g.Invoke(context.Background(), engine.Values{"limit": steps}, engine.WithThread(thread), engine.WithRecursionLimit(100)); err != nil {
			t.Fatal(err)
		}
	}
	return saver
}

// The storage window on a real SQLite store: where the bytes go (file,
// rows by kind, threads by size, a thread by channel, step and
// checkpoint), then prune, a prune stopped by a thread another process
// runs, vacuum with the bytes reclaimed, and delete; the main window reads
// the store again after each. Nothing blocks: each runs in the background.
func TestStorageConsole(t *testing.T) {
	saver := blobStore(t)
	s := newStudio(t, saver)
	act(s.openStorage)
	idle(t, s)
	c := s.storage
	if c == nil || c.m.storage.sum == nil {
		t.Fatalf("no summary (%q)", c.status.Text)
	}
	if c.cards[3].Text != "2" || c.cards[4].Text != "49" || c.m.storage.sum.FileBytes <= 0 || c.cards[0].Text != byteSize64(c.m.storage.sum.FileBytes) {
		t.Errorf("cards: file %q, threads %q, checkpoints %q", c.cards[0].Text, c.cards[3].Text, c.cards[4].Text)
	}
	if lt := c.m.storage.sum.LargestThreads; len(lt) != 2 || lt[0].ThreadID != "big" || lt[0].Checkpoints != 42 {
		t.Fatalf("largest threads %+v", lt)
	}
	if !strings.HasPrefix(c.mixText[0].Text, "channel values of snapshots: ") || len(c.growth.values) == 0 {
		t.Errorf("mix %q, growth %v", c.mixText[0].Text, c.growth.values)
	}

	act(func() { c.threads.Select(0) })
	idle(t, s)
	if c.m.storage.ts == nil || c.m.storage.ts.ThreadID != "big" || !strings.HasPrefix(c.detail.Text, "Thread big: 42 checkpoints") {
		t.Fatalf("thread detail %q", c.detail.Text)
	}
	if len(c.m.storage.channels()) == 0 || c.m.storage.channels()[0].Channel != "text" || c.m.storage.channels()[0].ValueBytes < 40*1000 {
		t.Errorf("channels %+v", c.m.storage.channels())
	}
	if len(c.tGrowth.values) == 0 || !strings.HasPrefix(c.tGrowT.Text, "Bytes the thread's steps added, from step -1, 1 step a bar") || c.cpCount() != 42 {
		t.Errorf("growth %v %q, %d checkpoints itemised", c.tGrowth.values, c.tGrowT.Text, c.cpCount())
	}
	if rows := c.valueRows(); len(rows) == 0 || rows[0].Channel != "text" || rows[0].ThreadID != "big" {
		t.Errorf("largest values %+v", rows)
	}

	// Prune the selected thread to its newest 5.
	act(func() {
		c.keep.SetText("5")
		c.scope.SetSelected("selected thread")
		c.askPrune()
	})
	prune := overlayButton(c.win, "Prune")
	if prune == nil {
		t.Fatalf("no question before pruning (%q)", c.status.Text)
	}
	act(func() { test.Tap(prune) })
	idle(t, s)
	if !strings.HasPrefix(c.status.Text, "Pruned 37 checkpoints of 1 thread") || c.m.storage.busy || c.progress.Visible() {
		t.Fatalf("after prune: %q (busy %v)", c.status.Text, c.m.storage.busy)
	}
	if c.m.storage.sum.Checkpoints != 12 || c.m.storage.ts == nil || c.m.storage.ts.Checkpoints != 5 {
		t.Errorf("after prune: %d checkpoints in the store, thread %+v", c.m.storage.sum.Checkpoints, c.m.storage.ts)
	}
	// "big" now is the smaller thread: the list's selection followed it.
	if lt := c.m.storage.sum.LargestThreads; len(lt) != 2 || lt[1].ThreadID != "big" || c.m.storage.sel != "big" {
		t.Errorf("after prune: threads %+v, selected %q", lt, c.m.storage.sel)
	}
	free := c.m.storage.sum.FreeBytes

	// A thread another process runs is skipped, and named.
	lease, err := saver.AcquireLease(context.Background(), "small", "worker-7 pid 99 (weft worker)", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	act(func() {
		c.keep.SetText("1")
		c.scope.SetSelected("every thread")
		c.askPrune()
	})
	act(func() { test.Tap(overlayButton(c.win, "Prune")) })
	idle(t, s)
	if !strings.HasPrefix(c.status.Text, "Pruned ") || !strings.Contains(c.status.Text, "Skipped 1 thread a run holds") || !strings.Contains(c.status.Text, "worker-7") {
		t.Errorf("prune under a held lease: %q", c.status.Text)
	}
	if err := saver.ReleaseLease(context.Background(), lease); err != nil {
		t.Fatal(err)
	}
	// Asking for nothing prunes nothing.
	act(func() {
		c.keep.SetText("")
		c.askPrune()
	})
	if !strings.HasPrefix(c.status.Text, "Not pruned: ") {
		t.Errorf("empty policy: %q", c.status.Text)
	}

	act(c.vacuum)
	idle(t, s)
	if !strings.HasPrefix(c.status.Text, "Vacuum reclaimed ") || c.m.storage.sum.FreeBytes >= free && free > 0 || c.progress.Visible() {
		t.Errorf("after vacuum: %q, free %d → %d", c.status.Text, free, c.m.storage.sum.FreeBytes)
	}

	act(func() { c.threads.Select(0) })
	idle(t, s)
	sel := c.m.storage.sel
	act(c.askDelete)
	act(func() { test.Tap(overlayButton(c.win, "Delete")) })
	idle(t, s)
	if !strings.HasPrefix(c.status.Text, "Deleted thread "+sel) || c.m.storage.sum.Threads != 1 || c.m.storage.sel != "" || !c.deleteB.Disabled() {
		t.Errorf("after delete: %q, %d threads, selected %q", c.status.Text, c.m.storage.sum.Threads, c.m.storage.sel)
	}
	if _, err := saver.Get(context.Background(), checkpoint.Ref{ThreadID: sel}); err == nil {
		t.Error("the deleted thread is still in the store")
	}
}

// The storage window shows the model's store: another store opened in the
// studio is the one it reads, with nothing of the first left selected;
// once closed, it no longer follows.
func TestStorageConsoleFollowsTheStore(t *testing.T) {
	s := newStudio(t, blobStore(t))
	act(s.openStorage)
	idle(t, s)
	c := s.storage
	act(func() { c.threads.Select(0) })
	idle(t, s)
	if c.m.storage.ts == nil || c.cards[3].Text != "2" {
		t.Fatalf("first store: %d threads shown, selected %q", len(c.m.storage.sum.LargestThreads), c.m.storage.sel)
	}
	empty, err := sqlite.Open(filepath.Join(t.TempDir(), "empty.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { empty.Close() })
	act(func() { s.m.setStore(empty, "empty.db") })
	idle(t, s)
	if c.cards[3].Text != "0" || c.m.storage.sel != "" || c.m.storage.ts != nil || c.win.Title() != "Storage · empty.db" || !strings.HasPrefix(c.title.Text, "Storage of empty.db") {
		t.Errorf("after opening empty.db: %q threads, selected %q, title %q / %q", c.cards[3].Text, c.m.storage.sel, c.win.Title(), c.title.Text)
	}
	subs := len(s.m.subs)
	act(c.win.Close)
	if s.storage != nil {
		t.Fatal("the closed window is still the studio's")
	}
	act(func() { s.m.setStore(memory.New(), "mem") })
	if len(s.m.subs) != subs-1 || c.win.Title() != "Storage · empty.db" {
		t.Errorf("the closed window still follows the model (title %q)", c.win.Title())
	}
}
