package checkpointtest

import (
	"context"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
)

// ---- watch ----

// watchCases test checkpoint.Watcher on changes made through the watched
// saver itself. Changes by another process sharing the store (another
// connection, another schema) depend on how a saver is opened and stay in
// the saver's own tests, which use WatchSees and WatchQuiet.
func watchCases() []testCase {
	return []testCase{
		{name: "reports_put_writes_and_delete", run: watchReports, needs: watcher, capability: "checkpoint.Watcher"},
		{name: "coalesces_a_burst", run: watchCoalesces, needs: watcher, capability: "checkpoint.Watcher"},
		{name: "cancel_closes", run: watchCancel, needs: watcher, capability: "checkpoint.Watcher"},
	}
}

func watcher(s checkpoint.Saver) bool { _, ok := s.(checkpoint.Watcher); return ok }

// watch starts watching s until the test ends.
func watch(t *testing.T, s checkpoint.Saver) (<-chan struct{}, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ch, err := s.(checkpoint.Watcher).Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return ch, cancel
}

// PutFirst stores a first checkpoint (channel x = 1) of thread in s and
// returns its ref: a change for a watch to see.
func PutFirst(t *testing.T, s checkpoint.Saver, thread string) checkpoint.Ref {
	t.Helper()
	cp := checkpoint.Checkpoint{V: checkpoint.FormatVersion, ID: checkpoint.NewID(), TS: time.Now(),
		ChannelValues: map[string][]byte{"x": []byte(`1`)}, ChannelVersions: map[string]int64{"x": 1 << 32}}
	ref, err := s.Put(context.Background(), checkpoint.Ref{ThreadID: thread}, cp,
		checkpoint.Metadata{Source: checkpoint.SourceInput, Step: -1}, map[string]int64{"x": 1 << 32})
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// WatchSees fails the test unless ch, a checkpoint.Watcher's channel,
// yields a value within d; what names the change awaited.
func WatchSees(t *testing.T, ch <-chan struct{}, d time.Duration, what string) {
	t.Helper()
	select {
	case _, ok := <-ch:
		if !ok {
			t.Fatalf("%s: the watch ended", what)
		}
	case <-time.After(d):
		t.Fatalf("%s: no change reported within %v", what, d)
	}
}

// WatchQuiet fails the test if ch yields a value within d.
func WatchQuiet(t *testing.T, ch <-chan struct{}, d time.Duration, what string) {
	t.Helper()
	select {
	case <-ch:
		t.Fatalf("%s: a change was reported", what)
	case <-time.After(d):
	}
}

// Nothing is told while nothing changes; a Put, PutWrites and DeleteThread
// through the watched saver are each told within a second.
func watchReports(t *testing.T, s checkpoint.Saver) {
	ch, _ := watch(t, s)
	WatchQuiet(t, ch, 500*time.Millisecond, "before any write")
	thread := newThread("watch")
	ref := PutFirst(t, s, thread)
	WatchSees(t, ch, time.Second, "a Put")
	if err := s.PutWrites(context.Background(), ref, []checkpoint.Write{{Channel: "x", Value: []byte(`2`)}}, "task-1", "pull:a"); err != nil {
		t.Fatal(err)
	}
	WatchSees(t, ch, time.Second, "PutWrites")
	if err := s.DeleteThread(context.Background(), thread); err != nil {
		t.Fatal(err)
	}
	WatchSees(t, ch, time.Second, "a deleted thread")
}

// Many writes while nobody reads coalesce into one value.
func watchCoalesces(t *testing.T, s checkpoint.Saver) {
	ch, _ := watch(t, s)
	for range 5 {
		PutFirst(t, s, newThread("burst"))
	}
	time.Sleep(600 * time.Millisecond)
	WatchSees(t, ch, time.Second, "a burst of writes")
	WatchQuiet(t, ch, 500*time.Millisecond, "a burst of writes told more than once")
}

// Cancelling the watch's context closes its channel (after at most the
// values already told).
func watchCancel(t *testing.T, s checkpoint.Saver) {
	ch, cancel := watch(t, s)
	PutFirst(t, s, newThread("watch"))
	cancel()
	deadline := time.After(3 * time.Second)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("the channel was not closed after cancel")
		}
	}
}
