// Package report assembles storage reports (checkpoint.StorageSummary and
// checkpoint.ThreadStorage) from the sizes a saver reads, so that every
// saver attributes, ranks and buckets bytes the same way. Savers feed it
// sizes and counts only; it never sees a value.
package report

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/weftstudio/weft/checkpoint"
)

// Checkpoint is one checkpoint of a thread as a saver reads it for a
// report.
type Checkpoint struct {
	NS, ID string
	Step   int
	TS     time.Time
	Header int64 // bytes of its row
	// Own is the highest step of its channel versions
	// (checkpoint.VersionStep): the step whose new values it holds.
	Own int64
}

// Thread gathers one thread's sizes.
type Thread struct {
	ID          string
	Checkpoints []Checkpoint // any order
	// Values are the sizes of the thread's values by namespace and step
	// of their version.
	Values map[NSStep]Sizes
	// Writes are the sizes of pending writes by namespace and checkpoint
	// id.
	Writes   map[NSID]Sizes
	Channels []checkpoint.ChannelBytes // any order
	Largest  []checkpoint.ValueSize    // any order, at least Top of them
}

// NSStep keys values by namespace and version step.
type NSStep struct {
	NS   string
	Step int64
}

// NSID keys writes by namespace and checkpoint id.
type NSID struct{ NS, ID string }

// Sizes counts rows and their bytes.
type Sizes struct{ N, Bytes int64 }

// Add adds n rows of b bytes.
func (s *Sizes) Add(n, b int64) { s.N += n; s.Bytes += b }

// Build returns the thread's report, or nil when it has no checkpoint.
func (t *Thread) Build(opts checkpoint.StorageOptions) *checkpoint.ThreadStorage {
	opts = opts.WithDefaults()
	if len(t.Checkpoints) == 0 {
		return nil
	}
	cps := t.Checkpoints
	slices.SortFunc(cps, func(a, b Checkpoint) int {
		return cmp.Or(cmp.Compare(a.NS, b.NS), cmp.Compare(a.ID, b.ID))
	})
	out := &checkpoint.ThreadStorage{ThreadID: t.ID, Checkpoints: int64(len(cps))}
	items := make([]checkpoint.CheckpointBytes, len(cps))
	owner := map[NSStep]int{} // first checkpoint holding a step's values
	for i, c := range cps {
		if i == 0 || c.NS != cps[i-1].NS {
			out.Namespaces++
		}
		items[i] = checkpoint.CheckpointBytes{Ref: checkpoint.Ref{ThreadID: t.ID, NS: c.NS, CheckpointID: c.ID}, Step: c.Step, TS: c.TS,
			Bytes: checkpoint.ByteCounts{Headers: c.Header}}
		if _, ok := owner[NSStep{c.NS, c.Own}]; !ok {
			owner[NSStep{c.NS, c.Own}] = i
		}
		w := t.Writes[NSID{c.NS, c.ID}]
		items[i].Writes, items[i].Bytes.Writes = w.N, w.Bytes
		out.Writes += w.N
	}
	for k, v := range t.Values {
		out.Values += v.N
		i, ok := owner[k]
		if !ok {
			// The checkpoint that created these values was pruned: count
			// them at the first later checkpoint of the namespace (the
			// last, if none is later).
			i = nearest(cps, k)
		}
		if i >= 0 {
			items[i].Values += v.N
			items[i].Bytes.Values += v.Bytes
		}
	}
	for _, it := range items {
		out.Bytes = out.Bytes.Add(it.Bytes)
	}
	out.Channels = SortChannels(t.Channels)
	out.LargestValues = TopValues(t.Largest, opts.Top)
	out.Growth = StepGrowth(items, opts.Points)
	slices.SortFunc(items, func(a, b checkpoint.CheckpointBytes) int {
		return cmp.Or(cmp.Compare(b.Ref.CheckpointID, a.Ref.CheckpointID), cmp.Compare(a.Ref.NS, b.Ref.NS))
	})
	if opts.Checkpoints > 0 && len(items) > opts.Checkpoints {
		items = items[:opts.Checkpoints]
	}
	out.Newest = items
	return out
}

