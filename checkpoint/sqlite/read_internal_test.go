package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
)

func TestSortWrites(t *testing.T) {
	w := func(task, ch string) checkpoint.PendingWrite {
		return checkpoint.PendingWrite{TaskID: task, Channel: ch}
	}
	ws := []checkpoint.PendingWrite{w("b", "b0"), w("a", "a1"), w("a", "err"), w("a", "a0")}
	idxs := []int{0, 1, -1, 0}
	sortWrites(ws, idxs)
	want := []checkpoint.PendingWrite{w("a", "err"), w("a", "a0"), w("a", "a1"), w("b", "b0")}
	if !reflect.DeepEqual(ws, want) || !reflect.DeepEqual(idxs, []int{-1, 0, 1, 0}) {
		t.Fatalf("sorted to %v %v", ws, idxs)
	}
}

func TestVersionRanges(t *testing.T) {
	// Versions as the engine makes them: a step count in the high bits and
	// random low bits. Gaps are counted in steps.
	v := func(step, low int64) int64 { return step<<32 | low }
	got := versionRanges([]int64{v(510, 5), v(1, 7), v(500, 9), v(520, 2), v(501, 3), v(503, 1), v(500, 9)})
	want := [][2]int64{{v(1, 7), v(1, 7)}, {v(500, 9), v(503, 1)}, {v(510, 5), v(510, 5)}, {v(520, 2), v(520, 2)}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("versionRanges = %v, want %v", got, want)
	}
}

// scanHeaders stops between batches once told to (ListHeaders tells it
// when a batch failed to decode), and otherwise steps every row.
func TestScanHeadersStops(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "scan.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 3*headerBatch + 10
	parent := checkpoint.Ref{ThreadID: "t"}
	for i := range n {
		cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: time.Now()}
		if parent, err = s.Put(t.Context(), parent, cp, checkpoint.Metadata{Source: checkpoint.SourceLoop, Step: i}, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		stop func() bool
		want int
	}{
		{"never", func() bool { return false }, n},
		{"after the first batch", func() bool { return true }, headerBatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := s.r.QueryContext(t.Context(), "SELECT checkpoint_id, parent_checkpoint_id, ts, metadata FROM checkpoints")
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			batches := make(chan *rawHeaders, n/headerBatch+1)
			got, err := scanHeaders(rows, true, batches, tc.stop)
			close(batches)
			sent := 0
			for b := range batches {
				sent += len(b.rows)
			}
			if err != nil || got != tc.want || sent != tc.want {
				t.Fatalf("scanHeaders stepped %d rows and sent %d (%v), want %d", got, sent, err, tc.want)
			}
		})
	}
}

// Every read connection in a transaction that needs a statement not yet
// prepared: preparing it on the pool would wait for a free connection,
// which none of them gives back. Each transaction must get its statement.
func TestStmtWhileEveryReaderHoldsATransaction(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "stmt.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const readers = 4 // Open's default pool
	var inTx sync.WaitGroup
	inTx.Add(readers)
	done := make(chan error, readers)
	for i := range readers {
		go func() {
			done <- s.read(context.Background(), func(ctx context.Context, tx *sql.Tx) error {
				inTx.Done()
				inTx.Wait() // every connection is in a transaction now
				st, err := s.stmt(ctx, tx, fmt.Sprintf("SELECT %d + count(*) FROM checkpoints", i))
				if err != nil {
					return err
				}
				var n int
				return st.QueryRowContext(ctx).Scan(&n)
			})
		}()
	}
	for range readers {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(20 * time.Second): // a hang, not a slow machine
			t.Fatal("the transactions still wait for their statements after 20 s")
		}
	}
}
