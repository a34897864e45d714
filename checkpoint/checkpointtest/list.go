package checkpointtest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
)

func listCases() []testCase {
	return []testCase{
		{name: "all", run: listAll},
		{name: "by_thread", run: listByThread},
		{name: "by_namespace", run: listByNamespace},
		{name: "newest_first", run: listNewestFirst},
		{name: "filter_source", run: listFilterSource},
		{name: "filter_step", run: listFilterStep},
		{name: "filter_several_keys", run: listFilterSeveral},
		{name: "filter_custom_key", run: listFilterCustom},
		{name: "filter_run_id", run: listFilterRunID},
		{name: "filter_nested_value", run: listFilterNested},
		{name: "filter_null_matches_missing", run: listFilterNull},
		{name: "filter_no_match", run: listFilterNoMatch},
		{name: "filter_unencodable_value", run: listFilterBad},
		{name: "before", run: listBefore},
		{name: "limit", run: listLimit},
		{name: "before_and_limit", run: listBeforeLimit},
		{name: "empty_store", run: listEmpty},
		{name: "includes_pending_writes", run: listIncludesWrites},
		{name: "stop_early", run: listStopEarly},
		{name: "many_checkpoints", run: listMany},
	}
}

// filled holds a small history for the list cases: thread A with 4 root
// checkpoints (input, loop 0, loop 1, update 2) and 2 in "sub:1"; thread B
// with 2 root checkpoints. Extra keys: score (int) on A's loop steps, tags
// (object) on A's update.
type filled struct {
	a, b     string
	aRoot    []*checkpoint.Tuple // oldest first
	aSub     []*checkpoint.Tuple
	bRoot    []*checkpoint.Tuple
	runID    string
	everyone []*checkpoint.Tuple // newest first
}

func fill(t *testing.T, s checkpoint.Saver) *filled {
	t.Helper()
	f := &filled{a: newThread("listA"), b: newThread("listB"), runID: checkpoint.NewID()}
	add := func(thread, ns string, parent *checkpoint.Tuple, md checkpoint.Metadata, v string) *checkpoint.Tuple {
		cp := newCP(vals("v", v), vers("v", len(v)))
		pref := checkpoint.Ref{ThreadID: thread, NS: ns}
		pid := ""
		if parent != nil {
			pref, pid = parent.Ref, parent.Ref.CheckpointID
		}
		ref := mustPut(t, s, pref, cp, md, cp.ChannelVersions)
		mustWrites(t, s, ref, "task-"+v, "", "v", v+"!")
		return want(ref, pid, cp, md, cp.ChannelValues, pw("task-"+v, "v", v+"!"))
	}
	md := func(src checkpoint.Source, step int, extra map[string]any) checkpoint.Metadata {
		return checkpoint.Metadata{Source: src, Step: step, Parents: map[string]string{}, RunID: f.runID, Extra: extra}
	}
	var p *checkpoint.Tuple
	for i, m := range []checkpoint.Metadata{
		md(checkpoint.SourceInput, -1, nil),
		md(checkpoint.SourceLoop, 0, map[string]any{"score": 42}),
		md(checkpoint.SourceLoop, 1, map[string]any{"score": 7, "note": nil}),
		md(checkpoint.SourceUpdate, 2, map[string]any{"tags": map[string]any{"x": []any{1, "two"}, "a": true}}),
	} {
		p = add(f.a, "", p, m, strings.Repeat("a", i+1))
		f.aRoot = append(f.aRoot, p)
		if i == 1 {
			sp := add(f.a, "sub:1", nil, md(checkpoint.SourceInput, -1, nil), "s")
			f.aSub = append(f.aSub, sp, add(f.a, "sub:1", sp, md(checkpoint.SourceLoop, 0, map[string]any{"score": 42}), "ss"))
		}
	}
	p = nil
	for i, m := range []checkpoint.Metadata{md(checkpoint.SourceInput, -1, nil), md(checkpoint.SourceLoop, 0, nil)} {
		m.RunID = "other-run"
		p = add(f.b, "", p, m, strings.Repeat("b", i+1))
		f.bRoot = append(f.bRoot, p)
	}
	f.everyone = slices.Concat(f.aRoot, f.aSub, f.bRoot)
	sortNewestFirst(f.everyone)
	return f
}

