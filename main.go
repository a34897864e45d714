// Command weft opens the Weft studio on the bundled demo graphs, or runs a
// headless command on the same store (weft help lists them).
//
// Its tool agent runs on the scripted model: this binary links no
// provider SDK, which would add some 80 MB to it and 40 MB to the
// window's memory. examples/live is the same program on the model
// $WEFT_MODEL names; cmd/weft-headless is this one without the window.
package main

import (
	"fmt"
	"os"

	"github.com/weftstudio/weft/cli"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/examples"
	_ "github.com/weftstudio/weft/internal/early" // before Graphviz and Fyne initialise: see its doc
	"github.com/weftstudio/weft/ui"
	"github.com/weftstudio/weft/ui/studio"
)

func main() {
	demos, err := examples.AllFromEnv(nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "weft:", err)
		os.Exit(1)
	}
	// Not a silent ignore: whoever set it expects a real model.
	if os.Getenv("WEFT_MODEL") != "" {
		fmt.Fprintln(os.Stderr, "weft: WEFT_MODEL is set, but this binary runs the demos' agent on its scripted model; for that model run: go run ./examples/live")
	}
	var graphs []*engine.Graph
	var shown []studio.Graph
	for _, d := range demos {
		graphs = append(graphs, d.Graph)
		shown = append(shown, studio.Graph{Graph: d.Graph, Description: d.Description, Example: d.Example})
	}
	os.Exit(cli.Main(cli.Env{Graphs: graphs}, func() error { return ui.Run(shown...) }))
}
