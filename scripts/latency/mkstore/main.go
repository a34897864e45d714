// Command mkstore writes the store scripts/latency.sh measures memory on: a
// thread of the writing-assistant demo with -n checkpoints (its input, its
// first step, then manual updates of the topic), so that the studio opens
// it as a thread of a bundled graph.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/weftstudio/weft/checkpoint/sqlite"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/examples"
)

func main() {
	db := flag.String("db", "", "SQLite `file` to write (must not exist)")
	n := flag.Int("n", 10000, "checkpoints in the thread")
	thread := flag.String("thread", "long", "thread `id`")
	flag.Parse()
	if err := run(*db, *thread, *n); err != nil {
		fmt.Fprintln(os.Stderr, "mkstore:", err)
		os.Exit(1)
	}
}

func run(db, thread string, n int) error {
	if db == "" {
		return fmt.Errorf("-db is required")
	}
	if _, err := os.Stat(db); err == nil {
		return fmt.Errorf("%s exists", db)
	}
	s, err := sqlite.Open(db)
	if err != nil {
		return err
	}
	defer s.Close()
	d, err := examples.Writer(s)
	if err != nil {
		return err
	}
	ctx := context.Background()
	g := d.Graph
	// Input and the first step: 2 checkpoints.
	if _, err := g.Invoke(ctx, d.Example, engine.WithThread(thread), engine.WithStepLimit(1)); err != nil {
		return err
	}
	for done := 2; done < n; {
		batch := min(500, n-done)
		steps := make([][]engine.StateUpdate, batch)
		for i := range steps {
			topic := fmt.Sprintf("tide pools, take %d", done+i)
			steps[i] = []engine.StateUpdate{{Values: engine.Update{examples.WriterTopic.Set(topic)}, AsNode: "plan"}}
		}
		if _, err := g.BulkUpdateState(ctx, steps, engine.WithThread(thread)); err != nil {
			return err
		}
		done += batch
	}
	return nil
}
