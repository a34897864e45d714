package memory

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/internal/record"
	"github.com/weftstudio/weft/checkpoint/internal/report"
)

var (
	_ checkpoint.StorageReporter = (*Saver)(nil)
	_ checkpoint.PolicyPruner    = (*Saver)(nil)
	_ checkpoint.ThreadSearcher  = (*Saver)(nil)
)

// headerBytes is what a checkpoint's own record holds, as
// checkpoint.ByteCounts.Headers counts it: ids, the encoded header and the
// metadata as JSON (as a SQLite store would hold it).
func headerBytes(rec *stored) int64 {
	n := len(rec.id) + len(rec.parentID) + len(rec.hdr) + len(record.TSLayout)
	if md, err := record.EncodeMetadata(&rec.md); err == nil {
		n += len(md)
	}
	return int64(n)
}

// thread gathers a thread's sizes for a report; nil when it has no
// checkpoint. The caller holds s.mu.
func (s *Saver) reportThread(tid string, t *thread, top int) (*report.Thread, error) {
	rt := &report.Thread{ID: tid, Values: map[report.NSStep]report.Sizes{}, Writes: map[report.NSID]report.Sizes{}}
	channels := map[string]*checkpoint.ChannelBytes{}
	ch := func(name string) *checkpoint.ChannelBytes {
		c := channels[name]
		if c == nil {
			c = &checkpoint.ChannelBytes{Channel: name}
			channels[name] = c
		}
		return c
	}
	for ns, sp := range t.all() {
		for _, rec := range sp.cps {
			cp, err := s.names.decodeHeader(rec.hdr, rec.id, rec.ts)
			if err != nil {
				return nil, fmt.Errorf("thread %q checkpoint %q: %w", tid, rec.id, err)
			}
			var own int64
			for _, v := range cp.ChannelVersions {
				own = max(own, checkpoint.VersionStep(v))
			}
			rt.Checkpoints = append(rt.Checkpoints, report.Checkpoint{NS: ns, ID: rec.id, Step: rec.md.Step, TS: rec.ts, Header: headerBytes(rec), Own: own})
			var w report.Sizes
			for _, wr := range rec.writes {
				w.Add(1, int64(len(wr.value)))
				c := ch(wr.channel)
				c.Writes++
				c.WriteBytes += int64(len(wr.value))
			}
			if w.N > 0 {
				rt.Writes[report.NSID{NS: ns, ID: rec.id}] = w
			}
		}
		for name, c := range sp.blobs {
			for _, e := range c.vs {
				k := report.NSStep{NS: ns, Step: checkpoint.VersionStep(e.version)}
				sz := rt.Values[k]
				sz.Add(1, int64(len(e.value)))
				rt.Values[k] = sz
				cb := ch(name)
				cb.Values++
				cb.ValueBytes += int64(len(e.value))
				if e.value != nil {
					rt.Largest = append(rt.Largest, checkpoint.ValueSize{ThreadID: tid, NS: ns, Channel: name, Version: e.version, Bytes: int64(len(e.value))})
				}
			}
		}
	}
	if len(rt.Checkpoints) == 0 {
		return nil, nil
	}
	for _, c := range channels {
		rt.Channels = append(rt.Channels, *c)
	}
	rt.Largest = report.TopValues(rt.Largest, top)
	return rt, nil
}

// StorageSummary describes the whole store (checkpoint.StorageReporter):
// sizes are those of the values and records held (encrypted sizes when
// encryption is on). It walks every record under the read lock, reading
// lengths, not values. FileBytes and FreeBytes are 0.
func (s *Saver) StorageSummary(ctx context.Context, opts checkpoint.StorageOptions) (*checkpoint.StorageSummary, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	opts = opts.WithDefaults()
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := &checkpoint.StorageSummary{Engine: "memory"}
	var threads []checkpoint.ThreadBytes
	var lives []report.Lifetime
	var largest []checkpoint.ValueSize
	channels := map[string]*checkpoint.ChannelBytes{}
	for tid, t := range s.threads {
		rt, err := s.reportThread(tid, t, 1)
		if err != nil {
			return nil, fmt.Errorf("storage summary: %w", err)
		}
		if rt == nil {
			continue
		}
		ts := rt.Build(checkpoint.StorageOptions{Top: 1, Points: 1, Checkpoints: 1})
		out.Threads++
		out.Checkpoints += ts.Checkpoints
		out.Values += ts.Values
		out.Writes += ts.Writes
		out.Bytes = out.Bytes.Add(ts.Bytes)
		threads = append(threads, checkpoint.ThreadBytes{ThreadID: tid, Checkpoints: ts.Checkpoints, Bytes: ts.Bytes})
		life := report.Lifetime{Checkpoints: ts.Checkpoints, Bytes: ts.Bytes}
		for i, c := range rt.Checkpoints {
			if i == 0 || c.TS.Before(life.First) {
				life.First = c.TS
			}
			if c.TS.After(life.Last) {
				life.Last = c.TS
			}
		}
		lives = append(lives, life)
		largest = append(largest, ts.LargestValues...)
		if opts.Deep {
			for _, c := range ts.Channels {
				sum := channels[c.Channel]
				if sum == nil {
					sum = &checkpoint.ChannelBytes{Channel: c.Channel}
					channels[c.Channel] = sum
				}
				sum.Values += c.Values
				sum.ValueBytes += c.ValueBytes
				sum.Writes += c.Writes
				sum.WriteBytes += c.WriteBytes
			}
		}
	}
	out.LargestThreads = report.TopThreads(threads, opts.Top)
	out.LargestValues = report.TopValues(largest, opts.Top)
	out.Growth = report.Spread(lives, opts.Points)
	if opts.Deep {
		for _, c := range channels {
			out.Channels = append(out.Channels, *c)
		}
		out.Channels = report.SortChannels(out.Channels)
	}
	return out, nil
}

