package bundle_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/bundle"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/checkpoint/sqlite"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/examples"
)

var ctx = context.Background()

// dump lists every checkpoint of a thread, in all namespaces, as JSON
// lines keyed by namespace and id, with the thread id blanked.
func dump(t *testing.T, s checkpoint.Saver, thread string) []string {
	t.Helper()
	var out []string
	for tp, err := range s.List(ctx, checkpoint.ListOptions{ThreadID: thread}) {
		if err != nil {
			t.Fatal(err)
		}
		tp.Ref.ThreadID = ""
		if tp.Parent != nil {
			tp.Parent.ThreadID = ""
		}
		tp.Checkpoint.TS = tp.Checkpoint.TS.UTC()
		b, err := json.Marshal(tp)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	slices.Sort(out)
	return out
}

func TestRoundTrip(t *testing.T) {
	src := memory.New()
	w, err := examples.Writer(src)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Graph.Invoke(ctx, w.Example, engine.WithThread("w")); err != nil {
		t.Fatal(err)
	}
	m, err := examples.MapReduce(src)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Graph.Invoke(ctx, m.Example, engine.WithThread("m")); err != nil {
		t.Fatal(err)
	}
	for _, thread := range []string{"w", "m"} {
		var buf bytes.Buffer
		if err := bundle.Export(ctx, src, thread, &buf); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), `"format": "weft.thread-bundle"`) {
			t.Fatalf("bundle head %.200s", buf.String())
		}
		data := buf.Bytes()
		for name, dst := range map[string]checkpoint.Saver{"memory": memory.New(), "sqlite": openSQLite(t)} {
			got, err := bundle.Import(ctx, dst, bytes.NewReader(data))
			if err != nil || got != thread {
				t.Fatalf("%s: import %q, %v", name, got, err)
			}
			if a, b := dump(t, src, thread), dump(t, dst, thread); !slices.Equal(a, b) {
				t.Errorf("%s: thread %s differs after import:\n%d vs %d checkpoints\n%s\n%s", name, thread, len(a), len(b), first(a), first(b))
			}
			if _, err := bundle.Import(ctx, dst, bytes.NewReader(data)); !errors.Is(err, bundle.ErrThreadExists) {
				t.Errorf("%s: second import: %v", name, err)
			}
			if got, err := bundle.Import(ctx, dst, bytes.NewReader(data), bundle.Rename(thread+"-copy")); err != nil || got != thread+"-copy" {
				t.Errorf("%s: renamed import %q, %v", name, got, err)
			}
		}
	}
	if subs := strings.Count(strings.Join(dump(t, src, "m"), "\n"), `"checkpoint_ns":"summarize:`); subs == 0 {
		t.Error("the map-reduce bundle should carry subgraph namespaces")
	}
}

// An imported thread stopped at an interrupt can be answered in its new
// store.
func TestImportedThreadResumes(t *testing.T) {
	src := memory.New()
	w, _ := examples.Writer(src)
	if _, err := w.Graph.Invoke(ctx, w.Example, engine.WithThread("w")); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := bundle.Export(ctx, src, "w", &buf); err != nil {
		t.Fatal(err)
	}
	dst := openSQLite(t)
	if _, err := bundle.Import(ctx, dst, &buf); err != nil {
		t.Fatal(err)
	}
	g := w.Graph.WithSaver(dst)
	res, err := g.Invoke(ctx, engine.Command{Resume: "approve"}, engine.WithThread("w"))
	if err != nil || !res.Done || res.Values["published"] != res.Values["draft"] {
		t.Fatalf("resume after import: %v %+v", err, res)
	}
}

func TestRejectsOtherDocuments(t *testing.T) {
	s := memory.New()
	for _, doc := range []string{`{"format":"something else","version":1}`, `{"format":"weft.thread-bundle","version":99}`, `not json`} {
		if _, err := bundle.Import(ctx, s, strings.NewReader(doc)); err == nil {
			t.Errorf("%s accepted", doc)
		}
	}
	if err := bundle.Export(ctx, s, "missing", &bytes.Buffer{}); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("export of a missing thread: %v", err)
	}
}

