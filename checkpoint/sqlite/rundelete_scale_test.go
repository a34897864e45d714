package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/weftstudio/weft/checkpoint/checkpointtest"
	"github.com/weftstudio/weft/checkpoint/sqlite"
)

// TestDeleteRunScale times DeleteRun of a 500-step run at the end of a
// 5,000-checkpoint thread whose checkpoints carry 10 channels each.
func TestDeleteRunScale(t *testing.T) {
	s, err := sqlite.Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkpointtest.DeleteRunAtScale(t, s)
}
