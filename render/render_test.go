package render

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"image/color"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/examples"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// goldens are the topologies whose DOT and Mermaid output is pinned in
// testdata/NAME.dot and testdata/NAME.mmd. Adding a graph is one line;
// run `go test ./render -run Golden -update` to write its files, then
// review them.
var goldens = []struct {
	name string
	topo func() *engine.Topology
	opts DOTOptions
}{
	{"linear", linearTopo, DOTOptions{}},
	{"cycle", cycleTopo, DOTOptions{}},
	{"join", joinTopo, DOTOptions{}},
	{"send", sendTopo, DOTOptions{}},
	{"subgraph_collapsed", subgraphTopo, DOTOptions{}},
	{"subgraph_expanded", subgraphTopo, DOTOptions{ExpandAll: true}},
	{"subgraph_expanded_outer", subgraphTopo, DOTOptions{Expanded: map[string]bool{"research": true}}},
	{"names", namesTopo, DOTOptions{}},
	{"demo_writer", demoTopo(0), DOTOptions{}},
	{"demo_agent", demoTopo(1), DOTOptions{}},
	{"demo_mapreduce", demoTopo(2), DOTOptions{}},
	{"demo_mapreduce_expanded", demoTopo(2), DOTOptions{ExpandAll: true}},
}

// demoTopo returns the topology of the i-th bundled demo graph.
func demoTopo(i int) func() *engine.Topology {
	return func() *engine.Topology {
		demos, err := examples.All(nil)
		if err != nil {
			panic(err)
		}
		return demos[i].Graph.Topology()
	}
}

func TestGolden(t *testing.T) {
	for _, g := range goldens {
		t.Run(g.name, func(t *testing.T) {
			checkGolden(t, g.name+".dot", DOT(g.topo(), g.opts))
			checkGolden(t, g.name+".mmd", []byte(Mermaid(g.topo(), g.opts)))
		})
	}
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; got:\n%s", path, got)
	}
}

// The DOT text must not depend on the order of the topology's slices.
func TestDOTIgnoresInputOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, g := range goldens {
		want := DOT(g.topo(), g.opts)
		for range 5 {
			tp := g.topo()
			r.Shuffle(len(tp.Nodes), func(i, j int) { tp.Nodes[i], tp.Nodes[j] = tp.Nodes[j], tp.Nodes[i] })
			r.Shuffle(len(tp.Edges), func(i, j int) { tp.Edges[i], tp.Edges[j] = tp.Edges[j], tp.Edges[i] })
			if got := DOT(tp, g.opts); !bytes.Equal(got, want) {
				t.Fatalf("%s: DOT changed when nodes and edges were shuffled:\n%s", g.name, got)
			}
		}
	}
}

func TestDOTMarks(t *testing.T) {
	for _, c := range []struct {
		topo func() *engine.Topology
		opts DOTOptions
		want []string
	}{
		{cycleTopo, DOTOptions{}, []string{
			`"__start__" [id=n0, shape=oval, label="START"`,
			`"__end__" [id=n3, shape=oval, peripheries=2, label="END"`,
			`"agent" -> "tools" [id=e2, style=dashed, tailport=e, headport=e, label=" continue "]`,
			`"tools" -> "tools" [id=e5, style=dashed, label=" retry the same \n tool once more "]`,
		}},
		{joinTopo, DOTOptions{}, []string{
			`"join:a+b" [id=n5, shape=point`,
			`"a" -> "join:a+b" [id=e2, arrowhead=none`,
			`"b" -> "join:a+b" [id=e3, arrowhead=none`,
			`"join:a+b" -> "c" [id=e5`,
		}},
		{sendTopo, DOTOptions{}, []string{
			`"plan" -> "worker" [id=e1, style="bold,dotted", label=" Send "`,
			`"reduce" -> "plan" [id=e3, style=dashed, arrowhead=empty]`,
			`style="rounded,filled,dashed"`,
			`<FONT POINT-SIZE="9">deferred · retry</FONT>`,
		}},
		{subgraphTopo, DOTOptions{}, []string{`"research" [id=n2, label=<research<BR/><FONT POINT-SIZE="9">subgraph</FONT>>, peripheries=2]`}},
		{subgraphTopo, DOTOptions{ExpandAll: true}, []string{
			`subgraph "cluster_c0" {`, `subgraph "cluster_c1" {`,
			`"plan" -> "research/__start__" [id=e8, lhead="cluster_c0"]`,
			`"research/search/query"`,
		}},
		{namesTopo, DOTOptions{}, []string{`"say \"hi\""`, `"back\\slash\\"`, `label="generate_the_final_\nanswer_with_all_\ncitations_included"`, `"<html> & co" [id=n6, label="<html> & co"]`}},
	} {
		dot := string(DOT(c.topo(), c.opts))
		for _, w := range c.want {
			if !strings.Contains(dot, w) {
				t.Errorf("DOT of %s lacks %s:\n%s", c.topo().Name, w, dot)
			}
		}
	}
	if got := string(DOT(nil, DOTOptions{})); !strings.HasPrefix(got, `digraph "graph" {`) {
		t.Errorf("DOT(nil) = %q", got)
	}
}

