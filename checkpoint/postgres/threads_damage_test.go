package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weftstudio/weft/checkpoint"
)

// One thread whose latest checkpoint has metadata of the wrong shape and
// one whose timestamp is infinity are listed as unreadable, each with its
// reason; the other threads are listed as before, by ListThreads and
// SearchThreads.
func TestListThreadsMarksDamagedRows(t *testing.T) {
	s, schema := openFresh(t)
	ctx := t.Context()
	for _, th := range []string{"good", "bad-meta", "bad-ts", "bad-ns"} {
		parent := checkpoint.Ref{ThreadID: th}
		for i := range 2 {
			cp := checkpoint.Checkpoint{V: checkpoint.FormatVersion, ID: checkpoint.NewID(), TS: time.Now(),
				ChannelValues: map[string][]byte{"n": []byte(fmt.Sprint(i))}, ChannelVersions: map[string]int64{"n": int64(i + 1)}}
			ref, err := s.Put(ctx, parent, cp, checkpoint.Metadata{Source: checkpoint.SourceLoop, Step: i}, cp.ChannelVersions)
			if err != nil {
				t.Fatal(err)
			}
			parent = ref
		}
	}
	conn, err := pgx.Connect(ctx, testDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	table := pgx.Identifier{schema, "weft_checkpoints"}.Sanitize()
	latest := ` WHERE thread_id = $1 AND checkpoint_id = (SELECT max(checkpoint_id) FROM ` + table + ` WHERE thread_id = $1)`
	for th, set := range map[string]string{
		"bad-meta": `metadata = '{"source":"loop","step":"seven"}'`,
		"bad-ts":   `ts = 'infinity'`,
		"bad-ns":   `ts_ns = 5000`,
	} {
		if _, err := conn.Exec(ctx, `UPDATE `+table+` SET `+set+latest, th); err != nil {
			t.Fatal(err)
		}
	}

	infos, err := s.ListThreads(ctx, 0)
	if err != nil {
		t.Fatalf("ListThreads with damaged rows: %v", err)
	}
	expectDamaged(t, "ListThreads", infos)
	page, err := s.SearchThreads(ctx, checkpoint.ThreadQuery{})
	if err != nil {
		t.Fatalf("SearchThreads with damaged rows: %v", err)
	}
	expectDamaged(t, "SearchThreads", page.Threads)
	page, err = s.SearchThreads(ctx, checkpoint.ThreadQuery{Filter: map[string]any{"source": "loop"}})
	if err != nil {
		t.Fatalf("SearchThreads with a filter and damaged rows: %v", err)
	}
	expectDamaged(t, "SearchThreads with a filter", page.Threads)
}

func expectDamaged(t *testing.T, what string, infos []checkpoint.ThreadInfo) {
	t.Helper()
	byID := map[string]checkpoint.ThreadInfo{}
	for _, ti := range infos {
		byID[ti.ThreadID] = ti
	}
	if len(infos) != 4 || len(byID) != 4 {
		t.Fatalf("%s listed %d threads; want good, bad-meta, bad-ts and bad-ns", what, len(infos))
	}
	if good := byID["good"]; good.Err != nil || good.Checkpoints != 2 || good.UpdatedAt.IsZero() || good.LatestMeta.Source != checkpoint.SourceLoop {
		t.Errorf("%s: thread good = %+v; want it whole", what, good)
	}
	for th, says := range map[string]string{"bad-meta": "decode metadata", "bad-ts": "stored timestamp is infinity", "bad-ns": "stored ts_ns is 5000"} {
		ti := byID[th]
		if ti.Err == nil || !strings.Contains(ti.Err.Error(), says) || !strings.Contains(ti.Err.Error(), `thread "`+th+`"`) {
			t.Errorf("%s: thread %s has error %v; want one naming it, saying %q", what, th, ti.Err, says)
		}
		if ti.Checkpoints != 2 || ti.Latest.CheckpointID == "" || ti.Latest.ThreadID != th {
			t.Errorf("%s: damaged thread %s = %+v; want its id, count and latest checkpoint", what, th, ti)
		}
	}
}
