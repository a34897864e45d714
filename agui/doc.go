// Package agui serves Weft graphs over the AG-UI protocol (Agent–User
// Interaction), so agent front ends built on @ag-ui/client (CopilotKit and
// others) can drive a graph directly: a POSTed RunAgentInput starts or
// continues thread threadId of the graph, and the run streams back as AG-UI
// events over server-sent events ("data: <json>\n\n", flushed per event,
// ": ping" comments while a step is quiet).
//
// Every run goes through the graph's checkpoint saver under the client's
// threadId (and runId as the run id), so the studio opened on the same
// store shows every thread a client made.
//
// # From engine events to AG-UI events
//
//   - a run: RUN_STARTED, then RUN_FINISHED, or RUN_ERROR when it fails;
//   - a node's tasks (at the root; parallel tasks of one node share a step):
//     STEP_STARTED / STEP_FINISHED, named after the node;
//   - message chunks a node streams with engine.EmitMessage: text as
//     TEXT_MESSAGE_START / CONTENT / END, tool calls as TOOL_CALL_START /
//     ARGS / END (a chunk with no tool call id continues the task's open
//     call); a task's pieces end when the task returns;
//   - messages a task writes to the messages channel (the first channel of
//     type []engine.Message) that the client has not seen: an assistant's
//     text that was not streamed as one TEXT_MESSAGE triad, its tool calls
//     that were not streamed as TOOL_CALL triads, tool messages as
//     TOOL_CALL_RESULT;
//   - values passed to engine.Emit: CUSTOM (see CustomEvent for the name);
//   - the state after each step that changed it: STATE_SNAPSHOT the first
//     time in a run, then STATE_DELTA (RFC 6902) when the patch is smaller.
//     The state is every channel with a value except the messages channel;
//   - the end of a run: STATE_SNAPSHOT (or delta) and MESSAGES_SNAPSHOT of
//     the whole conversation, then RUN_FINISHED with outcome success, or,
//     at interrupts, one CUSTOM on_interrupt per interrupt (for clients
//     that predate outcomes) and outcome interrupt listing them.
//
// # From a request to graph input
//
//   - resume[] answers the thread's pending interrupts by id — all of them;
//     status "cancelled" reaches the node as
//     {"__agui_cancelled__": true, "interrupt_id": id}. The legacy
//     forwardedProps.command.resume answers the only pending interrupt.
//     A resume that misses one, names one that is not pending, or comes for
//     a thread with none is a RUN_ERROR and changes nothing;
//   - on a thread waiting at interrupts, a request without a resume reports
//     the interrupts again;
//   - otherwise the messages the thread does not hold yet (by id) are
//     appended to the messages channel, and keys of state whose values
//     differ from the thread's replace them (other keys are ignored): that
//     is a new run's input;
//   - with nothing new, a thread with tasks left (client gone, StopRuns, a
//     breakpoint, a server stopped mid-step) continues and a finished one
//     is reported as it is.
//
// # Size
//
// No event exceeds WithMaxEventSize (by default just under the 10 MB an
// official client buffers for one frame): streamed text and tool
// arguments are cut into several events, the state is compared value by
// value and sent in parts when it is larger than one event, a state value
// that alone is larger is sent as an omission marker (OmittedKey), long
// message contents in MESSAGES_SNAPSHOT are replaced by a note, and message
// or tool call ids longer than 128 bytes are sent as a hash. Anything
// else too large stops the run at its next step boundary and ends it with
// RUN_ERROR code EVENT_TOO_LARGE, naming the interrupts it waits at; the
// thread keeps everything.
//
// # Safety
//
// One run per thread across every process sharing the store: a request
// claims the thread's lease first and gets 409 naming the holder while
// another run has it. Bodies must be application/json, and Serve (or
// Guard) refuses other sites' pages, hosts other than loopback names (DNS
// rebinding) and, with WithToken, requests without the token.
package agui
