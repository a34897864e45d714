package memory

import (
	"context"
	"fmt"
	"slices"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/internal/record"
)

var _ checkpoint.RunDeleter = (*Saver)(nil)

// DeleteRun deletes the checkpoints of run runID in threadID, with their
// writes and the values only they used, and sets the writes of starts back
// to what they were (checkpoint.RunDeleter). It checks everything before
// changing anything, under the store's lock, so it deletes all of it or
// nothing.
func (s *Saver) DeleteRun(ctx context.Context, threadID, runID string, starts ...checkpoint.RunStart) (checkpoint.RunDeleted, error) {
	var res checkpoint.RunDeleted
	if err := s.check(ctx); err != nil {
		return res, err
	}
	if err := record.CheckRunDelete(threadID, runID, starts); err != nil {
		return res, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.threads[threadID]
	type nsID struct{ ns, id string }
	victims := map[nsID]bool{}
	if t != nil {
		for ns, sp := range t.all() {
			for _, rec := range sp.cps {
				if rec.md.RunID == runID {
					victims[nsID{ns, rec.id}] = true
				}
			}
		}
		for ns, sp := range t.all() {
			for _, rec := range sp.cps {
				if victims[nsID{ns, rec.id}] {
					continue
				}
				if rec.parentID != "" && victims[nsID{ns, rec.parentID}] {
					return res, record.RunContinued(threadID, runID, ns, rec.id, rec.md.RunID, rec.parentID)
				}
				for pns, pid := range rec.md.Parents {
					if victims[nsID{pns, pid}] {
						return res, record.RunContinued(threadID, runID, ns, rec.id, rec.md.RunID, pid)
					}
				}
			}
		}
	}
	// The starts' new writes, worked out before anything changes.
	type reset struct {
		rec    *stored
		writes []storedWrite
	}
	var resets []reset
	for _, st := range starts {
		if victims[nsID{st.Ref.NS, st.Ref.CheckpointID}] {
			continue
		}
		var rec *stored
		if t != nil {
			if sp := t.get(st.Ref.NS); sp != nil {
				rec = sp.get(st.Ref.CheckpointID)
			}
		}
		if rec == nil {
			return res, fmt.Errorf("delete run %q of thread %q: start checkpoint %s (ns %q): %w", runID, threadID, st.Ref.CheckpointID, st.Ref.NS, checkpoint.ErrNotFound)
		}
		have := make([]record.KeyedWrite, len(rec.writes))
		for i, w := range rec.writes {
			val, err := s.open(w.value)
			if err != nil {
				return res, fmt.Errorf("delete run %q of thread %q: write %d of task %q to checkpoint %s: %w", runID, threadID, w.idx, w.taskID, rec.id, err)
			}
			have[i] = record.KeyedWrite{Idx: w.idx, PendingWrite: checkpoint.PendingWrite{TaskID: w.taskID, Channel: w.channel, Value: val, TaskPath: w.taskPath}}
		}
		drop, add := record.ResetWrites(have, st.Writes)
		gone := map[[2]any]bool{}
		for _, w := range drop {
			gone[[2]any{w.TaskID, w.Idx}] = true
		}
		ws := make([]storedWrite, 0, len(rec.writes)+len(add))
		for _, w := range rec.writes {
			if !gone[[2]any{w.taskID, w.idx}] {
				ws = append(ws, w)
			}
		}
		for _, w := range add {
			ws = append(ws, storedWrite{w.TaskID, w.Idx, w.Channel, s.seal(w.Value), w.TaskPath})
		}
		res.Writes += len(drop)
		res.Restored += len(add)
		resets = append(resets, reset{rec, ws})
	}
	for _, r := range resets {
		r.rec.writes = r.writes
	}
	if len(victims) == 0 {
		return res, nil
	}
	for ns, sp := range t.all() {
		var freed map[blobKey]bool // versions the deleted checkpoints used
		kept := sp.cps[:0:0]
		for _, rec := range sp.cps {
			if !victims[nsID{ns, rec.id}] {
				kept = append(kept, rec)
				continue
			}
			cp, err := s.names.decodeHeader(rec.hdr, rec.id, rec.ts)
			if err != nil {
				// A header of this process's own that does not decode:
				// the checkpoint still goes, its values stay.
				res.Checkpoints++
				continue
			}
			if freed == nil {
				freed = map[blobKey]bool{}
			}
			for ch, v := range cp.ChannelVersions {
				freed[blobKey{ch, v}] = true
			}
			res.Checkpoints++
			res.Writes += len(rec.writes)
		}
		if len(kept) == len(sp.cps) {
			continue
		}
		sp.cps = kept // a new array: the old one may be shared by a reader's copy
		for _, rec := range kept {
			if cp, err := s.names.decodeHeader(rec.hdr, rec.id, rec.ts); err == nil {
				for ch, v := range cp.ChannelVersions {
					delete(freed, blobKey{ch, v})
				}
			}
		}
		for k := range freed {
			c := sp.blobs[k.channel]
			if c == nil {
				continue
			}
			i, ok := slices.BinarySearchFunc(c.vs, k.version, cmpVersion)
			if !ok {
				continue
			}
			// A new array: the old one may be shared with a copied thread.
			vs := slices.Delete(slices.Clone(c.vs), i, i+1)
			res.Values++
			if len(vs) == 0 {
				delete(sp.blobs, k.channel)
			} else {
				sp.blobs[k.channel] = &chanValues{vs}
			}
		}
		sp.hasLastMD = false
		if len(sp.cps) == 0 && len(sp.orphans) == 0 && len(sp.blobs) == 0 {
			t.remove(ns)
		}
	}
	if t.empty() {
		delete(s.threads, threadID)
	}
	return res, nil
}

// seal returns the stored form of a write's value.
func (s *Saver) seal(v []byte) []byte {
	if s.cipher == nil {
		return record.CloneBytes(v)
	}
	return s.cipher.Seal(record.CloneBytes(v))
}
