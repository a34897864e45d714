package bundle

import (
	"bytes"
	"context"
	"iter"
	"strings"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
)

// pagesSaver records the checkpoints and bytes each List call yields.
type pagesSaver struct {
	checkpoint.Saver
	pages []int // bytes per call
	cps   int
}

func (p *pagesSaver) List(ctx context.Context, opts checkpoint.ListOptions) iter.Seq2[*checkpoint.Tuple, error] {
	return func(yield func(*checkpoint.Tuple, error) bool) {
		p.pages = append(p.pages, 0)
		for tp, err := range p.Saver.List(ctx, opts) {
			if err == nil {
				p.pages[len(p.pages)-1] += tupleSize(tp)
				p.cps++
			}
			if !yield(tp, err) {
				return
			}
		}
	}
}

// growing runs a graph writing a new value of size bytes at each of steps
// steps on thread "t" of a memory store.
func growing(t *testing.T, steps, size int) checkpoint.Saver {
	s := memory.New()
	n := engine.LastValue[int]("n")
	big := engine.LastValue[string]("big")
	g, err := engine.NewGraph("grow", n, big).
		AddNode("grow", func(_ context.Context, st engine.State) (engine.Output, error) {
			return engine.Updates(n.Set(n.Get(st)+1), big.Set(strings.Repeat(string(rune('a'+n.Get(st)%26)), size))), nil
		}).
		AddEdge(engine.START, "grow").
		AddConditionalEdges("grow", func(_ context.Context, st engine.State) (engine.Route, error) {
			if n.Get(st) < steps {
				return engine.To("grow"), nil
			}
			return engine.To(engine.END), nil
		}, engine.Targets("grow", engine.END)).
		Compile(engine.WithSaver(s))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Invoke(context.Background(), engine.Values{"n": 0}, engine.WithThread("t"), engine.WithRecursionLimit(steps+1)); err != nil {
		t.Fatal(err)
	}
	return s
}

// Export asks the store for about pageBytes of values at a time, however
// many checkpoints that is: a store reads a page whole before handing
// over its first checkpoint. Every checkpoint is exported once.
func TestExportReadsPagesOfBoundedSize(t *testing.T) {
	defer func(b int) { pageBytes = b }(pageBytes)
	pageBytes = 4 << 20
	const size = 512 << 10
	for _, c := range []struct {
		name        string
		steps, size int
		maxPages    int
	}{
		{"large values", 24, size, 20},
		{"small checkpoints", 600, 10, 12},
	} {
		src := &pagesSaver{Saver: growing(t, c.steps, c.size)}
		var buf bytes.Buffer
		if err := Export(t.Context(), src, "t", &buf); err != nil {
			t.Fatal(err)
		}
		largest := 0
		for tp, err := range src.Saver.List(t.Context(), checkpoint.ListOptions{ThreadID: "t"}) {
			if err != nil {
				t.Fatal(err)
			}
			largest = max(largest, tupleSize(tp))
		}
		for i, b := range src.pages {
			if b > pageBytes+largest {
				t.Errorf("%s: page %d holds %d bytes, over %d and a checkpoint of %d", c.name, i, b, pageBytes, largest)
			}
		}
		if len(src.pages) > c.maxPages {
			t.Errorf("%s: %d pages, want at most %d", c.name, len(src.pages), c.maxPages)
		}
		dst := memory.New()
		if _, err := Import(t.Context(), dst, &buf); err != nil {
			t.Fatal(err)
		}
		got := 0
		for _, err := range dst.List(t.Context(), checkpoint.ListOptions{ThreadID: "t"}) {
			if err != nil {
				t.Fatal(err)
			}
			got++
		}
		if got != c.steps+2 || src.cps != got {
			t.Errorf("%s: %d checkpoints listed, %d imported, want %d", c.name, src.cps, got, c.steps+2)
		}
	}
}

// With WholeListing, Export lists the thread in one call.
func TestWholeListingListsOnce(t *testing.T) {
	defer func(b int) { pageBytes = b }(pageBytes)
	pageBytes = 1 << 10
	src := &pagesSaver{Saver: growing(t, 20, 4<<10)}
	var buf bytes.Buffer
	if err := Export(t.Context(), src, "t", &buf, WholeListing()); err != nil {
		t.Fatal(err)
	}
	if len(src.pages) != 1 || src.cps != 22 {
		t.Errorf("%d List calls for %d checkpoints, want 1 for 22", len(src.pages), src.cps)
	}
}
