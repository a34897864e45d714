package render_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGraphvizCacheChild is not a test: TestGraphvizCacheInUserCacheDir
// runs this test binary again with this function selected, so that
// go-graphviz initialises under the environment it sets.
func TestGraphvizCacheChild(t *testing.T) {
	if os.Getenv("WEFT_GV_CACHE_CHILD") == "" {
		t.Skip("child process of TestGraphvizCacheInUserCacheDir")
	}
	fmt.Printf("TMPDIR=%s\n", os.Getenv("TMPDIR"))
}

// go-graphviz caches its compiled WebAssembly under $TMPDIR/go-graphviz, a
// folder shared by every user and owned by the first: another user's
// process then panicked at start. The cache must go to the user's own cache
// directory, and TMPDIR must be as it was once initialisation is over.
func TestGraphvizCacheInUserCacheDir(t *testing.T) {
	dir := t.TempDir()
	tmp, cache := filepath.Join(dir, "tmp"), filepath.Join(dir, "cache")
	for _, d := range []string{tmp, cache} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestGraphvizCacheChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "WEFT_GV_CACHE_CHILD=1", "TMPDIR="+tmp, "XDG_CACHE_HOME="+cache, "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "TMPDIR="+tmp+"\n") {
		t.Errorf("TMPDIR was not restored after Graphviz initialised:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(tmp, "go-graphviz")); err == nil {
		t.Errorf("Graphviz still caches in the shared $TMPDIR/go-graphviz")
	}
	entries, err := os.ReadDir(filepath.Join(cache, "weft", "go-graphviz"))
	if err != nil || len(entries) == 0 {
		t.Fatalf("no Graphviz cache in the user's cache directory %s: %v", filepath.Join(cache, "weft", "go-graphviz"), err)
	}
}
