package studio

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/weftstudio/weft/checkpoint/sqlite"
	"github.com/weftstudio/weft/engine"
)

// BenchmarkStepUpdateView measures one Step as the user sees it: the
// engine's super-step, its checkpoint in a SQLite store, the timeline
// merge, the snapshot and diff in the inspector and the graph highlights.
func BenchmarkStepUpdateView(b *testing.B) {
	for gi, g := range demoGraphs(b) {
		b.Run(g.Graph.Name(), func(b *testing.B) {
			saver, err := sqlite.Open(filepath.Join(b.TempDir(), "weft.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer saver.Close()
			s := openStudio(b, test.NewTempApp(b), Config{Store: saver, Graphs: demoGraphs(b)})
			act(func() { s.Window().Resize(fyne.NewSize(1280, 800)) }) // the graph's layout may arrive meanwhile
			idle(b, s)
			act(func() { s.m.setGraph(gi) })
			idle(b, s)
			threads := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if s.tview() == nil || len(s.tview().Snap.Next) == 0 || len(s.tview().Snap.Interrupts) > 0 {
					b.StopTimer()
					threads++
					act(func() { s.startThread(fmt.Sprintf("b-%d", threads), g.Example) })
					idle(b, s)
					b.StartTimer()
				}
				act(s.Step)
				idle(b, s)
			}
		})
	}
}

// counter is a graph that loops n times: one checkpoint per step.
func counter() *engine.Graph {
	n := engine.LastValue[int]("n")
	g, err := engine.NewGraph("counter", n).
		AddNode("tick", func(_ context.Context, s engine.State) (engine.Output, error) {
			return engine.Updates(n.Set(n.Get(s) + 1)), nil
		}).
		AddEdge(engine.START, "tick").
		AddConditionalEdges("tick", func(_ context.Context, s engine.State) (engine.Route, error) {
			if n.Get(s) >= 9998 {
				return engine.To(engine.END), nil
			}
			return engine.To("tick"), nil
		}, engine.Targets("tick", engine.END)).
		Compile()
	if err != nil {
		panic(err)
	}
	return g
}

var bigStore struct {
	once sync.Once
	path string
	err  error
}

// bigThread returns a SQLite file holding thread "big" of 10,000
// checkpoints, made once per test binary.
func bigThread(b *testing.B) string {
	bigStore.once.Do(func() {
		dir, err := mkdirTemp()
		if err != nil {
			bigStore.err = err
			return
		}
		bigStore.path = filepath.Join(dir, "big.db")
		s, err := sqlite.Open(bigStore.path)
		if err != nil {
			bigStore.err = err
			return
		}
		defer s.Close()
		_, bigStore.err = counter().WithSaver(s).Invoke(context.Background(), engine.Values{"n": 0},
			engine.WithThread("big"), engine.WithRecursionLimit(20000))
	})
	if bigStore.err != nil {
		b.Fatal(bigStore.err)
	}
	return bigStore.path
}

// BenchmarkOpenTimeline10000 opens a thread of 10,000 checkpoints: headers
// read from the store, lanes laid out, the visible part of the timeline
// drawn and the latest checkpoint loaded into the inspector.
func BenchmarkOpenTimeline10000(b *testing.B) {
	path := bigThread(b)
	saver, err := sqlite.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer saver.Close()
	s := openStudio(b, test.NewTempApp(b), Config{Store: saver, Graphs: []Graph{{Graph: counter()}}})
	act(func() { s.Window().Resize(fyne.NewSize(1280, 800)) }) // the graph's layout may arrive meanwhile
	idle(b, s)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		act(func() { s.m.setThread("") })
		act(func() { s.m.setThread("big") })
		idle(b, s)
	}
	b.StopTimer()
	if n := s.m.scope().tl.count(); n != 10000 {
		b.Fatalf("timeline holds %d checkpoints, want 10000", n)
	}
	if s.tview() == nil || s.tview().Snap.Values["n"] != 9998 {
		b.Fatalf("head not loaded: %+v", s.tview())
	}
}

func mkdirTemp() (string, error) { return os.MkdirTemp("", "weft-bench-") }

// BenchmarkWatchColumns10000 evaluates three watches at every checkpoint
// of a 10,000-checkpoint thread as the Watches tab does when they change:
// the thread's history read from SQLite off the UI goroutine, with
// progress, and the columns applied to the timeline.
func BenchmarkWatchColumns10000(b *testing.B) {
	path := bigThread(b)
	saver, err := sqlite.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer saver.Close()
	s := openStudio(b, test.NewTempApp(b), Config{Store: saver, Graphs: []Graph{{Graph: counter()}}})
	act(func() { s.Window().Resize(fyne.NewSize(1280, 800)) }) // the graph's layout may arrive meanwhile
	idle(b, s)
	act(func() { s.m.setThread("big") })
	idle(b, s)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		act(func() {
			d := newDebugSet(s.m.graph().Graph)
			for _, src := range []string{"n", "n > 5000", "n % 100 == 0"} {
				d.Watches = append(d.Watches, d.compileWatch(src))
			}
			s.m.setDebugSet(d) // new watches: every checkpoint again
		})
		idle(b, s)
	}
	b.StopTimer()
	c := s.m.scope().dbg.cols
	if c == nil || c.Running || c.Err != nil || len(c.Rows) != 10000 {
		b.Fatalf("columns %+v", c)
	}
}
