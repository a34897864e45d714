package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/weftstudio/weft/cli"
	"github.com/weftstudio/weft/inspect"
	"github.com/weftstudio/weft/internal/testenv"
)

// The LangGraph fixture stores (checkpoint/langgraph/testdata): real
// SqliteSaver files written by LangGraph itself, with LangGraph's own view
// of every thread beside them.
func lgFixture(t *testing.T, name string) string { return testenv.LangGraphFixture(t, name) }

type lgTruth struct {
	Threads map[string]struct {
		State   lgTruthSnap   `json:"state"`
		History []lgTruthSnap `json:"history"`
	} `json:"threads"`
}

type lgTruthConfig struct {
	Configurable struct {
		CheckpointID string `json:"checkpoint_id"`
	} `json:"configurable"`
}

type lgTruthSnap struct {
	Values json.RawMessage `json:"values"`
	Next   []string        `json:"next"`
	Config struct {
		Configurable struct {
			CheckpointID string `json:"checkpoint_id"`
		} `json:"configurable"`
	} `json:"config"`
	// ParentConfig is Python's parent_config, ParentConfigJS JS's parentConfig.
	ParentConfig   *lgTruthConfig `json:"parent_config"`
	ParentConfigJS *lgTruthConfig `json:"parentConfig"`
	Tasks          []struct {
		// {"id", "value"} (JS) or {"$dataclass": …, "value": {"id", …}} (Python)
		Interrupts []struct {
			ID    string          `json:"id"`
			Value json.RawMessage `json:"value"`
		} `json:"interrupts"`
	} `json:"tasks"`
}

