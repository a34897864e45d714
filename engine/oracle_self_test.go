package engine_test

// Tests of the differential suite's own machinery: a driver that compared
// wrongly would report differences that are not there, or hide real ones.

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func mustJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

func TestDifferentialTemplates(t *testing.T) {
	c := &evalCtx{
		input:   map[string]any{"count": 2.0, "log": []any{"a", "b"}, "obj": map[string]any{"k": "v"}, "none": nil},
		resume:  "yes",
		resumes: []any{"first"},
		call:    3.0,
		node:    "n",
	}
	cases := []struct {
		tmpl string
		want any
	}{
		{`"{count}"`, 2.0},
		{`"{count+1}"`, 3.0},
		{`"{missing+1}"`, 1.0}, // null counts as 0
		{`"{len(log)}"`, 2.0},
		{`"{len(missing)}"`, 0.0},
		{`"n={count} log={log} none={none} r={resume}"`, `n=2 log=["a","b"] none= r=yes`},
		{`"{resumes.0}/{call}/{node}/{log.1}/{obj.k}"`, "first/3/n/b/v"},
		{`{"a": "{count-1}", "b": ["{resume}"]}`, map[string]any{"a": 1.0, "b": []any{"yes"}}},
		{`{"$literal": "{count}"}`, "{count}"},
	}
	for _, tc := range cases {
		v, err := parseOrdered([]byte(tc.tmpl))
		if err != nil {
			t.Fatal(err)
		}
		if got := tmpl(v, c); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("tmpl(%s) = %#v, want %#v", tc.tmpl, got, tc.want)
		}
	}
	conds := []struct {
		cond string
		want bool
	}{
		{`{"lt": ["count", 3]}`, true},
		{`{"lt": ["resume", 3]}`, false}, // string and number do not order
		{`{"eq": ["log", {"lit": ["a", "b"]}]}`, true},
		{`{"in": [{"lit": "b"}, "log"]}`, true},
		{`{"and": [{"truthy": "log"}, {"not": {"truthy": "none"}}]}`, true},
		{`{"isNumber": "resume"}`, false},
		{`{"or": [false, {"ge": ["call", 3]}]}`, true},
	}
	for _, tc := range conds {
		v, err := parseOrdered([]byte(tc.cond))
		if err != nil {
			t.Fatal(err)
		}
		if got := cond(v, c); got != tc.want {
			t.Errorf("cond(%s) = %v, want %v", tc.cond, got, tc.want)
		}
	}
}

func TestDifferentialOrderedReader(t *testing.T) {
	v, err := parseOrdered([]byte(`{"z": 1, "a": {"y": 2, "b": 3}, "m": [1, {"q": 4, "c": 5}]}`))
	if err != nil {
		t.Fatal(err)
	}
	o := v.(*omap)
	if !slices.Equal(o.keys, []string{"z", "a", "m"}) || !slices.Equal(o.obj("a").keys, []string{"y", "b"}) {
		t.Errorf("keys lost their order: %v, %v", o.keys, o.obj("a").keys)
	}
}

// Ids are labelled in the order of a depth-first walk over key-sorted
// objects, integer-like keys first (JavaScript's enumeration order), and
// checkpoint ids of a subgraph namespace carry the labelled namespace.
func TestDifferentialLabels(t *testing.T) {
	const (
		cpRoot = "018f0000-0000-7000-8000-000000000001"
		cpSub  = "018f0000-0000-7000-8000-000000000002"
		task1  = "aaaaaaaa-0000-0000-0000-000000000001"
		task2  = "bbbbbbbb-0000-0000-0000-000000000002"
	)
	doc := map[string]any{
		"b":  map[string]any{"x": task2, "10": task1, "9": "child:" + task2},
		"a":  []any{cpSub, cpRoot},
		"id": "0123456789abcdef0123456789abcdef",
	}
	idx := map[string]cpInfo{cpRoot: {"1", "", 3}, cpSub: {"1", "child:" + task1, 0}}
	got := labelIDs(doc, idx)
	want := map[string]any{
		"a":  []any{"child:T1/cp0", "cp3"},
		"b":  map[string]any{"9": "child:T2", "10": "T1", "x": "T2"},
		"id": "I1",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("labels = %v, want %v", got, want)
	}
	if k := jsKeys(map[string]any{"b": 1, "10": 1, "2": 1, "a": 1, "01": 1}); !slices.Equal(k, []string{"2", "10", "01", "a", "b"}) {
		t.Errorf("jsKeys = %v", k)
	}
}

