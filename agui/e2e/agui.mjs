// Drives a Weft AG-UI server with the real @ag-ui/client, in the version
// given ("new" = 1.0.x, "old" = 0.0.59): the client validates every event
// (schema, then ordering) and fails the run on a violation, so a scenario
// that finishes is a stream the client accepts.
//
// Usage: node agui.mjs <new|old> <base URL, e.g. http://127.0.0.1:8123>
//
// It prints one JSON object: {"client": …, "version": …, "results": {…},
// "warnings": […]} and exits 1 when a scenario fails.

import { createRequire } from "node:module";

const [which, base] = process.argv.slice(2);
if (!["new", "old"].includes(which) || !base) {
  console.error("usage: node agui.mjs <new|old> <base URL>");
  process.exit(2);
}
const pkg = which === "new" ? "agui-new" : "agui-old";
const { HttpAgent } = await import(pkg);
const version = createRequire(import.meta.url)(`${pkg}/package.json`).version;

// The client reports schema problems it tolerates (unknown fields, a patch
// that does not apply) as console warnings: any warning fails the test.
const warnings = [];
for (const level of ["warn", "error"]) {
  const orig = console[level];
  console[level] = (...args) => {
    warnings.push(`${level}: ${args.map((a) => (a instanceof Error ? a.message : typeof a === "string" ? a : JSON.stringify(a))).join(" ")}`);
    orig.apply(console, args);
  };
}

function check(cond, msg) {
  if (!cond) throw new Error(msg);
}

// run starts one run and records every event the client applied.
async function run(agent, params = {}) {
  const events = [];
  let outcome;
  let runError;
  const subscriber = {
    onEvent: ({ event }) => {
      events.push(event);
    },
    onRunFinishedEvent: (p) => {
      outcome = p.outcome ?? p.event?.outcome?.type;
    },
    onRunErrorEvent: ({ event }) => {
      runError = event.message;
    },
  };
  let failed;
  try {
    await agent.runAgent({ tools: [], context: [], ...params }, subscriber);
  } catch (e) {
    failed = e;
  }
  return { events, types: events.map((e) => e.type), outcome, runError, failed };
}

function count(types, t) {
  return types.filter((x) => x === t).length;
}

const tag = `${which}-${Date.now().toString(36)}`;
const results = {};

// The writing assistant: streamed research notes, then the review
// interrupt; the resume approves and the article is published.
async function writer() {
  const agent = new HttpAgent({ url: `${base}/agents/writing-assistant`, threadId: `writer-${tag}`, initialState: { topic: "tide pools" } });
  const runId = `run-writer-${tag}`;
  const r1 = await run(agent, { runId });
  check(!r1.failed, `first run failed: ${r1.failed}`);
  check(r1.types[0] === "RUN_STARTED" && r1.types.at(-1) === "RUN_FINISHED", `first run events ${r1.types}`);
  check(count(r1.types, "TEXT_MESSAGE_START") >= 3, `expected streamed research notes, got ${r1.types}`);
  const fin = r1.events.at(-1);
  check(fin.outcome?.type === "interrupt" && fin.outcome.interrupts.length === 1, `first run outcome ${JSON.stringify(fin.outcome)}`);
  const legacy = r1.events.filter((e) => e.type === "CUSTOM" && e.name === "on_interrupt");
  check(legacy.length === 1 && typeof legacy[0].value === "string", `legacy on_interrupt ${JSON.stringify(legacy)}`);
  const interrupt = fin.outcome.interrupts[0];
  check(interrupt.message === "Approve this draft, or send it back for revision?", `interrupt ${JSON.stringify(interrupt)}`);
  check(typeof agent.state.draft === "string" && agent.state.draft.includes("TIDE POOLS"), `state after the first run ${JSON.stringify(agent.state)}`);
  if ("pendingInterrupts" in agent) {
    check(agent.pendingInterrupts.length === 1, `pendingInterrupts ${JSON.stringify(agent.pendingInterrupts)}`);
  }
  // CopilotKit resumes with the interrupted run's runId: it must be accepted.
  const r2 = await run(agent, { runId, resume: [{ interruptId: interrupt.id, status: "resolved", payload: { action: "approve" } }] });
  check(!r2.failed, `resume failed: ${r2.failed}`);
  check(r2.events.at(-1).outcome?.type === "success", `resume outcome ${JSON.stringify(r2.events.at(-1))}`);
  check(agent.state.published === agent.state.draft, `published ${JSON.stringify(agent.state)}`);
  check(agent.messages.at(-1)?.content === "Published.", `messages ${JSON.stringify(agent.messages)}`);
  return { thread: agent.threadId, interrupt: interrupt.id, events: [r1.events.length, r2.events.length], state: agent.state };
}