func TestLangGraphStoreCommands(t *testing.T) {
	for _, name := range []string{"py-sqlite", "js-sqlite"} {
		t.Run(name, func(t *testing.T) {
			db := lgFixture(t, name+".sqlite")
			var truth lgTruth
			b, err := os.ReadFile(lgFixture(t, name+".truth.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &truth); err != nil {
				t.Fatal(err)
			}
			kind := map[string]string{"py-sqlite": "LangGraph (Python) SQLite store", "js-sqlite": "LangGraph.js SQLite store"}[name]

			// threads: every thread of the store, by LangGraph's thread id.
			out, errOut, code := runCLI(t, nil, "threads", "-db", db)
			if code != 0 {
				t.Fatalf("threads: exit %d: %s", code, errOut)
			}
			if !strings.Contains(errOut, kind) {
				t.Errorf("threads does not say the store is a %s: %q", kind, errOut)
			}
			var threads []struct {
				ThreadID string `json:"thread_id"`
				Status   string `json:"status"`
			}
			if err := json.Unmarshal([]byte(out), &threads); err != nil {
				t.Fatal(err)
			}
			var got, want []string
			status := map[string]string{}
			for _, th := range threads {
				got = append(got, th.ThreadID)
				status[th.ThreadID] = th.Status
			}
			for thread, want := range map[string]string{"subgraph-interrupt-pending": "waiting", "node-error": "failed",
				"breakpoint-before-pending": "paused", "chain": "done", "parallel-interrupts": "done"} {
				if status[thread] != want {
					t.Errorf("threads: %s is %q, want %q", thread, status[thread], want)
				}
			}
			for id := range truth.Threads {
				want = append(want, id)
			}
			sort.Strings(got)
			sort.Strings(want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("threads lists %d threads, LangGraph %d", len(got), len(want))
			}

			// history: the root namespace newest first, with LangGraph's
			// checkpoint ids, next and values.
			for _, thread := range []string{"chain", "update-fork", "parallel-interrupts", "unicode-ünïcødé-名前-🧵"} {
				out, errOut, code := runCLI(t, nil, "history", thread, "-db", db)
				if code != 0 {
					t.Fatalf("history %s: exit %d: %s", thread, code, errOut)
				}
				var hist []struct {
					CheckpointID string          `json:"checkpoint_id"`
					Next         []string        `json:"next"`
					Values       json.RawMessage `json:"values"`
				}
				if err := json.Unmarshal([]byte(out), &hist); err != nil {
					t.Fatal(err)
				}
				th := truth.Threads[thread]
				if len(hist) != len(th.History) {
					t.Fatalf("history %s: %d entries, LangGraph has %d", thread, len(hist), len(th.History))
				}
				for i, h := range hist {
					w := th.History[i]
					if h.CheckpointID != w.Config.Configurable.CheckpointID || !reflect.DeepEqual(h.Next, w.Next) || !sameJSON(t, h.Values, w.Values) {
						t.Errorf("history %s [%d]: %s next %v values %s; LangGraph: %s next %v values %s", thread, i,
							h.CheckpointID, h.Next, h.Values, w.Config.Configurable.CheckpointID, w.Next, w.Values)
					}
				}
			}

			// history says which tasks made each loop checkpoint.
			out, errOut, code = runCLI(t, nil, "history", "parallel-reducer", "-db", db)
			if code != 0 {
				t.Fatalf("history: exit %d: %s", code, errOut)
			}
			var ran []struct {
				Source string   `json:"source"`
				Ran    []string `json:"ran"`
			}
			if err := json.Unmarshal([]byte(out), &ran); err != nil {
				t.Fatal(err)
			}
			var gotRan [][]string
			for _, h := range ran {
				gotRan = append(gotRan, h.Ran)
			}
			wantRan := [][]string{{"merge"}, {"left", "middle", "right"}, {"split"}, {"__start__"}, nil}
			if !reflect.DeepEqual(gotRan, wantRan) {
				t.Errorf("history parallel-reducer ran %v, want %v", gotRan, wantRan)
			}

			// state: a value applied by a reducer the store does not
			// keep says so; one that the thread shows does not.
			for thread, want := range map[string][]string{"node-error": {"results"}, "chain": nil} {
				out, errOut, code := runCLI(t, nil, "state", thread, "-db", db)
				var g struct {
					Guessed []string `json:"guessed_reducers"`
				}
				if code != 0 || json.Unmarshal([]byte(out), &g) != nil || !reflect.DeepEqual(g.Guessed, want) {
					t.Errorf("state %s: guessed reducers %v, want %v (exit %d: %s)", thread, g.Guessed, want, code, errOut)
				}
			}

			// state: the head, with its pending interrupts.
			out, errOut, code = runCLI(t, nil, "state", "subgraph-interrupt-pending", "-db", db)
			if code != 0 {
				t.Fatalf("state: exit %d: %s", code, errOut)
			}
			var st struct {
				CheckpointID string   `json:"checkpoint_id"`
				Next         []string `json:"next"`
				Interrupts   []struct {
					ID string `json:"id"`
				} `json:"interrupts"`
			}
			if err := json.Unmarshal([]byte(out), &st); err != nil {
				t.Fatal(err)
			}
			w := truth.Threads["subgraph-interrupt-pending"].State
			if st.CheckpointID != w.Config.Configurable.CheckpointID || !reflect.DeepEqual(st.Next, w.Next) {
				t.Errorf("state: %s next %v; LangGraph: %s next %v", st.CheckpointID, st.Next, w.Config.Configurable.CheckpointID, w.Next)
			}
			var wantIDs []string
			for _, task := range w.Tasks {
				for _, it := range task.Interrupts {
					id := it.ID
					var inner struct {
						ID string `json:"id"`
					}
					if id == "" && json.Unmarshal(it.Value, &inner) == nil {
						id = inner.ID
					}
					wantIDs = append(wantIDs, id)
				}
			}
			var gotIDs []string
			for _, it := range st.Interrupts {
				gotIDs = append(gotIDs, it.ID)
			}
			if len(wantIDs) == 0 || !reflect.DeepEqual(gotIDs, wantIDs) {
				t.Errorf("state interrupts %+v; LangGraph's task %+v", st.Interrupts, w.Tasks)
			}

			// watch and compare read the thread through its inferred
			// graph: every checkpoint LangGraph lists, each expression over
			// LangGraph's values there.
			hist := truth.Threads["update-fork"].History
			out, errOut, code = runCLI(t, nil, "watch", "update-fork", "len(log)", "n", "-db", db)
			var rows []cli.WatchJSON
			if err := json.Unmarshal([]byte(out), &rows); code != 0 || err != nil || len(rows) != len(hist) {
				t.Fatalf("watch: exit %d, %d rows for %d checkpoints, %v %s", code, len(rows), len(hist), err, errOut)
			}
			for _, r := range rows {
				i := slices.IndexFunc(hist, func(h lgTruthSnap) bool { return h.Config.Configurable.CheckpointID == r.CheckpointID })
				if i < 0 {
					t.Errorf("watch row at %s, which LangGraph does not list", r.CheckpointID)
					continue
				}
				var v struct {
					Log []any `json:"log"`
					N   any   `json:"n"`
				}
				_ = json.Unmarshal(hist[i].Values, &v)
				if r.Values[0] != float64(len(v.Log)) || r.Values[1] != v.N || len(r.Errors) != 0 {
					t.Errorf("watch at %s: %v %v; LangGraph's values %s", r.CheckpointID, r.Values, r.Errors, hist[i].Values)
				}
			}
			// The two branches' heads: the checkpoints no other names as
			// its parent.
			parents := map[string]bool{}
			for _, h := range hist {
				for _, p := range []*lgTruthConfig{h.ParentConfig, h.ParentConfigJS} {
					if p != nil {
						parents[p.Configurable.CheckpointID] = true
					}
				}
			}
			var heads []string
			for _, h := range hist {
				if id := h.Config.Configurable.CheckpointID; !parents[id] {
					heads = append(heads, id)
				}
			}
			if len(heads) < 2 {
				t.Fatalf("update-fork has %d branch heads in LangGraph's history, want the fork's two at least", len(heads))
			}
			out, errOut, code = runCLI(t, nil, "compare", "update-fork", heads[0], heads[1], "-db", db)
			var cmp inspect.Comparison
			if err := json.Unmarshal([]byte(out), &cmp); code != 0 || err != nil {
				t.Fatalf("compare: exit %d, %v %s", code, err, errOut)
			}
			// Each side of each key is LangGraph's value at that checkpoint.
			valuesAt := func(id string) map[string]any {
				i := slices.IndexFunc(hist, func(h lgTruthSnap) bool { return h.Config.Configurable.CheckpointID == id })
				var v map[string]any
				_ = json.Unmarshal(hist[i].Values, &v)
				return v
			}
			va, vb := valuesAt(heads[0]), valuesAt(heads[1])
			if cmp.Ancestor == "" || cmp.Differ == 0 || len(cmp.Channels) != len(va) {
				t.Errorf("compare of the branches' heads: %+v; LangGraph's values %v and %v", cmp, va, vb)
			}
			for _, d := range cmp.Channels {
				if !reflect.DeepEqual(d.A, va[d.Channel]) || !reflect.DeepEqual(d.B, vb[d.Channel]) || d.Equal != reflect.DeepEqual(va[d.Channel], vb[d.Channel]) {
					t.Errorf("compare, %s: %v | %v (equal %v); LangGraph's %v | %v", d.Channel, d.A, d.B, d.Equal, va[d.Channel], vb[d.Channel])
				}
			}

			// A missing thread is an error that names it.
			if _, errOut, code := runCLI(t, nil, "state", "no-such-thread", "-db", db); code == 0 || !strings.Contains(errOut, "no-such-thread") {
				t.Errorf("state of a missing thread: exit %d, %q", code, errOut)
			}
		})
	}
}

func sameJSON(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}

// storage reports where a LangGraph store's bytes go, with the state its
// rows duplicate, and the commands that would delete refuse, leaving the
// file as it was.
func TestLangGraphStorage(t *testing.T) {
	db := lgFixture(t, "py-sqlite.sqlite")
	before, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, nil, "storage", "-db", db)
	if code != 0 {
		t.Fatalf("storage: exit %d: %s", code, errOut)
	}
	var sum struct {
		Threads int64 `json:"threads"`
		Bytes   struct {
			Headers, Values, Writes int64
		} `json:"bytes"`
		Layout string `json:"layout"`
		State  struct {
			Bytes      int64 `json:"bytes"`
			Duplicated int64 `json:"duplicated_bytes"`
		} `json:"state_in_checkpoint_rows"`
		MostDuplicated []struct {
			ThreadID string `json:"thread_id"`
		} `json:"most_duplicated_threads"`
	}
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Threads != 214 || sum.Layout != "LangGraph (Python) SQLite store" || sum.State.Bytes != sum.Bytes.Values ||
		sum.State.Duplicated <= 1<<20 || len(sum.MostDuplicated) == 0 || sum.MostDuplicated[0].ThreadID != "large-value" {
		t.Errorf("storage: %s", out)
	}
	out, errOut, code = runCLI(t, nil, "storage", "-thread", "large-value", "-db", db)
	if code != 0 || !strings.Contains(out, `"duplicated_channels"`) || !strings.Contains(out, `"thread_id": "large-value"`) {
		t.Errorf("storage -thread: exit %d: %s %s", code, errOut, out)
	}
	for _, args := range [][]string{{"storage", "prune", "-keep", "1"}, {"storage", "vacuum"}, {"prune", "-keep", "1"}, {"delete", "chain"}} {
		_, errOut, code := runCLI(t, nil, append(args, "-db", db)...)
		if code != 1 || !strings.Contains(errOut, "which Weft only reads") || !strings.Contains(errOut, "LangGraph") {
			t.Errorf("%v: exit %d, %q", args, code, errOut)
		}
	}
	after, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Error("the store changed")
	}
}

