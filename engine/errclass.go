package engine

import (
	"errors"
	"io/fs"
	"net"
	"strconv"
	"syscall"
)

// This file is how an error says what kind of failure it is, so that the
// default retry-on of LangGraphPython can sort errors as Python's
// default_retry_on sorts exception classes (Go errors have no classes).

// ErrorClass is the kind of failure an error declares (ClassifiedError),
// after Python's exception classes. The zero value, ClassUnstated, says
// nothing: such an error is retried, as Python retries an exception of a
// class of its own.
type ErrorClass int

const (
	// ClassUnstated is an error that does not say what it is.
	ClassUnstated ErrorClass = iota
	// ClassConnection is a connection that failed or dropped (Python's
	// ConnectionError): retried.
	ClassConnection
	// ClassServerStatus is a server's 5xx answer (an HTTP status error with
	// a 5xx code): retried.
	ClassServerStatus
	// ClassClientStatus is a server's refusal of the request itself (an
	// HTTP status error below 500): not retried by LangGraphPython.
	ClassClientStatus
	// ClassInvalid is a wrong value, type, key or index, or an arithmetic
	// error (Python's ValueError, TypeError, LookupError, ArithmeticError):
	// running again gives the same answer, so not retried by
	// LangGraphPython.
	ClassInvalid
	// ClassProgram is a failure of the program itself (Python's
	// RuntimeError, NameError, ImportError, SyntaxError, ReferenceError,
	// StopIteration): not retried by LangGraphPython.
	ClassProgram
	// ClassOS is an operating-system error other than a connection failure
	// (Python's OSError: a missing file, a permission, a timeout): not
	// retried by LangGraphPython.
	ClassOS
)

// ClassifiedError is an error that says what kind of failure it is; the
// engine finds it anywhere in an error's chain (errors.As).
type ClassifiedError interface {
	error
	ErrorClass() ErrorClass
}

// ClassOf returns the class err declares (the first ClassifiedError in its
// chain). Errors of Go's standard library that say what they are by type are
// classified too: a *net.OpError or a refused, reset or aborted connection
// is ClassConnection, an *fs.PathError ClassOS, a *strconv.NumError
// ClassInvalid. Anything else is ClassUnstated.
func ClassOf(err error) ErrorClass {
	var ce ClassifiedError
	if errors.As(err, &ce) {
		return ce.ErrorClass()
	}
	var op *net.OpError
	if errors.As(err, &op) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNABORTED) {
		return ClassConnection
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return ClassOS
	}
	var ne *strconv.NumError
	if errors.As(err, &ne) {
		return ClassInvalid
	}
	return ClassUnstated
}

// pythonRetryOn is Python LangGraph's default_retry_on over error classes:
// connection failures and server errors are retried, errors that say they
// are a wrong value, a bug, an OS error or a refused request are not, and
// an error that says nothing is.
func pythonRetryOn(c ErrorClass) bool {
	switch c {
	case ClassClientStatus, ClassInvalid, ClassProgram, ClassOS:
		return false
	}
	return true
}
