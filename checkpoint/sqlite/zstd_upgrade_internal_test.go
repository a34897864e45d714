package sqlite

import (
	"bytes"
	"compress/flate"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
)

// A store written before zstd (schema 7, values packed with DEFLATE) is
// upgraded in place and reads as before, its DEFLATE values beside the
// zstd ones written after the upgrade.
func TestDeflateValuesReadAfterTheZstdUpgrade(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "old.sqlite")
	db := storeAtSchema(t, path, zstdSchema-1)
	old := `"` + strings.Repeat("written by schema 7 ", 100) + `"`
	var packed bytes.Buffer
	packed.WriteByte(0x01)
	w, _ := flate.NewWriter(&packed, flate.BestSpeed)
	w.Write([]byte(old))
	w.Close()
	header := `{"v":4,"channel_versions":{"notes":1},"versions_seen":{},"updated_channels":["notes"]}`
	if _, err := db.Exec(`INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, ts, checkpoint, metadata)
 VALUES ('t', '', '1ef00000-0000-6000-8000-000000000001', '2026-11-01T00:00:00Z', ?, '{"source":"input","step":-1}')`, header); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO blobs (thread_id, checkpoint_ns, channel, version, value) VALUES ('t', '', 'notes', 1, ?)`, packed.Bytes()); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tup, err := s.Get(ctx, checkpoint.Ref{ThreadID: "t"})
	if err != nil || string(tup.Checkpoint.ChannelValues["notes"]) != old {
		t.Fatalf("the DEFLATE value after the upgrade: %.40q…, %v", tup.Checkpoint.ChannelValues["notes"], err)
	}
	// A new value beside it is packed with zstd and reads back too.
	fresh := []byte(`"` + strings.Repeat("written by schema 8 ", 100) + `"`)
	cp := tup.Checkpoint
	cp.ID = "1ef00000-0000-6000-8000-000000000002"
	cp.TS = time.Now()
	cp.ChannelValues = map[string][]byte{"notes": fresh}
	cp.ChannelVersions = map[string]int64{"notes": 2}
	if _, err := s.Put(ctx, tup.Ref, cp, checkpoint.Metadata{Source: checkpoint.SourceUpdate, Step: 0}, map[string]int64{"notes": 2}); err != nil {
		t.Fatal(err)
	}
	var stored []byte
	if err := s.r.QueryRowContext(ctx, "SELECT value FROM blobs WHERE version = 2").Scan(&stored); err != nil || len(stored) < 2 || stored[0] != 0x01 || stored[1] != 0xff {
		t.Fatalf("the new value is stored as %.8x…, %v; want the zstd mark", stored, err)
	}
	got, err := s.Get(ctx, checkpoint.Ref{ThreadID: "t"})
	if err != nil || !bytes.Equal(got.Checkpoint.ChannelValues["notes"], fresh) {
		t.Fatalf("the zstd value: %.40q…, %v", got.Checkpoint.ChannelValues["notes"], err)
	}
	var v int
	if err := s.r.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil || v != SchemaVersion || SchemaVersion < zstdSchema {
		t.Fatalf("user_version %d after the upgrade, %v; want %d", v, err, SchemaVersion)
	}
}
