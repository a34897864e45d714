package mcp_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/tool"
)

// stepGraph is a graph of one tool node whose input is an assistant
// message calling echo: one Invoke is one tool-node step.
func stepGraph(tb testing.TB, echo tool.Tool) func() {
	tb.Helper()
	g, err := engine.NewGraph("step", msgs).
		AddNode("tools", tool.Node(msgs, echo)).
		AddEdge(engine.START, "tools").
		AddEdge("tools", engine.END).
		Compile()
	if err != nil {
		tb.Fatal(err)
	}
	in := engine.Values{"messages": []engine.Message{
		{ID: "u", Role: engine.RoleUser, Content: "say hi"},
		{ID: "a", Role: engine.RoleAssistant, ToolCalls: []engine.ToolCall{{ID: "c", Name: "echo", Args: `{"text":"hi"}`}}},
	}}
	ctx := context.Background()
	return func() {
		res, err := g.Invoke(ctx, in)
		if err != nil {
			tb.Fatal(err)
		}
		conv := msgs.Get(engine.StateOf(res.Values))
		if len(conv) != 3 || conv[2].Content != "echo: hi" {
			tb.Fatalf("the step answered %+v", conv)
		}
	}
}

// goEcho is the test server's echo written as a Go tool: the same work
// with no server in between.
func goEcho() tool.Tool {
	return tool.Must(tool.New("echo", "Echoes text.", func(_ context.Context, a echoArgs) (string, error) {
		return "echo: " + a.Text, nil
	}))
}

// BenchmarkToolNodeStep is one tool-node step calling echo, as a Go tool
// and as the same tool of an MCP server over stdio (the test binary,
// whose echo takes microseconds): the difference is what MCP adds to a
// step beyond the server's own time.
func BenchmarkToolNodeStep(b *testing.B) {
	b.Run("go", func(b *testing.B) {
		step := stepGraph(b, goEcho())
		b.ReportAllocs()
		for b.Loop() {
			step()
		}
	})
	b.Run("mcp-stdio", func(b *testing.B) {
		step := stepGraph(b, find(b, connect(b, goServer(b)), "echo"))
		b.ReportAllocs()
		for b.Loop() {
			step()
		}
	})
}

// stdioBudget is the most an MCP call over stdio may add to a tool-node
// step beyond the server's own time.
const stdioBudget = 2 * time.Millisecond

// The budget, checked on medians so that a loaded machine's outliers do
// not decide it; a pass over budget is measured again (up to three
// passes), since a burst of other work can hold a whole pass back, and
// only three over budget fail.
func TestStdioCallOverheadWithinBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("timing: skipped in -short mode")
	}
	if raceEnabled {
		t.Skip("timing: the race detector slows the server and client, not Weft")
	}
	median := func(step func()) time.Duration {
		for range 20 { // warm up: connections, caches
			step()
		}
		ds := make([]time.Duration, 300)
		for i := range ds {
			start := time.Now()
			step()
			ds[i] = time.Since(start)
		}
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	localStep := stepGraph(t, goEcho())
	remoteStep := stepGraph(t, find(t, connect(t, goServer(t)), "echo"))
	var added []time.Duration
	for range 3 {
		local, remote := median(localStep), median(remoteStep)
		t.Logf("median tool-node step: Go tool %v, MCP over stdio %v: +%v", local, remote, remote-local)
		if remote-local <= stdioBudget {
			return
		}
		added = append(added, remote-local)
	}
	t.Errorf("an MCP call over stdio adds %v to a tool-node step (medians of three passes), over the %v budget", added, stdioBudget)
}
