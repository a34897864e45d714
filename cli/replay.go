package cli

import (
	"context"
	"flag"
	"io"
	"strings"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/replay"
)

// replayDiffers is the error of a replay that does not match: its message
// is the report's human diff, for stderr.
type replayDiffers struct{ text string }

func (e *replayDiffers) Error() string { return e.text }

// cmdReplay re-runs a thread against the binary's graph (package replay)
// on a scratch copy, the store being open read-only, and prints the
// report; a replay that differs exits 1 with the diff on stderr.
func cmdReplay(ctx context.Context, s checkpoint.Saver, graphs []*engine.Graph, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	strict := fs.Bool("strict", false, "fail on any model or tool call the recording does not serve, instead of making it")
	to := fs.String("to", "", "replay the lineage of this checkpoint instead of the thread's head")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: replay THREAD [-strict] [-to CHECKPOINT]")
	}
	g, err := graphOf(ctx, s, graphs, pos[0])
	if err != nil {
		return err
	}
	opts := []replay.Option{replay.To(*to)}
	if *strict {
		opts = append(opts, replay.Strict())
	}
	rep, err := replay.Run(ctx, g, s, pos[0], opts...)
	if err != nil {
		return err
	}
	if err := printJSON(w, rep); err != nil {
		return err
	}
	if !rep.Match {
		return &replayDiffers{strings.TrimRight(rep.Text(), "\n")}
	}
	return nil
}
