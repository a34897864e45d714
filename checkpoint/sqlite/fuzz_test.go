package sqlite_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/sqlite"
)

// FuzzOpenStore feeds mutated store files to Open, List and Get: whatever
// the bytes, Weft returns data or an error, never panics, and takes memory
// bounded by the value limit. Seeds: real stores (one with pending writes,
// one with a compressed value) from fuzzSeeds and testdata/fuzz.
//
//	go test -run '^$' -fuzz FuzzOpenStore -fuzztime 8000x -fuzzminimizetime 10x ./checkpoint/sqlite
func FuzzOpenStore(f *testing.F) {
	for _, seed := range fuzzSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "fuzz.db")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, opts := range [][]sqlite.Option{{sqlite.ReadOnly()}, {sqlite.MustExist()}} {
			s, err := sqlite.Open(path, append(opts, sqlite.WithMaxValueSize(1<<20))...)
			if err != nil {
				continue
			}
			n := 0
			for tp, err := range s.List(t.Context(), checkpoint.ListOptions{}) {
				if err != nil {
					break
				}
				if _, err := s.Get(t.Context(), tp.Ref); err != nil {
					break
				}
				if n++; n > 50 {
					break
				}
			}
			if tl, ok := any(s).(checkpoint.ThreadLister); ok {
				tl.ListThreads(t.Context(), 10)
			}
			s.Close()
		}
	})
}

// fuzzSeeds returns the bytes of small stores: a thread with values and
// writes, and one with a value large enough to be stored compressed.
func fuzzSeeds(f *testing.F) [][]byte {
	f.Helper()
	var out [][]byte
	for _, n := range []int{2, 5} {
		dir := f.TempDir()
		path := filepath.Join(dir, "seed.db")
		// 512-byte pages keep the seeds small (a few KB): the fuzzer
		// mutates and minimises faster.
		raw, err := sql.Open("sqlite", "file:"+path)
		if err == nil {
			_, err = raw.Exec("PRAGMA page_size = 512; VACUUM")
			raw.Close()
		}
		if err != nil {
			f.Fatal(err)
		}
		s, err := sqlite.Open(path)
		if err != nil {
			f.Fatal(err)
		}
		fillChain(f, s, "t", n, true)
		if n == 5 {
			big := make([]byte, 2000)
			for i := range big {
				big[i] = 'a' + byte(i%7)
			}
			cp := stepCheckpoint("t", 9)
			cp.ChannelValues["step"] = big
			if _, err := s.Put(f.Context(), checkpoint.Ref{ThreadID: "big"}, cp, checkpoint.Metadata{Source: checkpoint.SourceInput, Step: -1}, cp.ChannelVersions); err != nil {
				f.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			f.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}
