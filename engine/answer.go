package engine

// This file stores and consumes answers to interrupts: SubmitAnswer, the
// resume map a run hands its tasks, and the marker that an answer was used.

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/weftstudio/weft/checkpoint"
)

// SubmitAnswer stores cmd (answers to pending interrupts, and optionally an
// update and goto) on the thread's latest checkpoint without running
// anything: the next Invoke(nil, WithThread(…)) on that thread — in this
// process or in a worker process sharing the store — resumes with it. It is
// how a reviewer answers in the studio while workers do the running. It
// checks the answers against the pending interrupts like Invoke does.
func (gr *Graph) SubmitAnswer(ctx context.Context, cmd Command, opts ...RunOption) (checkpoint.Ref, error) {
	if gr.view != nil {
		return checkpoint.Ref{}, gr.viewErr()
	}
	cfg := newWriteConfig(opts)
	if gr.saver == nil {
		return checkpoint.Ref{}, errors.New("SubmitAnswer needs a graph compiled with engine.WithSaver")
	}
	rt, err := gr.newRuntime(ctx, cfg, nil)
	if err != nil {
		return checkpoint.Ref{}, err
	}
	tp, err := gr.saver.Get(ctx, checkpoint.Ref{ThreadID: cfg.thread, NS: cfg.ns})
	if err != nil {
		return checkpoint.Ref{}, fmt.Errorf("thread %q: %w", cfg.thread, err)
	}
	if err := rt.load(tp); err != nil {
		return checkpoint.Ref{}, err
	}
	if len(rt.pendingInterruptIDs()) == 0 && (cmd.Resume != nil || cmd.ResumeByID != nil) {
		return checkpoint.Ref{}, fmt.Errorf("thread %q has no pending interrupt to answer", cfg.thread)
	}
	_, ws, err := rt.commandWrites(cmd)
	if err != nil {
		return checkpoint.Ref{}, err
	}
	if err := gr.saver.PutWrites(ctx, tp.Ref, ws, checkpoint.NullTaskID, ""); err != nil {
		return checkpoint.Ref{}, fmt.Errorf("thread %q: saving the answer: %w", cfg.thread, err)
	}
	return tp.Ref, nil
}

// resumeMap is how answers by interrupt id are stored as a NULL-task write.
type resumeMap map[string]any

// answerUsed replaces a stored answer once a run has given it to the tasks
// it was for, so a later run does not hand it out again.
type answerUsed struct{}

func init() {
	RegisterType[resumeMap]("resume_map")
	RegisterType[answerUsed]("answer_used")
}

// markAnswerUsed records that the stored answer was consumed by a step that
// then stopped at an interrupt again (the interrupted tasks keep their
// answers in their own writes).
func (rt *runtime) markAnswerUsed() error {
	if rt.saver == nil || (!rt.armed || rt.hasNull) {
		return nil
	}
	b, err := encodeDynamic(answerUsed{})
	if err != nil {
		return err
	}
	return rt.saver.PutWrites(rt.ctx, rt.cpRef, []checkpoint.Write{{Channel: checkpoint.Resume, Value: b}}, checkpoint.NullTaskID, "")
}

func (rt *runtime) pendingInterruptIDs() []string {
	var ids []string
	for _, pw := range rt.pending {
		if pw.Channel != checkpoint.Interrupt {
			continue
		}
		ints, err := decodeInterrupts(pw.Value)
		if err != nil {
			continue
		}
		for _, it := range ints {
			if !slices.Contains(ids, it.ID) {
				ids = append(ids, it.ID)
			}
		}
	}
	return ids
}

func (rt *runtime) takeNullResume() (any, bool) {
	if p := rt.cfg.parentRT; p != nil {
		return p.takeNullResume()
	}
	return rt.answers.takeNull()
}
