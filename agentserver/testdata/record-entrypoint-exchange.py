"""Records LangGraph's Agent Server answers for a functional graph (an entrypoint).

Usage: python3 record-entrypoint-exchange.py BASE_URL > entrypoint-exchange.json

BASE_URL is a fresh `langgraphjs dev` server (LangGraph.js CLI 1.5.1, the
versions internal/lgserver/app pins) serving entrypoint-app/src/fn.ts as
graph "fn": copy internal/lgserver/app's package.json and package-lock.json
into a scratch folder with entrypoint-app's langgraph.json and src/, run
`npm ci`, then `npx langgraphjs dev --port PORT --no-browser`.

Each entry keeps the request ("{thread}" stands for the thread the first
POST /threads made, "{thread2}" for the second), the status and what the
test compares of the answer (see project below): a run's outcome, a
state's values, next and interrupt values, a thread's values and status,
and a stream's events without their ids.
"""
import json
import sys
import urllib.error
import urllib.request

base = sys.argv[1]
steps = [
    ("create", "POST", "/threads", {}),
    ("wait", "POST", "/threads/{thread}/runs/wait", {"assistant_id": "fn", "input": 21}),
    ("state", "GET", "/threads/{thread}/state", None),
    ("thread", "GET", "/threads/{thread}", None),
    ("stream", "POST", "/threads/{thread}/runs/stream", {"assistant_id": "fn", "input": "kelp", "stream_mode": ["values", "updates"]}),
    ("wait", "POST", "/threads/{thread}/runs/wait", {"assistant_id": "fn", "input": [1, 2, 3]}),
    ("wait", "POST", "/threads/{thread}/runs/wait", {"assistant_id": "fn", "input": {"a": 1}}),
    ("wait", "POST", "/threads/{thread}/runs/wait", {"assistant_id": "fn", "input": None}),
    ("wait", "POST", "/threads/{thread}/runs/wait", {"assistant_id": "fn", "input": "ask"}),
    ("state", "GET", "/threads/{thread}/state", None),
    ("thread", "GET", "/threads/{thread}", None),
    ("wait", "POST", "/threads/{thread}/runs/wait", {"assistant_id": "fn", "command": {"resume": "yes"}}),
    ("stream", "POST", "/threads/{thread}/runs/stream", {"assistant_id": "fn", "input": 3, "stream_mode": ["values", "updates"]}),
    ("update", "POST", "/threads/{thread}/state", {"values": {"x": 1}}),
    ("state", "GET", "/threads/{thread}/state", None),
    ("wait", "POST", "/threads/{thread}/runs/wait", {"assistant_id": "fn", "input": "ask"}),
    ("wait", "POST", "/threads/{thread}/runs/wait", {"assistant_id": "fn", "command": {"resume": "ok"}}),
    ("wait", "POST", "/runs/wait", {"assistant_id": "fn", "input": 5}),
    ("create2", "POST", "/threads", {}),
    ("wait", "POST", "/threads/{thread2}/runs/wait", {"assistant_id": "fn", "input": False}),
    ("wait", "POST", "/threads/{thread2}/runs/wait", {"assistant_id": "fn", "input": 0}),
    ("wait", "POST", "/threads/{thread2}/runs/wait", {"assistant_id": "fn", "input": ""}),
]


def strip_ids(v):
    """Interrupts keep their values: their ids are the server's."""
    if isinstance(v, dict):
        return {k: strip_ids(x) for k, x in v.items() if not (k == "id" and "value" in v)}
    if isinstance(v, list):
        return [strip_ids(x) for x in v]
    return v


def project(kind, resp):
    if kind == "state":
        return {"values": resp["values"], "next": resp["next"],
                "interrupts": [i["value"] for t in resp["tasks"] for i in t["interrupts"]]}
    if kind == "thread":
        return {"values": resp["values"], "status": resp["status"]}
    if kind in ("create", "create2", "update"):
        return None
    return strip_ids(resp)


def sse(text):
    events = []
    for block in text.split("\n\n"):
        name, data = None, None
        for line in block.split("\n"):
            if line.startswith("event: "):
                name = line[len("event: "):]
            elif line.startswith("data: "):
                data = json.loads(line[len("data: "):])
        if name and name != "metadata":
            events.append([name, strip_ids(data)])
    return events


ids = {}
out = []
for kind, method, path, body in steps:
    url = path
    for k, v in ids.items():
        url = url.replace("{" + k + "}", v)
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + url, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req) as r:
            status, text = r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        status, text = e.code, None
    entry = {"kind": kind, "method": method, "path": path, "body": body, "status": status}
    if text:
        if kind == "stream":
            entry["response"] = sse(text)
        else:
            resp = json.loads(text)
            if kind == "create":
                ids["thread"] = resp["thread_id"]
            if kind == "create2":
                ids["thread2"] = resp["thread_id"]
            p = project(kind, resp)
            if p is not None:
                entry["response"] = p
    out.append(entry)
json.dump(out, sys.stdout, indent=1)
print()
