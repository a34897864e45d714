package engine

// This file turns a run into stored data: writes and checkpoints encoded
// for the saver, and the background writer of async durability.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/weftstudio/weft/checkpoint"
)

// clock is the time checkpoints are stamped and their ids minted with;
// tests replace it to play a host whose clock is ahead or behind.
var clock = time.Now

// encodeWrites serializes writes for PutWrites, channel by channel.
func (rt *runtime) encodeWrites(ws []cwrite) ([]checkpoint.Write, error) {
	out := make([]checkpoint.Write, 0, len(ws))
	for _, w := range ws {
		s := rt.g.specs[w.ch]
		if s.kind == "untracked" {
			continue
		}
		b, err := encodeWrite(s, w.v)
		if err != nil {
			return nil, fmt.Errorf("channel %q: %w", s.name, err)
		}
		out = append(out, checkpoint.Write{Channel: s.name, Value: b})
	}
	return out, nil
}

type overwriteForm struct {
	Overwrite json.RawMessage `json:"__overwrite__"`
}

func encodeWrite(s *chanSpec, v any) ([]byte, error) {
	if ow, ok := v.(Overwrite); ok {
		b, err := s.codec.encode(ow.Value)
		if err != nil {
			return nil, err
		}
		return json.Marshal(overwriteForm{b})
	}
	return s.codec.encode(v)
}

func decodeWrite(s *chanSpec, b []byte) (any, error) {
	if s.kind == "reducer" && len(b) > 16 && string(b[:16]) == `{"__overwrite__"` {
		var f overwriteForm
		if err := json.Unmarshal(b, &f); err == nil && f.Overwrite != nil {
			v, err := s.codec.decode(f.Overwrite)
			return Overwrite{v}, err
		}
	}
	return s.codec.decode(b)
}

func (rt *runtime) decodePending(pw checkpoint.PendingWrite) (cwrite, error) {
	i, ok := rt.g.chanIdx[pw.Channel]
	if !ok {
		return cwrite{ch: -1}, fmt.Errorf("checkpoint %s: pending write of task %s to channel %q, which graph %q does not declare", rt.cpID, pw.TaskID, pw.Channel, rt.g.name)
	}
	v, err := decodeWrite(rt.g.specs[i], pw.Value)
	if err != nil {
		return cwrite{ch: -1}, fmt.Errorf("checkpoint %s: pending write of task %s to %q: %w", rt.cpID, pw.TaskID, pw.Channel, err)
	}
	return cwrite{i, v}, nil
}

// putScratch is what put rebuilds for each checkpoint. When the saver is
// called inline (see reusePut) the maps are rebuilt in place, and the
// scratch goes back to its graph's pool after the run, so a run of a few
// steps allocates none of them.
type putScratch struct {
	fresh       bool    // new to this run: versions and seen hold another run's
	verSnap     []int64 // the versions versions was built from
	versions    map[string]int64
	seen        map[string]map[string]int64
	updated     []string
	newVersions map[string]int64
	values      map[string][]byte
	// seenCache holds each node's versions-seen map with the versions it
	// was built from; a map always matches its snap, so an entry left from
	// an earlier run of the graph is still right when it matches.
	seenCache map[string]*seenEntry
}

type seenEntry struct {
	snap []int64
	m    map[string]int64
}

// reusePut reports whether checkpoints go to the saver inline, as soon as
// they are built. Put keeps nothing it is given, so the maps describing
// one checkpoint can then be rebuilt in place for the next instead of
// allocated afresh (durability async and exit hand them to a later write).
func (rt *runtime) reusePut() bool {
	return rt.bg == nil && rt.cfg.durability != DurabilityExit
}

// scratchFor returns the runtime's put scratch, taking one from the pool
// when maps are reused.
func (rt *runtime) scratchFor(reuse bool) *putScratch {
	if rt.scratch == nil {
		if reuse {
			rt.scratch, _ = rt.g.scratch.Get().(*putScratch)
		}
		if rt.scratch == nil {
			rt.scratch = &putScratch{seenCache: map[string]*seenEntry{}}
		}
		rt.scratch.fresh = true
	}
	return rt.scratch
}

// releaseScratch returns the scratch to the pool once the run is over and
// nothing can use its maps any more.
func (rt *runtime) releaseScratch() {
	if rt.scratch != nil && rt.reusePut() {
		rt.g.scratch.Put(rt.scratch)
	}
	rt.scratch = nil
}

// seenMap returns the versions-seen map of a node for a checkpoint. Most
// nodes did not run in a given step, so the map of the previous checkpoint
// serves again. With reuse a changed map is rebuilt in place; otherwise
// the checkpoint goes to a writer that stores it later, and a changed map
// is a new one (a map already handed over is never modified).
func (rt *runtime) seenMap(sc *putScratch, node string, s []int64, reuse bool) map[string]int64 {
	c, ok := sc.seenCache[node]
	if ok && slices.Equal(c.snap, s) {
		return c.m
	}
	switch {
	case !ok:
		c = &seenEntry{m: make(map[string]int64)}
		sc.seenCache[node] = c
	case reuse:
		clear(c.m)
	default:
		c.m = make(map[string]int64)
	}
	for i, v := range s {
		if v != 0 {
			c.m[rt.g.specs[i].name] = v
		}
	}
	c.snap = append(c.snap[:0], s...)
	return c.m
}