func sortNewestFirst(ts []*checkpoint.Tuple) {
	slices.SortFunc(ts, func(x, y *checkpoint.Tuple) int {
		if c := strings.Compare(y.Ref.CheckpointID, x.Ref.CheckpointID); c != 0 {
			return c
		}
		if c := strings.Compare(x.Ref.ThreadID, y.Ref.ThreadID); c != 0 {
			return c
		}
		return strings.Compare(x.Ref.NS, y.Ref.NS)
	})
}

// expectList fails unless List(opts) returns exactly want, in order, each
// tuple deep-equal.
func expectList(t *testing.T, s checkpoint.Saver, opts checkpoint.ListOptions, want []*checkpoint.Tuple) {
	t.Helper()
	got := mustList(t, s, opts)
	if len(got) != len(want) {
		ids := func(ts []*checkpoint.Tuple) []string {
			out := []string{}
			for _, x := range ts {
				out = append(out, x.Ref.ThreadID+"/"+x.Ref.NS+"/"+x.Ref.CheckpointID)
			}
			return out
		}
		t.Fatalf("List(%s) returned %d tuples, want %d\n got: %v\nwant: %v", describeOpts(opts), len(got), len(want), ids(got), ids(want))
	}
	for i := range got {
		expectTuple(t, fmt.Sprintf("List(%s)[%d]", describeOpts(opts), i), got[i], want[i])
	}
}

func rev(ts ...*checkpoint.Tuple) []*checkpoint.Tuple {
	out := slices.Clone(ts)
	slices.Reverse(out)
	return out
}

// Python test_list_all: no options lists every thread and namespace.
func listAll(t *testing.T, s checkpoint.Saver) {
	f := fill(t, s)
	expectList(t, s, checkpoint.ListOptions{}, f.everyone)
}

// Python test_list_by_thread (all namespaces of the thread).
func listByThread(t *testing.T, s checkpoint.Saver) {
	f := fill(t, s)
	a := slices.Concat(f.aRoot, f.aSub)
	sortNewestFirst(a)
	expectList(t, s, checkpoint.ListOptions{ThreadID: f.a}, a)
	expectList(t, s, checkpoint.ListOptions{ThreadID: f.b}, rev(f.bRoot...))
	expectList(t, s, checkpoint.ListOptions{ThreadID: "no-such-thread"}, nil)
}

// Python test_list_by_namespace.
func listByNamespace(t *testing.T, s checkpoint.Saver) {
	f := fill(t, s)
	expectList(t, s, checkpoint.ListOptions{ThreadID: f.a, NS: ptr("")}, rev(f.aRoot...))
	expectList(t, s, checkpoint.ListOptions{ThreadID: f.a, NS: ptr("sub:1")}, rev(f.aSub...))
	expectList(t, s, checkpoint.ListOptions{NS: ptr("sub:1")}, rev(f.aSub...))
	expectList(t, s, checkpoint.ListOptions{ThreadID: f.b, NS: ptr("sub:1")}, nil)
	root := slices.Concat(f.aRoot, f.bRoot)
	sortNewestFirst(root)
	expectList(t, s, checkpoint.ListOptions{NS: ptr("")}, root)
}

// Python test_list_ordering: newest first, whatever the put order.
func listNewestFirst(t *testing.T, s checkpoint.Saver) {
	thread := newThread("list")
	cps := []checkpoint.Checkpoint{newCP(nil, nil), newCP(nil, nil), newCP(nil, nil), newCP(nil, nil)}
	for _, i := range []int{2, 0, 3, 1} {
		mustPut(t, s, checkpoint.Ref{ThreadID: thread}, cps[i], loopMD(i), nil)
	}
	expectIDs(t, "List", mustList(t, s, checkpoint.ListOptions{ThreadID: thread}), cps[3].ID, cps[2].ID, cps[1].ID, cps[0].ID)
}

