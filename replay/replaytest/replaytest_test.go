package replaytest_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/bundle"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/examples"
	"github.com/weftstudio/weft/replay"
	"github.com/weftstudio/weft/replay/replaytest"
)

var update = flag.Bool("update", false, "record the bundles under testdata/ again")

const (
	writerBundle    = "testdata/writer.json"
	mapReduceBundle = "testdata/mapreduce.json"
)

// record runs steps on a demo graph with a memory store and exports the
// thread to path, when -update is given.
func record(t *testing.T, path string, build func(checkpoint.Saver) (examples.Demo, error), steps ...engine.Input) {
	t.Helper()
	if !*update {
		return
	}
	s := memory.New()
	d, err := build(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range steps {
		if _, err := d.Graph.Invoke(context.Background(), in, engine.WithThread("recorded")); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if err := bundle.Export(context.Background(), s, "recorded", &b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestWriterBundleReplays(t *testing.T) {
	d, err := examples.Writer(nil)
	if err != nil {
		t.Fatal(err)
	}
	record(t, writerBundle, examples.Writer, d.Example, engine.Command{Resume: "maybe"},
		engine.Command{Resume: map[string]any{"action": "revise", "feedback": "add a safety tip"}}, engine.Command{Resume: "approve"})
	rep := replaytest.Check(t, d.Graph, writerBundle, replay.Strict())
	if rep.Checkpoints < 8 {
		t.Errorf("the bundle's lineage has %d checkpoints", rep.Checkpoints)
	}
}

// fakeT is a testing.TB whose Fatal stops the calling goroutine and keeps
// the message, so a test can watch Check fail.
type fakeT struct {
	testing.TB
	mu     sync.Mutex
	failed bool
	msg    string
}

func (f *fakeT) Helper() {}

func (f *fakeT) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.failed, f.msg = true, fmt.Sprintf(format, args...)
	f.mu.Unlock()
	runtime.Goexit()
}

// check runs Check with a fake T and returns whether it failed and why.
func check(t *testing.T, g *engine.Graph, path string) (bool, string) {
	f := &fakeT{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		replaytest.Check(f, g, path, replay.Strict())
	}()
	<-done
	return f.failed, f.msg
}

// The map-reduce demo, built again here with combine as given: the demo's
// code, or an edited one.
var (
	subjects  = engine.LastValue[[]string]("subjects")
	subject   = engine.LastValue[string]("subject")
	summaries = engine.List[string]("summaries")
	report    = engine.LastValue[string]("report")
	facts     = engine.List[string]("facts")
)

func mapReduce(t *testing.T, combine func([]string) string) *engine.Graph {
	t.Helper()
	sub, err := engine.NewGraph("summarize", subject, facts, summaries).
		AddNode("gather", func(_ context.Context, s engine.State) (engine.Output, error) {
			x := subject.Get(s)
			return engine.Updates(facts.Add(x+" is "+fmt.Sprint(len(x))+" letters long", x+" starts with "+strings.ToUpper(x[:1]))), nil
		}).
		AddNode("condense", func(_ context.Context, s engine.State) (engine.Output, error) {
			return engine.Updates(summaries.Add(subject.Get(s) + ": " + strings.Join(facts.Get(s), "; "))), nil
		}).
		AddEdge(engine.START, "gather").AddEdge("gather", "condense").Compile()
	if err != nil {
		t.Fatal(err)
	}
	g, err := engine.NewGraph("map-reduce", subjects, subject, summaries, report).
		AddNode("split", func(context.Context, engine.State) (engine.Output, error) { return nil, nil }).
		AddSubgraph("summarize", sub).
		AddNode("combine", func(_ context.Context, s engine.State) (engine.Output, error) {
			return engine.Updates(report.Set(combine(summaries.Get(s)))), nil
		}).
		AddEdge(engine.START, "split").
		AddConditionalEdges("split", func(_ context.Context, s engine.State) (engine.Route, error) {
			var r engine.Route
			for _, x := range subjects.Get(s) {
				if x != "" {
					r.Sends = append(r.Sends, engine.Send{Node: "summarize", Arg: engine.Values{"subject": x}})
				}
			}
			return r, nil
		}, engine.SendsTo("summarize")).
		AddEdge("summarize", "combine").AddEdge("combine", engine.END).
		Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestCheckCatchesAnEditedNode(t *testing.T) {
	d, err := examples.MapReduce(nil)
	if err != nil {
		t.Fatal(err)
	}
	record(t, mapReduceBundle, examples.MapReduce, d.Example)
	if failed, msg := check(t, d.Graph, mapReduceBundle); failed {
		t.Fatalf("the demo fails its own recording: %s", msg)
	}
	same := mapReduce(t, func(s []string) string { return strings.Join(s, "\n") })
	if failed, msg := check(t, same, mapReduceBundle); failed {
		t.Fatalf("the demo's code, built again, fails: %s", msg)
	}
	// combine now joins the summaries on one line.
	edited := mapReduce(t, func(s []string) string { return strings.Join(s, " | ") })
	failed, msg := check(t, edited, mapReduceBundle)
	if !failed {
		t.Fatal("an edited node passed")
	}
	for _, want := range []string{mapReduceBundle, `task "combine" wrote other values to "report"`, "--- recorded", "+++ replayed", ` | kelp: `} {
		if !strings.Contains(msg, want) {
			t.Errorf("the failure lacks %q:\n%s", want, msg)
		}
	}
}

func TestCheckFailsOnABadBundle(t *testing.T) {
	d, err := examples.MapReduce(nil)
	if err != nil {
		t.Fatal(err)
	}
	if failed, msg := check(t, d.Graph, "testdata/missing.json"); !failed || !strings.Contains(msg, "missing.json") {
		t.Errorf("a missing bundle: %v %q", failed, msg)
	}
	w, err := examples.Writer(nil)
	if err != nil {
		t.Fatal(err)
	}
	if failed, msg := check(t, w.Graph, mapReduceBundle); !failed || !strings.Contains(msg, `recorded by graph "map-reduce"`) {
		t.Errorf("another graph's bundle: %v %q", failed, msg)
	}
}

func TestWriteTestFile(t *testing.T) {
	var b bytes.Buffer
	if err := replaytest.WriteTestFile(&b, "demo_test", "TestWriterThread", "testdata/writer.json", replaytest.StrictFile(),
		replaytest.GraphExpr("writer(t)")); err != nil {
		t.Fatal(err)
	}
	src := b.String()
	for _, want := range []string{"package demo_test", "func TestWriterThread(t *testing.T) {",
		`replaytest.Check(t, writer(t), "testdata/writer.json", replay.Strict())`} {
		if !strings.Contains(src, want) {
			t.Errorf("the file lacks %q:\n%s", want, src)
		}
	}
	for _, bad := range [][3]string{{"demo-test", "TestX", "x.json"}, {"demo", "testX", "x.json"}, {"demo", "Testx", "x.json"}, {"demo", "TestX", ""}} {
		if err := replaytest.WriteTestFile(&b, bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("WriteTestFile%q: no error", bad)
		}
	}
	if err := replaytest.WriteTestFile(&b, "demo", "TestX", "x.json", replaytest.GraphExpr("writer(")); err == nil {
		t.Error("a graph expression that is not Go: no error")
	}
}

// SaveTest writes a bundle and a test that runs: with the demo as its
// graph it passes; without a graph expression it fails, asking for one.
func TestSavedTestRuns(t *testing.T) {
	dir, err := os.MkdirTemp("testdata", "generated-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	s := memory.New()
	d, err := examples.Writer(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []engine.Input{d.Example, engine.Command{Resume: "approve"}} {
		if _, err := d.Graph.Invoke(context.Background(), in, engine.WithThread("th")); err != nil {
			t.Fatal(err)
		}
	}
	writer := replaytest.GraphExpr("must(examples.Writer(nil)).Graph", "github.com/weftstudio/weft/examples")
	saved, err := replaytest.SaveTest(context.Background(), s, "th", dir, "generated_test", "TestRecordedThread", replaytest.StrictFile(), writer)
	if err != nil {
		t.Fatal(err)
	}
	if saved.Bundle != filepath.Join(dir, "testdata", "recorded_thread.json") || saved.Test != filepath.Join(dir, "recorded_thread_test.go") || saved.TestKept {
		t.Errorf("saved %+v", saved)
	}
	if _, err := replaytest.SaveTest(context.Background(), s, "th", dir, "generated_test", "TestStub"); err != nil {
		t.Fatal(err)
	}
	// Saved again, the bundle is new and the test (which may have been
	// edited) is kept.
	if err := os.WriteFile(saved.Test, []byte("// edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := replaytest.SaveTest(context.Background(), s, "th", dir, "generated_test", "TestRecordedThread", writer)
	if b, _ := os.ReadFile(saved.Test); err != nil || !again.TestKept || string(b) != "// edited\n" {
		t.Fatalf("saved again: %+v %v, test file %q", again, err, b)
	}
	os.Remove(saved.Test)
	if _, err := replaytest.SaveTest(context.Background(), s, "th", dir, "generated_test", "TestRecordedThread", replaytest.StrictFile(), writer); err != nil {
		t.Fatal(err)
	}
	if _, err := replaytest.SaveTest(context.Background(), s, "nobody", dir, "generated_test", "TestNobody"); err == nil {
		t.Error("a missing thread was saved")
	}
	if _, err := os.Stat(filepath.Join(dir, "nobody_test.go")); err == nil {
		t.Error("a test was written for a missing thread")
	}
	helper := "package generated_test\n\nimport \"github.com/weftstudio/weft/examples\"\n\n" +
		"func must(d examples.Demo, err error) examples.Demo {\n\tif err != nil {\n\t\tpanic(err)\n\t}\n\treturn d\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "helper_test.go"), []byte(helper), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "test", "-count=1", "-run", "TestRecordedThread", "./"+dir).CombinedOutput()
	if err != nil {
		t.Fatalf("the saved test fails: %v\n%s", err, out)
	}
	out, err = exec.Command("go", "test", "-count=1", "-run", "TestStub", "./"+dir).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "graphForStub: build the graph here") {
		t.Fatalf("the stub's test: %v\n%s", err, out)
	}
}
