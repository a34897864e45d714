package engine

import (
	"errors"
	"fmt"
	"strings"
)

// Send asks the engine to run Node in the next step with Arg as its input,
// as a push task of its own (LangGraph's Send). Sends are how a graph fans
// out over data: one Send per item. Arg must be storable: a Values map of the
// graph's channels, or a type registered with RegisterType.
type Send struct {
	Node string `json:"node"`
	Arg  any    `json:"arg"`
}

// Output is what a node returns: an Update, a Command or Commands. A nil
// Output writes nothing (the node's static edges still fire).
type Output interface{ isOutput() }

// Update is a list of writes to state channels.
type Update []Write

func (Update) isOutput() {}
func (Update) isInput()  {}

// Updates builds an Update from writes, for readability at return sites.
func Updates(ws ...Write) Update { return Update(ws) }

// ParentGraph, as Command.Graph, sends the command to the graph that runs the
// current graph as a subgraph.
const ParentGraph = "__parent__"

// Command is a node's combined instruction: state writes, where to go next,
// and Sends (LangGraph's Command). As a graph input it carries the answer to
// interrupts (Resume or ResumeByID) and optionally an Update and Goto.
// The zero Command does nothing; as input it is an error.
type Command struct {
	Update Update   // writes applied as the node's own writes
	Goto   []string // nodes to run next (END is ignored)
	Sends  []Send   // push tasks to start next
	// Graph is "" for the current graph or ParentGraph to apply the command in
	// the parent graph (from inside a subgraph).
	Graph string
	// Resume answers the single pending interrupt (input only).
	Resume any
	// ResumeByID answers pending interrupts by their id (input only).
	ResumeByID map[string]any
}

func (Command) isOutput() {}
func (Command) isInput()  {}

// Commands is a list of Commands returned by one node; their updates apply
// in order, so several may write the same reducer channel.
type Commands []Command

func (Commands) isOutput() {}

// Input is what a run starts from: Values, an Update, a Command, or nil to
// resume a thread from its latest (or chosen) checkpoint.
type Input interface{ isInput() }

func (Values) isInput() {}

// Route is what a conditional edge's path function returns: path keys,
// mapped through the edge's path map (or node names when there is none), and
// Sends. The zero Route goes nowhere.
type Route struct {
	Keys  []string
	Sends []Send
}

// To routes to the given path keys.
func To(keys ...string) Route { return Route{Keys: keys} }

// SendTo routes by Sends.
func SendTo(sends ...Send) Route { return Route{Sends: sends} }

// InvalidUpdateError reports a write a channel cannot accept, such as two
// values for a LastValue in one step (LangGraph's InvalidUpdateError, code
// INVALID_CONCURRENT_GRAPH_UPDATE).
type InvalidUpdateError struct {
	Key string // the channel
	Msg string
}

// Error describes the InvalidUpdateError.
func (e *InvalidUpdateError) Error() string { return e.Msg }

// RecursionLimitError says a run reached its recursion limit without
// stopping (LangGraph's GraphRecursionError, code GRAPH_RECURSION_LIMIT).
type RecursionLimitError struct{ Limit int }

// Error describes the RecursionLimitError.
func (e *RecursionLimitError) Error() string {
	return fmt.Sprintf("Recursion limit of %d reached without hitting a stop condition. You can increase the limit with engine.WithRecursionLimit", e.Limit)
}

// NodeError is a node's failure: its error or panic, with the node and task.
type NodeError struct {
	Node   string
	TaskID string
	NS     string // the subgraph namespace, "" at the root
	Err    error
	// Panic is true when the node panicked; Stack then holds the stack.
	Panic bool
	Stack string
}

// Error describes the NodeError.
func (e *NodeError) Error() string {
	where := e.Node
	if e.NS != "" {
		where = e.NS + " › " + e.Node
	}
	if e.Panic {
		return fmt.Sprintf("node %q panicked: %v", where, e.Err)
	}
	return fmt.Sprintf("node %q: %v", where, e.Err)
}

// Unwrap returns the underlying error(s), for errors.Is and errors.As.
func (e *NodeError) Unwrap() error { return e.Err }

// CompileError reports what is wrong with a graph definition.
type CompileError struct {
	Graph string
	Errs  []error
}

// Error describes the CompileError.
func (e *CompileError) Error() string {
	var b strings.Builder
	if e.Graph != "" {
		fmt.Fprintf(&b, "graph %q: ", e.Graph)
	}
	for i, err := range e.Errs {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying error(s), for errors.Is and errors.As.
func (e *CompileError) Unwrap() []error { return e.Errs }

// ErrEmptyInput is returned for a run with no input on a thread that has no
// checkpoint to resume, or with an empty Command.
var ErrEmptyInput = errors.New("received no input for the graph")

// Permanent marks err as not worth retrying: a retry policy gives up on it at
// once.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err}
}

type permanentError struct{ err error }

// Error describes the permanentError.
func (e *permanentError) Error() string { return e.err.Error() }

// Unwrap returns the underlying error(s), for errors.Is and errors.As.
func (e *permanentError) Unwrap() error { return e.err }
