package checkpointtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
)

// DeleteRunAtScale builds a thread of 5,500 checkpoints with 10 channels
// each, the last 500 of run "new", deletes that run and logs how long it
// took: a saver that does per value what it could do per thread shows here
// (a first SQLite version took 11.7 s). It checks that the run's 500
// checkpoints and their 500 values of c0 are what went. s must be a
// checkpoint.RunDeleter; a checkpoint.BatchWriter writes the thread in
// batches.
func DeleteRunAtScale(t *testing.T, s checkpoint.Saver) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a 5,500-checkpoint thread")
	}
	rd, ok := s.(checkpoint.RunDeleter)
	if !ok {
		t.Fatalf("%T is not a checkpoint.RunDeleter", s)
	}
	ctx := context.Background()
	bw, batched := s.(checkpoint.BatchWriter)
	parent := checkpoint.Ref{ThreadID: "big"}
	var ops []checkpoint.Op
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
		md := checkpoint.Metadata{Source: checkpoint.SourceLoop, Step: i, RunID: run}
		if batched {
			ops = append(ops, checkpoint.Op{Ref: parent, Checkpoint: &cp, Metadata: md, NewVersions: nv})
			if len(ops) == 500 {
				if err := bw.WriteBatch(ctx, ops); err != nil {
					t.Fatal(err)
				}
				ops = ops[:0]
			}
			parent = checkpoint.Ref{ThreadID: "big", CheckpointID: cp.ID}
		} else {
			ref, err := s.Put(ctx, parent, cp, md, nv)
			if err != nil {
				t.Fatal(err)
			}
			parent = ref
		}
		id = cp.ID
	}
	start := time.Now()
	res, err := rd.DeleteRun(ctx, "big", "new")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("DeleteRun of 500 of 5,500 checkpoints: %v, %+v", time.Since(start), res)
	if res.Checkpoints != 500 || res.Values != 500 {
		t.Errorf("DeleteRun = %+v, want 500 checkpoints and their 500 values of c0", res)
	}
}
