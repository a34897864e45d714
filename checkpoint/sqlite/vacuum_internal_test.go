package sqlite

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
)

// The log is polled by a goroutine while Vacuum goes on to checkpoint it;
// both report progress, and a caller's callback must never run twice at
// once (it was, and the race detector caught it in the conformance suite).
// A fast poll and a slow callback make the overlap near certain.
func TestVacuumProgressCallsOneAtATime(t *testing.T) {
	old := vacuumPoll
	vacuumPoll = time.Millisecond
	t.Cleanup(func() { vacuumPoll = old })
	s, err := Open(filepath.Join(t.TempDir(), "v.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	for i := range 40 {
		thread := fmt.Sprintf("t%d", i)
		cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: time.Now(), ChannelValues: map[string][]byte{"big": []byte(`"` + strings.Repeat("x", 256<<10) + `"`)}, ChannelVersions: map[string]int64{"big": 1}}
		if _, err := s.Put(ctx, checkpoint.Ref{ThreadID: thread}, cp, checkpoint.Metadata{Source: checkpoint.SourceInput, Step: -1}, map[string]int64{"big": 1}); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if err := s.DeleteThread(ctx, thread); err != nil {
				t.Fatal(err)
			}
		}
	}
	var inside, overlaps, calls atomic.Int32
	var phases []string
	var mu sync.Mutex
	_, err = s.Vacuum(ctx, checkpoint.VacuumOptions{Progress: func(p checkpoint.VacuumProgress) {
		if inside.Add(1) > 1 {
			overlaps.Add(1)
		}
		defer inside.Add(-1)
		calls.Add(1)
		mu.Lock()
		if len(phases) == 0 || phases[len(phases)-1] != p.Phase {
			phases = append(phases, p.Phase)
		}
		mu.Unlock()
		time.Sleep(3 * time.Millisecond)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if overlaps.Load() > 0 {
		t.Errorf("%d of %d Progress calls overlapped another", overlaps.Load(), calls.Load())
	}
	if want := []string{"rewriting", "checkpointing the log", "done"}; !slices.Equal(phases, want) {
		t.Errorf("phases %q, want %q (a poll after the rewrite reported it again)", phases, want)
	}
}
