// Command weft opens the Weft studio on the bundled demo graphs, or runs a
// headless command on the same store (weft help lists them).
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/examples"
	"github.com/weftstudio/weft/ui"
	"github.com/weftstudio/weft/ui/cli"
	"github.com/weftstudio/weft/ui/studio"
)

func main() {
	demos, err := examples.All(nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "weft:", err)
		os.Exit(1)
	}
	if len(os.Args) > 1 && cli.IsCommand(os.Args[1], nil) {
		graphs := make([]*engine.Graph, len(demos))
		for i, d := range demos {
			graphs[i] = d.Graph
		}
		os.Exit(cli.Run(context.Background(), os.Args[1:], cli.Env{Graphs: graphs, Stdout: os.Stdout, Stderr: os.Stderr}))
	}
	graphs := make([]studio.Graph, len(demos))
	for i, d := range demos {
		graphs[i] = studio.Graph{Graph: d.Graph, Description: d.Description, Example: d.Example}
	}
	if err := ui.Run(graphs...); err != nil {
		fmt.Fprintln(os.Stderr, "weft:", err)
		os.Exit(1)
	}
}
