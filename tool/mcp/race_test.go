//go:build race

package mcp_test

// raceEnabled says the tests run under the race detector, where timings
// measure the detector.
const raceEnabled = true
