package sqlite_test

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/sqlite"
)

// copyFile copies src to dst if src exists.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A crash while a checkpoint of the write-ahead log was copying pages into
// the main file leaves a header that counts pages the main file does not
// have yet; the log still holds them. SQLite replays the log on open, so
// the store must open with everything in it (it used to be refused as
// "truncated").
func TestOpenRecoversFromWAL(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "live.db")
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Keep every page in the log: no automatic checkpoint.
	raw := rawDB(t, path)
	raw.SetMaxOpenConns(1)
	mustExec(t, raw, "PRAGMA wal_autocheckpoint = 0")
	if _, err := raw.Exec("BEGIN; SELECT 1 FROM checkpoints LIMIT 1"); err != nil {
		t.Fatal(err)
	}
	fillChain(t, s, "t", 400, true)
	// The snapshot a SIGKILL would leave: main file, log and index as they
	// are now, with the main file's header already counting the log's pages.
	crashed := filepath.Join(dir, "crashed.db")
	copyFile(t, path, crashed)
	copyFile(t, path+"-wal", crashed+"-wal")
	copyFile(t, path+"-shm", crashed+"-shm")
	if fi, err := os.Stat(crashed + "-wal"); err != nil || fi.Size() < 64<<10 {
		t.Fatalf("the write-ahead log holds %v bytes (%v); want the pages of 400 checkpoints", fi, err)
	}
	f, err := os.OpenFile(crashed, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	hdr := make([]byte, 100)
	if _, err := f.ReadAt(hdr, 0); err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	binary.BigEndian.PutUint32(hdr[28:32], uint32(fi.Size()/4096+50))
	if _, err := f.WriteAt(hdr, 0); err != nil {
		t.Fatal(err)
	}
	f.Close()

	for _, opts := range [][]sqlite.Option{{sqlite.ReadOnly()}, nil} {
		c, err := sqlite.Open(crashed, opts...)
		if err != nil {
			t.Fatalf("a store SQLite can recover is refused: %v", err)
		}
		var n int
		for _, err := range c.List(t.Context(), checkpoint.ListOptions{ThreadID: "t"}) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		c.Close()
		if n != 400 {
			t.Fatalf("recovered store lists %d checkpoints, want 400", n)
		}
	}
}

// Opening a healthy store while another connection writes to it never
// reports it corrupt: the header and the file size are read at different
// moments, and a checkpoint of the log may grow the file in between.
func TestOpenWhileAnotherWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "busy.db")
	w, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() {
		parent := checkpoint.Ref{ThreadID: "busy"}
		big := make([]byte, 6000) // several pages per step, so the file keeps growing
		for i := 0; ctx.Err() == nil; i++ {
			for j := range big {
				big[j] = byte(i*31 + j*7)
			}
			cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: time.Now(),
				ChannelValues: map[string][]byte{"v": big}, ChannelVersions: map[string]int64{"v": int64(i + 1)}}
			ref, err := w.Put(context.Background(), parent, cp, checkpoint.Metadata{Source: checkpoint.SourceLoop, Step: i}, cp.ChannelVersions)
			if err != nil {
				t.Error(err)
				return
			}
			parent = ref
		}
	})
	deadline := time.Now().Add(2 * time.Second)
	opens := 0
	for ; time.Now().Before(deadline); opens++ {
		opts := []sqlite.Option{sqlite.ReadOnly()}
		if opens%2 == 1 {
			opts = nil
		}
		r, err := sqlite.Open(path, opts...)
		if err != nil {
			cancel()
			wg.Wait()
			t.Fatalf("open %d of a healthy store during writes: %v", opens, err)
		}
		r.Close()
	}
	cancel()
	wg.Wait()
	t.Logf("%d opens during writes", opens)
	if opens < 20 {
		t.Fatalf("only %d opens", opens)
	}
}

