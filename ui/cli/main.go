package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/ui"
	"github.com/weftstudio/weft/ui/studio"
)

// Main is the whole of a studio program's main function, returning its
// exit status: a first argument that names a command, or is any other word
// (a typo must not open the window), runs that command headless on graphs
// (Run); anything else opens the window on them (ui.Run), which reads -db,
// -store and -create. Without a display it prints one line naming the
// headless commands and returns 1. It must be called from the main
// goroutine.
func Main(graphs ...studio.Graph) int {
	if len(os.Args) > 1 && (!strings.HasPrefix(os.Args[1], "-") || IsCommand(os.Args[1], nil)) {
		gs := make([]*engine.Graph, len(graphs))
		for i, g := range graphs {
			gs[i] = g.Graph
		}
		return Run(context.Background(), os.Args[1:], Env{Graphs: gs, Stdout: os.Stdout, Stderr: os.Stderr})
	}
	if err := ui.Run(graphs...); err != nil {
		if errors.Is(err, ui.ErrNoDisplay) {
			err = fmt.Errorf("%w; the headless commands work without one: %s (weft help)", err, strings.Join(Names(nil), ", "))
		}
		fmt.Fprintln(os.Stderr, "weft:", err)
		return 1
	}
	return 0
}
