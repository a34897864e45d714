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

// MustExist and ReadOnly never create or convert a file.
func TestOpenModes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	missing := filepath.Join(dir, "typo.db")
	for _, opt := range []store.Option{store.MustExist(), store.ReadOnly()} {
		if _, err := store.Open(ctx, missing, opt); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a missing path: %v", err)
		}
		if _, err := os.Stat(missing); err == nil {
			t.Fatal("a missing store was created")
		}
	}
	empty := filepath.Join(dir, "empty.db")
	os.WriteFile(empty, nil, 0o644)
	if _, err := store.Open(ctx, empty, store.MustExist()); !errors.Is(err, sqlite.ErrEmptyFile) {
		t.Errorf("a 0-byte file: %v", err)
	}
	created := filepath.Join(dir, "new.db")
	s, err := store.Open(ctx, created)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = store.Open(ctx, created, store.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.DeleteThread(ctx, "x"); !errors.Is(err, checkpoint.ErrReadOnly) {
		t.Errorf("a write through a read-only store: %v", err)
	}
}
