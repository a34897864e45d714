package agent_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/weftstudio/weft/agent"
	"github.com/weftstudio/weft/checkpoint/sqlite"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/model"
	"github.com/weftstudio/weft/model/scripted"
	"github.com/weftstudio/weft/tool"
)

// BenchmarkReActFakeModel is one ReAct turn — model, tool, model — on a
// fresh thread with the SQLite saver (WAL, synchronous NORMAL, async
// durability): four checkpoints, two model calls streamed token by token
// into the messages stream and recorded, one tool call validated against
// its schema and recorded. The model is in-process and answers at once, so
// the time is Weft's overhead per turn.
func BenchmarkReActFakeModel(b *testing.B) {
	s, err := sqlite.Open(filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	m := scripted.New(func(req *model.Request) (scripted.Turn, error) {
		if last := req.Messages[len(req.Messages)-1]; last.Role == engine.RoleTool {
			return scripted.Turn{Text: "It is 18°C and sunny in Paris today."}, nil
		}
		return scripted.Turn{Text: "Let me check.", Calls: []engine.ToolCall{{Name: "get_weather", Args: `{"city":"Paris","units":"metric"}`}}}, nil
	})
	weather := tool.Must(tool.New("get_weather", "Weather in a city.", func(_ context.Context, a weatherArgs) (string, error) {
		return "18°C, sunny in " + a.City, nil
	}))
	g, err := agent.New(m, []tool.Tool{weather}, agent.WithCompileOptions(engine.WithSaver(s)))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		res, err := g.Invoke(ctx, engine.Values{"messages": []engine.Message{{ID: "u", Role: engine.RoleUser, Content: "Weather in Paris?"}}},
			engine.WithThread(fmt.Sprint("bench-", i)))
		if err != nil || !res.Done || len(engine.Messages("messages").Get(engine.StateOf(res.Values))) != 4 {
			b.Fatal(err, res)
		}
	}
}
