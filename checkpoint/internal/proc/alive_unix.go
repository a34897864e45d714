//go:build unix

package proc

import (
	"errors"
	"syscall"
)

// alive asks the kernel whether pid exists (signal 0 checks without
// sending anything).
func alive(pid int) answer {
	err := syscall.Kill(pid, 0)
	switch {
	case err == nil, errors.Is(err, syscall.EPERM): // EPERM: it exists, another user's
		return yes
	case errors.Is(err, syscall.ESRCH):
		return no
	}
	return unknown
}