// A store carrying code or objects that Weft did not create is refused at
// Open, naming them, and the code never runs: a trigger planted on a Weft
// table would otherwise run on Weft's own writes.
func TestOpenRefusesPlantedSchemaObjects(t *testing.T) {
	for _, tc := range []struct{ name, setup, says string }{
		{"trigger", `CREATE TABLE spy (x); CREATE TRIGGER steal AFTER INSERT ON checkpoints BEGIN INSERT INTO spy VALUES (new.metadata); END`, `trigger "steal"`},
		{"trigger_alone", `CREATE TRIGGER tamper AFTER INSERT ON writes BEGIN UPDATE writes SET value = NULL; END`, `trigger "tamper"`},
		{"view", `CREATE VIEW everything AS SELECT * FROM checkpoints`, `view "everything"`},
		{"table", `CREATE TABLE extra (x)`, `table "extra"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filledFile(t, 2)
			db := rawDB(t, path)
			mustExec(t, db, tc.setup)
			db.Close()
			for _, opts := range [][]sqlite.Option{nil, {sqlite.ReadOnly()}} {
				err := expectOpenError(t, path, sqlite.ErrForeignFile, opts...)
				if !strings.Contains(err.Error(), tc.says) {
					t.Errorf("error %q does not name %s", err, tc.says)
				}
			}
		})
	}
}

// Functions with side effects are not callable from a store's schema:
// trusted_schema is off on every connection.
func TestTrustedSchemaOff(t *testing.T) {
	path := filledFile(t, 1)
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, ro := range []bool{false, true} {
		v, err := sqlite.PragmaOf(s, "trusted_schema", ro)
		if err != nil || v != 0 {
			t.Errorf("trusted_schema (read pool %v) = %d, %v; want 0", ro, v, err)
		}
	}
}

// Opening with MustExist (and ReadOnly) refuses what is not already a
// store, and leaves it as it was: a missing path, a 0-byte file, another
// program's new (empty) SQLite database.
func TestMustExistRefusesAndLeavesFiles(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	otherApp := filepath.Join(dir, "other.db")
	db := rawDB(t, otherApp)
	mustExec(t, db, "PRAGMA user_version = 0; VACUUM")
	db.Close()
	if fi, err := os.Stat(otherApp); err != nil || fi.Size() == 0 {
		t.Fatalf("the empty SQLite database is %v bytes (%v); want a header", fi, err)
	}
	for _, opt := range []sqlite.Option{sqlite.MustExist(), sqlite.ReadOnly()} {
		missing := filepath.Join(dir, "missing.db")
		expectOpenError(t, missing, os.ErrNotExist, opt)
		if _, err := os.Stat(missing); err == nil {
			t.Fatal("a missing store was created")
		}
		for _, p := range []string{empty, otherApp} {
			before, _ := os.ReadFile(p)
			expectOpenError(t, p, sqlite.ErrEmptyFile, opt)
			if after, _ := os.ReadFile(p); string(after) != string(before) {
				t.Errorf("%s was changed", p)
			}
			if _, err := os.Stat(p + "-wal"); err == nil {
				t.Errorf("%s-wal was left behind", p)
			}
		}
	}
	// Without MustExist the same files become stores: the caller asked to
	// create one.
	for _, p := range []string{empty, otherApp} {
		s, err := sqlite.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
}

// A read-only open of a store nobody has open leaves no -wal or -shm file
// behind.
func TestReadOnlyOpenLeavesNoFiles(t *testing.T) {
	path := filledFile(t, 3)
	s, err := sqlite.Open(path, sqlite.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(t.Context(), checkpoint.Ref{ThreadID: "t"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(path + suffix); err == nil {
			t.Errorf("a read-only open left %s behind", filepath.Base(path+suffix))
		}
	}
	// With a writer open, its log stays.
	w, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	fillChain(t, w, "u", 2, false)
	r, err := sqlite.Open(path, sqlite.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Errorf("a read-only close removed the writer's log: %v", err)
	}
	if _, err := w.Get(t.Context(), checkpoint.Ref{ThreadID: "u"}); err != nil {
		t.Fatal(err)
	}
}

// A store whose file is deleted or replaced under the process refuses
// writes with ErrFileGone (they would be lost) and Check says so.
func TestFileDeletedOrReplaced(t *testing.T) {
	for _, tc := range []struct {
		name string
		do   func(t *testing.T, path string)
		says string
	}{
		{"deleted", func(t *testing.T, path string) {
			for _, suffix := range []string{"", "-wal", "-shm"} {
				os.Remove(path + suffix)
			}
		}, "deleted"},
		{"moved", func(t *testing.T, path string) {
			if err := os.Rename(path, path+".old"); err != nil {
				t.Fatal(err)
			}
		}, "deleted or moved"},
		{"replaced", func(t *testing.T, path string) {
			other := filledFile(t, 1)
			if err := os.Rename(other, path); err != nil {
				t.Fatal(err)
			}
		}, "another file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filledFile(t, 2)
			s, err := sqlite.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Check(t.Context()); err != nil {
				t.Fatalf("Check of a healthy store: %v", err)
			}
			latest, err := s.Get(t.Context(), checkpoint.Ref{ThreadID: "t"})
			if err != nil {
				t.Fatal(err)
			}
			tc.do(t, path)
			time.Sleep(30 * time.Millisecond) // writes check every 20 ms at most
			cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: time.Now()}
			if _, err := s.Put(t.Context(), latest.Ref, cp, checkpoint.Metadata{Source: checkpoint.SourceLoop}, nil); !errors.Is(err, sqlite.ErrFileGone) {
				t.Errorf("Put into a %s file = %v; want ErrFileGone", tc.name, err)
			}
			if err := s.Check(t.Context()); !errors.Is(err, sqlite.ErrFileGone) || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), path) {
				t.Errorf("Check = %v; want ErrFileGone saying %q", err, tc.says)
			}
			if err := s.PutWrites(t.Context(), latest.Ref, []checkpoint.Write{{Channel: "a", Value: []byte("1")}}, "task", ""); !errors.Is(err, sqlite.ErrFileGone) {
				t.Errorf("PutWrites into a %s file = %v; want ErrFileGone", tc.name, err)
			}
		})
	}
}
