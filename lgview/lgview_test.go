package lgview

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/langgraph"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/internal/testenv"
)

// gunzip unpacks a fixture of the reader's testdata.
func gunzip(t testing.TB, name string) string { return testenv.LangGraphFixture(t, name) }

// truthState is the part of LangGraph's get_state the view is checked
// against: identities and structure, which need no value normalization.
type truthState struct {
	Values map[string]json.RawMessage `json:"values"`
	Next   []string                   `json:"next"`
	Config struct {
		Configurable struct {
			NS string `json:"checkpoint_ns"`
			ID string `json:"checkpoint_id"`
		} `json:"configurable"`
	} `json:"config"`
	Parent   *truthConfig `json:"parent_config"`
	ParentJS *truthConfig `json:"parentConfig"`
	Tasks    []truthTask  `json:"tasks"`
}

// truthTask is one task of a truthState.
type truthTask struct {
	ID         string           `json:"id"`
	Name       string           `json:"name"`
	Interrupts []truthInterrupt `json:"interrupts"`
	State      *truthState      `json:"state"`
}

// truthInterrupt is an Interrupt as the truth files write it: JS
// {"id", "value"}, Python a dataclass {"$dataclass", "value": {"id", …}}.
type truthInterrupt struct {
	ID    string          `json:"id"`
	Value json.RawMessage `json:"value"`
}

func (in truthInterrupt) id() string {
	if in.ID != "" {
		return in.ID
	}
	var v struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(in.Value, &v) // a JS value that is no object has no id here
	return v.ID
}

type truthConfig struct {
	Configurable struct {
		ID string `json:"checkpoint_id"`
	} `json:"configurable"`
}

func (s *truthState) parent() string {
	for _, p := range []*truthConfig{s.Parent, s.ParentJS} {
		if p != nil {
			return p.Configurable.ID
		}
	}
	return ""
}

type truthThread struct {
	State   truthState   `json:"state"`
	History []truthState `json:"history"`
}

