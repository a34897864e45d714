package postgres_test

import (
	"testing"

	"github.com/weftstudio/weft/checkpoint/checkpointtest"
)

// TestDeleteRunScale times DeleteRun of a 500-step run at the end of a
// 5,000-checkpoint thread whose checkpoints carry 10 channels each.
func TestDeleteRunScale(t *testing.T) {
	s, _ := openFresh(t)
	checkpointtest.DeleteRunAtScale(t, s)
}