// Python test_list_filter_source.
func listFilterSource(t *testing.T, s checkpoint.Saver) {
	f := fill(t, s)
	expectList(t, s, checkpoint.ListOptions{ThreadID: f.a, NS: ptr(""), Filter: map[string]any{"source": "loop"}}, rev(f.aRoot[1:3]...))
	expectList(t, s, checkpoint.ListOptions{ThreadID: f.a, NS: ptr(""), Filter: map[string]any{"source": checkpoint.SourceUpdate}}, []*checkpoint.Tuple{f.aRoot[3]})
}

// Python test_list_filter_step (int and float filter values alike).
func listFilterStep(t *testing.T, s checkpoint.Saver) {
	f := fill(t, s)
	expectList(t, s, checkpoint.ListOptions{ThreadID: f.a, Filter: map[string]any{"step": 1}}, []*checkpoint.Tuple{f.aRoot[2]})
	expectList(t, s, checkpoint.ListOptions{ThreadID: f.a, Filter: map[string]any{"step": 1.0}}, []*checkpoint.Tuple{f.aRoot[2]})
	neg := []*checkpoint.Tuple{f.aSub[0], f.aRoot[0]}
	sortNewestFirst(neg)
	expectList(t, s, checkpoint.ListOptions{ThreadID: f.a, Filter: map[string]any{"step": -1}}, neg)
	expectList(t, s, checkpoint.ListOptions{ThreadID: f.a, Filter: map[string]any{"step": "1"}}, nil)
}

// Python test_list_filter_multiple_keys: every key must match.
func listFilterSeveral(t *testing.T, s checkpoint.Saver) {
	f := fill(t, s)
	expectList(t, s, checkpoint.ListOptions{Filter: map[string]any{"source": "loop", "step": 0}}, rev(f.aRoot[1], f.aSub[1], f.bRoot[1]))
	expectList(t, s, checkpoint.ListOptions{Filter: map[string]any{"source": "loop", "step": 0, "score": 42}}, rev(f.aRoot[1], f.aSub[1]))
	expectList(t, s, checkpoint.ListOptions{Filter: map[string]any{"source": "input", "step": 0}}, nil)
}

// Python test_list_filter_custom_key: {score: 42}.
func listFilterCustom(t *testing.T, s checkpoint.Saver) {
	f := fill(t, s)
	expectList(t, s, checkpoint.ListOptions{Filter: map[string]any{"score": 42}}, rev(f.aRoot[1], f.aSub[1]))
	expectList(t, s, checkpoint.ListOptions{Filter: map[string]any{"score": int64(7)}}, []*checkpoint.Tuple{f.aRoot[2]})
	expectList(t, s, checkpoint.ListOptions{Filter: map[string]any{"score": "42"}}, nil)
	// Only source, step and run_id name Metadata fields; other keys are
	// Extra keys, so "parents" matches nothing here.
	expectList(t, s, checkpoint.ListOptions{Filter: map[string]any{"parents": map[string]any{}}}, nil)
}

func listFilterRunID(t *testing.T, s checkpoint.Saver) {
	f := fill(t, s)
	expectList(t, s, checkpoint.ListOptions{Filter: map[string]any{"run_id": "other-run"}}, rev(f.bRoot...))
	a := slices.Concat(f.aRoot, f.aSub)
	sortNewestFirst(a)
	expectList(t, s, checkpoint.ListOptions{Filter: map[string]any{"run_id": f.runID}}, a)
}