// nearest returns the index of the first checkpoint of k's namespace whose
// own step is k's or later, else the namespace's last, or -1.
func nearest(cps []Checkpoint, k NSStep) int {
	best, last := -1, -1
	for i, c := range cps {
		if c.NS != k.NS {
			continue
		}
		last = i
		if c.Own >= k.Step && (best < 0 || c.Own < cps[best].Own) {
			best = i
		}
	}
	if best < 0 {
		return last
	}
	return best
}

// StepGrowth buckets a thread's checkpoints by step into at most points
// spans of equal width, first steps first (ThreadStorage.Growth).
func StepGrowth(items []checkpoint.CheckpointBytes, points int) []checkpoint.GrowthPoint {
	if len(items) == 0 {
		return []checkpoint.GrowthPoint{}
	}
	lo, hi := items[0].Step, items[0].Step
	for _, it := range items {
		lo, hi = min(lo, it.Step), max(hi, it.Step)
	}
	width := (hi - lo + points) / points // ceil((hi-lo+1)/points)
	n := (hi-lo)/width + 1
	out := make([]checkpoint.GrowthPoint, n)
	for i := range out {
		out[i].From, out[i].Steps = lo+i*width, width
	}
	for _, it := range items {
		p := &out[(it.Step-lo)/width]
		if p.Checkpoints == 0 || it.TS.Before(p.Start) {
			p.Start = it.TS
		}
		p.Checkpoints++
		p.Bytes = p.Bytes.Add(it.Bytes)
	}
	return out
}

// Lifetime is what one thread holds and when it was written: its first
// and last checkpoint times.
type Lifetime struct {
	First, Last time.Time
	Checkpoints int64
	Bytes       checkpoint.ByteCounts
}

// Spread returns a store's growth in at most points spans of equal length
// from the earliest First to the latest Last, oldest first, spreading each
// thread's checkpoints and bytes evenly over its lifetime. Totals are kept
// exactly: rounding leftovers go to a thread's last span.
func Spread(threads []Lifetime, points int) []checkpoint.GrowthPoint {
	if len(threads) == 0 {
		return []checkpoint.GrowthPoint{}
	}
	if points <= 0 {
		points = checkpoint.DefaultStoragePoints
	}
	first, last := threads[0].First, threads[0].Last
	for _, t := range threads {
		if t.First.Before(first) {
			first = t.First
		}
		if t.Last.After(last) {
			last = t.Last
		}
	}
	width := last.Sub(first)/time.Duration(points) + 1
	n := int(last.Sub(first)/width) + 1
	out := make([]checkpoint.GrowthPoint, n)
	for i := range out {
		out[i].Start = first.Add(time.Duration(i) * width)
	}
	for _, t := range threads {
		lo, hi := int(t.First.Sub(first)/width), int(t.Last.Sub(first)/width)
		life := t.Last.Sub(t.First)
		var given checkpoint.GrowthPoint
		for i := lo; i <= hi; i++ {
			share := 1.0
			if life > 0 {
				from, to := out[i].Start, out[i].Start.Add(width)
				if t.First.After(from) {
					from = t.First
				}
				if t.Last.Before(to) {
					to = t.Last
				}
				share = float64(to.Sub(from)) / float64(life)
			}
			p := &out[i]
			if i == hi { // the rest
				p.Checkpoints += t.Checkpoints - given.Checkpoints
				p.Bytes = p.Bytes.Add(checkpoint.ByteCounts{Headers: t.Bytes.Headers - given.Bytes.Headers,
					Values: t.Bytes.Values - given.Bytes.Values, Writes: t.Bytes.Writes - given.Bytes.Writes})
				continue
			}
			part := checkpoint.GrowthPoint{Checkpoints: int64(float64(t.Checkpoints) * share), Bytes: checkpoint.ByteCounts{
				Headers: int64(float64(t.Bytes.Headers) * share), Values: int64(float64(t.Bytes.Values) * share), Writes: int64(float64(t.Bytes.Writes) * share)}}
			given.Checkpoints += part.Checkpoints
			given.Bytes = given.Bytes.Add(part.Bytes)
			p.Checkpoints += part.Checkpoints
			p.Bytes = p.Bytes.Add(part.Bytes)
		}
	}
	return out
}

