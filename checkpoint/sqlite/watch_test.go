package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/sqlite"
)

// putOne stores a first checkpoint of thread in s.
func putOne(t *testing.T, s checkpoint.Saver, thread string) {
	t.Helper()
	cp := checkpoint.Checkpoint{V: checkpoint.FormatVersion, ID: checkpoint.NewID(), TS: time.Now(),
		ChannelValues: map[string][]byte{"x": []byte(`1`)}, ChannelVersions: map[string]int64{"x": 1 << 32}}
	if _, err := s.Put(context.Background(), checkpoint.Ref{ThreadID: thread}, cp,
		checkpoint.Metadata{Source: checkpoint.SourceInput, Step: -1}, map[string]int64{"x": 1 << 32}); err != nil {
		t.Fatal(err)
	}
}

// wait fails unless ch yields a value within d.
func wait(t *testing.T, ch <-chan struct{}, d time.Duration, what string) {
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

// Watch tells of writes by another connection to the file (another
// process, here a second Saver) and by the watched Saver itself, within a
// second; nothing is reported while nothing changes; cancelling ends it.
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
	ch, err := s.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
		t.Fatal("a change reported before any write")
	case <-time.After(500 * time.Millisecond):
	}
	putOne(t, other, "from-elsewhere")
	wait(t, ch, time.Second, "a write by another connection")
	putOne(t, s, "from-here")
	wait(t, ch, time.Second, "a write by the watched store")
	// Many writes while nobody reads coalesce into one value.
	for i := range 5 {
		putOne(t, other, "burst-"+string(rune('a'+i)))
	}
	time.Sleep(600 * time.Millisecond)
	wait(t, ch, time.Second, "a burst of writes")
	select {
	case <-ch:
		t.Fatal("a burst of writes gave more than one value")
	case <-time.After(500 * time.Millisecond):
	}
	cancel()
	select {
	case _, ok := <-ch:
		if ok {
			t.Fatal("a value after cancel")
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the channel was not closed after cancel")
	}
}
