//go:build race

package engine_test

// raceOn reports whether the race detector is built in: it adds
// allocations of its own, and makes sync.Pool drop pooled buffers at random.
const raceOn = true
