// Package engine is Weft's graph runtime: a Pregel-style loop with
// LangGraph's semantics, so a graph written here behaves step for step as
// the same StateGraph would in LangGraph, and the studio can show exactly
// what happened.
//
// A graph's state is a set of typed channels declared once as keys
// (LastValue, Reducer, List, Messages, Topic, Ephemeral, AnyValue,
// Untracked, Barrier). Nodes read the state through the keys and return
// writes, Commands or nothing; edges, joins, conditional edges and Sends say
// what runs next. Each super-step runs its tasks concurrently, and their
// writes become visible together in the next step, applied in a
// deterministic order. With a checkpoint.Saver every step is a checkpoint on
// a thread's timeline that can be inspected, resumed, replayed and forked,
// and nodes can stop for a human with Interrupt.
//
// # Where Weft follows Python LangGraph instead of LangGraph.js
//
// Weft's behaviour is pinned by a differential suite against LangGraph.js
// (testdata/oracle); where the two LangGraphs differ, Weft does what Python
// does, each named in testdata/oracle/allow.json with the Python source:
//
//   - Breakpoint results: a run stopped at a static breakpoint returns its
//     state without an "__interrupt__" key (Pregel.invoke collects
//     interrupts from updates, and a breakpoint's holds none).
//   - Ambiguous resume: a plain Command{Resume} while several interrupts are
//     pending is an error asking for ResumeByID (PregelLoop._first);
//     LangGraph.js gives every interrupt the same answer.
//   - Finished siblings: a task that finishes while a sibling fails keeps
//     all its writes, edges included, so a join after it still fires
//     (PregelRunner.commit); LangGraph.js aborts it and drops its edges.
//   - Command input: a Command given as input always resumes the thread
//     (PregelLoop._first); LangGraph.js writes an input checkpoint first
//     when it carries no resume value.
//
// # Deliberate differences from LangGraph
//
//   - Declared routes: conditional edges must declare where they may go
//     (PathMap, Targets, SendsTo), and Commands their Destinations, so the
//     graph view never guesses; Compile rejects nodes no declared route
//     reaches.
//   - Unknown targets: a Send or Goto to an unknown node, and a write to an
//     undeclared channel, are errors, not logged-and-skipped.
//   - Versions: channel versions are int64: the high half counts steps, the
//     low half is random, as LangGraph's savers add a random fraction, so
//     forks never store two values under one (channel, version).
//   - Subgraph write-back: a subgraph writes back to its parent only the
//     shared channels its own nodes wrote (LangGraph writes every output
//     key), so parallel subgraph runs do not clash on keys they only read
//     and an inherited list is not appended to itself. A channel shared by
//     name must have one type in both graphs.
//   - Task ids hash the same inputs as LangGraph's (checkpoint id,
//     namespace, step, path, triggers) with SHA-256 instead of xxh3:
//     stable, but not byte-compatible with LangGraph's.
//   - Metadata: every checkpoint's metadata records the graph that wrote it
//     (Extra keys MetaGraph and MetaFingerprint, the fingerprint of its
//     shape) and the nodes that ran (Tasks).
//   - Retries: the default retry policy retries every error except panics,
//     context cancellation, interrupts and errors marked Permanent: Go has
//     no exception classes to sort by. Routing errors (a route to an
//     unknown node, a path key missing from the path map, a write to a
//     channel that is not there or does not fit) are Permanent, as
//     LangGraph does not retry the ValueError and KeyError it raises for
//     the ones it has; an InvalidUpdateError (a Send to END) is retried, as
//     in LangGraph.
//
// A task that fails stores its error with the writes its node made before
// the error (its state update, say, when a conditional edge then fails), as
// both LangGraphs do: the task counts as done, so it is not next and a
// resume applies those writes instead of running it again. Each writer is
// all or nothing: a failing Command or route adds none of its own writes.
//
// # Observing a run
//
// Stream yields events as an iterator that loses nothing: the run waits
// while the consumer is busy. WithObserver feeds a callback from a bounded
// buffer of 4,096 events on its own goroutine: a slow observer never blocks
// the run; events that find the buffer full are dropped and counted in
// Result.Dropped.
//
// Values read from State are shared with the engine: treat them as
// read-only and build new slices and maps for writes.
package engine
