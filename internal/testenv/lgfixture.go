package testenv

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// LangGraphFixture unpacks checkpoint/langgraph/testdata/NAME.gz (a
// store written by LangGraph itself, or LangGraph's own view of one) into
// a folder of the test's and returns the unpacked file's path. The
// fixtures are found from this file's place in the module, so a test of
// any package can use them.
func LangGraphFixture(t testing.TB, name string) string {
	t.Helper()
	_, here, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("testenv: cannot tell where the module is")
	}
	src := filepath.Join(filepath.Dir(here), "..", "..", "checkpoint", "langgraph", "testdata", name+".gz")
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	out := filepath.Join(t.TempDir(), name)
	w, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(w, z); err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}