func openSQLite(t *testing.T) *sqlite.Saver {
	t.Helper()
	s, err := sqlite.Open(filepath.Join(t.TempDir(), "weft.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func first(l []string) string {
	if len(l) == 0 {
		return ""
	}
	if len(l[0]) > 300 {
		return l[0][:300]
	}
	return l[0]
}

// A bundle that fails part-way leaves nothing: the thread can be imported
// again once the bundle is fixed. On SQLite it is one transaction; on a
// saver without batches the written part is deleted again.
func TestImportIsAtomic(t *testing.T) {
	src := memory.New()
	w, _ := examples.Writer(src)
	if _, err := w.Graph.Invoke(ctx, w.Example, engine.WithThread("w")); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Read(ctx, src, "w")
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Checkpoints) < 3 {
		t.Fatalf("only %d checkpoints", len(b.Checkpoints))
	}
	good, _ := json.Marshal(b)
	b.Checkpoints[len(b.Checkpoints)-1].Metadata.Source = "" // refused by every saver
	bad, _ := json.Marshal(b)
	for name, dst := range map[string]checkpoint.Saver{"sqlite": openSQLite(t), "memory": memory.New()} {
		t.Run(name, func(t *testing.T) {
			_, err := bundle.Import(ctx, dst, bytes.NewReader(bad))
			if err == nil || !strings.Contains(err.Error(), "nothing was imported") {
				t.Fatalf("a damaged bundle imported: %v", err)
			}
			for tp, err := range dst.List(ctx, checkpoint.ListOptions{ThreadID: "w"}) {
				t.Fatalf("a failed import left checkpoint %v (%v)", tp.Ref, err)
			}
			if _, err := bundle.Import(ctx, dst, bytes.NewReader(good)); err != nil {
				t.Fatalf("importing the good bundle after a failed one: %v", err)
			}
		})
	}
}

// A bundle whose parent links loop, dangle or repeat an id is refused
// before anything is stored, naming the checkpoint (each case failed
// before: the cycle and the duplicate imported, the dangling parent
// imported a checkpoint whose history stops short).
func TestImportRefusesBrokenHistory(t *testing.T) {
	src := memory.New()
	w, _ := examples.Writer(src)
	if _, err := w.Graph.Invoke(ctx, w.Example, engine.WithThread("w")); err != nil {
		t.Fatal(err)
	}
	for name, breakIt := range map[string]func(b *bundle.Bundle){
		"cycle":     func(b *bundle.Bundle) { b.Checkpoints[0].ParentID = b.Checkpoints[len(b.Checkpoints)-1].ID },
		"dangling":  func(b *bundle.Bundle) { b.Checkpoints[1].ParentID = "01a00000-0000-7000-8000-000000000000" },
		"duplicate": func(b *bundle.Bundle) { b.Checkpoints[2].ID = b.Checkpoints[1].ID },
		"self":      func(b *bundle.Bundle) { b.Checkpoints[1].ParentID = b.Checkpoints[1].ID },
	} {
		t.Run(name, func(t *testing.T) {
			b, err := bundle.Read(ctx, src, "w")
			if err != nil {
				t.Fatal(err)
			}
			breakIt(b)
			data, _ := json.Marshal(b)
			dst := openSQLite(t)
			_, err = bundle.Import(ctx, dst, bytes.NewReader(data))
			if !errors.Is(err, bundle.ErrBadHistory) || !strings.Contains(err.Error(), "nothing was imported") {
				t.Fatalf("err %v, want ErrBadHistory", err)
			}
			for tp := range dst.List(ctx, checkpoint.ListOptions{ThreadID: "w"}) {
				t.Fatalf("a refused import left checkpoint %v", tp.Ref)
			}
		})
	}
}
