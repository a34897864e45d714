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
// # Where the LangGraphs disagree: WithReference
//
// Weft's behaviour is pinned by a differential suite against both
// LangGraphs (testdata/oracle: LangGraph.js 1.7.3 and Python LangGraph
// 1.1.3). Where the two differ, a graph follows the Reference it was
// compiled with: LangGraphPython by default, LangGraphJS with
// WithReference(LangGraphJS). A subgraph follows its root graph's.
//
//   - B1 Breakpoint results: a run stopped at a static breakpoint returns
//     its state. Python: Result.Interrupts is nil and no values event
//     reports the stop. LangGraph.js: Result.Interrupts is empty but set
//     ("__interrupt__": []), and the run's last values event carries an
//     empty Interrupts.
//   - B2 Values at an interrupt: each task that stops at Interrupt is
//     reported by a values event with its interrupts when it stops. Python:
//     the event also carries the state as the step found it (Event.Values)
//     and Result.Values always holds the state. LangGraph.js: the event
//     carries only the interrupts, and Result.Values is the state only if
//     the run reported it otherwise.
//   - B3 Ambiguous resume: a plain Command{Resume} while several interrupts
//     are pending. Python: an error asking for ResumeByID, before anything
//     runs. LangGraph.js: every pending interrupt gets that answer.
//   - B4 Finished siblings: a task that finishes while a sibling fails.
//     Python: it keeps all its writes, edges and joins included, so what
//     follows it runs on a resume. LangGraph.js: it keeps only its state
//     writes and stores ErrAborted, so a join after it does not fire; its
//     writes are stored when the step ends.
//   - B5 Command input: a Command without an answer given to a thread
//     paused at a static breakpoint. Python: it resumes the thread, its
//     writes added to the pending step. LangGraph.js: its writes make an
//     input checkpoint first, from which the run goes on.
//   - B6 Replay: a run with nil input from an explicit checkpoint
//     (WithCheckpoint). Python: the checkpoint is continued as it is, its
//     next checkpoint a child of it. LangGraph.js: a fork copy of a loop or
//     input checkpoint is written first and the run goes on from the copy;
//     an update or fork checkpoint is continued as it is. Both continue the
//     thread's newest checkpoint as a run without WithCheckpoint would, and
//     LangGraph.js also a resume (a Command with an answer) that names the
//     newest checkpoint, its pending writes kept: a client that names the
//     head it answers resumes. Off the thread's head Weft writes the fork
//     copy under both references (see Writes off the head below).
//   - B7 Update writes: UpdateState as a node. Python: the update's writes
//     are also stored as the writes of that node's due task on the
//     checkpoint updated, whose snapshot then shows them as its result
//     (when it is the thread's newest: see Writes off the head).
//     LangGraph.js: they are only applied in the new checkpoint.
//   - B8 Default retry-on: a retry policy without RetryOn. Python: errors
//     that declare (ClassifiedError) a class Python's default_retry_on does
//     not retry — ClassInvalid, ClassProgram, ClassOS, ClassClientStatus,
//     as a ValueError, a RuntimeError or an OSError — fail at once; others,
//     ClassConnection and errors that say nothing included, are retried.
//     LangGraph.js: every error is retried. In both, panics, cancellation,
//     interrupts and Permanent errors are not.
//   - B9 Node cache hits: a cached task (WithCachePolicy) served by the
//     node cache. LangGraph.js stores its writes as the task's pending
//     writes, so when a sibling interrupts the step the snapshot shows the
//     task done with its result and a resume applies those writes. Python
//     keeps them out of the checkpoint: the snapshot lists the task as
//     next, and a resume looks it up in the cache again (and runs it if the
//     entry is gone). A call task served by the cache (CallOptions.Cache)
//     likewise: LangGraph.js stores its result as the task's pending
//     write, so a resume restores it; Python does not, so a resume looks
//     it up again. ClearCache with no nodes empties the whole cache
//     following LangGraph.js (its clearCache takes no nodes), and clears
//     the graph's own nodes and call tasks following Python (clear_cache;
//     see Task cache below).
//   - B10 Restored call results: a call task (Call) that finished in an
//     earlier run of its step is not run again. LangGraph.js streams its
//     stored result as an updates event marked cached; Python streams
//     nothing for it.
//   - B11 Failed calls: a node whose call task failed fails with the
//     task's error under both. Python stores that error as the node's;
//     LangGraph.js stores an abort (ErrAborted), as it aborts the node.
//
// Go errors have no classes: an error declares its ErrorClass with a method
// ErrorClass() ErrorClass; ClassOf also classifies the standard library's
// connection, file and number-parsing errors.
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
//   - Writes off the head: under both references, no task writes go to a
//     checkpoint that is no longer the thread's newest, where Weft's stores
//     shared between processes refuse them as a late writer's
//     (checkpoint.ErrConflict). So a replay of such a checkpoint writes a
//     fork copy of it first, where Python continues the old checkpoint
//     (without the replayed step's writes neither a resume nor a replay
//     check could tell what the step did; Python's own result shows it: a
//     replayed node that interrupts leaves nothing to resume; the copy
//     takes no step of the run's recursion limit, so the run's nodes see
//     Python's RemainingSteps), and an update of such a checkpoint does
//     not store its writes as the due task's (B7).
//   - Subgraph write-back: a subgraph writes back to its parent only the
//     shared channels its own nodes wrote (LangGraph writes every output
//     key), so parallel subgraph runs do not clash on keys they only read
//     and an inherited list is not appended to itself. A channel shared by
//     name must have one type in both graphs.
//   - Store search order: a search of the long-term store (every
//     longterm.Store) returns items newest update first, ties by
//     namespace then key, as LangGraph's SQL stores order theirs
//     (updated_at DESC); both LangGraphs' InMemoryStore return them by
//     namespace, in the order the namespaces were made, each namespace's
//     items in the order they were put. The items are the same.
//   - Store namespaces: listing the long-term store's namespaces lists
//     those that hold items, as LangGraph's SQL stores do; both
//     LangGraphs' InMemoryStore keep listing a namespace whose items were
//     all deleted, and Python's also lists one that only a get of a
//     missing item named.
//   - Task ids hash the same inputs as LangGraph's (checkpoint id,
//     namespace, step, path, triggers) with SHA-256 instead of xxh3:
//     stable, but not byte-compatible with LangGraph's.
//   - Functional state: an entrypoint's graph (package functional) keeps
//     two channels, its return value and what it saved for the next run,
//     and its snapshots and values show both; LangGraph shows only the
//     return value (its END channel) as the values. Call tasks store their
//     writes as they finish under both references (LangGraph.js, B4, would
//     hold a node task's writes until its step ends). The start of the
//     entrypoint's task in the tasks and debug streams carries that state
//     as its Input (none on a thread's first run), where LangGraph gives
//     the run's input.
//   - Task cache: a call task's cache entry (CallOptions.Cache) is
//     stored before its Future is done, so a call with the same key later
//     in the same run is served from it under both references, as in
//     Python; LangGraph.js stores it only after handing the result to the
//     caller, so a call made right after misses and runs again. Entries
//     are named by the graph, one namespace for all its call tasks, where
//     LangGraph names them by the task's function and shares them between
//     graphs. ClearCache with no nodes clears them under both references:
//     Python's clear_cache clears only its nodes, leaving an entrypoint's
//     task entries to each task's clear_cache(cache).
//   - Metadata: every checkpoint's metadata records the graph that wrote it
//     (Extra keys MetaGraph and MetaFingerprint, the fingerprint of its
//     shape) and the nodes that ran (Tasks).
//   - Retries: routing errors (a route to an unknown node, a path key
//     missing from the path map, a write to a channel that is not there or
//     does not fit) are Permanent under both references, as LangGraph does
//     not retry the ValueError and KeyError it raises for the ones it has;
//     an InvalidUpdateError (a Send to END) is retried, as in LangGraph.
//   - Node cache: entries are named by the graph's and the node's names
//     (LangGraph: the node's function and name) and keyed by a SHA-256 of
//     the key; without a Key the key is the node's input as stored (every
//     state channel with a value, or the Send argument), where LangGraph
//     pickles (Python) or JSON-encodes (LangGraph.js) the input. ClearCache
//     of an unknown node, or of a graph without a cache, is an error
//     (Python skips unknown nodes; LangGraph.js ignores a missing cache).
//     Writes to Untracked channels are not cached (they are never stored).
//
// A task that fails stores its error with the writes its node made before
// the error (its state update, say, when a conditional edge then fails), as
// both LangGraphs do: the task counts as done, so it is not next and a
// resume applies those writes instead of running it again. Each writer is
// all or nothing: a failing Command or route adds none of its own writes.
//
// # Functional API: call tasks
//
// Call starts a function as a task of the running node's step, LangGraph's
// functional-API task (a PUSH task with a Call, __pregel_call): its id hashes
// LangGraph's inputs (checkpoint id, namespace, step, name, the parent's path
// and the call's index among the node's calls), its result is stored as a
// pending write (checkpoint.Return) and found again when the node runs again
// in the step, so after an interrupt or a crash finished tasks are not re-run.
// A node added OnInput runs in the input's own step, as LangGraph's entrypoint
// node does. Package functional builds LangGraph's @entrypoint and @task on
// these (see Functional state among the deliberate differences).
// CallOptions.Cache serves a call from the graph's node cache on an input
// it has seen, as LangGraph's task cache policies do (B9, Task cache), and
// CallOptions.Timeout bounds each attempt, as WithTimeout bounds a node's.
//
// # Observing a run
//
// Stream yields events as an iterator that loses nothing: the run waits
// while the consumer is busy. WithObserver feeds a callback from a bounded
// buffer of 4,096 events on its own goroutine: a slow observer never blocks
// the run; events that find the buffer full are dropped and counted in
// Result.Dropped. Graph.WithRunHook attaches a program to every run of a
// graph, whoever starts it: the hook adds metadata to the run's
// checkpoints and gets its events synchronously (it must not block) and
// its outcome; ModeLifecycle reports each step's and task's start and end
// with ids only, cheap enough for tracing every run (package telemetry).
//
// # What a node knows about its run
//
// RuntimeOf gives a running node, and the path functions of its
// conditional edges, its Runtime: thread, checkpoint, step, task and run.
// It also holds Python LangGraph's managed values, RemainingSteps and
// IsLastStep, computed for each task from the run's recursion limit
// (WithRecursionLimit) as Python computes them, and never stored: no
// checkpoint, snapshot or stream event holds them. A loop whose route goes
// to END when IsLastStep holds (or when RemainingSteps < 2) finishes
// instead of failing with a RecursionLimitError. LangGraph.js 1.7.3 has no
// managed values; a graph reads the same numbers under either reference.
// RunContext gives the run's static context (WithRunContext).
//
// # Caching nodes
//
// A node added WithCachePolicy, in a graph compiled WithCache, is looked up
// before its task runs, after the interrupt-before check, by a key over its
// input, in every thread: a hit does not run the node and applies the
// writes of the run that filled the entry — state writes, edges, routes
// and Sends, so a conditional edge is not evaluated again. It streams as
// LangGraph's: a task start, an updates event with Cached (LangGraph's
// __metadata__ {"cached": true}) and CacheHit, and no task result;
// ModeLifecycle's TaskEnd says Cached. Only a task that succeeds fills an
// entry. Nothing about the cache is stored in checkpoints beyond B9.
// Graph.ClearCache clears it; package checkpoint/nodecache holds the
// interface and an in-memory cache, and the SQLite and PostgreSQL savers
// give one in their store.
//
// Values read from State are shared with the engine: treat them as
// read-only and build new slices and maps for writes.
package engine
