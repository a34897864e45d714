package record

import (
	"bytes"
	"fmt"

	"github.com/weftstudio/weft/checkpoint"
)

// KeyedWrite is a stored pending write with its key (task id and index) and
// its plain value, as a saver reads it back for DeleteRun.
type KeyedWrite struct {
	Idx int
	checkpoint.PendingWrite
}

// ResetWrites compares the writes a checkpoint holds with the ones it held
// when a run started (want) and returns what DeleteRun changes: the stored
// writes to delete (not in want) and the special writes of want to store
// again (the run replaced them). A write matches when its task id,
// channel, value and task path are equal; each wanted write matches once.
// An ordinary wanted write the store lacks is not put back (its index is
// unknown, and no run removes one).
func ResetWrites(stored []KeyedWrite, want []checkpoint.PendingWrite) (drop, add []KeyedWrite) {
	used := make([]bool, len(want))
	for _, w := range stored {
		found := false
		for i, x := range want {
			if !used[i] && sameWrite(w.PendingWrite, x) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			drop = append(drop, w)
		}
	}
	for i, x := range want {
		if used[i] {
			continue
		}
		if idx, ok := checkpoint.SpecialIndex[x.Channel]; ok {
			add = append(add, KeyedWrite{idx, x})
		}
	}
	return drop, add
}

func sameWrite(a, b checkpoint.PendingWrite) bool {
	return a.TaskID == b.TaskID && a.Channel == b.Channel && a.TaskPath == b.TaskPath &&
		(a.Value == nil) == (b.Value == nil) && bytes.Equal(a.Value, b.Value)
}

// CheckRunDelete checks DeleteRun's arguments (see checkpoint.RunDeleter).
func CheckRunDelete(threadID, runID string, starts []checkpoint.RunStart) error {
	switch {
	case threadID == "":
		return fmt.Errorf("delete run %q: %w", runID, checkpoint.ErrNoThread)
	case runID == "":
		return fmt.Errorf("delete run of thread %q: the run id is empty (it would select every checkpoint written outside a run)", threadID)
	}
	for i, st := range starts {
		switch {
		case st.Ref.ThreadID != threadID:
			return fmt.Errorf("delete run %q of thread %q: start %d names thread %q", runID, threadID, i, st.Ref.ThreadID)
		case st.Ref.CheckpointID == "":
			return fmt.Errorf("delete run %q of thread %q: start %d (ns %q): %w", runID, threadID, i, st.Ref.NS, checkpoint.ErrNoCheckpoint)
		}
	}
	return nil
}

// RunContinued is the refusal of DeleteRun when checkpoint id (of run
// other, in ns) descends from the run's checkpoint parent.
func RunContinued(threadID, runID, ns, id, other, parent string) error {
	by := "no run"
	if other != "" {
		by = "run " + other
	}
	return fmt.Errorf("delete run %q of thread %q: checkpoint %s (ns %q, written by %s) descends from the run's checkpoint %s: %w; nothing was deleted",
		runID, threadID, id, ns, by, parent, checkpoint.ErrRunContinued)
}
