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
