package studio

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/checkpoint/sqlite"
	"github.com/weftstudio/weft/engine"
)

// oneStep is a graph of one node, named name, for stores of many threads.
func oneStep(t testing.TB, name string) *engine.Graph {
	t.Helper()
	n := engine.LastValue[int]("n")
	g, err := engine.NewGraph(name, n).
		AddNode("inc", func(_ context.Context, s engine.State) (engine.Output, error) {
			return engine.Updates(n.Set(n.Get(s) + 1)), nil
		}).
		AddEdge(engine.START, "inc").AddEdge("inc", engine.END).Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// A store of many threads opens on the newest page of the graph's own
// threads; "More threads" reads the next; the search asks the store, so
// it finds a thread no page has shown; a thread with no graph tag (another
// program's) is listed; an id the list has not shown is still refused for
// a new thread.
func TestThreadListIsPaged(t *testing.T) {
	for name, open := range map[string]func(t *testing.T) checkpoint.Saver{
		"memory": func(*testing.T) checkpoint.Saver { return memory.New() },
		"sqlite": func(t *testing.T) checkpoint.Saver {
			s, err := sqlite.Open(t.TempDir() + "/t.db")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
	} {
		t.Run(name, func(t *testing.T) {
			saver := open(t)
			mine, other := oneStep(t, "mine").WithSaver(saver), oneStep(t, "other").WithSaver(saver)
			ctx := context.Background()
			for i := range 230 {
				if _, err := mine.Invoke(ctx, engine.Values{"n": i}, engine.WithThread(fmt.Sprintf("m-%03d", i))); err != nil {
					t.Fatal(err)
				}
				if i%2 == 0 {
					if _, err := other.Invoke(ctx, engine.Values{"n": i}, engine.WithThread(fmt.Sprintf("o-%03d", i))); err != nil {
						t.Fatal(err)
					}
				}
			}
			// A checkpoint another program wrote, with no graph tag.
			if _, err := saver.Put(ctx, checkpoint.Ref{ThreadID: "untagged"}, checkpoint.Checkpoint{V: 1, ID: checkpoint.NewID()},
				checkpoint.Metadata{Source: checkpoint.SourceInput, Step: -1}, nil); err != nil {
				t.Fatal(err)
			}
			s := openStudio(t, test.NewTempApp(t), Config{Store: saver, StoreName: name, Graphs: []Graph{{Graph: oneStep(t, "mine")}}})
			act(func() { s.Window().Resize(fyne.NewSize(1280, 800)) })
			idle(t, s)
			ids := func() (out []string) {
				act(func() {
					for _, r := range s.m.threads {
						out = append(out, r.ID)
					}
				})
				return out
			}
			got := ids()
			if len(got) != threadPage || got[0] != "untagged" || got[1] != "m-229" || got[threadPage-1] != "m-131" || !s.m.moreThreads {
				t.Fatalf("first page: %d threads %v…%v, more %v", len(got), got[:min(3, len(got))], got[max(0, len(got)-2):], s.m.moreThreads)
			}
			act(func() {
				for _, r := range s.m.threads {
					if r.Status == "" {
						t.Errorf("thread %s has no status: every row of a page gets one, a pass at a time", r.ID)
					}
				}
			})
			if n := s.th.list.Length(); n != threadPage+1 {
				t.Errorf("the list has %d rows, want %d and More threads", n, threadPage+1)
			}
			act(func() { s.th.list.Select(threadPage) }) // More threads…
			idle(t, s)
			if got = ids(); len(got) != 2*threadPage || got[2*threadPage-1] != "m-031" || !s.m.moreThreads {
				t.Fatalf("after More: %d threads, last %v, more %v", len(got), got[len(got)-1], s.m.moreThreads)
			}
			act(func() { s.th.list.Select(2 * threadPage) })
			idle(t, s)
			if got = ids(); len(got) != 231 || got[230] != "m-000" || s.m.moreThreads || s.th.list.Length() != 231 {
				t.Fatalf("all: %d threads, more %v, %d rows", len(got), s.m.moreThreads, s.th.list.Length())
			}

			// Start again from one page, then search for the oldest.
			act(func() { s.m.setThreadQuery(threadQuery{}) })
			idle(t, s)
			act(func() { test.Type(s.th.search, "M-00") })
			deadline := time.Now().Add(5 * time.Second)
			for {
				idle(t, s)
				if got = ids(); len(got) == 10 || time.Now().After(deadline) {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if len(got) != 10 || got[0] != "m-009" || got[9] != "m-000" || s.m.moreThreads {
				t.Fatalf("search M-00: %v, more %v", got, s.m.moreThreads)
			}
			act(func() { s.th.search.SetText("") })

			if !s.sess.threadExists(ctx, "m-000") || s.sess.threadExists(ctx, "nope") {
				t.Errorf("threadExists is wrong about m-000 or nope")
			}
		})
	}
}

// countingSearcher counts the queries graphThreads asks.
type countingSearcher struct {
	checkpoint.ThreadSearcher
	n int
}

func (c *countingSearcher) SearchThreads(ctx context.Context, q checkpoint.ThreadQuery) (checkpoint.ThreadPage, error) {
	c.n++
	return c.ThreadSearcher.SearchThreads(ctx, q)
}

// In a store of one graph the first page costs one query (each walks every
// thread's head); once another graph's thread is among the newest, the two
// filtered queries answer, and both ways list the same threads.
func TestGraphThreadsAsksOnceForOneGraph(t *testing.T) {
	saver := memory.New()
	mine, other := oneStep(t, "mine").WithSaver(saver), oneStep(t, "other").WithSaver(saver)
	ctx := context.Background()
	for i := range 5 {
		if _, err := mine.Invoke(ctx, engine.Values{"n": i}, engine.WithThread(fmt.Sprintf("m-%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	cs := &countingSearcher{ThreadSearcher: saver}
	got, more, err := graphThreads(ctx, cs, "mine", "", 3)
	if err != nil || cs.n != 1 || len(got) != 3 || got[0].ThreadID != "m-4" || !more {
		t.Fatalf("one graph: %d queries, %d threads, more %v, err %v", cs.n, len(got), more, err)
	}
	if _, err := other.Invoke(ctx, engine.Values{"n": 0}, engine.WithThread("o")); err != nil {
		t.Fatal(err)
	}
	cs.n = 0
	got, more, err = graphThreads(ctx, cs, "mine", "", 3)
	if err != nil || cs.n != 3 || len(got) != 3 || got[0].ThreadID != "m-4" || got[2].ThreadID != "m-2" || !more {
		t.Fatalf("two graphs: %d queries, %v, more %v, err %v", cs.n, got, more, err)
	}
}

func TestGrouped(t *testing.T) {
	for n, want := range map[int]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 100002: "100,002", 1234567: "1,234,567", -1: "-1", -12345: "-12,345"} {
		if got := grouped(n); got != want {
			t.Errorf("grouped(%d) = %q, want %q", n, got, want)
		}
	}
}

// While a long timeline loads, the status line counts the headers read,
// of the thread's count when the list knows it; once it is in, it says
// nothing of it.
func TestStatusLineCountsTheTimelineRead(t *testing.T) {
	s := newThread(t, "t-1")
	act(func() {
		sc := s.m.scope()
		sc.read, sc.complete = 6000, false
		row := s.m.threadRow(sc.thread)
		if row.ID == "" {
			t.Fatalf("thread %q not in the list", sc.thread)
		}
		want := "reading the timeline: 6,000 checkpoints"
		if row.Count > 6000 {
			want = "reading the timeline: 6,000 of " + grouped(row.Count) + " checkpoints"
		}
		if l := s.sb.line(); !strings.Contains(l, want) {
			t.Errorf("status line %q lacks %q", l, want)
		}
		sc.complete = true
		if l := s.sb.line(); strings.Contains(l, "reading") {
			t.Errorf("status line %q still reads after the timeline is in", l)
		}
	})
	if got := readingLine(2000, 100002); got != "reading the timeline: 2,000 of 100,002 checkpoints" {
		t.Errorf("readingLine = %q", got)
	}
}

// damagedStore returns a store of 60 one-step threads of graph "mine",
// m-000 to m-059, whose newest 45 (m-015 on) have unreadable headers.
func damagedStore(t *testing.T) *sqlite.Saver {
	t.Helper()
	path := t.TempDir() + "/t.db"
	saver, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	g := oneStep(t, "mine").WithSaver(saver)
	for i := range 60 {
		if _, err := g.Invoke(context.Background(), engine.Values{"n": i}, engine.WithThread(fmt.Sprintf("m-%03d", i))); err != nil {
			t.Fatal(err)
		}
	}
	saver.Close()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	// The newest 45 threads (listed first): more than one pass of statuses.
	if _, err := db.Exec(`UPDATE checkpoints SET checkpoint = 'damaged' WHERE thread_id >= 'm-015'`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	saver, err = sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { saver.Close() })
	return saver
}

func TestUnreadableThreadsGetAStatus(t *testing.T) {
	saver := damagedStore(t)
	s := openStudio(t, test.NewTempApp(t), Config{Store: saver, StoreName: "damaged", Graphs: []Graph{{Graph: oneStep(t, "mine")}}})
	idle(t, s)
	act(func() {
		if len(s.m.threads) != 60 {
			t.Fatalf("%d threads listed, want 60", len(s.m.threads))
		}
		for _, r := range s.m.threads {
			want := "done"
			if r.ID >= "m-015" {
				want = statusUnreadable
			}
			if r.Status != want {
				t.Errorf("thread %s: status %q, want %q", r.ID, r.Status, want)
			}
		}
	})
}

// Choosing a thread whose checkpoints cannot be read shows why in the
// inspector, in place of the state, with no dialog to dismiss per click;
// the next readable thread shows its state, nothing of the error left.
func TestUnreadableCheckpointShownInInspector(t *testing.T) {
	s := openStudio(t, test.NewTempApp(t), Config{Store: damagedStore(t), StoreName: "damaged", Graphs: []Graph{{Graph: oneStep(t, "mine")}}})
	act(func() { s.Window().Resize(fyne.NewSize(1280, 800)) })
	idle(t, s)
	act(func() { s.m.setThread("m-020") })
	idle(t, s)
	act(func() {
		if got := s.insp.title.Text; !strings.HasPrefix(got, "This checkpoint could not be read: ") || !strings.Contains(got, "decode checkpoint header") {
			t.Errorf("inspector says %q, want why m-020's checkpoint could not be read", got)
		}
		if n := len(s.win.Canvas().Overlays().List()); n != 0 {
			t.Errorf("%d dialogs open, want the error in the inspector only", n)
		}
	})
	act(func() { s.m.setThread("m-003") })
	idle(t, s)
	act(func() {
		if got := s.insp.title.Text; !strings.HasPrefix(got, "Step 1 ") {
			t.Errorf("inspector says %q for the readable m-003, want its step", got)
		}
	})
}