// The tool agent: tool calls streamed, the transfer waits for approval; the
// resumed run reports the tool results and the answer.
async function toolAgent() {
  const agent = new HttpAgent({
    url: `${base}/agents/tool-agent`,
    threadId: `agent-${tag}`,
    initialMessages: [{ id: `u-${tag}`, role: "user", content: "Check my balance, then send 250 to Alice." }],
  });
  const r1 = await run(agent, { runId: `run-agent-1-${tag}` });
  check(!r1.failed, `first run failed: ${r1.failed}`);
  check(count(r1.types, "TOOL_CALL_START") === 2 && count(r1.types, "TOOL_CALL_END") === 2, `tool calls ${r1.types}`);
  const fin = r1.events.at(-1);
  check(fin.outcome?.type === "interrupt", `first run outcome ${JSON.stringify(fin.outcome)}`);
  const ai = agent.messages.find((m) => m.role === "assistant" && m.toolCalls?.length === 2);
  check(ai && ai.toolCalls[1].function.name === "transfer_money", `messages ${JSON.stringify(agent.messages)}`);
  const r2 = await run(agent, { runId: `run-agent-2-${tag}`, resume: [{ interruptId: fin.outcome.interrupts[0].id, status: "resolved", payload: "approve" }] });
  check(!r2.failed, `resume failed: ${r2.failed}`);
  check(count(r2.types, "TOOL_CALL_RESULT") === 2, `tool results ${r2.types}`);
  const answer = agent.messages.at(-1);
  check(answer.role === "assistant" && answer.content.includes("Sent 250 to Alice."), `answer ${JSON.stringify(answer)}`);
  check(agent.state.ledger?.length === 1, `ledger ${JSON.stringify(agent.state)}`);
  return { thread: agent.threadId, answer: answer.content, messages: agent.messages.length, state: agent.state };
}

// Map-reduce: a plain run with a subgraph and state deltas.
async function mapReduce() {
  const agent = new HttpAgent({ url: `${base}/agents/map-reduce`, threadId: `mr-${tag}`, initialState: { subjects: ["otters", "kelp", "gulls"] } });
  const r = await run(agent, { runId: `run-mr-${tag}` });
  check(!r.failed, `run failed: ${r.failed}`);
  check(r.events.at(-1).outcome?.type === "success", `outcome ${JSON.stringify(r.events.at(-1))}`);
  check(count(r.types, "STATE_DELTA") >= 1, `expected state deltas, got ${r.types}`);
  check(agent.state.report?.startsWith("otters: otters is 6 letters long"), `state ${JSON.stringify(agent.state)}`);
  return { thread: agent.threadId, state: agent.state };
}

// A graph whose model streams text and tool-call chunks (arguments in
// pieces), custom events, tool results, and an answer without message ids.
async function streaming() {
  const agent = new HttpAgent({
    url: `${base}/agents/streaming`,
    threadId: `stream-${tag}`,
    initialMessages: [{ id: `u-${tag}`, role: "user", content: "Weather in Paris?" }],
  });
  const r = await run(agent, { runId: `run-stream-${tag}` });
  check(!r.failed, `run failed: ${r.failed}`);
  check(count(r.types, "TOOL_CALL_ARGS") === 3 && count(r.types, "TOOL_CALL_RESULT") === 2, `events ${r.types}`);
  check(count(r.types, "CUSTOM") === 2, `custom events ${r.types}`);
  const ai = agent.messages.find((m) => m.id === "m1");
  check(ai?.toolCalls?.[0]?.function.arguments === '{"city":"Paris"}', `streamed tool call ${JSON.stringify(ai)}`);
  check(agent.messages.length === 5 && agent.messages.at(-1).content === "It is 18°C in Paris.", `messages ${JSON.stringify(agent.messages)}`);
  check(agent.state.city === "Paris", `state ${JSON.stringify(agent.state)}`);
  return { thread: agent.threadId, messages: agent.messages.length };
}

