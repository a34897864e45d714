package lgtopo_test

import (
	"context"
	"strings"
	"testing"

	"github.com/weftstudio/weft/checkpoint/langgraph"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/internal/testenv"
	"github.com/weftstudio/weft/lgtopo"
	"github.com/weftstudio/weft/render"
)

func fixture(t *testing.T, name string) *langgraph.Reader {
	t.Helper()
	path := testenv.LangGraphFixture(t, name+".sqlite")
	r, err := langgraph.OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// An inferred graph becomes a topology the studio draws: START and END
// kinds, a subgraph nested, joins grouped, sends as sends, and the name
// says it is inferred.
func TestInferredTopology(t *testing.T) {
	r := fixture(t, "py-sqlite")
	g, err := r.InferGraph(context.Background(), "parallel-reducer", "send-map-reduce", "subgraph-interrupt")
	if err != nil {
		t.Fatal(err)
	}
	topo := lgtopo.Topology(g)
	if !strings.HasPrefix(topo.Name, lgtopo.InferredPrefix) {
		t.Errorf("name %q", topo.Name)
	}
	if topo.Nodes[0].Kind != engine.NodeStart || topo.Nodes[len(topo.Nodes)-1].Kind != engine.NodeEnd {
		t.Errorf("nodes %+v", topo.Nodes)
	}
	kinds := map[string]engine.EdgeKind{}
	join := ""
	for _, e := range topo.Edges {
		kinds[e.From+" -> "+e.To] = e.Kind
		if e.Kind == engine.EdgeJoin {
			join = e.Join
		}
	}
	if kinds["plan -> square"] != engine.EdgeSend || kinds["left -> merge"] != engine.EdgeJoin || join != "left+middle+right:merge" ||
		kinds["write -> review"] != engine.EdgeStatic {
		t.Errorf("edges %+v", topo.Edges)
	}
	var review *engine.TopoNode
	for i := range topo.Nodes {
		if topo.Nodes[i].Name == "review" {
			review = &topo.Nodes[i]
		}
	}
	if review == nil || review.Subgraph == nil || len(review.Subgraph.Nodes) != 4 {
		t.Fatalf("review: %+v", review)
	}
	dot := string(render.DOT(topo, render.DOTOptions{ExpandAll: true}))
	for _, want := range []string{`digraph "inferred from the checkpoints of 3 threads`, `"review/ask_human"`} {
		if !strings.Contains(dot, want) {
			t.Errorf("render.DOT lacks %s:\n%s", want, dot)
		}
	}
	if lgtopo.Topology(nil) != nil {
		t.Error("nil graph")
	}
}
