package studio

// Watches: expressions over the state evaluated at the selected checkpoint
// and at every checkpoint of the thread, off the UI goroutine. Along the
// thread only the checkpoints not evaluated yet are read (newest first,
// the history stops at the first one already known), so a step adds one
// evaluation, not ten thousand.

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/inspect"
)

// watchProgressEvery is how often a long evaluation along the thread
// reports its progress.
const watchProgressEvery = 100 * time.Millisecond

// watchAt evaluates the watches at the selected checkpoint of the current
// thread.
func (s *Studio) watchAt() {
	sc := s.m.scope()
	v := sc.viewFor()
	d := s.m.dbg
	exprs, idx := d.exprs()
	if v == nil || len(exprs) == 0 {
		if sc.dbg.at.ID != "" || len(sc.dbg.at.Vals) > 0 {
			s.m.setWatchAt(sc, watchValues{})
		}
		return
	}
	id := v.Snap.Ref.CheckpointID
	if sc.dbg.at.ID == id && sc.dbg.at.Gen == d.gen {
		return
	}
	vals := v.Snap.Values
	n := len(d.Watches)
	gen := d.gen
	goBG(s.sess, func() (watchValues, error) {
		row := inspect.Watch(&engine.Snapshot{Values: vals}, exprs)
		out := watchValues{ID: id, Gen: gen, Vals: make([]any, n), Errs: make([]error, n)}
		for k, i := range idx {
			out.Vals[i], out.Errs[i] = row.Values[k], row.Errs[k]
		}
		return out, nil
	}, func(w watchValues, _ error) {
		if sc == s.m.scope() && sc.sel == id && s.m.dbg.gen == gen {
			s.m.setWatchAt(sc, w)
		}
	})
}

// watchColumns evaluates the watches at every checkpoint of the current
// thread not evaluated yet for the current watches, reporting progress.
// Other watches or another thread stop an evaluation going; new
// checkpoints wait for it and are evaluated after it.
func (s *Studio) watchColumns() {
	sc := s.m.scope()
	d := s.m.dbg
	if c := sc.dbg.cols; c != nil && c.Running && c.Gen == d.gen && s.dbg.stopCols != nil {
		return // the one going reads them too, or runs again after
	}
	if s.dbg.stopCols != nil {
		s.dbg.stopCols()
		s.dbg.stopCols = nil
	}
	exprs, idx := d.exprs()
	if sc.thread == "" || len(exprs) == 0 {
		if sc.dbg.cols != nil {
			s.m.setWatchCols(sc, nil)
		}
		return
	}
	if s.m.run.Going {
		return // evaluated when the run ends
	}
	old := sc.dbg.cols
	known := map[string]inspect.WatchRow{}
	if old != nil && old.Gen == d.gen && old.Err == nil && !old.Running {
		if len(old.Rows) == sc.tl.count() {
			return // every checkpoint is evaluated
		}
		known = old.Rows
	}
	cols := &watchCols{Gen: d.gen, Rows: known, Done: len(known), Total: sc.tl.count(), Running: true}
	s.m.setWatchCols(sc, cols)
	ctx, cancel := context.WithCancel(context.Background())
	s.dbg.stopCols = cancel
	g, _ := s.sess.current()
	thread, gen, n := sc.thread, d.gen, len(d.Watches)
	started := time.Now()
	goBG(s.sess, func() (map[string]inspect.WatchRow, error) {
		rows := make(map[string]inspect.WatchRow, len(known))
		for k, v := range known {
			rows[k] = v
		}
		last := time.Now()
		done := len(known)
		err := inspect.WatchEach(ctx, g, exprs, func(r inspect.WatchRow) bool {
			if _, ok := rows[r.Checkpoint]; ok && len(known) > 0 {
				return false // older ones are known
			}
			full := inspect.WatchRow{Checkpoint: r.Checkpoint, Step: r.Step, Values: make([]any, n), Errs: make([]error, n)}
			for k, i := range idx {
				full.Values[i], full.Errs[i] = r.Values[k], r.Errs[k]
			}
			rows[r.Checkpoint] = full
			done++
			if time.Since(last) > watchProgressEvery {
				last = time.Now()
				now := done
				uiDo(func() {
					if sc.dbg.cols == cols {
						cols.Done = now
						s.m.setWatchCols(sc, cols)
					}
				})
			}
			return true
		}, engine.WithThread(thread))
		return rows, err
	}, func(rows map[string]inspect.WatchRow, err error) {
		if sc.dbg.cols != cols || ctx.Err() != nil {
			return // stopped for a newer evaluation
		}
		s.dbg.stopCols = nil
		res := &watchCols{Gen: gen, Rows: rows, Done: len(rows), Total: max(len(rows), cols.Total), Err: err, Took: time.Since(started)}
		s.m.setWatchCols(sc, res)
		if err == nil && len(rows) > len(known) && len(rows) < sc.tl.count() {
			s.watchColumns() // checkpoints came meanwhile
		}
	})
}

// firstChange says, along the current branch up to the selected
// checkpoint (oldest first), where watch i first held (a boolean watch)
// or first changed its value: the checkpoint and a few words.
func firstChange(sc *scope, i int) (id, text string) {
	cols := sc.dbg.cols
	if cols == nil || sc.sel == "" {
		return "", ""
	}
	var branch []string
	for id := sc.sel; id != ""; id = sc.tl.prev(id) {
		branch = append(branch, id)
	}
	var prev any
	havePrev := false
	for k := len(branch) - 1; k >= 0; k-- {
		r, ok := cols.Rows[branch[k]]
		if !ok || i >= len(r.Values) || r.Errs[i] != nil {
			continue
		}
		v := r.Values[i]
		if b, isBool := v.(bool); isBool {
			if b {
				return branch[k], fmt.Sprintf("true from step %d", r.Step)
			}
			continue
		}
		if havePrev && !jsonEqual(toJSON(prev), toJSON(v)) {
			return branch[k], fmt.Sprintf("changed at step %d", r.Step)
		}
		prev, havePrev = v, true
	}
	if havePrev {
		return "", "never changed"
	}
	if len(branch) > 0 {
		if r, ok := cols.Rows[branch[0]]; ok && i < len(r.Values) {
			if _, isBool := r.Values[i].(bool); isBool {
				return "", "never true"
			}
		}
	}
	return "", ""
}

// watchText is a watch value in a few characters, for the timeline.
func watchText(v any, err error) string {
	if err != nil {
		return "error"
	}
	switch x := v.(type) {
	case nil:
		return "nil"
	case bool:
		return strconv.FormatBool(x)
	case string:
		return strconv.Quote(oneLine(x, 10))
	}
	return preview(toJSON(v), 12)
}
