// Writes js-graphs.json: the graphs of some fixture threads as LangGraph.js
// 1.7.3 saves them, getGraph().toJSON() plain and with xray, per thread id.
// Run beside a copy of the fixtures' generator scenarios-public.mjs, with
// @langchain/langgraph 1.7.3 and @langchain/core 1.4.0 installed:
//   node make-graphs.mjs js-graphs.json chain parallel-reducer send-map-reduce subgraph-interrupt messages-tools
import { MemorySaver } from "@langchain/langgraph";
import { SCENARIOS } from "./scenarios-public.mjs";
import { writeFileSync } from "node:fs";

const want = new Set(process.argv.slice(3));
const out = {};
for (const [, scenario] of SCENARIOS) {
  const pairs = await scenario(new MemorySaver());
  for (const [thread, g] of pairs) {
    if (!want.has(thread) || out[thread]) continue;
    out[thread] = { plain: (await g.getGraphAsync()).toJSON(), xray: (await g.getGraphAsync({ xray: true })).toJSON() };
  }
}
writeFileSync(process.argv[2], JSON.stringify(out, null, 1));
