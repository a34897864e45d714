package sqlite_test

import (
	"strings"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/sqlite"
)

// One thread whose latest checkpoint has damaged metadata and one whose
// timestamp is damaged are listed as unreadable, each with its reason; the
// other threads are listed as before, by ListThreads and SearchThreads.
func TestListThreadsMarksDamagedRows(t *testing.T) {
	path := filledFile(t, 0)
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range []string{"good", "bad-meta", "bad-ts"} {
		fillChain(t, s, th, 2, false)
	}
	s.Close()
	db := rawDB(t, path)
	latest := `checkpoint_id = (SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = ?)`
	if _, err := db.Exec(`UPDATE checkpoints SET metadata = '{"source":"loop","step":' WHERE `+latest, "bad-meta"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE checkpoints SET ts = 'yesterday' WHERE `+latest, "bad-ts"); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s, err = sqlite.Open(path, sqlite.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	infos, err := s.ListThreads(t.Context(), 0)
	if err != nil {
		t.Fatalf("ListThreads with two damaged rows: %v", err)
	}
	expectDamagedThreads(t, "ListThreads", infos, path)
	page, err := s.SearchThreads(t.Context(), checkpoint.ThreadQuery{})
	if err != nil {
		t.Fatalf("SearchThreads with two damaged rows: %v", err)
	}
	expectDamagedThreads(t, "SearchThreads", page.Threads, path)
	// A filter cannot be tested on metadata that is not JSON: the thread
	// matches it, listed as damaged, rather than failing the page.
	page, err = s.SearchThreads(t.Context(), checkpoint.ThreadQuery{Filter: map[string]any{"source": "loop"}})
	if err != nil {
		t.Fatalf("SearchThreads with a filter and two damaged rows: %v", err)
	}
	expectDamagedThreads(t, "SearchThreads with a filter", page.Threads, path)
}

// expectDamagedThreads checks a listing of the threads good, bad-meta and
// bad-ts (each of two checkpoints): good is whole, the others are marked
// with errors naming the thread and saying what is damaged.
func expectDamagedThreads(t *testing.T, what string, infos []checkpoint.ThreadInfo, where string) {
	t.Helper()
	byID := map[string]checkpoint.ThreadInfo{}
	for _, ti := range infos {
		byID[ti.ThreadID] = ti
	}
	if len(infos) != 3 || len(byID) != 3 {
		t.Fatalf("%s listed %d threads; want good, bad-meta and bad-ts", what, len(infos))
	}
	good := byID["good"]
	if good.Err != nil || good.Checkpoints != 2 || good.UpdatedAt.IsZero() || good.LatestMeta.Source != checkpoint.SourceLoop {
		t.Errorf("%s: thread good = %+v; want it whole", what, good)
	}
	for th, says := range map[string]string{"bad-meta": "decode metadata", "bad-ts": `bad stored timestamp "yesterday"`} {
		ti := byID[th]
		if ti.Err == nil || !strings.Contains(ti.Err.Error(), says) || !strings.Contains(ti.Err.Error(), `thread "`+th+`"`) ||
			!strings.Contains(ti.Err.Error(), where) {
			t.Errorf("%s: thread %s has error %v; want one naming it and %s, saying %q", what, th, ti.Err, where, says)
		}
		if ti.Checkpoints != 2 || ti.Latest.CheckpointID == "" || ti.Latest.ThreadID != th {
			t.Errorf("%s: damaged thread %s = %+v; want its id, count and latest checkpoint", what, th, ti)
		}
	}
	if ti := byID["bad-ts"]; ti.LatestMeta.Source != checkpoint.SourceLoop {
		t.Errorf("%s: thread bad-ts lost its readable metadata: %+v", what, ti.LatestMeta)
	}
}
