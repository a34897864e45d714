package cli

import (
	"context"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/weftstudio/weft/engine"
)

// stopKey carries a command's stop request in its context.
type stopKey struct{}

// stopOnSignals makes the first SIGINT or SIGTERM a request to stop at the
// next step boundary: runs pause there with their step stored
// (stopAtBoundary), the worker takes no new thread, and the command ends
// cleanly. A second signal cancels the returned context: stop now. The
// handler is installed even when the process was started with SIGINT
// ignored (as a shell starts background jobs), which signal.Notify undoes:
// a stop must not depend on how the service was started. Calling the
// returned function removes the handler.
func stopOnSignals(ctx context.Context, name string) (context.Context, func()) {
	var stopping atomic.Bool
	ctx, cancel := context.WithCancel(context.WithValue(ctx, stopKey{}, &stopping))
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-ch:
				if stopping.Swap(true) {
					warnf(ctx, "weft %s: %v again: stopping now", name, sig)
					cancel()
					return
				}
				warnf(ctx, "weft %s: %v: stopping at the next step boundary (send it again to stop now)", name, sig)
			case <-done:
				return
			}
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel()
	}
}

// stopRequested reports whether a signal asked the command to stop.
func stopRequested(ctx context.Context) bool {
	s, ok := ctx.Value(stopKey{}).(*atomic.Bool)
	return ok && s.Load()
}

// stopAtBoundary is the run option that pauses a run at its next step
// boundary once a signal asked the command to stop.
func stopAtBoundary(ctx context.Context) engine.RunOption {
	return engine.WithStopCheck(func() bool { return stopRequested(ctx) })
}