// Objects and arrays compare as JSON, whatever the key order or Go types.
func listFilterNested(t *testing.T, s checkpoint.Saver) {
	f := fill(t, s)
	for _, v := range []any{
		map[string]any{"a": true, "x": []any{1, "two"}},
		map[string]any{"x": []any{1.0, "two"}, "a": true},
		struct {
			X []any `json:"x"`
			A bool  `json:"a"`
		}{[]any{1, "two"}, true},
	} {
		expectList(t, s, checkpoint.ListOptions{Filter: map[string]any{"tags": v}}, []*checkpoint.Tuple{f.aRoot[3]})
	}
	expectList(t, s, checkpoint.ListOptions{Filter: map[string]any{"tags": map[string]any{"a": true}}}, nil)
	expectList(t, s, checkpoint.ListOptions{Filter: map[string]any{"tags": []any{1, "two"}}}, nil)
}

// A nil filter value matches a null or missing key (LangGraph's in-memory
// saver compares metadata.get(key) == value).
func listFilterNull(t *testing.T, s checkpoint.Saver) {
	f := fill(t, s)
	got := mustList(t, s, checkpoint.ListOptions{ThreadID: f.a, NS: ptr(""), Filter: map[string]any{"note": nil}})
	expectIDs(t, "note=null", got, f.aRoot[3].Ref.CheckpointID, f.aRoot[2].Ref.CheckpointID, f.aRoot[1].Ref.CheckpointID, f.aRoot[0].Ref.CheckpointID)
	expectList(t, s, checkpoint.ListOptions{ThreadID: f.a, NS: ptr(""), Filter: map[string]any{"score": nil}}, rev(f.aRoot[0], f.aRoot[3]))
}

// Python test_list_filter_no_match.
func listFilterNoMatch(t *testing.T, s checkpoint.Saver) {
	fill(t, s)
	expectList(t, s, checkpoint.ListOptions{Filter: map[string]any{"source": "fork"}}, nil)
	expectList(t, s, checkpoint.ListOptions{Filter: map[string]any{"no_such_key": "x"}}, nil)
	expectList(t, s, checkpoint.ListOptions{Filter: map[string]any{`odd "key" \ .[0]`: 1}}, nil)
}

// A filter value that is not JSON-encodable is an error, not a silent
// no-match.
func listFilterBad(t *testing.T, s checkpoint.Saver) {
	fill(t, s)
	var gotErr error
	n := 0
	for _, err := range s.List(t.Context(), checkpoint.ListOptions{Filter: map[string]any{"x": make(chan int)}}) {
		if err != nil {
			gotErr = err
			break
		}
		n++
	}
	if gotErr == nil {
		t.Fatalf("List with a channel in the filter yielded %d tuples and no error", n)
	}
}

// Python test_list_before.
func listBefore(t *testing.T, s checkpoint.Saver) {
	f := fill(t, s)
	expectList(t, s, checkpoint.ListOptions{ThreadID: f.a, NS: ptr(""), Before: f.aRoot[2].Ref.CheckpointID}, rev(f.aRoot[:2]...))
	expectList(t, s, checkpoint.ListOptions{ThreadID: f.a, NS: ptr(""), Before: f.aRoot[0].Ref.CheckpointID}, nil)
	var older []*checkpoint.Tuple
	for _, x := range f.everyone {
		if x.Ref.CheckpointID < f.bRoot[0].Ref.CheckpointID {
			older = append(older, x)
		}
	}
	expectList(t, s, checkpoint.ListOptions{Before: f.bRoot[0].Ref.CheckpointID}, older)
}

// Python test_list_limit.
func listLimit(t *testing.T, s checkpoint.Saver) {
	f := fill(t, s)
	expectList(t, s, checkpoint.ListOptions{ThreadID: f.a, NS: ptr(""), Limit: 2}, rev(f.aRoot[2:]...))
	expectList(t, s, checkpoint.ListOptions{Limit: 1}, f.everyone[:1])
	expectList(t, s, checkpoint.ListOptions{Limit: 100}, f.everyone)
}

