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
// # Deliberate differences from LangGraph
//
//   - Conditional edges must declare where they may go (PathMap, Targets,
//     SendsTo), and Commands their Destinations, so the graph view never
//     guesses; Compile rejects nodes no declared route reaches.
//   - A Send or Goto to an unknown node, and a write to an undeclared
//     channel, are errors, not logged-and-skipped.
//   - Channel versions are int64: the high half counts steps, the low half is
//     random, as LangGraph's savers add a random fraction, so forks never
//     store two values under one (channel, version).
//   - A subgraph writes back to its parent only the shared channels it
//     changed (LangGraph writes every output key), so parallel subgraph runs
//     do not clash on keys they only read.
//   - Task ids hash the same inputs as LangGraph's (checkpoint id, namespace,
//     step, path, triggers) with SHA-256 instead of xxh3: stable, but not
//     byte-compatible with LangGraph's.
//   - Every checkpoint's metadata records the graph that wrote it (Extra
//     key MetaGraph) and the nodes that ran (Tasks).
//   - The default retry policy retries every error except panics, context
//     cancellation, interrupts and errors marked Permanent: Go has no
//     exception classes to sort by. Routing errors (a route to an unknown
//     node, a path key missing from the path map, a write to a channel that
//     is not there or does not fit) are Permanent, as LangGraph does not
//     retry the ValueError and KeyError it raises for the ones it has.
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
