package studio

import (
	"os"
	"sync"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/weftstudio/weft/checkpoint/sqlite"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/scripts/bigstore/gen"
)

// The studio on the scale store scripts/bigstore.sh builds (10,000 threads
// and one of 100,000 checkpoints): run by bash scripts/dev.sh bench-big,
// skipped by bench. Without $WEFT_BIGSTORE they fail, saying how to build
// it.

// bigstoreGraph is the generator's graph: the studio lists the threads
// of the selected graph and loads checkpoints against its channels.
func bigstoreGraph(b *testing.B) *engine.Graph {
	g, err := gen.Graph(gen.Full.Seed, gen.Full.ValueBytes, nil)
	if err != nil {
		b.Fatal(err)
	}
	return g
}

func openBigstore(b *testing.B) *sqlite.Saver {
	path := os.Getenv("WEFT_BIGSTORE")
	if path == "" {
		b.Fatal("WEFT_BIGSTORE is not set: build the store with bash scripts/bigstore.sh, or run bash scripts/dev.sh bench-big")
	}
	s, err := sqlite.Open(path, sqlite.ReadOnly())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkStudioOpenStore10kThreads: a studio opened on the scale store
// until its thread list shows (the first page: the newest hundred of the
// graph's threads, with their status).
func BenchmarkStudioOpenStore10kThreads(b *testing.B) {
	saver := openBigstore(b)
	g := bigstoreGraph(b)
	for b.Loop() {
		var s *Studio
		var once sync.Once
		listed := make(chan struct{})
		s = openStudio(b, test.NewTempApp(b), Config{Store: saver, Graphs: []Graph{{Graph: g}}})
		act(func() { // New holds the UI lock itself; the list may have arrived since
			shown := func(part) {
				if len(s.m.threads) > 0 {
					once.Do(func() { close(listed) })
				}
			}
			shown(chThreads)
			s.m.subscribe(chThreads, shown)
		})
		<-listed
		b.StopTimer()
		if n := len(s.m.threads); n != threadPage || !s.m.moreThreads {
			b.Fatalf("listed %d threads, more %v; want the first %d and more", n, s.m.moreThreads, threadPage)
		}
		idle(b, s)
		s.Window().Close()
		b.StartTimer()
	}
}

// BenchmarkStudioTimeline100k: the 100,000-checkpoint thread chosen until
// its whole timeline is laid out and its head is in the inspector. The
// test driver runs each page's merge on the reading goroutine, so reading
// and merging do not overlap here as they do in the window.
func BenchmarkStudioTimeline100k(b *testing.B) {
	saver := openBigstore(b)
	s := openStudio(b, test.NewTempApp(b), Config{Store: saver, Graphs: []Graph{{Graph: bigstoreGraph(b)}}})
	act(func() { s.Window().Resize(fyne.NewSize(1280, 800)) }) // the graph's layout may arrive meanwhile
	idle(b, s)
	for b.Loop() {
		act(func() { s.m.setThread("") })
		act(func() { s.m.setThread(gen.LongThread) })
		idle(b, s)
	}
	if n := s.m.scope().tl.count(); n != 100002 || !s.m.scope().complete {
		b.Fatalf("timeline holds %d checkpoints, want 100002", n)
	}
	if v := s.tview(); v == nil {
		b.Fatalf("head not loaded")
	} else if step := v.Snap.Metadata.Step; step < 100000 {
		b.Fatalf("inspector shows step %d, want the head's", step)
	}
}
