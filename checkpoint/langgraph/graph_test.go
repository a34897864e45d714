package langgraph

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// shape is a graph as text lines, for comparing: "node X", "A -> B kind",
// subgraphs' lines prefixed with their node.
func shape(g *Graph, prefix string) []string {
	var out []string
	for _, n := range g.Nodes {
		out = append(out, "node "+prefix+n.ID)
		if n.Subgraph != nil {
			out = append(out, shape(n.Subgraph, prefix+n.ID+"/")...)
		}
	}
	for _, e := range g.Edges {
		line := prefix + e.Source + " -> " + prefix + e.Target + " " + e.Kind
		if e.Label != "" {
			line += " " + e.Label
		}
		out = append(out, line)
	}
	sort.Strings(out)
	return out
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		out = append(out, strings.TrimSpace(l))
	}
	sort.Strings(out)
	return out
}

// The graphs the fixtures' threads ran (generators/*/scenarios_public):
// what a store shows of them.
var wantInferred = map[string]string{
	"chain": `node __start__
		node fetch
		node parse
		node store
		node __end__
		__start__ -> fetch static
		fetch -> parse static
		parse -> store static
		store -> __end__ static`,
	"parallel-reducer": `node __start__
		node split
		node left
		node middle
		node right
		node merge
		node __end__
		__start__ -> split static
		split -> left static
		split -> middle static
		split -> right static
		left -> merge join
		middle -> merge join
		right -> merge join
		merge -> __end__ static`,
	"send-map-reduce": `node __start__
		node plan
		node square
		node reduce
		node __end__
		__start__ -> plan static
		plan -> square send
		square -> reduce static
		reduce -> __end__ static`,
	// review is a compiled subgraph (check -> ask_human), seen through its
	// checkpoint namespace review:<task id>.
	"subgraph-interrupt": `node __start__
		node write
		node review
		node review/__start__
		node review/check
		node review/ask_human
		node review/__end__
		review/__start__ -> review/check static
		review/check -> review/ask_human static
		review/ask_human -> review/__end__ static
		node publish
		node __end__
		__start__ -> write static
		write -> review static
		review -> publish static
		publish -> __end__ static`,
	// agent routes to tools, then (the second time) to cleanup.
	"messages-tools": `node __start__
		node agent
		node tools
		node cleanup
		node __end__
		__start__ -> agent static
		agent -> tools conditional
		agent -> cleanup conditional
		tools -> agent static
		cleanup -> __end__ static`,
}

