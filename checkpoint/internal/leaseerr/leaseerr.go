// Package leaseerr holds the errors the savers' checkpoint.Leaser implementations
// share, so that each reports them the same way.
package leaseerr

import "github.com/weftstudio/weft/checkpoint"

// Lost returns the error of renewing a lease of thread once it is gone:
// cur is the thread's lease now, if has (then the error names it, so the
// caller sees who holds the thread).
func Lost(thread string, cur checkpoint.Lease, has bool) error {
	e := &checkpoint.LeaseLostError{ThreadID: thread}
	if has {
		e.Now = &cur
	}
	return e
}