// Channels joins per-channel value and write sizes into one list, largest
// first (ties by name).
func Channels(values, writes map[string]Sizes) []checkpoint.ChannelBytes {
	byName := map[string]*checkpoint.ChannelBytes{}
	get := func(ch string) *checkpoint.ChannelBytes {
		if byName[ch] == nil {
			byName[ch] = &checkpoint.ChannelBytes{Channel: ch}
		}
		return byName[ch]
	}
	for ch, v := range values {
		c := get(ch)
		c.Values, c.ValueBytes = v.N, v.Bytes
	}
	for ch, w := range writes {
		c := get(ch)
		c.Writes, c.WriteBytes = w.N, w.Bytes
	}
	out := make([]checkpoint.ChannelBytes, 0, len(byName))
	for _, c := range byName {
		out = append(out, *c)
	}
	return SortChannels(out)
}

// PruneThreads begins a saver's PruneBy: it asks ready whether the saver
// may write now, refuses a negative p.KeepLatest and returns the threads p
// names, every thread (as all lists them) when p.AllThreads. where follows
// "prune" in its errors (" /path/to/file", or "" for none).
func PruneThreads(ctx context.Context, p checkpoint.PrunePolicy, where string,
	ready func(context.Context) error, all func(context.Context) ([]string, error)) ([]string, error) {
	if err := ready(ctx); err != nil {
		return nil, err
	}
	if p.KeepLatest < 0 {
		return nil, fmt.Errorf("prune%s: KeepLatest %d is negative", where, p.KeepLatest)
	}
	if !p.AllThreads {
		return p.Threads, nil
	}
	threads, err := all(ctx)
	if err != nil {
		return nil, fmt.Errorf("prune%s: %w", where, err)
	}
	return threads, nil
}

// PruneEach prunes threads one by one with pruneThread, for a saver's
// PolicyPruner: it asks p.Hold before each thread and releases after,
// adds up the results and reports progress. A thread Hold refuses as held
// by a run is skipped and named in the result. On any other error it returns what
// was pruned until then, and the error naming the thread.
func PruneEach(ctx context.Context, p checkpoint.PrunePolicy, threads []string, where string,
	pruneThread func(thread string) (checkpoint.PruneResult, error)) (checkpoint.PruneResult, error) {
	var res checkpoint.PruneResult
	for i, tid := range threads {
		if tid == "" {
			return res, fmt.Errorf("prune%s: %w", where, checkpoint.ErrNoThread)
		}
		release := func() {}
		if p.Hold != nil {
			var err error
			release, err = p.Hold(ctx, tid)
			if errors.Is(err, checkpoint.ErrLeaseHeld) {
				// A run holds it: prune the others, and say which was left.
				res.Skipped = append(res.Skipped, checkpoint.SkippedThread{ThreadID: tid, Reason: err.Error()})
				if p.Progress != nil {
					p.Progress(i+1, len(threads))
				}
				continue
			}
			if err != nil {
				return res, fmt.Errorf("prune thread %q%s: not pruned: %w", tid, where, err)
			}
		}
		one, err := pruneThread(tid)
		release()
		res.Checkpoints += one.Checkpoints
		res.Values += one.Values
		res.Writes += one.Writes
		res.Bytes = res.Bytes.Add(one.Bytes)
		if one.Checkpoints > 0 {
			res.Threads++
		}
		if err != nil {
			return res, fmt.Errorf("prune thread %q%s: %w", tid, where, err)
		}
		if p.Progress != nil {
			p.Progress(i+1, len(threads))
		}
	}
	return res, nil
}