func checkInferred(t *testing.T, name string, r *Reader) {
	t.Helper()
	ctx := context.Background()
	for thread, want := range wantInferred {
		g, err := r.InferGraph(ctx, thread)
		if err != nil {
			t.Fatal(err)
		}
		if !g.Inferred || !strings.Contains(g.Source, thread) {
			t.Errorf("%s %s: inferred %v, source %q", name, thread, g.Inferred, g.Source)
		}
		if got := shape(g, ""); !reflect.DeepEqual(got, lines(want)) {
			t.Errorf("%s %s: inferred\n%s\nwant\n%s", name, thread, strings.Join(got, "\n"), strings.Join(lines(want), "\n"))
		}
	}
	// The whole store: one graph of every thread's nodes; the chain's
	// edges are among them, and each edge counts every thread that took it.
	g, err := r.InferGraph(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, e := range g.Edges {
		seen[e.Source+" -> "+e.Target] = e.Seen
	}
	if seen["fetch -> parse"] != 1 || seen["double -> __end__"] != 200 {
		t.Errorf("%s: whole store: fetch -> parse seen %d, double -> __end__ %d (200 bulk threads)", name, seen["fetch -> parse"], seen["double -> __end__"])
	}
	if _, err := r.InferGraph(ctx, "no-such-thread"); err == nil || !strings.Contains(err.Error(), "no-such-thread") {
		t.Errorf("%s: a missing thread: %v", name, err)
	}
}

func TestInferGraphSQLite(t *testing.T) {
	for _, name := range []string{"py-sqlite", "js-sqlite"} {
		r, err := OpenSQLite(context.Background(), gunzip(t, t.TempDir(), name+".sqlite"))
		if err != nil {
			t.Fatal(err)
		}
		checkInferred(t, name, r)
		r.Close()
	}
}

func TestInferGraphPostgres(t *testing.T) {
	for _, name := range []string{"py-postgres", "js-postgres"} {
		t.Run(name, func(t *testing.T) {
			r, err := OpenPostgres(context.Background(), restoreDump(t, name))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			checkInferred(t, name, r)
		})
	}
}

func TestInferredDOT(t *testing.T) {
	r, err := OpenSQLite(context.Background(), gunzip(t, t.TempDir(), "js-sqlite.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	g, err := r.InferGraph(context.Background(), "send-map-reduce", "subgraph-interrupt")
	if err != nil {
		t.Fatal(err)
	}
	dot := string(g.DOT())
	for _, want := range []string{`digraph "inferred from the checkpoints of 2 threads: send-map-reduce, subgraph-interrupt"`,
		`"plan" -> "square" [style=dotted, label="Send"`, `subgraph "cluster_review"`, `"review:check" -> "review:ask_human"`, `"__end__" [label="__end__", shape=oval]`} {
		if !strings.Contains(dot, want) {
			t.Errorf("DOT lacks %s:\n%s", want, dot)
		}
	}
}

// A graph LangGraph saved (testdata/js-graphs.json from LangGraph.js,
// made by testdata/make-graphs.mjs; testdata/py-graphs.json from Python
// LangGraph, made by testdata/make-graphs.py) reads into the same Graph,
// and the inferred graph of the thread the same graph ran, in the store
// that LangGraph wrote, has its edges.
func TestParseGraphJSON(t *testing.T) {
	for _, lg := range []struct{ file, store string }{
		{"js-graphs.json", "js-sqlite.sqlite"},
		{"py-graphs.json", "py-sqlite.sqlite"},
	} {
		t.Run(lg.file, func(t *testing.T) { parseGraphJSON(t, lg.file, lg.store) })
	}
}

func parseGraphJSON(t *testing.T, file, store string) {
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var files map[string]struct{ Plain, Xray json.RawMessage }
	if err := json.Unmarshal(b, &files); err != nil {
		t.Fatal(err)
	}
	r, err := OpenSQLite(context.Background(), gunzip(t, t.TempDir(), store))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	edges := func(g *Graph) []string {
		var out []string
		for _, e := range g.Edges {
			out = append(out, e.Source+" -> "+e.Target)
		}
		sort.Strings(out)
		return out
	}
	for thread := range wantInferred {
		f, ok := files[thread]
		if !ok {
			t.Fatalf("%s has no %s", file, thread)
		}
		g, err := ParseGraphJSON(f.Plain)
		if err != nil {
			t.Fatal(err)
		}
		inf, err := r.InferGraph(context.Background(), thread)
		if err != nil {
			t.Fatal(err)
		}
		if g.Inferred || !reflect.DeepEqual(edges(g), edges(inf)) {
			t.Errorf("%s: the file's edges %v, inferred %v", thread, edges(g), edges(inf))
		}
		if len(g.Nodes) != 0 && (g.Nodes[0].ID != StartNode || g.Nodes[len(g.Nodes)-1].ID != EndNode) {
			t.Errorf("%s: nodes %+v", thread, g.Nodes)
		}
	}
	msg, _ := ParseGraphJSON(files["messages-tools"].Plain)
	if got := shape(msg, ""); !reflect.DeepEqual(got, lines(`node __start__
		node agent
		node tools
		node cleanup
		node __end__
		__start__ -> agent static
		agent -> tools conditional
		agent -> cleanup conditional
		tools -> agent static
		cleanup -> __end__ static`)) {
		t.Errorf("messages-tools: %v", got)
	}
	for _, n := range msg.Nodes {
		if n.ID == "agent" && n.Type != "runnable" {
			t.Errorf("agent: type %q, data %v", n.Type, n.Data)
		}
	}
	// With xray, review's nodes come as review:check, review:ask_human.
	x, err := ParseGraphJSON(files["subgraph-interrupt"].Xray)
	if err != nil {
		t.Fatal(err)
	}
	if got := shape(x, ""); !reflect.DeepEqual(got, lines(`node __start__
		node write
		node review
		node review/check
		node review/ask_human
		review/check -> review/ask_human static
		node publish
		node __end__
		__start__ -> write static
		write -> review static
		review -> publish static
		publish -> __end__ static`)) {
		t.Errorf("subgraph-interrupt with xray: %v", got)
	}
}

func TestParseGraphJSONRefuses(t *testing.T) {
	for _, bad := range []struct{ in, want string }{
		{`{"nodes": [{"id": "a"}], "edges": [{"source": "a", "target": "b"}]}`, `edge 0 (a → b): no node "b"`},
		{`{"nodes": [{"id": "a"}, {"id": "a"}]}`, `node 1: id "a" is listed twice`},
		{`{"nodes": [{"type": "runnable"}]}`, `node 0: id`},
		{`{"edges": []}`, `no "nodes" list`},
		{`[1, 2]`, `not a LangGraph graph file`},
	} {
		if _, err := ParseGraphJSON([]byte(bad.in)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("ParseGraphJSON(%s) = %v; want an error saying %s", bad.in, err, bad.want)
		}
	}
}
