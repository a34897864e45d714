package langgraph

import (
	"context"
	"reflect"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
)

// ListHeaders reads a thread's headers from it decoded, without encoding
// values as List's tuples do: for every thread of both SQLite fixtures,
// and for the selections the studio's timeline and subgraph lanes make,
// it lists what List lists.
func TestHeadersAreListsHeaders(t *testing.T) {
	for _, c := range []storeCase{sqliteCase("py-sqlite", knownPython), sqliteCase("js-sqlite", knownJS)} {
		t.Run(c.name, func(t *testing.T) { checkHeaders(t, c.open(t)) })
	}
}

func checkHeaders(t *testing.T, r *Reader) {
	ctx := context.Background()
	threads, err := r.ListThreads(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	root := ""
	for _, th := range threads {
		tr, err := r.ReadThread(ctx, th.ThreadID)
		if err != nil {
			t.Fatal(err)
		}
		var before string
		var sub *string
		if n := len(tr.Checkpoints); n > 2 {
			before = tr.Checkpoints[n/2].ID
		}
		for _, c := range tr.Checkpoints {
			if c.NS != "" {
				ns := c.NS
				sub = &ns
				break
			}
		}
		opts := []checkpoint.ListOptions{
			{ThreadID: th.ThreadID},
			{ThreadID: th.ThreadID, NS: &root},
			{ThreadID: th.ThreadID, NS: &root, Limit: 2},
			{ThreadID: th.ThreadID, NS: &root, Before: before, Limit: 3},
			{ThreadID: th.ThreadID, Filter: map[string]any{"source": "loop"}},
		}
		if sub != nil {
			opts = append(opts, checkpoint.ListOptions{ThreadID: th.ThreadID, NS: sub})
		}
		for _, o := range opts {
			got, gotErr := r.ListHeaders(ctx, o)
			want := []checkpoint.Header{}
			var wantErr error
			for tp, err := range r.List(ctx, o) {
				if err != nil {
					wantErr = err
					break
				}
				want = append(want, checkpoint.Header{Ref: tp.Ref, Parent: tp.Parent, TS: tp.Checkpoint.TS, Metadata: tp.Metadata})
			}
			if (gotErr == nil) != (wantErr == nil) || gotErr == nil && !reflect.DeepEqual(got, want) {
				t.Errorf("%s %+v: ListHeaders %d headers (%v), List %d (%v)", th.ThreadID, o, len(got), gotErr, len(want), wantErr)
			}
		}
	}
	if got, err := r.ListHeaders(ctx, checkpoint.ListOptions{ThreadID: "no-such-thread"}); err != nil || len(got) != 0 {
		t.Errorf("a missing thread: %v, %v", got, err)
	}
}

func TestHeadersAreListsHeadersPostgres(t *testing.T) {
	for _, c := range []storeCase{pgCase("py-postgres", nil, knownPython), pgCase("js-postgres", nil, knownJS)} {
		t.Run(c.name, func(t *testing.T) { checkHeaders(t, c.open(t)) })
	}
}