// ThreadStorage describes one thread (checkpoint.StorageReporter).
func (s *Saver) ThreadStorage(ctx context.Context, threadID string, opts checkpoint.StorageOptions) (*checkpoint.ThreadStorage, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	if threadID == "" {
		return nil, fmt.Errorf("thread storage: %w", checkpoint.ErrNoThread)
	}
	opts = opts.WithDefaults()
	s.mu.RLock()
	defer s.mu.RUnlock()
	var rt *report.Thread
	if t := s.threads[threadID]; t != nil {
		var err error
		if rt, err = s.reportThread(threadID, t, opts.Top); err != nil {
			return nil, fmt.Errorf("storage of thread %q: %w", threadID, err)
		}
	}
	if rt == nil {
		return nil, fmt.Errorf("storage of thread %q: the thread has no checkpoint: %w", threadID, checkpoint.ErrNotFound)
	}
	return rt.Build(opts), nil
}

// PruneBy deletes what p selects (checkpoint.PolicyPruner), one thread at
// a time under the write lock.
func (s *Saver) PruneBy(ctx context.Context, p checkpoint.PrunePolicy) (checkpoint.PruneResult, error) {
	threads, err := report.PruneThreads(ctx, p, "", s.check, func(context.Context) ([]string, error) {
		s.mu.RLock()
		defer s.mu.RUnlock()
		return slices.Sorted(maps.Keys(s.threads)), nil
	})
	if err != nil {
		return checkpoint.PruneResult{}, err
	}
	return report.PruneEach(ctx, p, threads, "", func(tid string) (checkpoint.PruneResult, error) {
		return s.pruneThreadBy(tid, p.KeepLatest, p.OlderThan)
	})
}

func (s *Saver) pruneThreadBy(tid string, keep int, cutoff time.Time) (checkpoint.PruneResult, error) {
	var res checkpoint.PruneResult
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.threads[tid]
	if t == nil {
		return res, nil
	}
	for ns, sp := range t.all() {
		kept := make([]*stored, 0, len(sp.cps))
		for i, rec := range sp.cps {
			if i >= len(sp.cps)-keep || (!cutoff.IsZero() && !rec.ts.Before(cutoff)) {
				kept = append(kept, rec)
				continue
			}
			res.Checkpoints++
			res.Bytes.Headers += headerBytes(rec)
			for _, w := range rec.writes {
				res.Writes++
				res.Bytes.Writes += int64(len(w.value))
			}
		}
		if len(kept) == len(sp.cps) {
			continue
		}
		nv, vb := sp.blobs.count()
		sp.cps = kept
		// pruneSpace keeping everything that is left sweeps the values
		// nothing refers to and the orphan writes.
		for _, ws := range sp.orphans {
			for _, w := range ws {
				res.Writes++
				res.Bytes.Writes += int64(len(w.value))
			}
		}
		if err := pruneSpace(sp, &s.names, len(kept)); err != nil {
			return res, fmt.Errorf("ns %q: %w", ns, err)
		}
		na, va := sp.blobs.count()
		res.Values += int64(nv - na)
		res.Bytes.Values += vb - va
		if len(sp.cps) == 0 && len(sp.orphans) == 0 && len(sp.blobs) == 0 {
			t.remove(ns)
		}
	}
	if t.empty() {
		delete(s.threads, tid)
	}
	return res, nil
}

// SearchThreads lists a page of threads (checkpoint.ThreadSearcher).
func (s *Saver) SearchThreads(ctx context.Context, q checkpoint.ThreadQuery) (checkpoint.ThreadPage, error) {
	conds, err := record.CompileFilter(q.Filter)
	if err != nil {
		return checkpoint.ThreadPage{}, fmt.Errorf("list threads: %w", err)
	}
	all, err := s.ListThreads(ctx, 0)
	if err != nil {
		return checkpoint.ThreadPage{}, err
	}
	return checkpoint.PageThreads(all, q, func(md *checkpoint.Metadata) bool { return record.MatchMetadata(md, conds) }), nil
}
