// Package replaytest turns recorded threads into Go tests. Export a thread
// that once went wrong as a bundle (weft export, or the studio's File
// menu), keep it under the package's testdata/, and Check replays it
// against the graph's current code: the test fails at the first
// checkpoint where the code now does something else, with the diff.
// WriteTestFile writes such a test, and SaveTest writes both the bundle
// and the test.
//
//	func TestRefundThread(t *testing.T) {
//		replaytest.Check(t, newGraph(), "testdata/refund-thread.json", replay.Strict())
//	}
package replaytest

import (
	"bytes"
	"context"
	"fmt"
	"go/format"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"text/template"
	"unicode"
	"unicode/utf8"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/bundle"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/replay"
)

// Check imports the thread bundle at bundlePath into a memory store,
// replays it against g (see package replay; g's own saver is not used)
// and fails the test when the replay differs from the recording, with the
// report's diff. A bundle that cannot be read or replayed fails the test
// too. It returns the report of a matching replay.
func Check(t testing.TB, g *engine.Graph, bundlePath string, opts ...replay.Option) *replay.Report {
	t.Helper()
	f, err := os.Open(bundlePath)
	if err != nil {
		t.Fatalf("replaytest: %v", err)
		return nil
	}
	defer f.Close()
	s := memory.New()
	thread, err := bundle.Import(t.Context(), s, f)
	if err != nil {
		t.Fatalf("replaytest: %s: %v", bundlePath, err)
		return nil
	}
	rep, err := replay.Run(t.Context(), g, s, thread, opts...)
	if err != nil {
		t.Fatalf("replaytest: %s: %v", bundlePath, err)
		return nil
	}
	if !rep.Match {
		t.Fatalf("replaytest: %s: the graph's code no longer does what the recorded thread did.\n%s", bundlePath, rep.Text())
		return nil
	}
	return rep
}

// FileOption changes the test WriteTestFile writes.
type FileOption func(*fileConfig)

type fileConfig struct {
	graph   string
	imports []string
	strict  bool
}

// GraphExpr sets the Go expression the test gets its graph from (of type
// *engine.Graph; t is the test's *testing.T), with the import paths it
// needs, e.g. GraphExpr("myapp.NewGraph(nil)", "example.com/myapp").
// Without it the file defines a function for the user to fill in, which
// fails the test saying so until then.
func GraphExpr(expr string, imports ...string) FileOption {
	return func(c *fileConfig) { c.graph, c.imports = expr, imports }
}

// StrictFile makes the test's replay strict (replay.Strict): every model
// or tool call must be served from the recording.
func StrictFile() FileOption { return func(c *fileConfig) { c.strict = true } }

// WriteTestFile writes a Go test file to w, in package pkg (as its package
// clause reads, e.g. "myapp" or "myapp_test"), with one test named
// testName ("Test…") that replays the bundle at bundleFile (relative to
// the package's directory, where go test runs, e.g.
// "testdata/thread.json") with Check. The file is gofmt'ed.
func WriteTestFile(w io.Writer, pkg, testName, bundleFile string, opts ...FileOption) error {
	var c fileConfig
	for _, o := range opts {
		o(&c)
	}
	if !token.IsIdentifier(pkg) {
		return fmt.Errorf("replaytest: package name %q is not a Go identifier", pkg)
	}
	if !isTestName(testName) {
		return fmt.Errorf("replaytest: test name %q is not a Go test name (Test followed by a word that does not start with a lower-case letter)", testName)
	}
	if bundleFile == "" || strings.ContainsAny(bundleFile, "\r\n") {
		return fmt.Errorf("replaytest: bundle file %q: want a path on one line", bundleFile)
	}
	imports := []string{"testing", "github.com/weftstudio/weft/replay/replaytest"}
	if c.strict {
		imports = append(imports, "github.com/weftstudio/weft/replay")
	}
	graph := c.graph
	if graph == "" {
		graph = "graphFor" + strings.TrimPrefix(testName, "Test") + "(t)"
		imports = append(imports, "github.com/weftstudio/weft/engine")
	}
	imports = append(imports, c.imports...)
	// Standard library first, then the rest, as goimports groups them.
	var std, other []string
	seen := map[string]bool{}
	for _, p := range imports {
		if seen[p] {
			continue
		}
		seen[p] = true
		if first, _, _ := strings.Cut(p, "/"); strings.Contains(first, ".") {
			other = append(other, strconv.Quote(p))
		} else {
			std = append(std, strconv.Quote(p))
		}
	}
	var b bytes.Buffer
	err := fileTemplate.Execute(&b, map[string]any{
		"Pkg": pkg, "Name": testName, "Bundle": strconv.Quote(bundleFile), "File": bundleFile, "Std": std, "Imports": other,
		"Graph": graph, "Stub": c.graph == "", "Helper": "graphFor" + strings.TrimPrefix(testName, "Test"), "Strict": c.strict,
	})
	if err != nil {
		return err
	}
	src, err := format.Source(b.Bytes())
	if err != nil {
		return fmt.Errorf("replaytest: the test does not parse (is the graph expression %q Go?): %w", graph, err)
	}
	_, err = w.Write(src)
	return err
}

