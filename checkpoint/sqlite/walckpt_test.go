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

// The write-ahead log is folded into the database file in the background
// soon after writes, long before the writer's own checkpoint at 4,000
// pages would run: 60 puts of 16 KB (fewer pages than SQLite's default 1,000) reach the file
// while the store is open.
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
	parent := checkpoint.Ref{ThreadID: "wal"}
	raw := make([]byte, 12<<10)
	for i := range 60 {
		rand.Read(raw)
		v, _ := json.Marshal(base64.StdEncoding.EncodeToString(raw)) // 16 KB that does not compress
		cp := checkpoint.Checkpoint{V: 4, ID: fmt.Sprintf("1ef00000-0000-6000-8000-%012d", i+1), TS: time.Now(),
			ChannelValues: map[string][]byte{"notes": v}, ChannelVersions: map[string]int64{"notes": int64(i + 1)}}
		ref, err := s.Put(t.Context(), parent, cp, checkpoint.Metadata{Source: checkpoint.SourceUpdate, Step: i}, map[string]int64{"notes": int64(i + 1)})
		if err != nil {
			t.Fatal(err)
		}
		parent = ref
	}
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
	raw := make([]byte, 12<<10)
	var most int64
	for i := range 5000 {
		rand.Read(raw)
		v, _ := json.Marshal(base64.StdEncoding.EncodeToString(raw))
		cp := checkpoint.Checkpoint{V: 4, ID: fmt.Sprintf("1ef00000-0000-6000-8000-%012d", i+1), TS: time.Now(),
			ChannelValues: map[string][]byte{"notes": v}, ChannelVersions: map[string]int64{"notes": int64(i + 1)}}
		ref, err := s.Put(t.Context(), parent, cp, checkpoint.Metadata{Source: checkpoint.SourceUpdate, Step: i}, map[string]int64{"notes": int64(i + 1)})
		if err != nil {
			t.Fatal(err)
		}
		parent = ref
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
// same moment: SQLite refuses a second checkpointer, so the two take turns.
func TestVacuumBesideBackgroundCheckpoints(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vac.db")
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	parent := checkpoint.Ref{ThreadID: "vac"}
	raw := make([]byte, 3<<10)
	for i := range 40 {
		for j := range 10 {
			rand.Read(raw)
			v, _ := json.Marshal(base64.StdEncoding.EncodeToString(raw))
			n := i*10 + j + 1
			cp := checkpoint.Checkpoint{V: 4, ID: fmt.Sprintf("1ef00000-0000-6000-8000-%012d", n), TS: time.Now(),
				ChannelValues: map[string][]byte{"notes": v}, ChannelVersions: map[string]int64{"notes": int64(n)}}
			ref, err := s.Put(t.Context(), parent, cp, checkpoint.Metadata{Source: checkpoint.SourceUpdate, Step: n}, map[string]int64{"notes": int64(n)})
			if err != nil {
				t.Fatal(err)
			}
			parent = ref
		}
		// Due 20 ms after the last commit: vacuum at about that moment.
		time.Sleep(time.Duration(i%8) * 3 * time.Millisecond)
		if _, err := s.Vacuum(t.Context(), checkpoint.VacuumOptions{}); err != nil {
			t.Fatalf("vacuum %d: %v", i, err)
		}
	}
}
