package cli

import (
	"context"
	"io"

	"github.com/weftstudio/weft/devloop"
)

// storeless are the commands that open no store themselves: they get
// their arguments and the output streams, and return the exit code.
var storeless = map[string]struct {
	Summary string
	Run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}{
	"dev": {Summary: "build and run your program (a main package calling ui.Run), rebuild and restart it on the same checkpoint on every save: dev [PACKAGE] [-- ARGS]", Run: devloop.Main},
}