func TestWrap(t *testing.T) {
	for in, want := range map[string]string{
		"short":                          "short",
		"generate_the_final_answer":      "generate_the_final_\nanswer",
		"abcdefghijklmnopqrstuvwxyz0123": "abcdefghijklmnopqrstuv\nwxyz0123",
		"one two three four five six":    "one two three four\nfive six",
	} {
		if got := wrap(in, 22); got != want {
			t.Errorf("wrap(%q) = %q, want %q", in, got, want)
		}
	}
}

func newTestLayouter(t testing.TB) *Layouter {
	l := NewLayouter()
	t.Cleanup(func() { l.Close() })
	return l
}

// sanity checks what every layout must satisfy to be readable.
func sanity(t *testing.T, name string, tp *engine.Topology, g *Geometry) {
	t.Helper()
	b := g.Bounds
	inside := func(r Rect) bool {
		return r.X >= b.X && r.Y >= b.Y && r.X+r.W <= b.X+b.W && r.Y+r.H <= b.Y+b.H
	}
	for _, n := range g.Nodes {
		if n.Rect.W <= 0 || n.Rect.H <= 0 || !inside(n.Rect) {
			t.Errorf("%s: node %q box %+v is empty or outside the bounds %+v", name, n.ID, n.Rect, b)
		}
	}
	for i := range g.Nodes {
		for j := i + 1; j < len(g.Nodes); j++ {
			if g.Nodes[i].Rect.Overlaps(g.Nodes[j].Rect) {
				t.Errorf("%s: nodes %q and %q overlap: %+v %+v", name, g.Nodes[i].ID, g.Nodes[j].ID, g.Nodes[i].Rect, g.Nodes[j].Rect)
			}
		}
	}
	for _, c := range g.Clusters {
		if !inside(c.Rect) {
			t.Errorf("%s: cluster %q outside the bounds", name, c.ID)
		}
	}
	for _, n := range g.Nodes {
		if n.Parent == "" {
			continue
		}
		c, ok := g.Cluster(n.Parent)
		if !ok || !c.Rect.Inset(0.5).Contains(n.Rect.Center()) || !c.Rect.Inset(0.5).Contains(n.Rect.Max()) {
			t.Errorf("%s: node %q is not inside its cluster %q", name, n.ID, n.Parent)
		}
	}
	// Each edge starts at its tail and ends at its head: at the node's
	// border (or its cluster's, when clipped), within a small tolerance
	// for Graphviz's rounding and pen width.
	const tol = 2.5
	touches := func(id, cluster string, p Point) bool {
		if cluster != "" {
			c, ok := g.Cluster(cluster)
			return ok && c.Rect.DistToBorder(p) <= tol
		}
		n, ok := g.Node(id)
		if !ok {
			return false
		}
		if n.Kind == BoxJunction || n.Kind == BoxStart || n.Kind == BoxEnd {
			// Points and ovals: anywhere on or in the box.
			return n.Rect.Inset(tol).Contains(p)
		}
		return n.Rect.DistToBorder(p) <= tol || n.Rect.Contains(p) && n.Rect.DistToBorder(p) <= 4
	}
	for i, e := range g.Edges {
		if len(e.Points) < 2 {
			t.Errorf("%s: edge %d %q→%q has %d points", name, i, e.From, e.To, len(e.Points))
			continue
		}
		if !touches(e.From, e.LTail, e.Points[0]) {
			t.Errorf("%s: edge %d %q→%q starts at %v, away from its tail", name, i, e.From, e.To, e.Points[0])
		}
		if !touches(e.To, e.LHead, e.End()) {
			t.Errorf("%s: edge %d %q→%q ends at %v, away from its head", name, i, e.From, e.To, e.End())
		}
		for _, p := range e.Points {
			if !b.Contains(p) {
				t.Errorf("%s: edge %q→%q leaves the bounds at %v", name, e.From, e.To, p)
				break
			}
		}
		if e.Label != "" && !b.Contains(e.LabelPos) {
			t.Errorf("%s: label of edge %q→%q is outside the bounds", name, e.From, e.To)
		}
		if e.Label != "" && e.LabelPos == (Point{}) {
			t.Errorf("%s: edge %q→%q has a label but no label position", name, e.From, e.To)
		}
	}
	// Every graph node of the topology is drawn, by its ID.
	for _, n := range tp.Nodes {
		if n.Subgraph != nil {
			if _, ok := g.Cluster(n.Name); ok {
				continue
			}
		}
		if _, ok := g.Node(n.Name); !ok {
			t.Errorf("%s: node %q is not in the geometry", name, n.Name)
		}
	}
}