func loadTruth(t testing.TB, name string) map[string]truthThread {
	t.Helper()
	b, err := os.ReadFile(gunzip(t, name+".truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tf struct {
		Threads map[string]truthThread `json:"threads"`
	}
	if err := json.Unmarshal(b, &tf); err != nil {
		t.Fatal(err)
	}
	return tf.Threads
}

func openFixture(t *testing.T, name string) (*Store, *langgraph.Reader) {
	t.Helper()
	r, err := langgraph.OpenSQLite(context.Background(), gunzip(t, name+".sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	s, err := Open(context.Background(), r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, r
}

// graphOf is the view graph of thread's group, on the store's saver.
func graphOf(t *testing.T, s *Store, thread string) *engine.Graph {
	t.Helper()
	name := s.GroupOf(thread)
	for _, g := range s.Groups() {
		if g.Name == name {
			return g.Graph.WithSaver(s.Saver())
		}
	}
	t.Fatalf("thread %q is in no group (%q)", thread, name)
	return nil
}

// checkState compares the engine snapshot the view gives with LangGraph's
// own, recursing into the subgraphs LangGraph nests in their tasks.
func checkState(t *testing.T, where string, got *engine.Snapshot, want *truthState) {
	t.Helper()
	if got.Ref.CheckpointID != want.Config.Configurable.ID || got.Ref.NS != want.Config.Configurable.NS {
		t.Errorf("%s: checkpoint %q/%q, LangGraph says %q/%q", where, got.Ref.NS, got.Ref.CheckpointID, want.Config.Configurable.NS, want.Config.Configurable.ID)
	}
	parent := ""
	if got.Parent != nil {
		parent = got.Parent.CheckpointID
	}
	if parent != want.parent() {
		t.Errorf("%s: parent %q, LangGraph says %q", where, parent, want.parent())
	}
	if !slices.Equal(got.Next, want.Next) && !(len(got.Next) == 0 && len(want.Next) == 0) {
		t.Errorf("%s: next %v, LangGraph says %v", where, got.Next, want.Next)
	}
	var keys, wantKeys []string
	for k := range got.Values {
		keys = append(keys, k)
	}
	for k := range want.Values {
		wantKeys = append(wantKeys, k)
	}
	slices.Sort(keys)
	slices.Sort(wantKeys)
	if !slices.Equal(keys, wantKeys) {
		t.Errorf("%s: state keys %v, LangGraph says %v", where, keys, wantKeys)
	}
	if len(got.Tasks) != len(want.Tasks) {
		t.Errorf("%s: %d tasks, LangGraph says %d", where, len(got.Tasks), len(want.Tasks))
		return
	}
	for i, wt := range want.Tasks {
		gt := got.Tasks[i]
		if gt.ID != wt.ID || gt.Name != wt.Name {
			t.Errorf("%s: task %d is %s %s, LangGraph says %s %s", where, i, gt.Name, gt.ID, wt.Name, wt.ID)
		}
		var ids, wantIDs []string
		for _, in := range gt.Interrupts {
			ids = append(ids, in.ID)
		}
		for _, in := range wt.Interrupts {
			wantIDs = append(wantIDs, in.id())
		}
		if !slices.Equal(ids, wantIDs) {
			t.Errorf("%s: task %s interrupts %v, LangGraph says %v", where, wt.Name, ids, wantIDs)
		}
		switch {
		case wt.State != nil && gt.State == nil:
			t.Errorf("%s: task %s has no subgraph state; LangGraph shows checkpoint %s", where, wt.Name, wt.State.Config.Configurable.ID)
		case wt.State != nil:
			checkState(t, where+" > "+wt.Name, gt.State, wt.State)
		}
	}
}

// TestViewIsLangGraphsView reads every thread of the Python and JS
// SQLite fixtures through the view graphs, as the studio reads them
// (engine.Graph.GetState with subgraphs, HistorySeq), and compares them
// with what LangGraph itself reported for the same threads.
func TestViewIsLangGraphsView(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"py-sqlite", "js-sqlite"} {
		t.Run(name, func(t *testing.T) {
			s, _ := openFixture(t, name)
			truth := loadTruth(t, name)
			if len(truth) < 200 {
				t.Fatalf("only %d threads in the truth file", len(truth))
			}
			for id, want := range truth {
				g := graphOf(t, s, id)
				got, err := g.GetState(ctx, engine.WithThread(id), engine.WithSubgraphs())
				if err != nil {
					t.Errorf("%s: %v", id, err)
					continue
				}
				if id == "node-error" && name == "py-sqlite" {
					// Python lists this step's tasks in the graph's node
					// order, which the store does not keep (the reader's
					// truth test names it): compare them by name.
					slices.SortFunc(got.Tasks, func(a, b engine.TaskState) int { return strings.Compare(a.Name, b.Name) })
					slices.SortFunc(want.State.Tasks, func(a, b truthTask) int { return strings.Compare(a.Name, b.Name) })
				}
				checkState(t, id, got, &want.State)
				var hist []*engine.Snapshot
				for snap, err := range g.HistorySeq(ctx, checkpoint.ListOptions{}, engine.WithThread(id)) {
					if err != nil {
						t.Fatalf("%s history: %v", id, err)
					}
					hist = append(hist, snap)
				}
				if len(hist) != len(want.History) {
					t.Errorf("%s: history of %d, LangGraph says %d", id, len(hist), len(want.History))
					continue
				}
				for i := range hist {
					if hist[i].Ref.CheckpointID != want.History[i].Config.Configurable.ID {
						t.Errorf("%s: history[%d] is %s, LangGraph says %s", id, i, hist[i].Ref.CheckpointID, want.History[i].Config.Configurable.ID)
					}
				}
			}
		})
	}
}

// TestGroupsCoverEveryThread: every thread of a store belongs to one
// group, the group's listing finds exactly its threads, and the 200
// threads of one small graph are one group.
func TestGroupsCoverEveryThread(t *testing.T) {
	ctx := context.Background()
	s, r := openFixture(t, "py-sqlite")
	all, err := r.ListThreads(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	names := map[string]bool{}
	biggest := 0
	for _, g := range s.Groups() {
		if names[g.Name] {
			t.Errorf("two groups named %q", g.Name)
		}
		names[g.Name] = true
		if !g.Inferred.Inferred || !g.Graph.IsView() {
			t.Errorf("group %q: inferred %v, view %v", g.Name, g.Inferred.Inferred, g.Graph.IsView())
		}
		biggest = max(biggest, len(g.Threads))
		for _, id := range g.Threads {
			if prev, dup := seen[id]; dup {
				t.Errorf("thread %q in %q and %q", id, prev, g.Name)
			}
			seen[id] = g.Name
		}
		page, err := s.Saver().(checkpoint.ThreadSearcher).SearchThreads(ctx, checkpoint.ThreadQuery{Filter: map[string]any{engine.MetaGraph: g.Name}})
		if err != nil {
			t.Fatal(err)
		}
		var listed []string
		for _, in := range page.Threads {
			listed = append(listed, in.ThreadID)
		}
		slices.Sort(listed)
		want := slices.Sorted(slices.Values(g.Threads))
		if !slices.Equal(listed, want) {
			t.Errorf("group %q lists %d threads, holds %d", g.Name, len(listed), len(want))
		}
	}
	if len(seen) != len(all) {
		t.Errorf("%d of %d threads grouped", len(seen), len(all))
	}
	if biggest < 200 {
		t.Errorf("the largest group holds %d threads; the 200 bulk threads ran one graph", biggest)
	}
}

// TestViewRefusesToWrite: every call that would run or write a view
// graph fails with engine.ErrView and the sentence saying what would do
// it, and the store is left as it was.
func TestViewRefusesToWrite(t *testing.T) {
	ctx := context.Background()
	s, r := openFixture(t, "py-sqlite")
	g := graphOf(t, s, "interrupt-resume")
	before, err := r.ListThreads(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]error{}
	_, calls["Invoke"] = g.Invoke(ctx, engine.Values{}, engine.WithThread("interrupt-resume"))
	_, calls["UpdateState"] = g.UpdateState(ctx, engine.Updates(engine.Write{Channel: "x", Value: 1}), "", engine.WithThread("interrupt-resume"))
	_, calls["Resume"] = g.Invoke(ctx, engine.Command{Resume: "yes"}, engine.WithThread("interrupt-resume"))
	_, calls["SubmitAnswer"] = g.SubmitAnswer(ctx, engine.Command{Resume: "yes"}, engine.WithThread("interrupt-resume"))
	for name, err := range calls {
		if !errors.Is(err, engine.ErrView) {
			t.Errorf("%s: %v, want ErrView", name, err)
		} else if !strings.Contains(err.Error(), "LangGraph program that wrote them") {
			t.Errorf("%s: %q does not say what would do it", name, err)
		}
	}
	if g.ViewReadOnly() == "" {
		t.Error("a view says nothing of why it is read-only")
	}
	after, err := r.ListThreads(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) || after[0].Latest != before[0].Latest {
		t.Error("the store changed")
	}
}

// TestViewFollowsTheStore: what a LangGraph process changes after the
// view read a thread is what the view shows next (the decoded threads it
// keeps are dropped on the store's change), and a thread it did not group
// carries no group tag (so the studio lists it under every graph, as it
// lists untagged threads) and is read exactly.
func TestViewFollowsTheStore(t *testing.T) {
	ctx := context.Background()
	path := gunzip(t, "py-sqlite.sqlite")
	r, err := langgraph.OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s, err := Open(ctx, r, Options{Sample: 50})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// "chain" is among the oldest threads: beyond a sample of 50.
	if g := s.GroupOf("chain"); g != "" {
		t.Fatalf("chain grouped in %q with a sample of 50", g)
	}
	g := s.Groups()[0].Graph.WithSaver(s.Saver())
	page, err := s.Saver().(checkpoint.ThreadSearcher).SearchThreads(ctx, checkpoint.ThreadQuery{Filter: map[string]any{engine.MetaGraph: nil}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(page.Threads, func(in checkpoint.ThreadInfo) bool { return in.ThreadID == "chain" }) {
		t.Error("an ungrouped thread is not listed as untagged")
	}
	if _, err := g.GetState(ctx, engine.WithThread("chain")); err != nil {
		t.Fatal(err)
	}
	// LangGraph's delete_thread, from another connection.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, table := range []string{"writes", "checkpoints"} {
		if _, err := db.Exec("DELETE FROM "+table+" WHERE thread_id = ?", "chain"); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(20 * time.Second) // a bound on failure, not a speed
	for {
		_, err := g.GetState(ctx, engine.WithThread("chain"))
		if errors.Is(err, checkpoint.ErrNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the deleted thread still reads (%v)", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestConcurrentReads: the studio reads states on several goroutines at
// once, all of one cached thread (go test -race finds what is shared).
func TestConcurrentReads(t *testing.T) {
	s, _ := openFixture(t, "py-sqlite")
	g := graphOf(t, s, "parallel-interrupts")
	// Read once so the thread is cached, then its lookups are built by
	// whichever of the readers comes first.
	if _, err := s.thread(context.Background(), "parallel-interrupts"); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			_, err := g.GetState(context.Background(), engine.WithThread("parallel-interrupts"), engine.WithSubgraphs())
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// The view's saver lists a thread's headers from the thread it keeps
// decoded, and lists what the Reader lists, page by page as the studio's
// timeline asks for them.
func TestHeadersFromTheKeptThread(t *testing.T) {
	ctx := context.Background()
	s, r := openFixture(t, "js-sqlite")
	hl := s.Saver().(checkpoint.HeaderLister)
	root := ""
	threads, err := r.ListThreads(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range threads {
		for _, o := range []checkpoint.ListOptions{{ThreadID: th.ThreadID, NS: &root, Limit: 2}, {ThreadID: th.ThreadID}} {
			got, err := hl.ListHeaders(ctx, o)
			want, werr := r.ListHeaders(ctx, o)
			if (err == nil) != (werr == nil) || !reflect.DeepEqual(got, want) {
				t.Errorf("%s %+v: the view lists %d headers (%v), the Reader %d (%v)", th.ThreadID, o, len(got), err, len(want), werr)
			}
		}
	}
	// Gone from the store: nothing listed, as the Reader lists it.
	if got, err := hl.ListHeaders(ctx, checkpoint.ListOptions{ThreadID: "no-such-thread"}); err != nil || len(got) != 0 {
		t.Errorf("a missing thread: %v, %v", got, err)
	}
}

// The view's write kinds (what the studio's timeline marks read) are the
// Reader's pending writes without their values, for every checkpoint of
// both SQLite fixtures; a missing checkpoint is ErrNotFound.
func TestWriteKindsAreGetsWrites(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"js-sqlite", "py-sqlite"} {
		s, r := openFixture(t, name)
		wk := s.Saver().(checkpoint.WriteKindsReader)
		threads, err := r.ListThreads(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked := 0
		for _, th := range threads {
			for tp, err := range r.List(ctx, checkpoint.ListOptions{ThreadID: th.ThreadID}) {
				if err != nil {
					t.Fatal(err)
				}
				got, err := wk.WriteKinds(ctx, tp.Ref)
				if err != nil {
					t.Fatalf("%s %v: %v", name, tp.Ref, err)
				}
				want := []checkpoint.PendingWrite{}
				for _, w := range tp.PendingWrites {
					w.Value = nil
					want = append(want, w)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s %v: write kinds %+v, want %+v", name, tp.Ref, got, want)
				}
				checked += len(want)
			}
		}
		if checked == 0 {
			t.Fatalf("%s: no pending write checked", name)
		}
		if _, err := wk.WriteKinds(ctx, checkpoint.Ref{ThreadID: threads[0].ThreadID, CheckpointID: "nope"}); !errors.Is(err, checkpoint.ErrNotFound) {
			t.Errorf("%s: a missing checkpoint: %v", name, err)
		}
	}
}

// Callers asking at once for a thread not yet read share one read (the
// studio asks for a thread's status, headers, state and marks together: a
// thread of big values read four times at once held four times the
// memory); a caller whose context ended gets that error, and the next
// caller reads the thread.
func TestConcurrentCallersShareARead(t *testing.T) {
	ctx := context.Background()
	s, r := openFixture(t, "js-sqlite")
	threads, err := r.ListThreads(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	id := threads[0].ThreadID
	s.mu.Lock()
	s.cache = nil
	s.mu.Unlock()
	reads := s.reads.Load()
	var wg sync.WaitGroup
	got := make([]*langgraph.Thread, 8)
	for i := range got {
		wg.Go(func() {
			th, err := s.thread(ctx, id)
			if err != nil {
				t.Error(err)
			}
			got[i] = th
		})
	}
	wg.Wait()
	for _, th := range got[1:] {
		if th != got[0] {
			t.Fatal("callers got different reads of one thread")
		}
	}
	if n := s.reads.Load() - reads; n != 1 {
		t.Errorf("8 callers at once read the thread %d times, want once", n)
	}
	// A caller that gave up does not make the others fail.
	s.mu.Lock()
	s.cache = nil
	s.mu.Unlock()
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.thread(gone, id); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled caller: %v", err)
	}
	if th, err := s.thread(ctx, id); err != nil || th == nil {
		t.Errorf("after a cancelled caller: %v", err)
	}
}
