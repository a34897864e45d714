package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/sqlite"
)

// TestDeleteRunScale times DeleteRun of a 500-step run at the end of a
// 5,000-checkpoint thread whose checkpoints carry 10 channels each.
func TestDeleteRunScale(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 5,500-checkpoint thread")
	}
	ctx := context.Background()
	s, err := sqlite.Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	parent := checkpoint.Ref{ThreadID: "big"}
	ops := []checkpoint.Op{}
	id := ""
	for i := range 5500 {
		run := "old"
		if i >= 5000 {
			run = "new"
		}
		cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewIDAfter(id, time.Now()), TS: time.Now(), ChannelValues: map[string][]byte{}, ChannelVersions: map[string]int64{}}
		nv := map[string]int64{}
		for c := range 10 {
			ch := fmt.Sprint("c", c)
			v := int64(1) << 32
			if c == 0 || i == 0 {
				v = int64(i+1) << 32
				nv[ch] = v
				cp.ChannelValues[ch] = []byte(fmt.Sprint(i))
			}
			cp.ChannelVersions[ch] = v
		}
		if c0 := cp.ChannelVersions["c0"]; c0 != int64(i+1)<<32 {
			t.Fatal("bad version")
		}
		ops = append(ops, checkpoint.Op{Ref: parent, Checkpoint: &cp, Metadata: checkpoint.Metadata{Source: checkpoint.SourceLoop, Step: i, RunID: run}, NewVersions: nv})
		parent = checkpoint.Ref{ThreadID: "big", CheckpointID: cp.ID}
		id = cp.ID
		if len(ops) == 500 {
			if err := s.WriteBatch(ctx, ops); err != nil {
				t.Fatal(err)
			}
			ops = ops[:0]
		}
	}
	start := time.Now()
	res, err := s.DeleteRun(ctx, "big", "new")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("DeleteRun of 500 of 5,500 checkpoints: %v, %+v", time.Since(start), res)
	if res.Checkpoints != 500 || res.Values != 500 {
		t.Errorf("DeleteRun = %+v, want 500 checkpoints and their 500 values of c0", res)
	}
}
