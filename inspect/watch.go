package inspect

import (
	"context"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
)

// WatchRow is the watches' values at one checkpoint.
type WatchRow struct {
	Checkpoint string
	Step       int
	// Values holds one result per watch, in order; Errs the evaluation
	// error of each (nil when it evaluated).
	Values []any
	Errs   []error
}

// Watch evaluates exprs on one snapshot.
func Watch(s *engine.Snapshot, exprs []*Expr) WatchRow {
	row := WatchRow{Checkpoint: s.Ref.CheckpointID, Step: s.Metadata.Step, Values: make([]any, len(exprs)), Errs: make([]error, len(exprs))}
	for i, e := range exprs {
		row.Values[i], row.Errs[i] = e.Eval(s.Values)
	}
	return row
}

// WatchTimeline evaluates exprs at every checkpoint of a thread (opts name
// it with engine.WithThread), newest first, as a column per watch: "when
// did revisions first exceed 2?" is one look down a column.
func WatchTimeline(ctx context.Context, g *engine.Graph, exprs []*Expr, opts ...engine.RunOption) ([]WatchRow, error) {
	var rows []WatchRow
	err := WatchEach(ctx, g, exprs, func(r WatchRow) bool {
		rows = append(rows, r)
		return true
	}, opts...)
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// WatchEach is WatchTimeline handing each row to fn as the thread's
// history is read (newest first), so a window shows progress on a long
// thread and memory stays flat; fn returning false stops it early
// without error.
func WatchEach(ctx context.Context, g *engine.Graph, exprs []*Expr, fn func(WatchRow) bool, opts ...engine.RunOption) error {
	for s, err := range g.HistorySeq(ctx, checkpoint.ListOptions{}, opts...) {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !fn(Watch(s, exprs)) {
			return nil
		}
	}
	return nil
}
