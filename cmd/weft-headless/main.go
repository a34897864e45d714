// Command weft-headless is weft without the window: every headless command
// (threads, history, state, resume, answer, worker, serve, …) on the demo
// graphs, in a binary that links neither Fyne nor OpenGL nor cgo, for
// servers, workers and containers with no display stack:
//
//	CGO_ENABLED=0 go build ./cmd/weft-headless
package main

import (
	"fmt"
	"os"

	"github.com/weftstudio/weft/cli"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/examples"
)

func main() {
	demos, err := examples.AllFromEnv(nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "weft:", err)
		os.Exit(1)
	}
	var graphs []*engine.Graph
	for _, d := range demos {
		graphs = append(graphs, d.Graph)
	}
	os.Exit(cli.Main(cli.Env{Graphs: graphs}, nil))
}
