// Command weft opens the Weft studio on the bundled demo graphs, or runs a
// headless command on the same store (weft help lists them).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/examples"
	_ "github.com/weftstudio/weft/internal/early" // before Graphviz and Fyne initialise: see its doc
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
	// A first argument that is not a flag is a command, known or not: a
	// typo must not open the window. -h and friends print the usage.
	if len(os.Args) > 1 && (!strings.HasPrefix(os.Args[1], "-") || cli.IsCommand(os.Args[1], nil)) {
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
		if errors.Is(err, ui.ErrNoDisplay) {
			err = fmt.Errorf("%w; the headless commands work without one: %s (weft help)", err, strings.Join(cli.Names(nil), ", "))
		}
		fmt.Fprintln(os.Stderr, "weft:", err)
		os.Exit(1)
	}
}