// Python test_list_limit_plus_before.
func listBeforeLimit(t *testing.T, s checkpoint.Saver) {
	f := fill(t, s)
	expectList(t, s, checkpoint.ListOptions{ThreadID: f.a, NS: ptr(""), Before: f.aRoot[3].Ref.CheckpointID, Limit: 2}, rev(f.aRoot[1:3]...))
	expectList(t, s, checkpoint.ListOptions{ThreadID: f.a, NS: ptr(""), Before: f.aRoot[3].Ref.CheckpointID, Limit: 1, Filter: map[string]any{"source": "input"}}, f.aRoot[:1])
}

// Python test_list_empty.
func listEmpty(t *testing.T, s checkpoint.Saver) {
	expectList(t, s, checkpoint.ListOptions{}, nil)
	expectList(t, s, checkpoint.ListOptions{ThreadID: "x", NS: ptr(""), Limit: 3, Filter: map[string]any{"source": "loop"}}, nil)
}

// Python test_list_includes_pending_writes.
func listIncludesWrites(t *testing.T, s checkpoint.Saver) {
	ref := putOne(t, s, "")
	mustWrites(t, s, ref, "b", "", "ch", "1")
	mustWrites(t, s, ref, "a", "p", checkpoint.Error, `"x"`, "ch", "2")
	got := mustList(t, s, checkpoint.ListOptions{ThreadID: ref.ThreadID})
	if len(got) != 1 {
		t.Fatalf("List returned %d tuples, want 1", len(got))
	}
	w := []checkpoint.PendingWrite{pw("a", checkpoint.Error, `"x"`), pw("a", "ch", "2"), pw("b", "ch", "1")}
	w[0].TaskPath, w[1].TaskPath = "p", "p"
	expectTuple(t, "writes", &checkpoint.Tuple{PendingWrites: got[0].PendingWrites}, &checkpoint.Tuple{PendingWrites: w})
}

// Breaking out of the range stops the listing without error.
func listStopEarly(t *testing.T, s checkpoint.Saver) {
	f := fill(t, s)
	n := 0
	for tp, err := range s.List(t.Context(), checkpoint.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		expectTuple(t, "first", tp, f.everyone[0])
		n++
		break
	}
	if n != 1 {
		t.Fatalf("ranged %d times, want 1", n)
	}
}

// A history longer than any sensible page: every checkpoint comes back, in
// order, with its values (including values carried from old versions).
func listMany(t *testing.T, s checkpoint.Saver) {
	ta, tb := newThread("many"), newThread("many")
	pa, pb := checkpoint.Ref{ThreadID: ta}, checkpoint.Ref{ThreadID: tb}
	var all []*checkpoint.Tuple
	const n = 700
	for i := range n {
		// "const" never changes after the first step; "i" changes every step.
		for _, x := range []struct {
			parent *checkpoint.Ref
			tag    string
		}{{&pa, "a"}, {&pb, "b"}} {
			cp := newCP(vals("i", fmt.Sprint(i), "const", x.tag), vers("i", i+1, "const", 1))
			nv := vers("i", i+1)
			if i == 0 {
				nv = cp.ChannelVersions
			}
			md := loopMD(i)
			pid := x.parent.CheckpointID
			ref := mustPut(t, s, *x.parent, cp, md, nv)
			all = append(all, want(ref, pid, cp, md, cp.ChannelValues))
			*x.parent = ref
			if i == 0 && x.tag == "a" { // before its child: see conflictWrites
				mustWrites(t, s, ref, "t", "", "w", "first")
				all[0].PendingWrites = []checkpoint.PendingWrite{pw("t", "w", "first")}
			}
		}
	}
	sortNewestFirst(all)
	got := mustList(t, s, checkpoint.ListOptions{})
	if len(got) != len(all) {
		t.Fatalf("List returned %d tuples, want %d", len(got), len(all))
	}
	for i := range got {
		if !reflect.DeepEqual(got[i], all[i]) {
			expectTuple(t, fmt.Sprintf("tuple %d", i), got[i], all[i])
			return
		}
	}
	onlyA := mustList(t, s, checkpoint.ListOptions{ThreadID: ta, Limit: n - 1})
	if len(onlyA) != n-1 || onlyA[0].Ref.ThreadID != ta || onlyA[n-2].Metadata.Step != 1 {
		t.Errorf("List(thread a, limit %d): %d tuples", n-1, len(onlyA))
	}
}

