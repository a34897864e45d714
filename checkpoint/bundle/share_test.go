package bundle_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/bundle"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
)

// A value carried unchanged through many checkpoints is in the bundle
// once: the bundle's size follows the thread's distinct values, not its
// checkpoints times its values; and it imports back exactly.
func TestBundleStoresEachValueOnce(t *testing.T) {
	src := memory.New()
	n := engine.LastValue[int]("n")
	topic := engine.LastValue[string]("topic")
	g, err := engine.NewGraph("carry", n, topic).
		AddNode("inc", func(_ context.Context, st engine.State) (engine.Output, error) {
			return engine.Updates(n.Set(n.Get(st) + 1)), nil
		}).
		AddEdge(engine.START, "inc").
		AddConditionalEdges("inc", func(_ context.Context, st engine.State) (engine.Route, error) {
			if n.Get(st) < 10 {
				return engine.To("inc"), nil
			}
			return engine.To(engine.END), nil
		}, engine.Targets("inc", engine.END)).
		Compile(engine.WithSaver(src))
	if err != nil {
		t.Fatal(err)
	}
	const size = 1 << 20
	if _, err := g.Invoke(ctx, engine.Values{"n": 0, "topic": strings.Repeat("x", size)}, engine.WithThread("t")); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := bundle.Export(ctx, src, "t", &buf); err != nil {
		t.Fatal(err)
	}
	// The store holds the topic three times: the input (__start__), the
	// start task's write of it, and the channel's one version.
	if cps := len(dump(t, src, "t")); cps < 11 || buf.Len() > 4*size {
		t.Errorf("a bundle of %d checkpoints carrying one %d-byte value is %d bytes", cps, size, buf.Len())
	}
	var doc struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil || doc.Version != bundle.Version {
		t.Fatalf("not JSON, or version %d: %v", doc.Version, err)
	}
	dst := memory.New()
	if _, err := bundle.Import(ctx, dst, bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	if a, b := dump(t, src, "t"), dump(t, dst, "t"); !slices.Equal(a, b) {
		t.Error("the thread differs after import")
	}
	// Read shares the same way, oldest first.
	b, err := bundle.Read(ctx, src, "t")
	if err != nil {
		t.Fatal(err)
	}
	carried := 0
	for _, c := range b.Checkpoints {
		if _, ok := c.Values["topic"]; ok {
			carried++
		}
	}
	if carried != 1 || b.Checkpoints[0].Metadata.Source != checkpoint.SourceInput {
		t.Errorf("Read: topic carried by %d checkpoints, first is %q", carried, b.Checkpoints[0].Metadata.Source)
	}
}

// Bundles of version 1 (every value in every checkpoint, indented), as the
// earlier Export wrote them, still import; the thread then exports as
// version 2 and imports back the same.
func TestImportsVersion1(t *testing.T) {
	for _, name := range []string{"v1-w.json", "v1-m.json"} {
		data, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		a := memory.New()
		thread, err := bundle.Import(ctx, a, bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(dump(t, a, thread)) != strings.Count(string(data), `"v": 4`) {
			t.Errorf("%s: %d checkpoints imported", name, len(dump(t, a, thread)))
		}
		var buf bytes.Buffer
		if err := bundle.Export(ctx, a, thread, &buf); err != nil {
			t.Fatal(err)
		}
		bs := memory.New()
		if _, err := bundle.Import(ctx, bs, &buf); err != nil {
			t.Fatal(err)
		}
		if x, y := dump(t, a, thread), dump(t, bs, thread); !slices.Equal(x, y) {
			t.Errorf("%s: the thread differs after a version 2 round trip", name)
		}
	}
	if strings.Contains(string(must(os.ReadFile("testdata/v1-w.json"))), `"tide pools"`) == false {
		t.Error("the fixture should carry the writer's topic")
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
