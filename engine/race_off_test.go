//go:build !race

package engine_test

// raceOn reports whether the race detector is built in (see race_on_test.go).
const raceOn = false
