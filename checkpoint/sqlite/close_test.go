package sqlite_test

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/sqlite"
)

// Close leaves nothing of the saver running: a goroutine still opening a
// connection after Close can create the -wal and -shm files of a store its
// caller has already closed (and is deleting), as the fuzz test met on CI.
func TestCloseWaitsForBackgroundWork(t *testing.T) {
	dir := t.TempDir()
	seed := filepath.Join(dir, "seed.db")
	s, err := sqlite.Open(seed)
	if err != nil {
		t.Fatal(err)
	}
	fillChain(t, s, "t", 3, true)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		for _, opts := range [][]sqlite.Option{nil, {sqlite.ReadOnly()}} {
			s, err := sqlite.Open(seed, opts...)
			if err != nil {
				t.Fatal(err)
			}
			// A first listing of each query shape prepares it for the pool in
			// the background.
			for _, err := range s.List(t.Context(), checkpoint.ListOptions{Limit: 2}) {
				if err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			// A frame of a method of this saver names it as its receiver
			// (goroutines left by other tests name theirs).
			buf := make([]byte, 1<<20)
			stacks := string(buf[:runtime.Stack(buf, true)])
			for line := range strings.Lines(stacks) {
				if strings.Contains(line, "sqlite.(*Saver).") && strings.Contains(line, fmt.Sprintf("(%p", s)) {
					t.Fatalf("round %d: a goroutine of the saver runs after Close:\n%s", i, stacks)
				}
			}
		}
	}
}