// graph infers a LangGraph store's graph from its threads, says so, and
// reads a graph file LangGraph saved.
func TestLangGraphGraph(t *testing.T) {
	db := lgFixture(t, "js-sqlite.sqlite")
	out, errOut, code := runCLI(t, nil, "graph", "chain", "-db", db)
	if code != 0 {
		t.Fatalf("graph: exit %d: %s", code, errOut)
	}
	var g struct {
		Inferred bool `json:"inferred"`
		Edges    []struct {
			Source, Target, Kind string
		} `json:"edges"`
	}
	if err := json.Unmarshal([]byte(out), &g); err != nil {
		t.Fatal(err)
	}
	var edges []string
	for _, e := range g.Edges {
		edges = append(edges, e.Source+">"+e.Target+" "+e.Kind)
	}
	if want := []string{"__start__>fetch static", "fetch>parse static", "parse>store static", "store>__end__ static"}; !g.Inferred || !reflect.DeepEqual(edges, want) {
		t.Errorf("graph chain: inferred %v, edges %v; want %v", g.Inferred, edges, want)
	}
	out, errOut, code = runCLI(t, nil, "graph", "-dot", "send-map-reduce", "-db", db)
	if code != 0 || !strings.HasPrefix(out, `digraph "inferred from the checkpoints of 1 thread: send-map-reduce"`) || !strings.Contains(out, `"plan" -> "square" [style=dotted`) {
		t.Errorf("graph -dot: exit %d: %s\n%s", code, errOut, out)
	}
	file := filepath.Join("..", "checkpoint", "langgraph", "testdata", "js-graphs.json")
	var files map[string]struct{ Plain json.RawMessage }
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &files); err != nil {
		t.Fatal(err)
	}
	saved := filepath.Join(t.TempDir(), "graph.json")
	if err := os.WriteFile(saved, files["messages-tools"].Plain, 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = runCLI(t, nil, "graph", "-file", saved, "-dot", "-db", db)
	if code != 0 || !strings.Contains(out, `"agent" -> "tools" [style=dashed]`) || strings.Contains(out, "inferred") {
		t.Errorf("graph -file: exit %d: %s\n%s", code, errOut, out)
	}
	if _, errOut, code := runCLI(t, nil, "graph", "no-such-thread", "-db", db); code != 1 || !strings.Contains(errOut, "no-such-thread") {
		t.Errorf("graph of a missing thread: exit %d, %q", code, errOut)
	}
}