func TestDifferentialComparer(t *testing.T) {
	cases := []struct {
		name     string
		exp, got string
		meta     []chunkMeta
		diffs    int
	}{
		{"labels correspond", `{"a":"T1","b":"child:T1","c":"T2"}`, `{"a":"T7","b":"child:T7","c":"T3"}`, nil, 0},
		{"a label used for two ids", `{"a":"T1","b":"T2"}`, `{"a":"T5","b":"T5"}`, nil, 1},
		{"two labels for one id", `{"a":"T1","b":"T1"}`, `{"a":"T5","b":"T6"}`, nil, 1},
		{"error message and code are lenient", `{"e":{"error":"InvalidUpdateError","message":"js words","code":"X"}}`, `{"e":{"error":"InvalidUpdateError","message":"go words"}}`, nil, 0},
		{"error class is not", `{"e":{"error":"InvalidUpdateError","message":"m"}}`, `{"e":{"error":"Error","message":"m"}}`, nil, 1},
		{"task path and triggers are lenient", `{"id":"T1","name":"a","path":["__pregel_pull","a"],"triggers":["x"]}`, `{"id":"T1","name":"a","path":"pull:a","triggers":[]}`, nil, 0},
		{"AbortError on a sibling is lenient", `{"id":"T1","name":"a","error":{"error":"AbortError","message":"m"}}`, `{"id":"T1","name":"a"}`, nil, 0},
		{"other task errors are not", `{"id":"T1","name":"a","error":{"error":"Error","message":"m"}}`, `{"id":"T1","name":"a"}`, nil, 1},
		{"missing and extra keys", `{"a":1,"b":2}`, `{"a":1,"c":2}`, nil, 2},
		{
			"a parallel step's completion events match as a set",
			`{"actions":[{"chunks":[{"x":1},{"a":1},{"b":2},{"y":1}]}]}`,
			`{"actions":[{"chunks":[{"x":1},{"b":2},{"a":1},{"y":1}]}]}`,
			[]chunkMeta{{step: 1}, {step: 2, taskID: "t1"}, {step: 2, taskID: "t2"}, {step: 2}},
			0,
		},
		{
			"events of one task keep their order",
			`{"actions":[{"chunks":[{"a":1},{"b":2}]}]}`,
			`{"actions":[{"chunks":[{"b":2},{"a":1}]}]}`,
			[]chunkMeta{{step: 2, taskID: "t1"}, {step: 2, taskID: "t1"}},
			4, // per chunk, a missing key and an extra one
		},
		{
			"steps do not mix",
			`{"actions":[{"chunks":[{"a":1},{"b":2}]}]}`,
			`{"actions":[{"chunks":[{"b":2},{"a":1}]}]}`,
			[]chunkMeta{{step: 2, taskID: "t1"}, {step: 3, taskID: "t2"}},
			4,
		},
		{
			"a missing chunk is one difference",
			`{"actions":[{"chunks":[{"a":1},{"b":2},{"c":3}]}]}`,
			`{"actions":[{"chunks":[{"a":1},{"c":3}]}]}`,
			[]chunkMeta{{}, {}},
			1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newComparer(map[int][]chunkMeta{0: tc.meta})
			if tc.meta != nil {
				markParallel(tc.meta)
			}
			c.cmp("", mustJSON(t, tc.exp), mustJSON(t, tc.got))
			if len(c.diffs) != tc.diffs {
				t.Errorf("%d differences, want %d: %v", len(c.diffs), tc.diffs, c.diffs)
			}
		})
	}
}

