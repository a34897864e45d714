package checkpointtest

import (
	"context"
	"errors"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
)

// ErrCutShort is what StepCutShort answers for a loop checkpoint it
// refuses.
var ErrCutShort = errors.New("checkpointtest: the process was killed before the step's checkpoint")

// StepCutShort is a memory saver that, while Cut is set, refuses every loop
// checkpoint with ErrCutShort: a run then stops as a process killed
// mid-step leaves its thread, the finished tasks' writes stored and the
// step's checkpoint not. Input, update and fork checkpoints are stored as
// usual, and every other capability is the memory saver's. Saver must be
// set (memory.New()); the zero Cut stores everything.
type StepCutShort struct {
	*memory.Saver
	Cut bool
}

// Put stores the checkpoint, unless Cut is set and it is a loop checkpoint.
func (s *StepCutShort) Put(ctx context.Context, parent checkpoint.Ref, cp checkpoint.Checkpoint, md checkpoint.Metadata, nv map[string]int64) (checkpoint.Ref, error) {
	if s.Cut && md.Source == checkpoint.SourceLoop {
		return checkpoint.Ref{}, ErrCutShort
	}
	return s.Saver.Put(ctx, parent, cp, md, nv)
}

// PutOwned is Put for the lease holder, refused alike.
func (s *StepCutShort) PutOwned(ctx context.Context, parent checkpoint.Ref, cp checkpoint.Checkpoint, md checkpoint.Metadata, nv map[string]int64) (checkpoint.Ref, error) {
	return s.Put(ctx, parent, cp, md, nv)
}
