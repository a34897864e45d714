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
	hist, err := g.History(ctx, checkpoint.ListOptions{}, opts...)
	if err != nil {
		return nil, err
	}
	rows := make([]WatchRow, len(hist))
	for i, s := range hist {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rows[i] = Watch(s, exprs)
	}
	return rows, nil
}
