// Drives the long-term store of a Weft server with LangGraph's own JS SDK
// (client.store) beside a run of the tool agent, which remembers a
// preference there, and prints what it saw as one JSON line.
// Usage: node store.mjs BASE_URL
import { Client } from "@langchain/langgraph-sdk";

const [apiUrl] = process.argv.slice(2);
const client = new Client({ apiUrl });
const A = "tool-agent";
const NS = ["users", "demo", "preferences"];
const seen = {};
const last = (state) => state.messages[state.messages.length - 1].content;

const t1 = await client.threads.create();
seen.remembered = last(await client.runs.wait(t1.thread_id, A, { input: { messages: [{ role: "user", content: "Remember that I prefer euros" }] } }));
const found = await client.store.searchItems(NS);
seen.found = found.items.map((i) => ({ namespace: i.namespace, value: i.value, dated: !!i.createdAt && !!i.updatedAt }));

await client.store.putItem(NS, "manual", { preference: "short answers" }, { ttl: 60 });
const got = await client.store.getItem(NS, "manual");
seen.got = { key: got.key, value: got.value, namespace: got.namespace };
seen.filtered = (await client.store.searchItems(["users"], { filter: { preference: "short answers" } })).items.map((i) => i.key);
seen.namespaces = (await client.store.listNamespaces({ prefix: ["users"] })).namespaces;

const t2 = await client.threads.create();
seen.recalled = last(await client.runs.wait(t2.thread_id, A, { input: { messages: [{ role: "user", content: "What is my balance?" }] } }));

await client.store.deleteItem(NS, "manual");
seen.afterDelete = await client.store.getItem(NS, "manual");
try {
  await client.store.putItem(["users", "a"], "k", "not an object");
  seen.badValue = "accepted";
} catch (e) {
  seen.badValue = e.status ?? String(e);
}
console.log(JSON.stringify(seen));
