// Noticing that the store went away under a long-running command (serve,
// worker).

package cli

import (
	"context"
	"sync"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/store"
)

// storeCheckInterval is how often serve and worker check, while idle, that
// their store is still there (every write checks too).
var storeCheckInterval = time.Second

// watchStore returns a context canceled once s reports it is no longer
// usable (store.Checker: the SQLite file deleted or replaced), and a
// function returning that error, or nil. Stores without Check are never
// canceled.
func watchStore(ctx context.Context, s checkpoint.Saver, every time.Duration) (context.Context, func() error) {
	c, ok := s.(store.Checker)
	if !ok {
		return ctx, func() error { return nil }
	}
	ctx, cancel := context.WithCancelCause(ctx)
	var mu sync.Mutex
	var lost error
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := c.Check(ctx); err != nil && ctx.Err() == nil {
					mu.Lock()
					lost = err
					mu.Unlock()
					cancel(err)
					return
				}
			}
		}
	}()
	return ctx, func() error {
		mu.Lock()
		defer mu.Unlock()
		return lost
	}
}
