//go:build unix

package telemetry_test

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used, every goroutine's: the
// builder's and the exporter's work counts, wherever it ran.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
