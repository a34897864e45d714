package engine

import "time"

// SetClock replaces the clock checkpoints are stamped and minted with, for
// the length of a test; the returned func restores it.
func SetClock(f func() time.Time) func() {
	old := clock
	clock = f
	return func() { clock = old }
}
