package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint/checkpointtest"
	"github.com/weftstudio/weft/checkpoint/sqlite"
)

// Watch tells of writes by another connection to the file (another
// process, here a second Saver) within a second, a burst of them as one
// value. The conformance suite's watch group covers the watched Saver's
// own writes and cancelling.
func TestWatchReportsChanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.db")
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	other, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := s.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkpointtest.WatchQuiet(t, ch, 500*time.Millisecond, "before any write")
	checkpointtest.PutFirst(t, other, "from-elsewhere")
	checkpointtest.WatchSees(t, ch, time.Second, "a write by another connection")
	// Many writes while nobody reads coalesce into one value.
	for i := range 5 {
		checkpointtest.PutFirst(t, other, "burst-"+string(rune('a'+i)))
	}
	time.Sleep(600 * time.Millisecond)
	checkpointtest.WatchSees(t, ch, time.Second, "a burst of writes")
	checkpointtest.WatchQuiet(t, ch, 500*time.Millisecond, "a burst of writes gave more than one value")
}
