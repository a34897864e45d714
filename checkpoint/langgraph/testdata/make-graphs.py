"""Writes py-graphs.json: the graphs of some fixture threads as Python
LangGraph 1.1.3 saves them, get_graph().to_json() plain and with xray, per
thread id. Run beside a copy of the fixtures' generator scenarios_public.py,
with Python LangGraph importable (for example its pure-source site folder):
  python3 make-graphs.py py-graphs.json chain parallel-reducer send-map-reduce subgraph-interrupt messages-tools
"""
import json
import sys

from langgraph.checkpoint.memory import InMemorySaver

from scenarios_public import SCENARIOS

want = set(sys.argv[2:])
out = {}
for scenario in SCENARIOS:
    for thread, g in scenario(InMemorySaver()):
        if thread not in want or thread in out:
            continue
        out[thread] = {"plain": g.get_graph().to_json(), "xray": g.get_graph(xray=True).to_json()}
with open(sys.argv[1], "w") as f:
    json.dump(out, f, indent=1, sort_keys=True)
    f.write("\n")
