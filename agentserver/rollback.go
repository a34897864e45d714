package agentserver

import (
	"context"
	"errors"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
)

// runStarts records, before a run, what rolling it back puts back: the
// checkpoint it starts from (the thread's head, or the one the request
// named) and the newest checkpoint of each subgraph its tasks had begun,
// each with the pending writes it holds now. The run's tasks add their
// writes to those checkpoints, which are not the run's; a rollback that
// left them would make a later resume take those tasks as done. A thread
// with no checkpoint yet has nothing to put back.
func (h *Handler) runStarts(ctx context.Context, p *prepared) ([]checkpoint.RunStart, error) {
	tp, err := h.saver.Get(ctx, checkpoint.Ref{ThreadID: p.thread, CheckpointID: p.from})
	if errors.Is(err, checkpoint.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	starts := []checkpoint.RunStart{{Ref: tp.Ref, Writes: tp.PendingWrites}}
	opts := []engine.RunOption{engine.WithThread(p.thread), engine.WithSubgraphs()}
	if p.from != "" {
		opts = append(opts, engine.WithCheckpoint(p.from))
	}
	snap, err := p.g.GetState(ctx, opts...)
	if err != nil {
		return nil, err
	}
	var walk func(s *engine.Snapshot) error
	walk = func(s *engine.Snapshot) error {
		for _, t := range s.Tasks {
			if t.State == nil {
				continue
			}
			sub, err := h.saver.Get(ctx, t.State.Ref)
			switch {
			case errors.Is(err, checkpoint.ErrNotFound):
				continue
			case err != nil:
				return err
			}
			starts = append(starts, checkpoint.RunStart{Ref: sub.Ref, Writes: sub.PendingWrites})
			if err := walk(t.State); err != nil {
				return err
			}
		}
		return nil
	}
	return starts, walk(snap)
}

// rollback deletes a stopped run that was asked to roll back, with the
// checkpoints it wrote and the writes it added to its starts, then ends
// its record and forgets it: the run is gone from the thread's runs, as
// on LangGraph's server, and the thread is as it was before the run (idle,
// or interrupted when an interrupt waited there). It holds the thread's
// claim until then, so no other run starts on a half-rolled-back thread.
// When the store refuses (another run continued from the run's
// checkpoints) or fails, the run's stream gets an error event saying so,
// nothing is deleted, and rollback returns false: the run ends as a
// cancelled one.
func (h *Handler) rollback(ctx context.Context, p *prepared) bool {
	rr := p.rec
	fail := func(err error) bool {
		rr.log("error", map[string]any{"error": "RollbackError", "message": "the run was stopped but not rolled back: " + err.Error()})
		return false
	}
	if rr.startsErr != nil {
		return fail(rr.startsErr)
	}
	if _, err := h.saver.(checkpoint.RunDeleter).DeleteRun(ctx, p.thread, rr.id, rr.starts...); err != nil {
		return fail(err)
	}
	if p.stateless && !p.keepThread {
		_ = h.saver.DeleteThread(ctx, p.thread) // on_completion "delete", the default
	}
	h.touch(p.thread)
	rr.mu.Lock()
	rr.status, rr.updated = "interrupted", h.now().UTC()
	rr.mu.Unlock()
	h.mu.Lock()
	delete(h.runs, rr.id)
	h.mu.Unlock()
	p.claim.Release()
	close(rr.done)
	return true
}
