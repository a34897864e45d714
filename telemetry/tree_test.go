package telemetry_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/telemetry"
)

// TestSubgraphAndParallelTasks checks the tree of a run whose step runs
// two tasks at once, one of them a subgraph, and whose last task fails:
// the subgraph's steps nest under the task that runs it, the calls of
// concurrent tasks under their own task, the failure on its task and
// step and run.
func TestSubgraphAndParallelTasks(t *testing.T) {
	ctx := context.Background()
	exp := tracetest.NewInMemoryExporter()
	tr, err := telemetry.New(exp)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Shutdown(ctx)

	out := engine.List[string]("out")
	call := func(name string) engine.NodeFunc {
		return func(ctx context.Context, _ engine.State) (engine.Output, error) {
			engine.RecordCall(ctx, engine.CallRecord{Kind: engine.CallTool, Name: "tool_" + name, Provider: "mcp srv · " + name})
			return engine.Updates(out.Add(name)), nil
		}
	}
	sub, err := engine.NewGraph("inner", out).
		AddNode("deep", call("deep")).
		AddEdge(engine.START, "deep").AddEdge("deep", engine.END).Compile()
	if err != nil {
		t.Fatal(err)
	}
	g, err := engine.NewGraph("outer", out).
		AddNode("left", call("left")).
		AddSubgraph("right", sub).
		AddNode("fail", func(context.Context, engine.State) (engine.Output, error) { return nil, errors.New("broken") }).
		AddEdge(engine.START, "left").AddEdge(engine.START, "right").
		AddJoin([]string{"left", "right"}, "fail").AddEdge("fail", engine.END).Compile()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Instrument(g).Invoke(ctx, engine.Values{}); err == nil {
		t.Fatal("run did not fail")
	}
	flush(t, tr)
	spans := exp.GetSpans()
	byName := map[string][]tracetest.SpanStub{}
	byID := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		byName[s.Name] = append(byName[s.Name], s)
		byID[s.SpanContext.SpanID().String()] = s
	}
	one := func(name string) tracetest.SpanStub {
		t.Helper()
		if len(byName[name]) != 1 {
			t.Fatalf("%d spans %q, want 1; spans: %v", len(byName[name]), name, spanNames(spans))
		}
		return byName[name][0]
	}
	parentName := func(s tracetest.SpanStub) string {
		p, ok := byID[s.Parent.SpanID().String()]
		if !ok {
			return ""
		}
		return p.Name
	}
	run := one("invoke_agent outer")
	if run.Status.Code != codes.Error || !strings.Contains(run.Status.Description, "broken") {
		t.Errorf("run status %+v, want the failure", run.Status)
	}
	for _, c := range []struct{ span, parent string }{
		{"left", "step 1"}, {"right", "step 1"}, {"fail", "step 2"},
		{"execute_tool tool_left", "left"},
		{"deep", "step 1"}, // the subgraph's own step 1 …
		{"execute_tool tool_deep", "deep"},
	} {
		s := one(c.span)
		if got := parentName(s); got != c.parent {
			t.Errorf("span %q has parent %q, want %q", c.span, got, c.parent)
		}
	}
	if v := attrValue(one("execute_tool tool_deep"), "weft.tool.origin"); v != "mcp srv · deep" {
		t.Errorf("the tool call's origin is %q, want the MCP server and its tool", v)
	}
	// … which is a child of the right task, not of the run.
	deepStep := byID[one("deep").Parent.SpanID().String()]
	if parentName(deepStep) != "right" || !hasAttr(deepStep, "weft.ns") {
		t.Errorf("the subgraph's step has parent %q and attributes %v, want the right task and weft.ns", parentName(deepStep), deepStep.Attributes)
	}
	fail := one("fail")
	if fail.Status.Code != codes.Error || len(fail.Events) != 1 || fail.Events[0].Name != "exception" {
		t.Errorf("failed task status %+v events %v", fail.Status, fail.Events)
	}
	if s := byID[fail.Parent.SpanID().String()]; s.Status.Code != codes.Error {
		t.Errorf("failed step status %+v, want an error", s.Status)
	}
	for _, s := range spans {
		if s.SpanContext.TraceID() != run.SpanContext.TraceID() {
			t.Errorf("span %q in another trace", s.Name)
		}
		if hasAttr(s, "weft.incomplete") {
			t.Errorf("span %q incomplete", s.Name)
		}
	}
}

func attrValue(s tracetest.SpanStub, key string) string {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value.String()
		}
	}
	return ""
}

func hasAttr(s tracetest.SpanStub, key string) bool {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return true
		}
	}
	return false
}

func spanNames(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

// TestAfterShutdown checks that a graph instrumented by a tracer that was
// shut down still runs, untraced, and that its runs are counted as
// dropped; and that a nil Tracer instruments nothing.
func TestAfterShutdown(t *testing.T) {
	ctx := context.Background()
	exp := &counting{}
	tr, err := telemetry.New(exp)
	if err != nil {
		t.Fatal(err)
	}
	n := engine.LastValue[int]("n")
	g, err := engine.NewGraph("one", n).
		AddNode("set", func(context.Context, engine.State) (engine.Output, error) { return engine.Updates(n.Set(1)), nil }).
		AddEdge(engine.START, "set").AddEdge("set", engine.END).Compile()
	if err != nil {
		t.Fatal(err)
	}
	traced := tr.Instrument(g)
	if _, err := traced.Invoke(ctx, engine.Values{}); err != nil {
		t.Fatal(err)
	}
	if err := tr.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if got := exp.n.Load(); got != 3 {
		t.Errorf("%d spans exported by Shutdown, want 3 (run, step, task)", got)
	}
	res, err := traced.Invoke(ctx, engine.Values{})
	if err != nil || res.Values["n"] != 1 {
		t.Fatalf("run after Shutdown: %v, %+v", err, res)
	}
	if tr.Dropped() != 1 {
		t.Errorf("Dropped() = %d after one run past Shutdown, want 1", tr.Dropped())
	}
	if err := tr.ForceFlush(ctx); err != nil {
		t.Errorf("ForceFlush after Shutdown: %v", err)
	}
	var none *telemetry.Tracer
	if none.Instrument(g) != g || none.Shutdown(ctx) != nil || none.Dropped() != 0 {
		t.Error("a nil Tracer does something")
	}
}

// counting counts the spans exported (the SDK's in-memory exporter forgets
// them at Shutdown).
type counting struct{ n atomic.Int64 }

func (c *counting) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	c.n.Add(int64(len(spans)))
	return nil
}
func (c *counting) Shutdown(context.Context) error { return nil }
