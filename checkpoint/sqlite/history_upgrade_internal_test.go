package sqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint/longterm"
)

// A store made before schema 6 keeps its items when upgraded, each with
// one change (its last put, by nobody), and says when its history began;
// a store made at schema 6 or later has kept every change. Its vectors
// move to schema 7's table and a semantic search still ranks by them.
func TestHistoryOfAnUpgradedStore(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "old.sqlite")
	db := storeAtSchema(t, path, historySchema-1)
	t1 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	emb := longterm.HashEmbedder{Dims: 64}
	for i, k := range []string{"a", "b"} {
		at := t1.Add(time.Duration(i) * time.Minute).UnixNano()
		if _, err := db.Exec("INSERT INTO store_items (prefix, key, value, created_at, updated_at) VALUES ('users.u1', ?, jsonb(?), ?, ?)",
			k, fmt.Sprintf(`{"v": %d}`, i), at, at); err != nil {
			t.Fatal(err)
		}
		vecs, err := emb.Embed(ctx, []string{[]string{"green tea", "black coffee"}[i]})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("INSERT INTO store_vectors (prefix, key, idx, vector) VALUES ('users.u1', ?, 0, ?)", k, longterm.EncodeVector(vecs[0])); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	before := time.Now()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	lt, err := s.LongTerm(longterm.Config{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	found, err := lt.Search(ctx, longterm.SearchQuery{Query: "black coffee", Limit: 2})
	if err != nil || len(found) != 2 || found[0].Key != "b" || *found[0].Score < 0.99 {
		t.Fatalf("a semantic search after the upgrade: %+v, %v; want b first, scored 1", found, err)
	}
	began, err := lt.HistoryBegan(ctx)
	if err != nil || began.Before(before.Add(-time.Second)) || began.After(time.Now()) {
		t.Fatalf("HistoryBegan = %v, %v; want the upgrade's time (%v)", began, err, before)
	}
	cs, err := lt.Changes(ctx, longterm.ChangeQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 || cs[0].Key != "b" || cs[1].Key != "a" || !cs[1].At.Equal(t1) || !cs[0].Writer.IsZero() || cs[0].Value["v"] != 1.0 {
		t.Fatalf("changes after the upgrade = %+v; want b's and a's last puts, by nobody", cs)
	}
	// Before the history began the items cannot be known; after, they can.
	var bh *longterm.BeforeHistoryError
	if _, err := longterm.SearchAt(ctx, lt, longterm.SearchQuery{}, t1.Add(2*time.Minute)); !errors.As(err, &bh) || !bh.Began.Equal(began) {
		t.Errorf("a search as at a time before the upgrade: %v, want a BeforeHistoryError", err)
	}
	if items, err := longterm.SearchAt(ctx, lt, longterm.SearchQuery{}, time.Now()); err != nil || len(items) != 2 {
		t.Errorf("a search as at now: %d items, %v", len(items), err)
	}
	it, err := lt.Get(ctx, longterm.Namespace{"users", "u1"}, "a")
	if err != nil || it == nil || !it.Writer.IsZero() {
		t.Fatalf("Get(a) = %+v, %v", it, err)
	}

	fresh, err := Open(filepath.Join(t.TempDir(), "new.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	flt, _ := fresh.LongTerm(longterm.Config{})
	if began, err := flt.HistoryBegan(ctx); err != nil || !began.IsZero() {
		t.Fatalf("a new store's HistoryBegan = %v, %v; want zero", began, err)
	}
}

// storeAtSchema creates a store at path as a build knowing schema version
// made it, and returns a plain connection to it.
func storeAtSchema(t *testing.T, path string, version int) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations[:version] {
		if _, err := db.Exec(m.sql); err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
		if _, err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d", m.version)); err != nil {
			t.Fatal(err)
		}
	}
	return db
}
