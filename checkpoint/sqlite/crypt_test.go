package sqlite_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/crypt"
	"github.com/weftstudio/weft/checkpoint/sqlite"
)

var (
	keyA = []byte("0123456789abcdef0123456789abcdef")
	keyB = []byte("fedcba9876543210fedcba9876543210")
)

// marker is a value whose bytes the tests look for in the file.
const marker = "PLAINTEXT-MARKER-7f3a"

// putMarker stores marker as a channel value and as a write value, then
// closes the store.
func putMarker(t *testing.T, path string, opts ...sqlite.Option) {
	t.Helper()
	s, err := sqlite.Open(path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	cp := checkpoint.Checkpoint{
		V: 4, ID: checkpoint.NewID(), TS: time.Now(),
		ChannelValues:   map[string][]byte{"secret": []byte(marker)},
		ChannelVersions: map[string]int64{"secret": 1},
	}
	ref, err := s.Put(t.Context(), checkpoint.Ref{ThreadID: "t"}, cp, checkpoint.Metadata{Source: checkpoint.SourceInput, Step: -1}, cp.ChannelVersions)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutWrites(t.Context(), ref, []checkpoint.Write{{Channel: "secret", Value: []byte(marker + "-write")}}, "task", ""); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// fileHolds reports whether the store's files (database, WAL) contain b.
func fileHolds(t *testing.T, path string, b []byte) bool {
	t.Helper()
	for _, p := range []string{path, path + "-wal"} {
		data, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		if bytes.Contains(data, b) {
			return true
		}
	}
	return false
}

func TestEncryptionAtRest(t *testing.T) {
	t.Run("plain_store_holds_plaintext", func(t *testing.T) {
		// The control: without a key the marker is on disk, so the check
		// below can tell.
		path := filepath.Join(t.TempDir(), "plain.db")
		putMarker(t, path)
		if !fileHolds(t, path, []byte(marker)) {
			t.Fatal("unencrypted store does not contain the plaintext value")
		}
	})
	t.Run("encrypted_store_holds_no_plaintext", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "enc.db")
		putMarker(t, path, sqlite.WithEncryptionKey(keyA))
		if fileHolds(t, path, []byte(marker)) {
			t.Fatal("encrypted store contains a plaintext value")
		}
		s, err := sqlite.Open(path, sqlite.WithEncryptionKey(keyA))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		tp, err := s.Get(t.Context(), checkpoint.Ref{ThreadID: "t"})
		if err != nil {
			t.Fatal(err)
		}
		if string(tp.Checkpoint.ChannelValues["secret"]) != marker || string(tp.PendingWrites[0].Value) != marker+"-write" {
			t.Fatalf("decrypted %q and %q", tp.Checkpoint.ChannelValues["secret"], tp.PendingWrites[0].Value)
		}
		if tp.Metadata.Source != checkpoint.SourceInput {
			t.Fatalf("metadata %+v", tp.Metadata)
		}
	})
}

func TestEncryptionKeyChecks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "enc.db")
	putMarker(t, path, sqlite.WithEncryptionKey(keyA))

	t.Run("missing_key", func(t *testing.T) {
		err := expectOpenError(t, path, crypt.ErrKeyRequired)
		if !strings.Contains(err.Error(), crypt.EnvVar) {
			t.Errorf("error %q does not mention %s", err, crypt.EnvVar)
		}
		expectOpenError(t, path, crypt.ErrKeyRequired, sqlite.ReadOnly())
	})
	t.Run("wrong_key", func(t *testing.T) {
		expectOpenError(t, path, crypt.ErrWrongKey, sqlite.WithEncryptionKey(keyB))
		expectOpenError(t, path, crypt.ErrWrongKey, sqlite.WithEncryptionKey(keyA[:16]))
	})
	t.Run("bad_key_length", func(t *testing.T) {
		expectOpenError(t, path, crypt.ErrBadKey, sqlite.WithEncryptionKey([]byte("short")))
	})
	t.Run("key_from_environment", func(t *testing.T) {
		t.Setenv(crypt.EnvVar, base64.StdEncoding.EncodeToString(keyA))
		key, err := crypt.KeyFromEnv()
		if err != nil {
			t.Fatal(err)
		}
		s, err := sqlite.Open(path, sqlite.WithEncryptionKey(key))
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	})
}

func TestEncryptionOfExistingStores(t *testing.T) {
	t.Run("key_for_unencrypted_data_is_refused", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "plain.db")
		putMarker(t, path)
		expectOpenError(t, path, sqlite.ErrNotEncrypted, sqlite.WithEncryptionKey(keyA))
		s, err := sqlite.Open(path) // still fine without a key
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	})
	t.Run("key_for_empty_store_encrypts_it", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "empty.db")
		s, err := sqlite.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		putMarker(t, path, sqlite.WithEncryptionKey(keyA))
		expectOpenError(t, path, crypt.ErrKeyRequired)
		if fileHolds(t, path, []byte(marker)) {
			t.Fatal("store encrypted after creation holds plaintext")
		}
	})
}
