package sqlite_test

import (
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/sqlite"
)

// rawDB opens path with the driver directly, bypassing the store's checks.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func mustExec(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// filledFile creates a store at a new path with n checkpoints in thread "t"
// and closes it.
func filledFile(t *testing.T, n int, opts ...sqlite.Option) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "weft.db")
	s, err := sqlite.Open(path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	fillChain(t, s, "t", n, true)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// expectOpenError opens path and checks the error wraps want and names path.
func expectOpenError(t *testing.T, path string, want error, opts ...sqlite.Option) error {
	t.Helper()
	s, err := sqlite.Open(path, opts...)
	if err == nil {
		s.Close()
		t.Fatalf("Open(%s) succeeded, want an error", path)
	}
	if want != nil && !errors.Is(err, want) {
		t.Fatalf("Open(%s) = %v, want an error wrapping %q", path, err, want)
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not name the path %s", err, path)
	}
	t.Logf("Open error: %v", err)
	return err
}

func TestOpenNotADatabase(t *testing.T) {
	dir := t.TempDir()
	random := make([]byte, 8192)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"random_bytes", random},
		{"text_file", []byte("thread,checkpoint\nmain,1\n")},
		{"one_byte", []byte("x")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".db")
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			err := expectOpenError(t, path, sqlite.ErrNotDatabase)
			if !strings.Contains(err.Error(), "not a SQLite database") {
				t.Errorf("error %q does not say it is not a SQLite database", err)
			}
			if got, _ := os.ReadFile(path); string(got) != string(tc.data) {
				t.Error("Open changed the file")
			}
		})
	}
}

func TestOpenForeignFile(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup string
	}{
		{"other_tables", "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users VALUES (1, 'ada')"},
		{"other_application_id", "PRAGMA application_id = 305419896"},
		{"other_application_id_and_tables", "PRAGMA application_id = 1; CREATE TABLE checkpoints (x)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "other.db")
			db := rawDB(t, path)
			mustExec(t, db, tc.setup)
			db.Close()
			before, _ := os.ReadFile(path)
			err := expectOpenError(t, path, sqlite.ErrForeignFile)
			if !strings.Contains(err.Error(), "is a SQLite database but not a Weft") {
				t.Errorf("error %q does not say the file is not a Weft store", err)
			}
			if after, _ := os.ReadFile(path); string(after) != string(before) {
				t.Error("Open changed the foreign file")
			}
		})
	}
}

func TestOpenTruncated(t *testing.T) {
	path := filledFile(t, 300)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() < 64<<10 {
		t.Fatalf("test store is only %d bytes; want a multi-page file", fi.Size())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		size int64
	}{
		{"half", fi.Size() / 2 / 4096 * 4096},
		{"mid_page", fi.Size()/2 + 100},
		{"inside_header", 60},
		{"one_page", 4096},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "truncated.db")
			if err := os.WriteFile(p, data[:tc.size], 0o644); err != nil {
				t.Fatal(err)
			}
			expectOpenError(t, p, sqlite.ErrCorrupt)
		})
	}
}

// Overwriting pages in the middle keeps the size right; the damage must show
// as ErrCorrupt at Open (quick_check) or at the first read, never as a
// panic or as data. The second run opens the file as if it were too large
// for quick_check, so the damage surfaces on reading.
func TestOpenCorruptPages(t *testing.T) {
	t.Run("quick_check_at_open", testCorruptPages)
	t.Run("first_read", func(t *testing.T) {
		defer sqlite.SetQuickCheckLimit(0)()
		testCorruptPages(t)
	})
}

func testCorruptPages(t *testing.T) {
	path := filledFile(t, 300)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	for i := 4096 * 2; i < len(data)-4096; i++ {
		data[i] = byte(r.Uint32())
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := sqlite.Open(path)
	if err == nil {
		defer s.Close()
		for _, err = range s.List(t.Context(), checkpoint.ListOptions{}) {
			if err != nil {
				break
			}
		}
		if err == nil {
			t.Fatal("a store with overwritten pages opened and listed without error")
		}
	}
	if !errors.Is(err, sqlite.ErrCorrupt) || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v, want ErrCorrupt naming %s", err, path)
	}
	t.Logf("error: %v", err)
}

