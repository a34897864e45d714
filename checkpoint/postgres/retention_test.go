package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
)

// TestPruneOlderThan: retention by age deletes old checkpoints with their
// writes and the values nothing references any more, keeps the newest
// checkpoint of every thread and namespace however old, and leaves the rest
// readable with their values.
func TestPruneOlderThan(t *testing.T) {
	s, _ := openFresh(t)
	ctx := context.Background()
	now := time.Now()
	// put stores a chain in (thread, ns) with the given ages, oldest first.
	// "const" keeps version 1 from the first checkpoint; "v" changes every
	// time; each checkpoint gets one pending write.
	put := func(thread, ns string, ages ...time.Duration) []checkpoint.Ref {
		var refs []checkpoint.Ref
		parent := checkpoint.Ref{ThreadID: thread, NS: ns}
		for i, age := range ages {
			cp := checkpoint.Checkpoint{V: checkpoint.FormatVersion, ID: checkpoint.NewID(), TS: now.Add(-age),
				ChannelValues:   map[string][]byte{"const": []byte("c"), "v": []byte(fmt.Sprint(i))},
				ChannelVersions: map[string]int64{"const": 1, "v": int64(i + 1)}}
			nv := map[string]int64{"v": int64(i + 1)}
			if i == 0 {
				nv = cp.ChannelVersions
			}
			ref, err := s.Put(ctx, parent, cp, md(checkpoint.SourceLoop, i), nv)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.PutWrites(ctx, ref, []checkpoint.Write{{Channel: "v", Value: []byte("w")}}, "task", ""); err != nil {
				t.Fatal(err)
			}
			refs = append(refs, ref)
			parent = ref
		}
		return refs
	}
	h := time.Hour
	a := put("a", "", 4*h, 3*h, 2*h, 0)
	aSub := put("a", "sub:1", 3*h, 2*h)
	b := put("b", "", 5*h)
	stats := func() checkpoint.Stats {
		st, err := s.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	ids := func(thread, ns string) []string {
		hs, err := s.ListHeaders(ctx, checkpoint.ListOptions{ThreadID: thread, NS: &ns})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, h := range hs {
			out = append(out, h.Ref.CheckpointID)
		}
		return out
	}
	before := stats()

	n, err := s.PruneOlderThan(ctx, 150*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	// a: the 4 h and 3 h checkpoints; a/sub:1: the 3 h one; b: nothing
	// (its only checkpoint is its newest).
	if n != 3 {
		t.Errorf("PruneOlderThan(2h30m) deleted %d checkpoints, want 3", n)
	}
	if got, want := ids("a", ""), []string{a[3].CheckpointID, a[2].CheckpointID}; !slices.Equal(got, want) {
		t.Errorf("thread a keeps %v, want %v", got, want)
	}
	if got, want := ids("a", "sub:1"), []string{aSub[1].CheckpointID}; !slices.Equal(got, want) {
		t.Errorf("thread a ns sub:1 keeps %v, want %v", got, want)
	}
	if got, want := ids("b", ""), []string{b[0].CheckpointID}; !slices.Equal(got, want) {
		t.Errorf("thread b keeps %v, want %v", got, want)
	}
	after := stats()
	if after.Checkpoints != before.Checkpoints-3 || after.Writes != before.Writes-3 || after.Blobs != before.Blobs-3 {
		t.Errorf("stats before %+v after %+v; want 3 checkpoints, 3 writes and 3 values fewer", before, after)
	}
	// What is kept is whole: values carried from the deleted first
	// checkpoint ("const" at version 1) and its own writes.
	tp, err := s.Get(ctx, a[2])
	if err != nil {
		t.Fatal(err)
	}
	if string(tp.Checkpoint.ChannelValues["const"]) != "c" || string(tp.Checkpoint.ChannelValues["v"]) != "2" || len(tp.PendingWrites) != 1 {
		t.Errorf("kept checkpoint: values %q writes %v", tp.Checkpoint.ChannelValues, tp.PendingWrites)
	}
	if tp.Parent == nil || tp.Parent.CheckpointID != a[1].CheckpointID {
		t.Errorf("kept checkpoint's parent = %v (its parent ref stays, though the parent is gone)", tp.Parent)
	}

	// Age 0 keeps only the newest of each thread and namespace.
	if n, err := s.PruneOlderThan(ctx, 0); err != nil || n != 1 {
		t.Errorf("PruneOlderThan(0) = %d, %v; want 1 (a's 2 h checkpoint)", n, err)
	}
	for _, c := range []struct {
		thread, ns string
		want       string
	}{{"a", "", a[3].CheckpointID}, {"a", "sub:1", aSub[1].CheckpointID}, {"b", "", b[0].CheckpointID}} {
		if got := ids(c.thread, c.ns); !slices.Equal(got, []string{c.want}) {
			t.Errorf("thread %s ns %q keeps %v, want only %s", c.thread, c.ns, got, c.want)
		}
	}
	// The threads can still be advanced from their heads.
	cp := newCP()
	if _, err := s.Put(ctx, a[3], cp, md(checkpoint.SourceLoop, 9), cp.ChannelVersions); err != nil {
		t.Errorf("Put after pruning: %v", err)
	}
	if n, err := s.PruneOlderThan(ctx, 0); err != nil || n != 1 {
		t.Errorf("PruneOlderThan(0) again = %d, %v; want 1", n, err)
	}
	if _, err := s.PruneOlderThan(ctx, -time.Second); err == nil {
		t.Error("PruneOlderThan with a negative age: no error")
	}
}

// TestPruneKeepsHeadsConsistent: after Prune, the threads' heads still
// allow the next step and refuse stale ones.
func TestPruneKeepsHeadsConsistent(t *testing.T) {
	s, _ := openFresh(t)
	ctx := context.Background()
	parent := checkpoint.Ref{ThreadID: "t"}
	var refs []checkpoint.Ref
	for i := range 5 {
		cp := newCP()
		ref, err := s.Put(ctx, parent, cp, md(checkpoint.SourceLoop, i), cp.ChannelVersions)
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, ref)
		parent = ref
	}
	if err := s.Prune(ctx, []string{"t"}, 2); err != nil {
		t.Fatal(err)
	}
	cp := newCP()
	if _, err := s.Put(ctx, refs[3], cp, md(checkpoint.SourceLoop, 9), cp.ChannelVersions); err == nil {
		t.Error("a loop child of a pruned thread's old checkpoint was accepted")
	}
	if _, err := s.Put(ctx, refs[4], cp, md(checkpoint.SourceLoop, 9), cp.ChannelVersions); err != nil {
		t.Errorf("a loop child of the head after Prune: %v", err)
	}
	// Pruning everything forgets the head: the thread starts anew.
	if err := s.Prune(ctx, []string{"t"}, 0); err != nil {
		t.Fatal(err)
	}
	cp2 := newCP()
	if _, err := s.Put(ctx, refs[2], cp2, md(checkpoint.SourceLoop, 9), cp2.ChannelVersions); err != nil {
		t.Errorf("Put to a thread pruned to nothing: %v", err)
	}
}
