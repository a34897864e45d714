// Writes a large LangGraph.js SqliteSaver store (or PostgresSaver
// database, when the destination is a postgres:// URL) for
// BenchmarkBigStore:
// THREADS threads of a three-node chain, each node appending a note of
// NOTE bytes to a list channel (so every checkpoint row carries the notes
// so far, as SqliteSaver stores the whole state), and one thread "long"
// of LONG steps of a node that loops on itself, setting a value of NOTE/4
// bytes each step.
//   npm install @langchain/langgraph@1.7.3 @langchain/core@1.4.0 \
//     @langchain/langgraph-checkpoint-sqlite@1.0.4 better-sqlite3@12.11.1 \
//     @langchain/langgraph-checkpoint-postgres@1.0.5
//   node make-bench.mjs bench.sqlite 10000 10000 10000
//   node make-bench.mjs postgres://user@host/db 10000 10000 10000
import fs from "node:fs";
import { StateGraph, Annotation, START, END } from "@langchain/langgraph";

const [file, threads = "10000", long = "10000", note = "10000"] = process.argv.slice(2);
const nThreads = Number(threads), nLong = Number(long), noteBytes = Number(note);
const pg = /^postgres(ql)?:\/\//.test(file);
let saver;
if (pg) {
  const { PostgresSaver } = await import("@langchain/langgraph-checkpoint-postgres");
  saver = PostgresSaver.fromConnString(file);
  await saver.setup();
} else {
  const { SqliteSaver } = await import("@langchain/langgraph-checkpoint-sqlite");
  for (const f of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
  saver = SqliteSaver.fromConnString(file);
}
const text = (i, n) => (`note ${i} `.repeat(Math.ceil(n / 8))).slice(0, n);

const Chain = Annotation.Root({
  topic: Annotation(),
  notes: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
});
const chain = new StateGraph(Chain)
  .addNode("draft", (s) => ({ notes: [text(1, noteBytes)] }))
  .addNode("review", (s) => ({ notes: [text(2, noteBytes)] }))
  .addNode("publish", (s) => ({ notes: [text(3, noteBytes)] }))
  .addEdge(START, "draft").addEdge("draft", "review").addEdge("review", "publish").addEdge("publish", END)
  .compile({ checkpointer: saver });

const started = Date.now();
for (let i = 0; i < nThreads; i++) {
  await chain.invoke({ topic: `topic ${i}` }, { configurable: { thread_id: `t-${String(i).padStart(5, "0")}` } });
  if (i % 1000 === 999) console.log(`${i + 1} threads, ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

const Loop = Annotation.Root({ n: Annotation(), last: Annotation() });
const loop = new StateGraph(Loop)
  .addNode("step", (s) => ({ n: s.n + 1, last: text(s.n, noteBytes / 4) }))
  .addEdge(START, "step")
  .addConditionalEdges("step", (s) => (s.n < nLong - 2 ? "step" : END))
  .compile({ checkpointer: saver });
await loop.invoke({ n: 0 }, { configurable: { thread_id: "long" }, recursionLimit: nLong + 10 });
console.log(`long thread done, ${((Date.now() - started) / 1000).toFixed(0)} s`);

if (pg) {
  await saver.end();
  console.log(`${file}: done`);
} else {
  saver.db.pragma("wal_checkpoint(TRUNCATE)");
  saver.db.close();
  console.log(`${file}: ${fs.statSync(file).size} bytes`);
}