func TestLayoutSanity(t *testing.T) {
	l := newTestLayouter(t)
	cases := append([]struct {
		name string
		topo func() *engine.Topology
		opts DOTOptions
	}{}, goldens...)
	cases = append(cases, struct {
		name string
		topo func() *engine.Topology
		opts DOTOptions
	}{"gen200", func() *engine.Topology { return genTopo(200, 300) }, DOTOptions{}})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tp := c.topo()
			g, err := l.Layout(context.Background(), tp, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			sanity(t, c.name, tp, g)
			if want := len(newPlan(tp, c.opts).edges); len(g.Edges) != want {
				t.Errorf("%d edges, want %d", len(g.Edges), want)
			}
		})
	}
}

func TestGen200Shape(t *testing.T) {
	tp := genTopo(200, 300)
	if len(tp.Nodes) != 200 || len(sortedEdges(tp)) != 300 {
		t.Fatalf("genTopo(200, 300) has %d nodes and %d distinct edges", len(tp.Nodes), len(sortedEdges(tp)))
	}
}

func TestLayoutDetails(t *testing.T) {
	l := newTestLayouter(t)
	ctx := context.Background()

	g, err := l.Layout(ctx, namesTopo(), DOTOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n, ok := g.Node(`back\slash\`)
	if !ok || n.Name != `back\slash\` || n.Lines[0] != `back\slash\` {
		t.Errorf("backslash name came back as %+v", n)
	}
	n, _ = g.Node("generate_the_final_answer_with_all_citations_included")
	if len(n.Lines) != 3 {
		t.Errorf("long name wrapped into %q", n.Lines)
	}

	g, err = l.Layout(ctx, sendTopo(), DOTOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range g.Edges {
		switch e.Kind {
		case engine.EdgeSend:
			if e.Label != "Send" || e.Head == nil || e.Head.Open {
				t.Errorf("send edge: %+v", e)
			}
		case engine.EdgeCommand:
			if e.Head == nil || !e.Head.Open {
				t.Errorf("command edge should have an open arrowhead: %+v", e)
			}
		}
	}
	if n, _ := g.Node("reduce"); !n.Deferred || !n.Retry || n.Note != "deferred · retry" {
		t.Errorf("reduce: %+v", n)
	}

	g, err = l.Layout(ctx, joinTopo(), DOTOptions{})
	if err != nil {
		t.Fatal(err)
	}
	j, ok := g.Node("join:a+b")
	if !ok || j.Kind != BoxJunction {
		t.Fatalf("no junction: %+v", g.Nodes)
	}
	var in, out int
	for _, e := range g.Edges {
		if e.To == j.ID && e.Head == nil && e.Kind == engine.EdgeJoin {
			in++
		}
		if e.From == j.ID && e.To == "c" && e.Head != nil {
			out++
		}
	}
	if in != 2 || out != 1 {
		t.Errorf("join: %d edges converge and %d leave the junction, want 2 and 1", in, out)
	}

	g, err = l.Layout(ctx, subgraphTopo(), DOTOptions{ExpandAll: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Clusters) != 2 || g.Clusters[0].ID != "research" || g.Clusters[1].ID != "research/search" ||
		g.Clusters[1].Parent != "research" || g.Clusters[1].Depth != 1 {
		t.Errorf("clusters: %+v", g.Clusters)
	}
	if _, ok := g.Node("research"); ok {
		t.Error("an expanded subgraph should be a cluster, not a node")
	}
	if n, ok := g.Node("research/search/fetch"); !ok || n.Parent != "research/search" {
		t.Errorf("nested node: %+v", n)
	}
	outer, _ := g.Cluster("research")
	inner, _ := g.Cluster("research/search")
	if !outer.Rect.Contains(inner.Rect.Center()) || !outer.Rect.Contains(inner.Rect.Max()) {
		t.Errorf("nested cluster %+v is not inside %+v", inner.Rect, outer.Rect)
	}
	if outer.LabelPos.Y > outer.Rect.Y+20 {
		t.Errorf("cluster label at %v, not at the top of %+v", outer.LabelPos, outer.Rect)
	}
}

func TestLayoutCache(t *testing.T) {
	l := newTestLayouter(t)
	ctx := context.Background()
	a, err := l.Layout(ctx, cycleTopo(), DOTOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := l.Layout(ctx, cycleTopo(), DOTOptions{})
	if a != b {
		t.Error("the same topology was laid out twice")
	}
	c, _ := l.Layout(ctx, subgraphTopo(), DOTOptions{})
	d, _ := l.Layout(ctx, subgraphTopo(), DOTOptions{ExpandAll: true})
	if c == d || len(d.Clusters) == 0 || len(c.Clusters) != 0 {
		t.Error("expansion should give a different layout")
	}

	// Concurrent callers share one result.
	var wg sync.WaitGroup
	got := make([]*Geometry, 8)
	for i := range got {
		wg.Go(func() {
			g, err := l.Layout(ctx, genTopo(40, 60), DOTOptions{})
			if err != nil {
				t.Error(err)
			}
			got[i] = g
		})
	}
	wg.Wait()
	for _, g := range got {
		if g != got[0] {
			t.Fatal("concurrent layouts of one topology gave different geometries")
		}
	}

	// Two Layouters at once share the one Graphviz goroutine safely.
	l2 := newTestLayouter(t)
	wg.Go(func() {
		if _, err := l2.Layout(ctx, genTopo(30, 45), DOTOptions{}); err != nil {
			t.Error(err)
		}
	})
	if _, err := l.Layout(ctx, genTopo(31, 45), DOTOptions{}); err != nil {
		t.Error(err)
	}
	wg.Wait()

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := l.Layout(cctx, linearTopo(), DOTOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled layout: %v", err)
	}

	l.Close()
	if _, err := l.Layout(ctx, cycleTopo(), DOTOptions{}); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
	// A new Layouter after every other is closed starts Graphviz again.
	l2.Close()
	l3 := newTestLayouter(t)
	if _, err := l3.Layout(ctx, cycleTopo(), DOTOptions{}); err != nil {
		t.Error(err)
	}
}

func TestLayoutEmpty(t *testing.T) {
	l := newTestLayouter(t)
	g, err := l.Layout(context.Background(), nil, DOTOptions{})
	if err != nil || len(g.Nodes) != 0 {
		t.Fatalf("nil topology: %v %+v", err, g)
	}
	if h := g.HitTest(Point{1, 1}, 0); h.Kind != HitNone {
		t.Errorf("hit in an empty graph: %+v", h)
	}
}

func TestHitTest(t *testing.T) {
	l := newTestLayouter(t)
	g, err := l.Layout(context.Background(), subgraphTopo(), DOTOptions{Expanded: map[string]bool{"research": true}})
	if err != nil {
		t.Fatal(err)
	}
	plan, _ := g.Node("plan")
	if h := g.HitTest(plan.Rect.Center(), 0); h.Kind != HitNode || h.ID != "plan" || h.Edge != -1 {
		t.Errorf("centre of plan: %+v", h)
	}
	if h := g.HitTest(Point{plan.Rect.X + 1, plan.Rect.Y + 1}, 0); h.ID != "plan" {
		t.Errorf("corner of plan: %+v", h)
	}
	// The middle of an edge's path, and a point just beside it.
	for i, e := range g.Edges {
		if e.LTail != "" || e.LHead != "" || len(e.Points) < 4 {
			continue
		}
		mid := e.Points[len(e.Points)/2]
		if h := g.HitTest(mid, 0); h.Kind != HitEdge || h.Edge != i {
			t.Errorf("middle of edge %d %s→%s: %+v", i, e.From, e.To, h)
		}
		if h := g.HitTest(mid.Add(Point{2, 0}), 3); h.Kind != HitEdge {
			t.Errorf("beside edge %d: %+v", i, h)
		}
	}
	cl, _ := g.Cluster("research")
	// A point inside the cluster away from everything: try a few.
	found := false
	for y := cl.Rect.Y + 4; y < cl.Rect.Y+cl.Rect.H && !found; y += 3 {
		p := Point{cl.Rect.X + 4, y}
		if h := g.HitTest(p, 0); h.Kind == HitCluster && h.ID == "research" {
			found = true
		}
	}
	if !found {
		t.Error("no point inside the cluster hits it")
	}
	if h := g.HitTest(Point{-50, -50}, 0); h.Kind != HitNone || h.Edge != -1 {
		t.Errorf("outside: %+v", h)
	}
	var nilG *Geometry
	if h := nilG.HitTest(Point{}, 0); h.Kind != HitNone {
		t.Errorf("nil geometry: %+v", h)
	}
	byHand := &Geometry{Nodes: []NodeBox{{ID: "x", Rect: Rect{0, 0, 10, 10}}}}
	if n, ok := byHand.Node("x"); !ok || n.ID != "x" {
		t.Error("Node on a hand-built geometry")
	}
	if h := byHand.HitTest(Point{5, 5}, 0); h.ID != "x" {
		t.Errorf("HitTest on a hand-built geometry: %+v", h)
	}
}

func TestSVG(t *testing.T) {
	l := newTestLayouter(t)
	svg, err := l.SVG(context.Background(), namesTopo(), DOTOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := string(svg)
	for _, w := range []string{"<svg", `say &quot;hi&quot;`, `&lt;html&gt; &amp; co`, "ünïcødé ✓", `back\slash\`, `id="e0"`} {
		if !strings.Contains(s, w) {
			t.Errorf("SVG lacks %q", w)
		}
	}
}

func TestPNG(t *testing.T) {
	l := newTestLayouter(t)
	g, err := l.Layout(context.Background(), cycleTopo(), DOTOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hl := Highlight{
		States:      map[string]NodeState{"agent": StateRunning, "tools": StateFailed},
		BreakBefore: map[string]bool{"agent": true},
	}
	data, err := PNG(g, hl, PNGOptions{Scale: 2})
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if w, h := img.Bounds().Dx(), img.Bounds().Dy(); w != int(math.Ceil(g.Bounds.W*2)) || h != int(math.Ceil(g.Bounds.H*2)) {
		t.Errorf("image is %d×%d for bounds %+v at scale 2", w, h, g.Bounds)
	}
	at := func(p Point) color.NRGBA {
		return color.NRGBAModel.Convert(img.At(int(p.X*2), int(p.Y*2))).(color.NRGBA)
	}
	near := func(a color.NRGBA, b color.Color) bool {
		c := color.NRGBAModel.Convert(b).(color.NRGBA)
		d := func(x, y uint8) int { return int(x) - int(y) }
		return max(abs(d(a.R, c.R)), abs(d(a.G, c.G)), abs(d(a.B, c.B))) <= 8
	}
	agent, _ := g.Node("agent")
	tools, _ := g.Node("tools")
	inside := func(r Rect) Point { return Point{r.X + r.W/2, r.Y + 4} } // above the text
	if c := at(inside(agent.Rect)); !near(c, LightPalette.Primary) {
		t.Errorf("running node is %v, want the accent fill", c)
	}
	if c := at(inside(tools.Rect)); !near(c, LightPalette.StyleFor(StateFailed).Fill) {
		t.Errorf("failed node is %v, want the tinted error fill", c)
	}
	if c := at(Point{agent.Rect.X, agent.Rect.Y + agent.Rect.H/2}); !near(c, LightPalette.Error) {
		t.Errorf("breakpoint dot is %v, want the error colour", c)
	}
	if c := at(Point{1, 1}); !near(c, LightPalette.Background) {
		t.Errorf("background is %v", c)
	}

	if _, err := PNG(nil, hl, PNGOptions{}); err == nil {
		t.Error("PNG(nil) should fail")
	}
	if _, err := PNG(g, hl, PNGOptions{Scale: 200}); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("a huge image should be refused: %v", err)
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func TestMermaid(t *testing.T) {
	m := Mermaid(joinTopo(), DOTOptions{})
	for _, w := range []string{"flowchart TD", `n0(["START"])`, "n1 --- n5", "n2 --- n5", "n5 --> n3", "class n5 dot"} {
		if !strings.Contains(m, w) {
			t.Errorf("Mermaid lacks %q:\n%s", w, m)
		}
	}
	m = Mermaid(namesTopo(), DOTOptions{})
	for _, w := range []string{`("say #quot;hi#quot;")`, `("#lt;html#gt; #amp; co")`, `-.->|"→ a b: c"|`} {
		if !strings.Contains(m, w) {
			t.Errorf("Mermaid lacks %q:\n%s", w, m)
		}
	}
	m = Mermaid(sendTopo(), DOTOptions{})
	if !strings.Contains(m, `==>|"Send"|`) || !strings.Contains(m, `-.->|"Command"|`) {
		t.Errorf("Mermaid send/command:\n%s", m)
	}
}

func TestHighlightBadge(t *testing.T) {
	h := Highlight{States: map[string]NodeState{"a": StateInterrupted, "b": StateRunning}, Badges: map[string]string{"b": "×3"}}
	if h.Badge("a") != "!" || h.Badge("b") != "×3" || h.Badge("c") != "" {
		t.Errorf("badges: %q %q %q", h.Badge("a"), h.Badge("b"), h.Badge("c"))
	}
	var zero Highlight
	if zero.State("x") != StateIdle || zero.Badge("x") != "" {
		t.Error("the zero Highlight should show nothing")
	}
	if StateInterrupted.String() != "interrupted" || NodeState(99).String() != "idle" {
		t.Error("state names")
	}
}

// BenchmarkLayout200 measures DOT → geometry for a 200-node, 300-edge
// graph: building the DOT, Graphviz's layout and reading it back; the
// cache is bypassed.
func BenchmarkLayout200(b *testing.B) {
	l := newTestLayouter(b)
	tp := genTopo(200, 300)
	ctx := context.Background()
	// Start Graphviz outside the timing.
	if _, err := l.Layout(ctx, linearTopo(), DOTOptions{}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		p := newPlan(tp, DOTOptions{})
		if _, err := l.layoutPlan(ctx, p, p.dot()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadLayout200 measures only our part of BenchmarkLayout200:
// the DOT text and reading Graphviz's output back.
func BenchmarkReadLayout200(b *testing.B) {
	l := newTestLayouter(b)
	tp := genTopo(200, 300)
	p := newPlan(tp, DOTOptions{})
	out, err := l.w.render(context.Background(), p.dot(), "json0")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		p := newPlan(tp, DOTOptions{})
		_ = p.dot()
		if _, err := p.geometry(out); err != nil {
			b.Fatal(err)
		}
	}
}

// Edges joining two nodes both ways are drawn apart, not one over the
// other (the writer's write → review and review → write, the agent's
// agent ⇄ tools): every point of the middle half of one is at least 8
// points from the other.
func TestOppositeEdgesDoNotOverlap(t *testing.T) {
	l := NewLayouter()
	defer l.Close()
	for i := range 3 {
		topo := demoTopo(i)()
		g, err := l.Layout(context.Background(), topo, DOTOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pairs := 0
		for a := range g.Edges {
			for b := range g.Edges {
				ea, eb := &g.Edges[a], &g.Edges[b]
				if ea.From != eb.To || ea.To != eb.From || a >= b {
					continue
				}
				pairs++
				n := len(ea.Points)
				for _, p := range ea.Points[n/4 : n-n/4] {
					if d := eb.distance(p); d < 8 {
						t.Errorf("%s: %s→%s passes %.1f points from %s→%s at %v", topo.Name, ea.From, ea.To, d, eb.From, eb.To, p)
						break
					}
				}
			}
		}
		if topo.Name != "map-reduce" && pairs == 0 {
			t.Errorf("%s: no edges both ways to check", topo.Name)
		}
	}
}

// A node's traits line names each policy it has.
func TestNoteNamesTraits(t *testing.T) {
	for tn, want := range map[engine.TopoNode]string{
		{Name: "a"}:                              "",
		{Name: "a", Cached: true}:                "cached",
		{Name: "a", Retry: true, Cached: true}:   "retry · cached",
		{Name: "a", Deferred: true, Retry: true}: "deferred · retry",
	} {
		if got := note(tn); got != want {
			t.Errorf("note(%+v) = %q, want %q", tn, got, want)
		}
	}
}