// A file whose schema is newer than this build opens read-only: reads work,
// every write fails with ErrReadOnly, and the file is left as it was.
func TestOpenNewerSchema(t *testing.T) {
	path := filledFile(t, 3)
	db := rawDB(t, path)
	mustExec(t, db, fmt.Sprintf("PRAGMA user_version = %d; CREATE TABLE future (x)", sqlite.SchemaVersion+1))
	db.Close()

	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatalf("Open of a newer store: %v", err)
	}
	defer s.Close()
	reason := s.ReadOnlyReason()
	if !errors.Is(reason, checkpoint.ErrReadOnly) || !strings.Contains(reason.Error(), "newer Weft") || !strings.Contains(reason.Error(), path) {
		t.Fatalf("ReadOnlyReason() = %v, want ErrReadOnly saying a newer Weft wrote %s", reason, path)
	}
	tp, err := s.Get(t.Context(), checkpoint.Ref{ThreadID: "t"})
	if err != nil || tp.Metadata.Step != 2 {
		t.Fatalf("Get from a newer store = %v, %v", tp, err)
	}
	expectReadOnly(t, s, tp.Ref)

	db = rawDB(t, path)
	var v int
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != sqlite.SchemaVersion+1 {
		t.Fatalf("user_version = %d, %v after opening; want it untouched", v, err)
	}
}

// expectReadOnly checks that every write fails with ErrReadOnly.
func expectReadOnly(t *testing.T, s *sqlite.Saver, ref checkpoint.Ref) {
	t.Helper()
	cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: time.Now()}
	_, err := s.Put(t.Context(), ref, cp, checkpoint.Metadata{Source: checkpoint.SourceLoop}, nil)
	for name, err := range map[string]error{
		"Put":          err,
		"PutWrites":    s.PutWrites(t.Context(), ref, []checkpoint.Write{{Channel: "a", Value: []byte("1")}}, "task", ""),
		"DeleteThread": s.DeleteThread(t.Context(), ref.ThreadID),
		"Prune":        s.Prune(t.Context(), []string{ref.ThreadID}, 1),
		"CopyThread":   s.CopyThread(t.Context(), ref.ThreadID, "copy"),
	} {
		if !errors.Is(err, checkpoint.ErrReadOnly) {
			t.Errorf("%s on a read-only store = %v, want ErrReadOnly", name, err)
		}
	}
	if _, err := s.Get(t.Context(), ref); err != nil {
		t.Errorf("Get after refused writes: %v", err)
	}
}

func TestReadOnlyOption(t *testing.T) {
	path := filledFile(t, 3)
	s, err := sqlite.Open(path, sqlite.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var n int
	for _, err := range s.List(t.Context(), checkpoint.ListOptions{ThreadID: "t"}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 3 {
		t.Fatalf("listed %d checkpoints, want 3", n)
	}
	tp, err := s.Get(t.Context(), checkpoint.Ref{ThreadID: "t"})
	if err != nil {
		t.Fatal(err)
	}
	expectReadOnly(t, s, tp.Ref)

	missing := filepath.Join(t.TempDir(), "missing.db")
	expectOpenError(t, missing, fs.ErrNotExist, sqlite.ReadOnly())
	if _, err := os.Stat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open read-only created %s", missing)
	}
}

func TestOpenBadPaths(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plain-file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, says string
	}{
		{"parent_is_a_file", filepath.Join(file, "weft.db"), "not a directory"},
		{"grandparent_is_a_file", filepath.Join(file, "sub", "weft.db"), "not a directory"},
		{"missing_directory", filepath.Join(dir, "no", "such", "weft.db"), "does not exist"},
		{"path_is_a_directory", dir, "is a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := expectOpenError(t, tc.path, nil)
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %q does not say %q", err, tc.says)
			}
		})
	}
	for _, p := range []string{"", ":memory:", "file:x.db?mode=memory"} {
		if s, err := sqlite.Open(p); err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded", p)
		}
	}
}

// A new file gets Weft's application_id and the schema version.
func TestFileIdentity(t *testing.T) {
	path := filledFile(t, 1)
	db := rawDB(t, path)
	var app, version int64
	if err := db.QueryRow("PRAGMA application_id").Scan(&app); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("PRAGMA user_version").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if app != sqlite.ApplicationID || version != int64(sqlite.SchemaVersion) || sqlite.SchemaVersion < 1 {
		t.Fatalf("application_id %#x user_version %d; want %#x and %d", app, version, sqlite.ApplicationID, sqlite.SchemaVersion)
	}
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q, %v; want wal", mode, err)
	}
}

// Several Opens of one new file at once: one creates the schema, the others
// wait for it and find it.
func TestConcurrentOpenOfNewFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "weft.db")
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := sqlite.Open(path)
			if err != nil {
				errs <- err
				return
			}
			errs <- s.Close()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// Python test_put_writes_idempotent_across_restart: replaying a task's writes
