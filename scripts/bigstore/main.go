// Command bigstore builds a large checkpoint store for Weft's scale
// benchmarks: by default 10,000 short threads and one thread of 100,000
// checkpoints ("long"), about 2 GB in SQLite, from a fixed seed. Run it
// through scripts/bigstore.sh.
//
//	go run ./scripts/bigstore -o /tmp/weft-big.db
//
// The same flags give the same threads, values and sizes; checkpoint ids and
// timestamps are those of the moment of generation. An existing store is
// refused rather than added to.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"time"

	"github.com/weftstudio/weft/checkpoint/store"
	"github.com/weftstudio/weft/scripts/bigstore/gen"
)

func main() {
	sh := gen.Full
	out := flag.String("o", "", "the store to create: a SQLite file path (must not exist) or a postgres:// DSN")
	flag.Uint64Var(&sh.Seed, "seed", sh.Seed, "random seed")
	flag.IntVar(&sh.Threads, "threads", sh.Threads, "number of short threads")
	flag.IntVar(&sh.ShortTurns, "turns", sh.ShortTurns, "mean checkpoints per short thread")
	flag.IntVar(&sh.LongTurns, "long", sh.LongTurns, "checkpoints of the long thread (0: none)")
	flag.IntVar(&sh.ValueBytes, "value-bytes", sh.ValueBytes, "mean size of a reply before compression")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "bigstore: -o PATH is required")
		os.Exit(2)
	}
	if err := run(*out, sh); err != nil {
		fmt.Fprintln(os.Stderr, "bigstore:", err)
		os.Exit(1)
	}
}

func run(out string, sh gen.Shape) error {
	if _, err := os.Stat(out); err == nil {
		return fmt.Errorf("%s exists; remove it first (the generator makes a new store, it does not add to one)", out)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	s, err := store.Open(ctx, out)
	if err != nil {
		return err
	}
	defer s.Close()
	start := time.Now()
	last := start
	err = gen.Generate(ctx, s, sh, func(done, total int) {
		if now := time.Now(); now.Sub(last) >= 5*time.Second || done == total {
			last = now
			fmt.Fprintf(os.Stderr, "bigstore: %d/%d threads, %s\n", done, total, now.Sub(start).Round(time.Second))
		}
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "bigstore: wrote %s in %s\n", out, time.Since(start).Round(time.Second))
	return nil
}
