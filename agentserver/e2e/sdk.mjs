// Drives weft serve's Agent Server API with LangGraph's own JS SDK and
// prints what it saw as one JSON line; the Go test asserts on it.
// Usage: node sdk.mjs BASE_URL [API_KEY]
import { Client } from "@langchain/langgraph-sdk";

const [apiUrl, apiKey] = process.argv.slice(2);
const client = new Client({ apiUrl, apiKey: apiKey || undefined });
const G = "writing-assistant";
const seen = {};

const assistants = await client.assistants.search({ limit: 10 });
seen.assistants = assistants.map((a) => a.graph_id);
seen.assistant = (await client.assistants.get(G)).assistant_id;
const graph = await client.assistants.getGraph(G, { xray: true });
seen.graphNodes = graph.nodes.map((n) => n.id);

const tag = `sdk-${Date.now()}`;
const thread = await client.threads.create({ metadata: { via: "sdk", tag } });
seen.threadMetadata = thread.metadata;

const events = [];
let streamInterrupt = null;
let lastValues = null;
for await (const chunk of client.runs.stream(thread.thread_id, G, {
  input: { topic: "tide pools" },
  streamMode: ["updates", "values", "debug"],
})) {
  events.push(chunk.event);
  if (chunk.event === "updates" && chunk.data.__interrupt__) streamInterrupt = chunk.data.__interrupt__[0];
  if (chunk.event === "values") lastValues = chunk.data;
}
seen.events = [...new Set(events)];
seen.firstEvent = events[0];
seen.streamInterrupt = streamInterrupt;
seen.lastValuesKeys = Object.keys(lastValues ?? {});

const state = await client.threads.getState(thread.thread_id);
seen.stateNext = state.next;
seen.stateInterrupt = state.tasks[0]?.interrupts[0] ?? null;
seen.stateCheckpoint = state.checkpoint.checkpoint_id;
seen.threadStatus = (await client.threads.get(thread.thread_id)).status;

const hist = await client.threads.getHistory(thread.thread_id, { limit: 50 });
seen.historyHead = hist[0].checkpoint.checkpoint_id;
seen.historySteps = hist.map((h) => `${h.metadata.step}:${h.metadata.source}:${h.next.join(",")}`);

const done = await client.runs.wait(thread.thread_id, G, { command: { resume: "approve" } });
seen.resumed = { published: done.published ?? null, keys: Object.keys(done) };

const found = await client.threads.search({ metadata: { tag }, limit: 5 });
seen.found = found.map((t) => ({ id: t.thread_id === thread.thread_id, status: t.status }));

// Time travel: fork the review checkpoint with an edit, then run from it.
const review = hist.find((h) => h.next.includes("review"));
const fork = await client.threads.updateState(thread.thread_id, {
  values: { feedback: "shorter, please" }, asNode: "write", checkpointId: review.parent_checkpoint.checkpoint_id,
});
seen.forkCheckpoint = fork.checkpoint.checkpoint_id;
const forkEvents = [];
for await (const c of client.runs.stream(thread.thread_id, G, { input: null, checkpointId: fork.checkpoint.checkpoint_id, streamMode: "updates" })) {
  forkEvents.push(c.event + ":" + Object.keys(c.data ?? {}).join(","));
}
seen.forkEvents = forkEvents;

// A background run and its join.
const bg = await client.runs.create(thread.thread_id, G, { command: { resume: "approve" } });
seen.bgStatus = bg.status;
const joined = await client.runs.join(thread.thread_id, bg.run_id);
seen.joined = { published: joined.published ?? null };
seen.bgFinal = (await client.runs.get(thread.thread_id, bg.run_id)).status;

// A bad request: resuming with nothing waiting.
try {
  await client.runs.wait(thread.thread_id, G, { command: { resume: "approve" } });
  seen.badResume = "accepted";
} catch (e) {
  seen.badResume = { status: e.status ?? null, message: String(e.message ?? e) };
}

// The tool agent's messages as (chunk, metadata) pairs, on a stateless run.
const msgs = [];
for await (const c of client.runs.stream(null, "tool-agent", {
  input: { messages: [{ role: "user", content: "what is 2+3?" }] }, streamMode: "messages-tuple",
})) if (c.event === "messages") msgs.push({ type: c.data[0].type, node: c.data[1].langgraph_node });
seen.messages = msgs;

// Subgraph events named mode|namespace.
const sub = new Set();
for await (const c of client.runs.stream(null, "map-reduce", { input: { subjects: ["otters", "kelp"] }, streamMode: "updates", streamSubgraphs: true })) {
  sub.add(c.event.split(":")[0]);
}
seen.subgraphEvents = [...sub];

// Rollback: a slow run rolled back by a newer run (multitaskStrategy
// "rollback"), another by a cancel with action "rollback". Each is gone,
// and so is every checkpoint it wrote.
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const rt = await client.threads.create();
await client.runs.wait(rt.thread_id, "slow", { input: { n: 0, until: 2 } });
const histBefore = (await client.threads.getHistory(rt.thread_id, { limit: 1000 })).map((h) => h.checkpoint.checkpoint_id);
const stepsOf = async (min) => {
  for (let i = 0; i < 1000; i++) {
    if (((await client.threads.getState(rt.thread_id)).values.n ?? 0) >= min) return true;
    await sleep(10);
  }
  return false;
};
const gone = (runId) => client.runs.get(rt.thread_id, runId).then(() => "found", (e) => e.status ?? String(e));
const first = await client.runs.create(rt.thread_id, "slow", { input: { n: 1000, until: 100000 } });
const firstSteps = await stepsOf(1003);
const after = await client.runs.wait(rt.thread_id, "slow", { input: { until: 4 }, multitaskStrategy: "rollback" });
// The history once the rollback run ended, before the second slow run.
const histMid = (await client.threads.getHistory(rt.thread_id, { limit: 1000 })).map((h) => h.checkpoint.checkpoint_id);
const second = await client.runs.create(rt.thread_id, "slow", { input: { n: 2000, until: 100000 } });
const secondSteps = await stepsOf(2003);
await client.runs.cancel(rt.thread_id, second.run_id, true, "rollback");
const histAfter = (await client.threads.getHistory(rt.thread_id, { limit: 1000 })).map((h) => h.checkpoint.checkpoint_id);
seen.rollback = {
  steps: firstSteps && secondSteps,
  n: after.n,
  firstGone: await gone(first.run_id),
  secondGone: await gone(second.run_id),
  keptBefore: histBefore.every((id) => histAfter.includes(id)),
  added: histAfter.length - histBefore.length,
  sameAsMid: histAfter.length === histMid.length && histAfter.every((id, i) => id === histMid[i]),
  status: (await client.threads.get(rt.thread_id)).status,
  runs: (await client.runs.list(rt.thread_id)).length,
};

console.log(JSON.stringify(seen));