// after reopening the store adds nothing.
func TestWritesIdempotentAcrossReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "weft.db")
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: time.Now()}
	ref, err := s.Put(t.Context(), checkpoint.Ref{ThreadID: "t"}, cp, checkpoint.Metadata{Source: checkpoint.SourceInput, Step: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ws := []checkpoint.Write{{Channel: "ch", Value: []byte(`"val"`)}}
	if err := s.PutWrites(t.Context(), ref, ws, "task", ""); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.PutWrites(t.Context(), ref, ws, "task", ""); err != nil {
		t.Fatal(err)
	}
	tp, err := s.Get(t.Context(), ref)
	if err != nil {
		t.Fatal(err)
	}
	if len(tp.PendingWrites) != 1 || string(tp.PendingWrites[0].Value) != `"val"` {
		t.Fatalf("after replay: %+v", tp.PendingWrites)
	}
}

// One blob per changed channel: a step that changes 5 of 50 channels stores
// 5 values, and the checkpoint still reads all 50.
func TestOnlyChangedChannelsStored(t *testing.T) {
	s := openTemp(t)
	values := map[string][]byte{}
	versions := map[string]int64{}
	for i := range 50 {
		ch := fmt.Sprintf("ch%02d", i)
		values[ch], versions[ch] = []byte(fmt.Sprint(i)), 1
	}
	cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: time.Now(), ChannelValues: values, ChannelVersions: versions}
	ref, err := s.Put(t.Context(), checkpoint.Ref{ThreadID: "t"}, cp, checkpoint.Metadata{Source: checkpoint.SourceInput}, versions)
	if err != nil {
		t.Fatal(err)
	}
	before, err := s.Stats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	next := cp.Clone()
	next.ID = checkpoint.NewID()
	changed := map[string]int64{}
	for i := range 5 {
		ch := fmt.Sprintf("ch%02d", i*10)
		next.ChannelValues[ch] = []byte("changed")
		next.ChannelVersions[ch] = 2
		changed[ch] = 2
	}
	if _, err := s.Put(t.Context(), ref, next, checkpoint.Metadata{Source: checkpoint.SourceLoop}, changed); err != nil {
		t.Fatal(err)
	}
	after, err := s.Stats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if before.Blobs != 50 || after.Blobs != 55 {
		t.Fatalf("blobs: %d after the first put, %d after the second; want 50 and 55", before.Blobs, after.Blobs)
	}
	tp, err := s.Get(t.Context(), checkpoint.Ref{ThreadID: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if len(tp.Checkpoint.ChannelValues) != 50 || string(tp.Checkpoint.ChannelValues["ch10"]) != "changed" || string(tp.Checkpoint.ChannelValues["ch11"]) != "11" {
		t.Fatalf("second checkpoint reads %d values (ch10=%q ch11=%q)", len(tp.Checkpoint.ChannelValues), tp.Checkpoint.ChannelValues["ch10"], tp.Checkpoint.ChannelValues["ch11"])
	}
}

func TestClosedStoreFails(t *testing.T) {
	s, err := sqlite.Open(filepath.Join(t.TempDir(), "weft.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(t.Context(), checkpoint.Ref{ThreadID: "t"}); err == nil || errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("Get after Close = %v, want a closed-database error", err)
	}
}

// TestOpenBadSchemaVersion pins the files whose user_version no Weft wrote:
// a Weft store with a version below 1 (the fuzzer's -256 once panicked
// slicing the migrations), and a table-less file another program numbered.
// Each is refused with an error naming the file and the number, untouched.
func TestOpenBadSchemaVersion(t *testing.T) {
	for _, tc := range []struct {
		name    string
		path    func(t *testing.T) string
		setup   string
		want    error
		message string
	}{
		{"weft_negative", func(t *testing.T) string { return filledFile(t, 2) }, "PRAGMA user_version = -256", sqlite.ErrCorrupt, "schema version -256"},
		{"weft_zero", func(t *testing.T) string { return filledFile(t, 2) }, "PRAGMA user_version = 0", sqlite.ErrCorrupt, "schema version 0"},
		{"empty_numbered", func(t *testing.T) string { return filepath.Join(t.TempDir(), "other.db") }, "PRAGMA user_version = 3", sqlite.ErrForeignFile, "user_version 3"},
		{"empty_negative", func(t *testing.T) string { return filepath.Join(t.TempDir(), "other.db") }, "PRAGMA user_version = -1", sqlite.ErrForeignFile, "user_version -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path(t)
			db := rawDB(t, path)
			mustExec(t, db, tc.setup)
			db.Close()
			before, _ := os.ReadFile(path)
			for _, opts := range [][]sqlite.Option{nil, {sqlite.ReadOnly()}, {sqlite.MustExist()}} {
				err := expectOpenError(t, path, tc.want, opts...)
				if !strings.Contains(err.Error(), tc.message) {
					t.Errorf("error %q does not say %q", err, tc.message)
				}
			}
			if after, _ := os.ReadFile(path); string(after) != string(before) {
				t.Error("Open changed the file")
			}
		})
	}
}
