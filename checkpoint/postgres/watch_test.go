package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/checkpointtest"
	"github.com/weftstudio/weft/checkpoint/postgres"
)

// Watch tells of writes made through another Saver on the same schema
// (another process) within a second, and of a thread deleted; writes to
// another schema are not reported; a write just before Close is still
// told. The conformance suite's watch group covers the watched Saver's
// own writes and cancelling.
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
	defer cancel()
	ch, err := s.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkpointtest.WatchQuiet(t, ch, 300*time.Millisecond, "before any write")
	checkpointtest.PutFirst(t, elsewhere, "other-schema")
	checkpointtest.WatchQuiet(t, ch, 500*time.Millisecond, "a write to another schema")
	ref := checkpointtest.PutFirst(t, other, "t1")
	checkpointtest.WatchSees(t, ch, time.Second, "a Put by another saver")
	if err := other.PutWrites(context.Background(), ref,
		[]checkpoint.Write{{Channel: "x", Value: []byte(`2`)}}, "task-1", "pull:a"); err != nil {
		t.Fatal(err)
	}
	checkpointtest.WatchSees(t, ch, time.Second, "PutWrites by another saver")
	if err := other.DeleteThread(context.Background(), "t1"); err != nil {
		t.Fatal(err)
	}
	checkpointtest.WatchSees(t, ch, time.Second, "a deleted thread")
	// A saver closed right after a write still tells of it.
	last, err := postgres.Open(context.Background(), dsn, postgres.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	checkpointtest.PutFirst(t, last, "t2")
	checkpointtest.PutFirst(t, last, "t3")
	last.Close()
	checkpointtest.WatchSees(t, ch, time.Second, "a write just before Close")
}