// put stores a checkpoint of the current channels (per durability).
func (rt *runtime) put(source checkpoint.Source, tasks []string) error {
	if rt.saver == nil {
		rt.step++
		return nil
	}
	g := rt.g
	reuse := rt.reusePut()
	sc := rt.scratchFor(reuse)
	// The id sorts after the parent's whatever this machine's clock says
	// (checkpoint.NewIDAfter): the head and history order of a thread
	// follow its chain, not the clocks of the hosts that wrote it.
	// A run standing on an older checkpoint mints after the head as well.
	at := clock()
	after := max(rt.cpRef.CheckpointID, rt.headID)
	cp := checkpoint.Checkpoint{V: checkpoint.FormatVersion, ID: checkpoint.NewIDAfter(after, at), TS: at.UTC()}
	// With reuse the maps are the run's previous checkpoint's, updated below
	// where versions changed (a run only ever adds nodes to rt.seen);
	// otherwise, and at a run's first checkpoint, they are filled from
	// nothing.
	fromNothing := !reuse || sc.fresh || sc.versions == nil
	switch {
	case !reuse:
		cp.ChannelVersions, cp.VersionsSeen = make(map[string]int64, len(rt.ver)), make(map[string]map[string]int64, rt.seen.count())
	case sc.versions == nil:
		sc.versions, sc.seen = make(map[string]int64, len(rt.ver)), make(map[string]map[string]int64, rt.seen.count())
		fallthrough
	default:
		cp.ChannelVersions, cp.VersionsSeen = sc.versions, sc.seen
	}
	if fromNothing {
		clear(cp.ChannelVersions)
		clear(cp.VersionsSeen)
		sc.verSnap = append(sc.verSnap[:0], make([]int64, len(rt.ver))...)
		sc.fresh = false
	}
	for i, v := range rt.ver {
		switch {
		case v == sc.verSnap[i]:
		case v == 0:
			delete(cp.ChannelVersions, g.specs[i].name)
		default:
			cp.ChannelVersions[g.specs[i].name] = v
		}
	}
	copy(sc.verSnap, rt.ver)
	for node, s := range rt.seen.all() {
		m := rt.seenMap(sc, node, s, reuse)
		if _, ok := cp.VersionsSeen[node]; !ok { // new maps start empty
			cp.VersionsSeen[node] = m // with reuse, maps of known nodes are rebuilt in place
		}
	}
	if rt.updated != nil {
		if reuse {
			cp.UpdatedChannels = sc.updated[:0]
		} else {
			cp.UpdatedChannels = make([]string, 0, len(rt.updated))
		}
		for _, c := range rt.updated {
			cp.UpdatedChannels = append(cp.UpdatedChannels, g.specs[c].name)
		}
		sort.Strings(cp.UpdatedChannels)
		if reuse {
			sc.updated = cp.UpdatedChannels
		}
	}
	if rt.extra == nil {
		rt.extra = make(map[string]any, len(rt.cfg.metadata)+1)
		for k, v := range rt.cfg.metadata {
			rt.extra[k] = v
		}
		rt.extra[MetaGraph] = g.name
		rt.extra[MetaFingerprint] = g.topo.Fingerprint
		rt.parents = rt.cfg.parents
		if rt.parents == nil {
			rt.parents = map[string]string{} // shared by the run's checkpoints; never modified
		}
	}
	md := checkpoint.Metadata{Source: source, Step: rt.step, Parents: rt.parents, RunID: rt.cfg.runID, Tasks: tasks, Extra: rt.extra}
	if extra := rt.takeExtra(); extra != nil {
		md.Extra = maps.Clone(rt.extra)
		maps.Copy(md.Extra, extra)
	}
	parent := rt.cpRef
	rt.cpMeta, rt.cpTime, rt.cpParent = md, cp.TS, parent
	rt.cpID = cp.ID
	rt.cpRef = checkpoint.Ref{ThreadID: rt.cfg.thread, NS: rt.ns, CheckpointID: cp.ID}
	rt.step++
	rt.pending = nil
	if rt.cfg.durability == DurabilityExit {
		if rt.exitCP != nil {
			parent = rt.exitCP.parent
		}
		rt.exitCP = &deferredPut{parent, cp, md}
		return nil
	}
	return rt.store(parent, cp, md)
}

