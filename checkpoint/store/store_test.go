package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/sqlite"
	"github.com/weftstudio/weft/checkpoint/store"
)

func TestOpen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := store.Open(ctx, filepath.Join(dir, "weft.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.(checkpoint.ThreadLister); !ok {
		t.Error("a SQLite store lists threads")
	}
	s.Close()

	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("not a database"), 0o644)
	if _, err := store.Open(ctx, notes); !errors.Is(err, sqlite.ErrNotDatabase) || !strings.Contains(err.Error(), notes) {
		t.Errorf("a text file: %v", err)
	}
	if _, err := store.Open(ctx, "mysql://u:p@host/db"); err == nil || !strings.Contains(err.Error(), "no driver for mysql://") || strings.Contains(err.Error(), ":p@") {
		t.Errorf("an unknown scheme: %v", err)
	}
	if _, err := store.Open(ctx, "  "); err == nil {
		t.Error("an empty store name must be refused")
	}
	t.Setenv("WEFT_ENCRYPTION_KEY", "not a key")
	if _, err := store.Open(ctx, filepath.Join(dir, "enc.db")); err == nil {
		t.Error("a malformed WEFT_ENCRYPTION_KEY must be refused")
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://weft:secret@db:5432/weft": "postgres://weft:***@db:5432/weft",
		"postgres://db/weft":                  "postgres://db/weft",
		"/home/me/weft.db":                    "/home/me/weft.db",
	} {
		if got := store.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}
