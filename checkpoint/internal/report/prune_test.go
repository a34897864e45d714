package report

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
)

func TestPruneThreads(t *testing.T) {
	closed := errors.New("closed")
	broken := errors.New("no table")
	ready := func(context.Context) error { return nil }
	all := func(context.Context) ([]string, error) { return []string{"a", "b"}, nil }
	for _, c := range []struct {
		name    string
		p       checkpoint.PrunePolicy
		ready   func(context.Context) error
		all     func(context.Context) ([]string, error)
		want    []string
		wantErr string
		is      error
	}{
		{name: "named threads", p: checkpoint.PrunePolicy{Threads: []string{"x"}}, ready: ready, all: all, want: []string{"x"}},
		{name: "all threads", p: checkpoint.PrunePolicy{AllThreads: true, Threads: []string{"x"}}, ready: ready, all: all, want: []string{"a", "b"}},
		{name: "negative keep", p: checkpoint.PrunePolicy{KeepLatest: -1}, ready: ready, all: all,
			wantErr: "prune /db: KeepLatest -1 is negative"},
		{name: "not ready comes first", p: checkpoint.PrunePolicy{KeepLatest: -1}, ready: func(context.Context) error { return closed },
			all: all, is: closed, wantErr: "closed"},
		{name: "listing fails", p: checkpoint.PrunePolicy{AllThreads: true}, ready: ready,
			all: func(context.Context) ([]string, error) { return nil, broken }, is: broken, wantErr: "prune /db: no table"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := PruneThreads(context.Background(), c.p, " /db", c.ready, c.all)
			if c.wantErr != "" {
				if err == nil || err.Error() != c.wantErr || (c.is != nil && !errors.Is(err, c.is)) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, c.want) {
				t.Errorf("got %v, %v; want %v", got, err, c.want)
			}
		})
	}
}
