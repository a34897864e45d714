// Package bench holds the graphs of the benchmarks named in the README, so
// the engine, the savers and the AG-UI server measure the very same graphs.
package bench

import (
	"context"

	"github.com/weftstudio/weft/engine"
)

// Channels of Chain10.
var (
	Count = engine.LastValue[int]("count")
	Log   = engine.List[string]("log")
)

// Chain10 is B1's graph: 10 nodes "a" … "j" in a line, each adding 1 to
// count and appending its name to log.
func Chain10(opts ...engine.CompileOption) (*engine.Graph, error) {
	b := engine.NewGraph("chain10", Count, Log)
	prev := engine.START
	for i := range 10 {
		name := string(rune('a' + i))
		b.AddNode(name, func(_ context.Context, s engine.State) (engine.Output, error) {
			return engine.Update{Count.Set(Count.Get(s) + 1), Log.Add(name)}, nil
		})
		b.AddEdge(prev, name)
		prev = name
	}
	return b.Compile(opts...)
}
