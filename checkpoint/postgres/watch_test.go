package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/postgres"
)

func putFirst(t *testing.T, s checkpoint.Saver, thread string) {
	t.Helper()
	cp := checkpoint.Checkpoint{V: checkpoint.FormatVersion, ID: checkpoint.NewID(), TS: time.Now(),
		ChannelValues: map[string][]byte{"x": []byte(`1`)}, ChannelVersions: map[string]int64{"x": 1 << 32}}
	if _, err := s.Put(context.Background(), checkpoint.Ref{ThreadID: thread}, cp,
		checkpoint.Metadata{Source: checkpoint.SourceInput, Step: -1}, map[string]int64{"x": 1 << 32}); err != nil {
		t.Fatal(err)
	}
}

func waitChange(t *testing.T, ch <-chan struct{}, d time.Duration, what string) {
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

func quiet(t *testing.T, ch <-chan struct{}, d time.Duration, what string) {
	t.Helper()
	select {
	case <-ch:
		t.Fatalf("%s: a change was reported", what)
	case <-time.After(d):
	}
}

// Watch tells of writes made through another Saver on the same schema
// (another process) within a second, and of a thread deleted; writes to
// another schema are not reported; a write just before Close is still
// told; cancelling ends the watch.
func TestWatchReportsChanges(t *testing.T) {
	s, schema := openFresh(t)
	dsn := testDSN(t)
	other, err := postgres.Open(context.Background(), dsn, postgres.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	elsewhere, _ := openFresh(t)
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := s.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	quiet(t, ch, 300*time.Millisecond, "before any write")
	putFirst(t, elsewhere, "other-schema")
	quiet(t, ch, 500*time.Millisecond, "a write to another schema")
	putFirst(t, other, "t1")
	waitChange(t, ch, time.Second, "a Put by another saver")
	if err := other.PutWrites(context.Background(), checkpoint.Ref{ThreadID: "t1", CheckpointID: mustHead(t, other, "t1")},
		[]checkpoint.Write{{Channel: "x", Value: []byte(`2`)}}, "task-1", "pull:a"); err != nil {
		t.Fatal(err)
	}
	waitChange(t, ch, time.Second, "PutWrites by another saver")
	if err := other.DeleteThread(context.Background(), "t1"); err != nil {
		t.Fatal(err)
	}
	waitChange(t, ch, time.Second, "a deleted thread")
	// A saver closed right after a write still tells of it.
	last, err := postgres.Open(context.Background(), dsn, postgres.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	putFirst(t, last, "t2")
	putFirst(t, last, "t3")
	last.Close()
	waitChange(t, ch, time.Second, "a write just before Close")
	cancel()
	select {
	case _, ok := <-ch:
		for ok {
			_, ok = <-ch
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the channel was not closed after cancel")
	}
}

func mustHead(t *testing.T, s checkpoint.Saver, thread string) string {
	t.Helper()
	tp, err := s.Get(context.Background(), checkpoint.Ref{ThreadID: thread})
	if err != nil {
		t.Fatal(err)
	}
	return tp.Ref.CheckpointID
}
