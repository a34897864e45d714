package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Main is the whole of a Weft program's main function, returning its exit
// status: a first argument that names a command, or is any other word (a
// typo must not open the window), runs that command headless on env's
// graphs (Run); anything else calls window, which opens the studio and
// reads -db, -store and -create itself. A nil window is a binary without
// one (cmd/weft-headless): it says so and names the commands. Zero
// Stdout/Stderr in env mean the process's own. It must be called from the
// main goroutine, which a window needs.
//
// The window is a function so that this package, and every binary built
// from it alone, never links the window's libraries.
func Main(env Env, window func() error) int {
	if env.Stdout == nil {
		env.Stdout = os.Stdout
	}
	if env.Stderr == nil {
		env.Stderr = os.Stderr
	}
	env.NoWindow = env.NoWindow || window == nil
	if len(os.Args) > 1 && (!strings.HasPrefix(os.Args[1], "-") || IsCommand(os.Args[1], env.Extra)) {
		return Run(context.Background(), os.Args[1:], env)
	}
	if window == nil {
		fmt.Fprintf(env.Stderr, "weft: this binary has no window; its commands: %s (weft help)\n", strings.Join(Names(env.Extra), ", "))
		return 2
	}
	if err := window(); err != nil {
		var nd interface{ NoDisplay() bool }
		if errors.As(err, &nd) && nd.NoDisplay() {
			err = fmt.Errorf("%w; the headless commands work without one: %s (weft help)", err, strings.Join(Names(env.Extra), ", "))
		}
		fmt.Fprintln(env.Stderr, "weft:", err)
		return 1
	}
	return 0
}
