package sqlite_test

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/sqlite"
)

// putNotes puts n checkpoints on thread, each with a new value of channel
// notes holding size random bytes in base64 (which does not compress),
// after the ones a previous call put (from, the first version), and returns
// the last checkpoint's ref.
func putNotes(t *testing.T, s *sqlite.Saver, parent checkpoint.Ref, from, n, size int) checkpoint.Ref {
	t.Helper()
	raw := make([]byte, size)
	for i := from; i < from+n; i++ {
		rand.Read(raw)
		v, _ := json.Marshal(base64.StdEncoding.EncodeToString(raw))
		cp := checkpoint.Checkpoint{V: 4, ID: fmt.Sprintf("1ef00000-0000-6000-8000-%012d", i), TS: time.Now(),
			ChannelValues: map[string][]byte{"notes": v}, ChannelVersions: map[string]int64{"notes": int64(i)}}
		ref, err := s.Put(t.Context(), parent, cp, checkpoint.Metadata{Source: checkpoint.SourceUpdate, Step: i}, map[string]int64{"notes": int64(i)})
		if err != nil {
			t.Fatal(err)
		}
		parent = ref
	}
	return parent
}

// The write-ahead log is folded into the database file in the background
// soon after writes, long before the writer's own checkpoint at 4,000
// pages would run: 60 puts of 16 KB (fewer pages than SQLite's default
// 1,000) reach the file while the store is open.
func TestWALFoldedInTheBackground(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wal.db")
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	size := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := size()
	putNotes(t, s, checkpoint.Ref{ThreadID: "wal"}, 1, 60, 12<<10) // 16 KB each
	deadline := time.Now().Add(10 * time.Second)
	for size() < before+512<<10 {
		if time.Now().After(deadline) {
			t.Fatalf("the database file grew from %d to %d bytes in 10 s after 0.96 MB of writes: the log was not folded in", before, size())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Under writes that never pause, the log stays bounded: 5,000 puts of 16 KB
// (80 MB) leave a log of about 4,000 pages (16 MB), and what was appended
// while a background checkpoint held off the writer's own (here it peaks at
// 19-20 MB; the test allows 32).
func TestWALBoundedUnderSteadyWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wal.db")
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	parent := checkpoint.Ref{ThreadID: "wal"}
	var most int64
	for i := range 5000 {
		parent = putNotes(t, s, parent, i+1, 1, 12<<10)
		if fi, err := os.Stat(path + "-wal"); err == nil {
			most = max(most, fi.Size())
		}
	}
	t.Logf("the log peaked at %d bytes", most)
	if most > 32<<20 {
		t.Fatalf("the log grew to %d bytes under 80 MB of steady writes", most)
	}
}

// A vacuum empties the log even when a background checkpoint is due at the
// same moment, this Saver's own or another's on the file (as another
// process's would be): SQLite refuses a second checkpointer, so this
// process's take turns and another's is waited for.
func TestVacuumBesideBackgroundCheckpoints(t *testing.T) {
	for _, another := range []bool{false, true} {
		name := "own"
		if another {
			name = "another process's"
		}
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "vac.db")
			writer, err := sqlite.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer writer.Close()
			vacuumer := writer
			if another {
				if vacuumer, err = sqlite.Open(path); err != nil {
					t.Fatal(err)
				}
				defer vacuumer.Close()
			}
			parent := checkpoint.Ref{ThreadID: "vac"}
			for i := range 30 {
				parent = putNotes(t, writer, parent, i*10+1, 10, 3<<10)
				// Due 20 ms after the last commit: vacuum at about that moment.
				time.Sleep(time.Duration(i%8) * 3 * time.Millisecond)
				if _, err := vacuumer.Vacuum(t.Context(), checkpoint.VacuumOptions{}); err != nil {
					t.Fatalf("vacuum %d: %v", i, err)
				}
			}
		})
	}
}
