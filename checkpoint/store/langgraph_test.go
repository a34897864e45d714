package store_test

import (
	"compress/gzip"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/store"
)

// A LangGraph SqliteSaver file opens as a LangGraph store, read-only,
// whatever mode the caller asked for, and is left unchanged.
func TestOpenLangGraphSQLite(t *testing.T) {
	ctx := context.Background()
	for name, kind := range map[string]string{"py-sqlite": "LangGraph (Python) SQLite store", "js-sqlite": "LangGraph.js SQLite store"} {
		path := filepath.Join(t.TempDir(), name+".sqlite")
		f, err := os.Open(filepath.Join("..", "langgraph", "testdata", name+".sqlite.gz"))
		if err != nil {
			t.Fatal(err)
		}
		z, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(z)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, opts := range [][]store.Option{nil, {store.MustExist()}, {store.ReadOnly()}} {
			s, err := store.Open(ctx, path, opts...)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got := store.Kind(s); got != kind {
				t.Errorf("%s: kind %q, want %q", name, got, kind)
			}
			threads, err := s.(checkpoint.ThreadLister).ListThreads(ctx, 0)
			if err != nil || len(threads) != 214 {
				t.Errorf("%s: %d threads, %v; want 214", name, len(threads), err)
			}
			if err := s.DeleteThread(ctx, "chain"); !errors.Is(err, checkpoint.ErrReadOnly) {
				t.Errorf("%s: DeleteThread = %v, want ErrReadOnly", name, err)
			}
			s.Close()
		}
		for _, extra := range []string{"-wal", "-shm"} {
			if _, err := os.Stat(path + extra); err == nil {
				t.Errorf("%s: opening the store left %s behind", name, filepath.Base(path+extra))
			}
		}
		after, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if sha256.Sum256(after) != sha256.Sum256(b) {
			t.Errorf("%s: opening the store changed the file", name)
		}
	}
}
