package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"path/filepath"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/nodecache/nodecachetest"
	"github.com/weftstudio/weft/checkpoint/sqlite"
)

func TestNodeCacheConformance(t *testing.T) {
	s, err := sqlite.Open(filepath.Join(t.TempDir(), "weft.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	nodecachetest.Run(t, s.NodeCache())
}

// TestNodeCacheOutlivesTheProcess reopens the file: the entry is still
// there, as a cache in the store is meant to be.
func TestNodeCacheOutlivesTheProcess(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "weft.db")
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.NodeCache().Set(ctx, "g|a", "k", []checkpoint.Write{{Channel: "x", Value: []byte(`"v"`)}}, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ws, ok, err := s.NodeCache().Get(ctx, "g|a", "k")
	if err != nil || !ok || len(ws) != 1 || string(ws[0].Value) != `"v"` {
		t.Fatalf("after reopening: %v %v %v, want the entry", ws, ok, err)
	}
}

// TestNodeCacheEncrypted: with a key the entry is sealed in the file (the
// value's bytes are not there in clear) and reads back.
func TestNodeCacheEncrypted(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "weft.db")
	s, err := sqlite.Open(path, sqlite.WithEncryptionKey(bytes.Repeat([]byte{7}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	nodecachetest.Run(t, s.NodeCache())
	secret := `"kelp-forest-secret"`
	if err := s.NodeCache().Set(ctx, "g|a", "k", []checkpoint.Write{{Channel: "x", Value: []byte(secret)}}, 0); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var blob []byte
	if err := db.QueryRow(`SELECT writes FROM node_cache WHERE ns = 'g|a'`).Scan(&blob); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(blob, []byte("kelp-forest-secret")) || bytes.Contains(blob, []byte(base64.StdEncoding.EncodeToString([]byte(secret)))) {
		t.Fatal("the cached write is stored in clear in an encrypted store")
	}
	if ws, ok, err := s.NodeCache().Get(ctx, "g|a", "k"); err != nil || !ok || string(ws[0].Value) != secret {
		t.Fatalf("Get = %v %v %v", ws, ok, err)
	}
}
