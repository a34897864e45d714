package sqlite_test

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/sqlite"
)

// List reads pages ahead on a goroutine of its own. A caller that stops
// early leaves nothing running, and the store closes cleanly.
func TestListStoppedEarlyLeavesNoReader(t *testing.T) {
	path := filledFile(t, 700) // three pages
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	for range 20 {
		n := 0
		for _, err := range s.List(t.Context(), checkpoint.ListOptions{ThreadID: "t"}) {
			if err != nil {
				t.Fatal(err)
			}
			if n++; n == 300 { // into the second page, with the third being read
				break
			}
		}
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if after := runtime.NumGoroutine(); after > before {
		t.Errorf("%d goroutines before listing, %d after", before, after)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// A damaged row on a later page ends the listing with an error naming the
// checkpoint, after the earlier pages were yielded whole.
func TestListReportsDamageOnALaterPage(t *testing.T) {
	path := filledFile(t, 700)
	db := rawDB(t, path)
	var id string
	if err := db.QueryRow(`SELECT checkpoint_id FROM checkpoints ORDER BY checkpoint_id LIMIT 1`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE checkpoints SET checkpoint = '{"v":4,"channel_versions":[' WHERE checkpoint_id = ?`, id); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := 0
	var listErr error
	for tp, err := range s.List(t.Context(), checkpoint.ListOptions{ThreadID: "t"}) {
		if err != nil {
			listErr = err
			break
		}
		if tp.Ref.CheckpointID == id {
			t.Fatalf("the damaged checkpoint %s was yielded", id)
		}
		n++
	}
	if listErr == nil || !strings.Contains(listErr.Error(), id) {
		t.Fatalf("after %d checkpoints: err = %v, want one naming %s", n, listErr, id)
	}
	if n < 512 { // the damaged one is the oldest: on the third page
		t.Errorf("only %d checkpoints yielded before the error", n)
	}
}

// ListHeaders gathers a long listing in chunks of 4,096: across their
// seams every header is there once, newest first, with its parent, and a
// limit or a Before cuts where it says.
func TestListHeadersAcrossChunks(t *testing.T) {
	const n = 9000 // three chunks
	s, err := sqlite.Open(filledFile(t, n), sqlite.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tc := range []struct {
		name string
		opts checkpoint.ListOptions
		want int
	}{
		{"all", checkpoint.ListOptions{ThreadID: "t"}, n},
		{"limit under a chunk", checkpoint.ListOptions{ThreadID: "t", Limit: 100}, 100},
		{"limit over a chunk", checkpoint.ListOptions{ThreadID: "t", Limit: 5000}, 5000},
	} {
		hs, err := s.ListHeaders(t.Context(), tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(hs) != tc.want {
			t.Fatalf("%s: %d headers, want %d", tc.name, len(hs), tc.want)
		}
		for i := 1; i < len(hs); i++ {
			if hs[i].Ref.CheckpointID >= hs[i-1].Ref.CheckpointID {
				t.Fatalf("%s: header %d (%s) not older than %d (%s)", tc.name, i, hs[i].Ref.CheckpointID, i-1, hs[i-1].Ref.CheckpointID)
			}
			if hs[i-1].Parent == nil || hs[i-1].Parent.CheckpointID != hs[i].Ref.CheckpointID {
				t.Fatalf("%s: header %d's parent is not header %d", tc.name, i-1, i)
			}
		}
	}
	all, _ := s.ListHeaders(t.Context(), checkpoint.ListOptions{ThreadID: "t"})
	rest, err := s.ListHeaders(t.Context(), checkpoint.ListOptions{ThreadID: "t", Before: all[4095].Ref.CheckpointID})
	if err != nil || len(rest) != n-4096 || rest[0].Ref != all[4096].Ref {
		t.Fatalf("Before the 4,096th: %d headers, err %v", len(rest), err)
	}
}

// Get reads a checkpoint in one statement that picks the channel versions
// out of the stored header: a damaged header is still an error naming the
// checkpoint, whether it is asked for by id or as the latest, and the
// checkpoints around it still read whole.
func TestGetReportsDamagedHeader(t *testing.T) {
	for _, damage := range []string{`{"v":4,"channel_versions":[`, `{"v":4,"channel_versions":[1,2]}`, `not json`} {
		t.Run(damage, func(t *testing.T) {
			path := filledFile(t, 5)
			db := rawDB(t, path)
			var latest, older string
			if err := db.QueryRow(`SELECT max(checkpoint_id), min(checkpoint_id) FROM checkpoints`).Scan(&latest, &older); err != nil {
				t.Fatal(err)
			}
			db.Close()
			s := openDamaged(t, path, "checkpoint", damage, latest)
			for _, ref := range []checkpoint.Ref{{ThreadID: "t"}, {ThreadID: "t", CheckpointID: latest}} {
				if tp, err := s.Get(t.Context(), ref); err == nil || !strings.Contains(err.Error(), latest) {
					t.Errorf("Get(%+v) = %v, %v; want an error naming %s", ref, tp, err, latest)
				}
			}
			tp, err := s.Get(t.Context(), checkpoint.Ref{ThreadID: "t", CheckpointID: older})
			if err != nil || len(tp.Checkpoint.ChannelValues) == 0 {
				t.Fatalf("Get of the undamaged %s = %+v, %v", older, tp, err)
			}
		})
	}
}

// ListHeaders reports a row whose metadata cannot be decoded with an error
// naming its checkpoint, whether the row comes first or in a later batch,
// and returns no partial listing.
func TestListHeadersReportsDamage(t *testing.T) {
	for _, which := range []string{"max", "min"} { // newest: first batch; oldest: last
		t.Run(which, func(t *testing.T) {
			path := filledFile(t, 2000)
			db := rawDB(t, path)
			var id string
			if err := db.QueryRow(`SELECT ` + which + `(checkpoint_id) FROM checkpoints`).Scan(&id); err != nil {
				t.Fatal(err)
			}
			db.Close()
			s := openDamaged(t, path, "metadata", `{"step":`, id)
			hs, err := s.ListHeaders(t.Context(), checkpoint.ListOptions{ThreadID: "t"})
			if err == nil || !strings.Contains(err.Error(), id) || hs != nil {
				t.Fatalf("ListHeaders = %d headers, %v; want an error naming %s and no headers", len(hs), err, id)
			}
		})
	}
}

// openDamaged sets column of checkpoint id in the store at path to value,
// bypassing the store, and opens the store read-only.
func openDamaged(t *testing.T, path, column, value, id string) *sqlite.Saver {
	t.Helper()
	db := rawDB(t, path)
	if _, err := db.Exec(`UPDATE checkpoints SET `+column+` = ? WHERE checkpoint_id = ?`, value, id); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err := sqlite.Open(path, sqlite.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
