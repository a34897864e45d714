package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
)

// The snapshot cache answers a repeated Get without a query, and never with
// what another connection has changed since: each process opens the file
// with its own Saver, as the studio, a worker and weft serve do.
func TestSnapCacheSeesEveryCommit(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "snap.db")
	a, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	put := func(s *Saver, parent checkpoint.Ref, id string, v string) checkpoint.Ref {
		t.Helper()
		ref, err := s.Put(ctx, parent, checkpoint.Checkpoint{
			ID:              id,
			ChannelValues:   map[string][]byte{"x": []byte(v)},
			ChannelVersions: map[string]int64{"x": int64(len(id))},
		}, checkpoint.Metadata{Source: checkpoint.SourceLoop}, map[string]int64{"x": int64(len(id))})
		if err != nil {
			t.Fatal(err)
		}
		return ref
	}
	latest := checkpoint.Ref{ThreadID: "t"}
	get := func(ref checkpoint.Ref) *checkpoint.Tuple {
		t.Helper()
		tp, err := a.Get(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		return tp
	}

	first := put(a, latest, checkpoint.NewID(), `"one"`)
	if got := get(latest); got.Ref.CheckpointID != first.CheckpointID {
		t.Fatalf("latest %s, want %s", got.Ref.CheckpointID, first.CheckpointID)
	}
	a.snap.mu.Lock()
	kept := len(a.snap.entries)
	a.snap.mu.Unlock()
	if kept != 2 {
		t.Fatalf("the cache keeps %d entries after a Get of the latest, want 2 (latest and by id)", kept)
	}

	// What a caller does to a tuple stays with it.
	tp := get(latest)
	tp.Checkpoint.ChannelValues["x"][1] = 'X'
	tp.Checkpoint.ChannelVersions["x"] = 99
	if again := get(latest); string(again.Checkpoint.ChannelValues["x"]) != `"one"` || again.Checkpoint.ChannelVersions["x"] == 99 {
		t.Fatalf("a caller's change reached the cache: %+v", again.Checkpoint)
	}

	// Another process adds writes to the checkpoint, then a new head.
	if err := b.PutWrites(ctx, first, []checkpoint.Write{{Channel: "x", Value: []byte(`"w"`)}}, "task-1", "pull:n"); err != nil {
		t.Fatal(err)
	}
	if got := get(first); len(got.PendingWrites) != 1 {
		t.Fatalf("after another process's PutWrites: %d pending writes, want 1", len(got.PendingWrites))
	}
	second := put(b, first, checkpoint.NewID(), `"two"`)
	if got := get(latest); got.Ref.CheckpointID != second.CheckpointID {
		t.Fatalf("after another process's Put the latest is %s, want %s", got.Ref.CheckpointID, second.CheckpointID)
	}

	// This process's own write, then another's delete.
	third := put(a, second, checkpoint.NewID(), `"three"`)
	if got := get(latest); got.Ref.CheckpointID != third.CheckpointID {
		t.Fatalf("after its own Put the latest is %s, want %s", got.Ref.CheckpointID, third.CheckpointID)
	}
	if err := b.DeleteThread(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Get(ctx, latest); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("after another process deleted the thread: %v, want ErrNotFound", err)
	}
	if _, err := a.Get(ctx, third); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("a deleted checkpoint by id: %v, want ErrNotFound", err)
	}
}
