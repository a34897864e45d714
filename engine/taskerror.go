package engine

import (
	"encoding/json"
	"errors"
)

// ErrorKind says what kind of failure a task's stored error was, so tools
// can tell a node's own error from an update the graph refused or a panic
// (LangGraph keeps the exception's class). The zero ErrorKind is a node's
// own error.
type ErrorKind string

// Kinds of task failure.
const (
	// ErrorKindNode is an error the node returned.
	ErrorKindNode ErrorKind = ""
	// ErrorKindPanic is a panic in the node, recovered.
	ErrorKindPanic ErrorKind = "panic"
	// ErrorKindInvalidUpdate is an InvalidUpdateError: a write, route or
	// output the graph refused.
	ErrorKindInvalidUpdate ErrorKind = "invalid_update"
	// ErrorKindAborted is ErrAborted: a task that finished while a sibling
	// failed, stopped before its edges wrote (following LangGraphJS).
	ErrorKindAborted ErrorKind = "aborted"
)

// ErrAborted is the stored error of a task that finished in a step where a
// sibling failed, following LangGraphJS (LangGraph.js's AbortError): the
// task keeps its state writes but not those of its edges, joins and routes.
var ErrAborted = errors.New("aborted: a task of the same step failed")

// errorKind classifies a task's failure.
func errorKind(err error) ErrorKind {
	var ne *NodeError
	if errors.As(err, &ne) && ne.Panic {
		return ErrorKindPanic
	}
	var iu *InvalidUpdateError
	if errors.As(err, &iu) {
		return ErrorKindInvalidUpdate
	}
	if errors.Is(err, ErrAborted) {
		return ErrorKindAborted
	}
	return ErrorKindNode
}

// storedError is the stored form of a task's failure (its Error write).
// Stores written before kinds were recorded hold a bare JSON string.
type storedError struct {
	Kind    ErrorKind `json:"kind,omitempty"`
	Message string    `json:"message"`
}

func encodeTaskError(err error) []byte {
	b, _ := json.Marshal(storedError{Kind: errorKind(err), Message: err.Error()})
	return b
}

func decodeTaskError(b []byte) (storedError, error) {
	var e storedError
	if len(b) > 0 && b[0] == '"' {
		return e, json.Unmarshal(b, &e.Message)
	}
	return e, json.Unmarshal(b, &e)
}