// ---- the JS suite's generated list combinations ----

// runGeneratedList ports the JS list spec: tuples from generateTuplePairs(2,
// ["", "child"]) — 2 threads × 2 namespaces × (parent, child), each with its
// writes — listed with every combination of thread (any, each thread,
// unknown), namespace (any, "", "child"), limit (none, 1, 2), before (none,
// the first thread's root parent, its root child) and filter (nil, {},
// {source: input}, {source: loop}). The expected tuples are computed from the
// fixtures; the result must equal them in order (newest first), cut to the
// limit.
func runGeneratedList(t *testing.T, s checkpoint.Saver) {
	var stored []*checkpoint.Tuple // put order = id order
	var threads []string
	for range 2 {
		thread := newThread("gen")
		threads = append(threads, thread)
		for _, ns := range []string{"", "child"} {
			p := newJSPair(thread, ns)
			p.put(t, s)
			stored = append(stored, p.parent, p.child)
		}
	}
	type choice[T any] struct {
		label string
		v     T
	}
	threadChoices := []choice[string]{{"any", ""}, {"first", threads[0]}, {"second", threads[1]}, {"unknown", "no-such-thread"}}
	nsChoices := []choice[*string]{{"any", nil}, {"default", ptr("")}, {"child", ptr("child")}}
	limitChoices := []choice[int]{{"none", 0}, {"1", 1}, {"2", 2}}
	beforeChoices := []choice[string]{{"none", ""}, {"parent", stored[0].Ref.CheckpointID}, {"child", stored[1].Ref.CheckpointID}}
	filterChoices := []choice[map[string]any]{{"nil", nil}, {"empty", map[string]any{}}, {"source=input", map[string]any{"source": "input"}}, {"source=loop", map[string]any{"source": "loop"}}}

	for _, th := range threadChoices {
		for _, ns := range nsChoices {
			for _, lim := range limitChoices {
				for _, bf := range beforeChoices {
					for _, fl := range filterChoices {
						var expected []*checkpoint.Tuple
						for _, tp := range stored {
							if (th.v == "" || tp.Ref.ThreadID == th.v) &&
								(ns.v == nil || tp.Ref.NS == *ns.v) &&
								(bf.v == "" || tp.Ref.CheckpointID < bf.v) &&
								matches(tp.Metadata, fl.v) {
								expected = append(expected, tp)
							}
						}
						sortNewestFirst(expected)
						count := len(expected)
						desc := fmt.Sprintf("%d", count)
						switch {
						case lim.v > 0 && lim.v < count:
							expected = expected[:lim.v]
							desc = fmt.Sprintf("%d(limited)", lim.v)
						case count == len(stored):
							desc = "all"
						}
						name := fmt.Sprintf("returns_%s_when_thread=%s,ns=%s,limit=%s,before=%s,filter=%s", desc, th.label, ns.label, lim.label, bf.label, fl.label)
						opts := checkpoint.ListOptions{ThreadID: th.v, NS: ns.v, Limit: lim.v, Before: bf.v, Filter: fl.v}
						t.Run(name, func(t *testing.T) { expectList(t, s, opts, expected) })
					}
				}
			}
		}
	}
}

// matches applies a filter the way the JS suite computes expectations.
func matches(md checkpoint.Metadata, filter map[string]any) bool {
	b, _ := json.Marshal(md)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	for k, v := range filter {
		if fmt.Sprint(m[k]) != fmt.Sprint(v) {
			return false
		}
	}
	return true
}