// Saved says where SaveTest wrote.
type Saved struct {
	// Bundle is the thread's bundle; Test the test file. TestKept is true
	// when the test file was there already and was left as it was (it may
	// hold the graph's code): the new bundle is what it replays.
	Bundle   string
	Test     string
	TestKept bool
}

// SaveTest saves thread of saver as a regression test of the package in
// dir: the bundle to dir/testdata/<name>.json and, unless that file
// exists, a test replaying it (WriteTestFile) to dir/<name>_test.go, where
// <name> is testName without "Test" in snake case. Both are written
// whole or not at all (a temporary file renamed). It is the studio's
// File → Save as test.
func SaveTest(ctx context.Context, saver checkpoint.Saver, thread, dir, pkg, testName string, opts ...FileOption) (Saved, error) {
	if !isTestName(testName) || testName == "Test" {
		return Saved{}, fmt.Errorf("replaytest: test name %q is not a Go test name (Test followed by a word that does not start with a lower-case letter)", testName)
	}
	name := snake(strings.TrimPrefix(testName, "Test"))
	out := Saved{Bundle: filepath.Join(dir, "testdata", name+".json"), Test: filepath.Join(dir, name+"_test.go")}
	var src bytes.Buffer
	if err := WriteTestFile(&src, pkg, testName, "testdata/"+name+".json", opts...); err != nil {
		return Saved{}, err
	}
	var b bytes.Buffer
	if err := bundle.Export(ctx, saver, thread, &b); err != nil {
		return Saved{}, err
	}
	if err := os.MkdirAll(filepath.Dir(out.Bundle), 0o755); err != nil {
		return Saved{}, err
	}
	if err := writeWhole(out.Bundle, b.Bytes()); err != nil {
		return Saved{}, err
	}
	if _, err := os.Stat(out.Test); err == nil {
		out.TestKept = true
		return out, nil
	}
	if err := writeWhole(out.Test, src.Bytes()); err != nil {
		return Saved{}, err
	}
	return out, nil
}

// writeWhole writes data to path through a temporary file beside it, so
// path holds the old content or the new, never part of it.
func writeWhole(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// snake turns "RefundThread2" into "refund_thread2".
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// isTestName reports whether name is a name go test runs as a test.
func isTestName(name string) bool {
	if !strings.HasPrefix(name, "Test") || !token.IsIdentifier(name) {
		return false
	}
	rest := name[len("Test"):]
	if rest == "" {
		return true
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return !unicode.IsLower(r)
}

var fileTemplate = template.Must(template.New("test").Parse(`package {{.Pkg}}

import (
{{range .Std}}	{{.}}
{{end}}
{{range .Imports}}	{{.}}
{{end}})

// {{.Name}} replays the thread recorded in
// {{.File}} against the graph's current code. It fails at the
// first checkpoint where the code now does something else, with the
// recorded and replayed values: when that change is what you meant,
// record the thread again and export it over the file.
func {{.Name}}(t *testing.T) {
	replaytest.Check(t, {{.Graph}}, {{.Bundle}}{{if .Strict}}, replay.Strict(){{end}})
}
{{if .Stub}}
// {{.Helper}} returns the graph the thread was recorded
// with, built as the program builds it (its saver does not matter: the
// replay brings its own).
func {{.Helper}}(t *testing.T) *engine.Graph {
	t.Helper()
	t.Fatal("{{.Helper}}: build the graph here, as the program does")
	return nil
}
{{end}}`))
