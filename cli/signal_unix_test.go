//go:build unix

package cli_test

import "syscall"

var sigterm = syscall.SIGTERM