// SortChannels orders channels largest first, ties by name.
func SortChannels(cs []checkpoint.ChannelBytes) []checkpoint.ChannelBytes {
	if cs == nil {
		return []checkpoint.ChannelBytes{}
	}
	slices.SortFunc(cs, func(a, b checkpoint.ChannelBytes) int {
		return cmp.Or(cmp.Compare(b.Total(), a.Total()), cmp.Compare(a.Channel, b.Channel))
	})
	return cs
}

// TopValues returns the top largest values, largest first (ties by thread,
// namespace, channel, version).
func TopValues(vs []checkpoint.ValueSize, top int) []checkpoint.ValueSize {
	slices.SortFunc(vs, func(a, b checkpoint.ValueSize) int {
		return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(a.ThreadID, b.ThreadID), cmp.Compare(a.NS, b.NS),
			cmp.Compare(a.Channel, b.Channel), cmp.Compare(a.Version, b.Version))
	})
	if len(vs) > top {
		vs = vs[:top]
	}
	if vs == nil {
		vs = []checkpoint.ValueSize{}
	}
	return vs
}

// TopThreads returns the top threads holding the most bytes, largest first
// (ties by thread id).
func TopThreads(ts []checkpoint.ThreadBytes, top int) []checkpoint.ThreadBytes {
	slices.SortFunc(ts, func(a, b checkpoint.ThreadBytes) int {
		return cmp.Or(cmp.Compare(b.Bytes.Total(), a.Bytes.Total()), cmp.Compare(a.ThreadID, b.ThreadID))
	})
	if len(ts) > top {
		ts = ts[:top]
	}
	if ts == nil {
		ts = []checkpoint.ThreadBytes{}
	}
	return ts
}

// Tally is what a saver's storage summary gathers by query: each thread's
// checkpoints, header bytes and lifetime, values and writes by thread
// (also of threads without checkpoints), the largest values, and with
// Deep, values and writes by channel. The zero value is not ready: use
// NewTally.
type Tally struct {
	Threads            map[string]*Lifetime
	Values, Writes     map[string]Sizes
	ChValues, ChWrites map[string]Sizes
	Largest            []checkpoint.ValueSize
}

// NewTally returns an empty Tally.
func NewTally() *Tally {
	return &Tally{Threads: map[string]*Lifetime{}, Values: map[string]Sizes{}, Writes: map[string]Sizes{},
		ChValues: map[string]Sizes{}, ChWrites: map[string]Sizes{}}
}

// Summarize fills out's counts, bytes, largest threads and values, growth
// and (with opts.Deep) channels from t.
func (t *Tally) Summarize(out *checkpoint.StorageSummary, opts checkpoint.StorageOptions) {
	all := make([]checkpoint.ThreadBytes, 0, len(t.Threads))
	lives := make([]Lifetime, 0, len(t.Threads))
	for id, th := range t.Threads {
		th.Bytes.Values, th.Bytes.Writes = t.Values[id].Bytes, t.Writes[id].Bytes
		out.Checkpoints += th.Checkpoints
		out.Bytes.Headers += th.Bytes.Headers
		all = append(all, checkpoint.ThreadBytes{ThreadID: id, Checkpoints: th.Checkpoints, Bytes: th.Bytes})
		lives = append(lives, *th)
	}
	// Values and writes count even in a thread without checkpoints (rows
	// a crash of an older version, or a person, left behind).
	for _, v := range t.Values {
		out.Values += v.N
		out.Bytes.Values += v.Bytes
	}
	for _, w := range t.Writes {
		out.Writes += w.N
		out.Bytes.Writes += w.Bytes
	}
	out.Threads = int64(len(t.Threads))
	out.LargestThreads = TopThreads(all, opts.Top)
	out.LargestValues = TopValues(t.Largest, opts.Top)
	out.Growth = Spread(lives, opts.Points)
	if opts.Deep {
		out.Channels = Channels(t.ChValues, t.ChWrites)
	}
}