// An allow-list entry applies only to exactly the difference it names; one
// that no longer matches is reported, never silently kept.
func TestDifferentialAllowEntries(t *testing.T) {
	exp := mustJSON(t, `{"actions":[{"result":{"v":1,"__interrupt__":[]}}]}`)
	entry := func(expected, got string) allowEntry {
		var e allowEntry
		e.Differences = append(e.Differences, struct {
			Path     string `json:"path"`
			Expected any    `json:"expected"`
			Got      any    `json:"got"`
		}{"actions[0].result", mustJSON(t, expected), mustJSON(t, got)})
		return e
	}
	cases := []struct {
		name, entryExp, entryGot, engine, want string
	}{
		{"the named difference", `{"v":1,"__interrupt__":[]}`, `{"v":1}`, `{"v":1}`, "applied"},
		{"LangGraph.js changed", `{"v":2,"__interrupt__":[]}`, `{"v":2}`, `{"v":1}`, "stale"},
		{"the engine now does what LangGraph.js does", `{"v":1,"__interrupt__":[]}`, `{"v":1}`, `{"v":1,"__interrupt__":[]}`, "stale"},
		{"the engine does something else", `{"v":1,"__interrupt__":[]}`, `{"v":1}`, `{"v":3}`, "unmatched"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := mustJSON(t, `{"actions":[{"result":`+tc.engine+`}]}`)
			skip := map[string]bool{}
			status, detail := applyAllow(entry(tc.entryExp, tc.entryGot), "LangGraph.js", exp, got, skip)
			if status != tc.want {
				t.Fatalf("status %q (%s), want %q", status, detail, tc.want)
			}
			if (status == "applied") != skip["actions[0].result"] {
				t.Errorf("skip = %v after %q", skip, status)
			}
		})
	}
	if v, ok := getPath(mustJSON(t, `{"threads":{"1":{"h":[{"a":2}]}},"x":{"":3}}`), `threads.1.h[0].a`); !ok || v != 2.0 {
		t.Errorf("getPath = %v, %v", v, ok)
	}
	if !strings.Contains(childPath("x", ""), `[""]`) {
		t.Errorf("childPath of an empty key: %s", childPath("x", ""))
	}
}

// A LangGraph.js document may say a scenario is not in LangGraph.js only
// for a scenario using a Python-only feature; such a scenario needs one.
func TestDifferentialNotInLangGraphJS(t *testing.T) {
	marked := map[string]any{"name": "s", notInJSKey: "managed values"}
	ordinary := map[string]any{"name": "s", "actions": []any{}}
	managed := []string{"left (remainingSteps)"}
	for _, c := range []struct {
		what       string
		r          oracleReference
		exp        any
		pythonOnly []string
		outcome    orcOutcome
		handled    bool
		problem    string // part of the problem; "" for none
	}{
		{"a managed scenario marked", oracleJS, marked, managed, orcNotInRef, true, ""},
		{"an ordinary scenario", oracleJS, ordinary, nil, 0, false, ""},
		{"a managed scenario under Python", oraclePython, ordinary, managed, 0, false, ""},
		{"a managed scenario recorded as if LangGraph.js had it", oracleJS, ordinary, managed, orcDiffers, true, "is an ordinary document"},
		{"a marked scenario using nothing Python-only", oracleJS, marked, nil, orcDiffers, true, "uses no Python-only feature"},
		{"a marked Python document", oraclePython, marked, managed, orcDiffers, true, "only a LangGraph.js document may"},
	} {
		o, handled, problem := notInReference("s", c.r, c.exp, c.pythonOnly)
		if o != c.outcome || handled != c.handled || (c.problem == "") != (problem == "") || !strings.Contains(problem, c.problem) {
			t.Errorf("%s: got (%v, %v, %q), want (%v, %v, %q)", c.what, o, handled, problem, c.outcome, c.handled, c.problem)
		}
	}
}