func (rt *runtime) store(parent checkpoint.Ref, cp checkpoint.Checkpoint, md checkpoint.Metadata) error {
	g := rt.g
	n := 0
	for i, v := range rt.ver {
		if v != rt.savedVer[i] {
			n++
		}
	}
	var newVersions map[string]int64
	if reuse := rt.reusePut(); reuse {
		sc := rt.scratchFor(reuse)
		if sc.newVersions == nil {
			sc.newVersions, sc.values = make(map[string]int64, n), make(map[string][]byte, n)
		}
		newVersions, cp.ChannelValues = sc.newVersions, sc.values
		clear(newVersions)
		clear(cp.ChannelValues)
	} else {
		newVersions, cp.ChannelValues = make(map[string]int64, n), make(map[string][]byte, n)
	}
	for i, v := range rt.ver {
		if v == rt.savedVer[i] {
			continue
		}
		name := g.specs[i].name
		newVersions[name] = v
		b, ok, err := rt.ch[i].save()
		if err != nil {
			return fmt.Errorf("checkpoint of graph %q, channel %q: %w", g.name, name, err)
		}
		if ok {
			cp.ChannelValues[name] = b
		}
	}
	copy(rt.savedVer, rt.ver)
	// Every value in cp.ChannelValues was encoded for this checkpoint alone,
	// so a saver that can keep the bytes without copying may.
	put := rt.saver.Put
	if op, ok := rt.saver.(checkpoint.OwnedPutter); ok {
		put = op.PutOwned
	}
	if rt.bg != nil {
		queued := cp // only this copy escapes, not every inline checkpoint
		rt.bg.op(&checkpoint.Op{Ref: parent, Checkpoint: &queued, Metadata: md, NewVersions: newVersions})
		return nil
	}
	if _, err := put(rt.ctx, parent, cp, md, newVersions); err != nil {
		return fmt.Errorf("saving checkpoint of thread %q: %w", rt.cfg.thread, err)
	}
	return nil
}

// flushExit stores the final checkpoint, then the writes of the step that
// was under way from it (durability exit): an interrupt, a failure, tasks
// that finished before them. Writes of steps that completed are part of the
// checkpoint (loop clears them as each step applies), so none is stored
// against a checkpoint this durability never stores.
func (rt *runtime) flushExit() error {
	if p := rt.exitCP; p != nil {
		if err := rt.store(p.parent, p.cp, p.md); err != nil {
			return err
		}
	}
	for _, w := range rt.exitWrite {
		if err := w(); err != nil {
			return fmt.Errorf("saving pending writes: %w", err)
		}
	}
	return nil
}

type deferredPut struct {
	parent checkpoint.Ref
	cp     checkpoint.Checkpoint
	md     checkpoint.Metadata
}

// bgWriter performs saver calls in order on a goroutine of its own
// (durability async). What piles up while it is busy goes to the saver in
// one WriteBatch when the saver offers it (one transaction instead of one
// per call); after the first error every later write is skipped.
type bgWriter struct {
	ch    chan bgItem
	done  chan struct{}
	ctx   context.Context
	saver checkpoint.Saver
	mu    sync.Mutex
	err   error
}

// bgItem is a Put or PutWrites (op), or a marker that runs once everything
// before it is written.
type bgItem struct {
	op     *checkpoint.Op
	marker func()
}

func newBGWriter(ctx context.Context, saver checkpoint.Saver) *bgWriter {
	w := &bgWriter{ch: make(chan bgItem, 32), done: make(chan struct{}), ctx: ctx, saver: saver}
	go w.run()
	return w
}

func (w *bgWriter) run() {
	defer close(w.done)
	var batch []checkpoint.Op
	for it := range w.ch {
		items := []bgItem{it}
	drain:
		for {
			select {
			case more, ok := <-w.ch:
				if !ok {
					break drain
				}
				items = append(items, more)
			default:
				break drain
			}
		}
		for _, it := range items {
			if it.op != nil {
				batch = append(batch, *it.op)
				continue
			}
			w.write(batch)
			batch = batch[:0]
			it.marker()
		}
		w.write(batch)
		batch = batch[:0]
	}
}

func (w *bgWriter) write(ops []checkpoint.Op) {
	if len(ops) == 0 || w.failed() != nil {
		return
	}
	var err error
	if bw, ok := w.saver.(checkpoint.BatchWriter); ok && len(ops) > 1 {
		err = bw.WriteBatch(w.ctx, ops)
	} else {
		put := w.saver.Put
		if op, ok := w.saver.(checkpoint.OwnedPutter); ok {
			put = op.PutOwned
		}
		for _, op := range ops {
			if op.Checkpoint != nil {
				_, err = put(w.ctx, op.Ref, *op.Checkpoint, op.Metadata, op.NewVersions)
			} else {
				err = w.saver.PutWrites(w.ctx, op.Ref, op.Writes, op.TaskID, op.TaskPath)
			}
			if err != nil {
				break
			}
		}
	}
	if err != nil {
		w.mu.Lock()
		w.err = err
		w.mu.Unlock()
	}
}

func (w *bgWriter) op(op *checkpoint.Op) { w.ch <- bgItem{op: op} }

// flush waits until every queued write is done and returns the first error.
func (w *bgWriter) flush() error {
	done := make(chan struct{})
	w.ch <- bgItem{marker: func() { close(done) }}
	<-done
	return w.failed()
}

func (w *bgWriter) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *bgWriter) close() error {
	close(w.ch)
	<-w.done
	return w.failed()
}