// The ReAct agent on a fake OpenAI server: real Chat Completions chunks
// through OpenAI's SDK, the tool call's arguments one character a chunk;
// the client reassembles them into the stored tool call.
async function react() {
  const args = '{"city": "Paris", "units": "metric"}';
  const agent = new HttpAgent({
    url: `${base}/agents/react-agent`,
    threadId: `react-${tag}`,
    initialMessages: [{ id: `u-${tag}`, role: "user", content: "Weather in Paris?" }],
  });
  const r = await run(agent, { runId: `run-react-${tag}` });
  check(!r.failed, `run failed: ${r.failed}`);
  const pieces = r.events.filter((e) => e.type === "TOOL_CALL_ARGS" && e.toolCallId === "call_weather");
  check(pieces.length === args.length, `${pieces.length} argument pieces, want ${args.length}`);
  check(pieces.map((e) => e.delta).join("") === args, `streamed arguments ${JSON.stringify(pieces)}`);
  check(count(r.types, "TOOL_CALL_START") === 1 && count(r.types, "TOOL_CALL_END") === 1, `tool call events ${r.types}`);
  const ai = agent.messages.find((m) => m.role === "assistant" && m.toolCalls?.length === 1);
  check(ai?.toolCalls[0].function.arguments === args && ai.content === "Checking the weather.", `assistant message ${JSON.stringify(ai)}`);
  const result = agent.messages.find((m) => m.role === "tool");
  check(result?.toolCallId === "call_weather" && result.content === "18°C in Paris", `tool result ${JSON.stringify(result)}`);
  check(agent.messages.at(-1).content === "It is 18°C in Paris.", `answer ${JSON.stringify(agent.messages.at(-1))}`);
  return { thread: agent.threadId, pieces: pieces.length };
}

// A resume that names an interrupt the server does not know gets RUN_ERROR
// and leaves the thread waiting at its interrupt.
async function badResume() {
  const agent = new HttpAgent({ url: `${base}/agents/writing-assistant`, threadId: `bad-${tag}`, initialState: { topic: "kelp" } });
  const r1 = await run(agent, { runId: `run-bad-1-${tag}` });
  check(r1.events.at(-1).outcome?.type === "interrupt", `first run ${r1.types}`);
  if ("pendingInterrupts" in agent) agent.pendingInterrupts = [];
  const r2 = await run(agent, { runId: `run-bad-2-${tag}`, resume: [{ interruptId: "no-such-interrupt", status: "resolved", payload: "approve" }] });
  check(r2.runError?.includes("not pending"), `expected RUN_ERROR, got ${r2.types} ${r2.runError} ${r2.failed}`);
  // The thread is unchanged: asking again reports the same interrupt.
  const r3 = await run(agent, { runId: `run-bad-3-${tag}` });
  check(!r3.failed, `third run failed: ${r3.failed}`);
  const fin = r3.events.at(-1);
  check(fin.outcome?.type === "interrupt" && fin.outcome.interrupts[0].id === r1.events.at(-1).outcome.interrupts[0].id, `third run ${JSON.stringify(fin)}`);
  return { thread: agent.threadId, error: r2.runError };
}

let failed = false;
for (const [name, fn] of Object.entries({ writer, toolAgent, mapReduce, streaming, react, badResume })) {
  const before = warnings.length;
  try {
    results[name] = { ok: true, ...(await fn()) };
  } catch (e) {
    failed = true;
    results[name] = { ok: false, error: e.message };
  }
  results[name].warnings = warnings.slice(before);
}
if (warnings.length > 0) failed = true;
console.log(JSON.stringify({ client: pkg, version, results, warnings }));
process.exit(failed ? 1 : 0);
