package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strconv"
	"syscall"
	"testing"
)

type classed struct{ c ErrorClass }

func (e classed) Error() string          { return "classed" }
func (e classed) ErrorClass() ErrorClass { return e.c }

// ClassOf finds a declared class anywhere in the chain and classifies the
// standard library's errors that say what they are; Python's default
// retry-on retries connection and server errors and what says nothing.
func TestErrorClassAndPythonRetryOn(t *testing.T) {
	_, numErr := strconv.Atoi("x")
	cases := []struct {
		name  string
		err   error
		class ErrorClass
		retry bool
	}{
		{"plain", errors.New("boom"), ClassUnstated, true},
		{"declared connection", classed{ClassConnection}, ClassConnection, true},
		{"declared server status", classed{ClassServerStatus}, ClassServerStatus, true},
		{"declared client status", classed{ClassClientStatus}, ClassClientStatus, false},
		{"declared invalid, wrapped", fmt.Errorf("calling: %w", classed{ClassInvalid}), ClassInvalid, false},
		{"declared program", classed{ClassProgram}, ClassProgram, false},
		{"declared os", classed{ClassOS}, ClassOS, false},
		{"net.OpError", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("refused")}, ClassConnection, true},
		{"connection reset", fmt.Errorf("read: %w", os.NewSyscallError("read", syscall.ECONNRESET)), ClassConnection, true},
		{"missing file", &fs.PathError{Op: "open", Path: "/nope", Err: fs.ErrNotExist}, ClassOS, false},
		{"number parsing", numErr, ClassInvalid, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ClassOf(c.err); got != c.class {
				t.Errorf("ClassOf = %d, want %d", got, c.class)
			}
			if got := pythonRetryOn(ClassOf(c.err)); got != c.retry {
				t.Errorf("pythonRetryOn = %v, want %v", got, c.retry)
			}
		})
	}
}

// The reference decides the default retry-on; RetryOn, panics, Permanent
// errors and cancellation decide the same under both.
func TestRetryableByReference(t *testing.T) {
	p := &RetryPolicy{MaxAttempts: 3}
	invalid := classed{ClassInvalid}
	cases := []struct {
		name       string
		policy     *RetryPolicy
		err        error
		python, js bool
	}{
		{"says nothing", p, errors.New("x"), true, true},
		{"invalid value", p, invalid, false, true},
		{"connection", p, classed{ClassConnection}, true, true},
		{"permanent", p, Permanent(errors.New("x")), false, false},
		{"panic", p, &NodeError{Panic: true, Err: errors.New("x")}, false, false},
		{"RetryOn decides", &RetryPolicy{MaxAttempts: 3, RetryOn: func(error) bool { return true }}, invalid, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := retryable(c.policy, LangGraphPython, c.err); got != c.python {
				t.Errorf("python: %v, want %v", got, c.python)
			}
			if got := retryable(c.policy, LangGraphJS, c.err); got != c.js {
				t.Errorf("js: %v, want %v", got, c.js)
			}
		})
	}
}
