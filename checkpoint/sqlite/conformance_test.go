package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/checkpointtest"
	"github.com/weftstudio/weft/checkpoint/sqlite"
)

// openTemp opens a new store in a file of t.TempDir and closes it at the end
// of the test.
func openTemp(t testing.TB, opts ...sqlite.Option) *sqlite.Saver {
	t.Helper()
	s, err := sqlite.Open(filepath.Join(t.TempDir(), "weft.db"), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

func TestConformance(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver { return openTemp(t) })
}

func TestConformanceEncrypted(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver { return openTemp(t, sqlite.WithEncryptionKey(key)) })
}
