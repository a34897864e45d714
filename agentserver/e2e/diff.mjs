// Drives one Agent Server through the approval graph with LangGraph's own
// JS SDK and prints everything it saw as one JSON line, as the server sent
// it. TestDifferential runs it against LangGraph's dev server and against
// weft serve and compares the two documents once ids and times are
// normalized.
// Usage: node diff.mjs BASE_URL [API_KEY]
import { Client } from "@langchain/langgraph-sdk";

const [apiUrl, apiKey] = process.argv.slice(2);
const client = new Client({ apiUrl, apiKey: apiKey || undefined });
const G = "approval";
const modes = ["values", "updates", "tasks", "checkpoints", "debug"];
const doc = {};

// stream collects a run's events as [event, data] pairs; the metadata event
// (the run's ids) is kept too, so its place and keys are compared.
async function stream(threadId, opts) {
  const out = [];
  for await (const c of client.runs.stream(threadId, G, { streamMode: modes, streamSubgraphs: true, ...opts })) {
    out.push([c.event, c.data]);
  }
  return out;
}

// failure records a refused call as its status and message.
async function failure(p) {
  try {
    const v = await p;
    return { accepted: v ?? null };
  } catch (e) {
    return { status: e.status ?? null, message: String(e.message ?? e) };
  }
}

// view keeps what a client reads of a state: values, next, tasks (with
// interrupts and subgraph checkpoints), checkpoint, parent, metadata.
function view(s) {
  return {
    values: s.values, next: s.next, tasks: s.tasks, checkpoint: s.checkpoint,
    parent_checkpoint: s.parent_checkpoint, metadata: s.metadata, interrupts: s.interrupts ?? null,
  };
}

async function history(threadId, opts = {}) {
  return (await client.threads.getHistory(threadId, { limit: 50, ...opts })).map(view);
}

// 1. Stream to the subgraph's interrupt; resume it by id; the review
// interrupt; resume; the final state and the history.
const a = (await client.threads.create()).thread_id;
doc.first = await stream(a, { input: { topic: "otters" } });
let st = await client.threads.getState(a);
doc.atPick = view(st);
doc.atPickSubgraphs = view(await client.threads.getState(a, undefined, { subgraphs: true }));
doc.threadAtPick = (({ status, interrupts, values }) => ({ status, interrupts, values }))(await client.threads.get(a));
const pickID = st.tasks[0].interrupts[0].id;
doc.resumePick = await stream(a, { command: { resume: { [pickID]: "fact A about otters" } } });
st = await client.threads.getState(a);
doc.atReview = view(st);
const reviewID = st.tasks[0].interrupts[0].id;
doc.resumeReview = await client.runs.wait(a, G, { command: { resume: { [reviewID]: "yes" } } });
doc.final = view(await client.threads.getState(a));
const hist = await history(a);
doc.history = hist;
doc.subHistory = await history(a, { checkpoint: { checkpoint_ns: doc.atPick.tasks[0].checkpoint?.checkpoint_ns ?? "" } });

// 2. A fork: update_state at the checkpoint before research, as plan,
// then run the branch to its interrupt.
const beforeResearch = hist.find((h) => h.next.length === 1 && h.next[0] === "research");
const fork = await client.threads.updateState(a, {
  values: { topic: "seals" }, asNode: "plan", checkpointId: beforeResearch.checkpoint.checkpoint_id,
});
doc.fork = fork;
doc.forkRun = await stream(a, { input: null, checkpointId: fork.checkpoint.checkpoint_id });
doc.afterFork = view(await client.threads.getState(a));

// 3. A replay from the first loop checkpoint (next plan) with checkpoint_id.
const beforePlan = hist.find((h) => h.next.length === 1 && h.next[0] === "plan");
doc.replay = await client.runs.wait(a, G, { input: null, checkpointId: beforePlan.checkpoint.checkpoint_id });
doc.afterReplay = view(await client.threads.getState(a));
doc.historyAfter = await history(a);

// 4. A static breakpoint before research, then a goto past it to review.
const b = (await client.threads.create()).thread_id;
doc.breakpoint = await client.runs.wait(b, G, { input: { topic: "kelp" }, interruptBefore: ["research"] });
doc.atBreakpoint = view(await client.threads.getState(b));
doc.threadAtBreakpoint = (await client.threads.get(b)).status;
doc.gotoReview = await client.runs.wait(b, G, { command: { goto: "review" } });
doc.afterGoto = view(await client.threads.getState(b));
doc.gotoHistory = await history(b);

// 5. LangChain's stream events: to the subgraph's interrupt, then on.
const e = (await client.threads.create()).thread_id;
async function events(opts) {
  const out = [];
  for await (const c of client.runs.stream(e, G, { streamMode: "events", ...opts })) out.push([c.event, c.data]);
  return out;
}
doc.events = await events({ input: { topic: "eels" } });
doc.eventsResumed = await events({ command: { resume: "fact B about eels" } });

// 6. Two runs on one thread under each multitask strategy: the first is
// slowed by configurable.delay_ms so the second finds the thread busy.
const slow = { delay_ms: 1500 };
async function twoRuns(strategy) {
  const t = (await client.threads.create()).thread_id;
  const first = await client.runs.create(t, G, { input: { topic: "first" }, config: { configurable: slow } });
  await new Promise((r) => setTimeout(r, 300));
  const second = await failure(client.runs.create(t, G, { input: { topic: "second" }, multitaskStrategy: strategy }));
  const out = { second: second.accepted ? { status: second.accepted.status } : second };
  out.firstJoined = await client.runs.join(t, first.run_id);
  if (second.accepted) out.secondJoined = await client.runs.join(t, second.accepted.run_id);
  out.firstStatus = (await client.runs.get(t, first.run_id)).status;
  if (second.accepted) out.secondStatus = (await client.runs.get(t, second.accepted.run_id)).status;
  out.runs = (await client.runs.list(t)).map((r) => r.status);
  out.values = (await client.threads.getState(t)).values;
  out.thread = (await client.threads.get(t)).status;
  return out;
}
// 7. A cancel (action interrupt) of a run in its slow plan node.
{
  const t = (await client.threads.create()).thread_id;
  const run = await client.runs.create(t, G, { input: { topic: "cancel me" }, config: { configurable: { delay_ms: 5000 } } });
  await new Promise((r) => setTimeout(r, 300));
  await client.runs.cancel(t, run.run_id, true, "interrupt");
  const st = await client.threads.getState(t);
  doc.cancel = {
    run: (await client.runs.get(t, run.run_id)).status, thread: (await client.threads.get(t)).status,
    values: st.values, next: st.next, tasks: st.tasks,
  };
}

doc.multitask = {};
for (const s of ["reject", "interrupt", "enqueue"]) doc.multitask[s] = await twoRuns(s);

console.log(JSON.stringify(doc));
