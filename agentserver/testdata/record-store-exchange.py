"""Records LangGraph's Agent Server answers to the store's endpoints.

Usage: python3 record-store-exchange.py BASE_URL > store-exchange.json
BASE_URL is a fresh `langgraphjs dev` server (its .langgraph_api removed
first). Each entry keeps the request, the status and, for a success, the
body; an error's body (the server's validator's text) is not kept.
"""
import json
import sys
import urllib.error
import urllib.request

base = sys.argv[1]
steps = [
    ("PUT", "/store/items", {"namespace": ["users", "ada"], "key": "drink", "value": {"text": "tea", "n": 3}}),
    ("PUT", "/store/items", {"namespace": ["users", "bob"], "key": "food", "value": {"text": "rice", "n": 1}, "ttl": 5}),
    ("GET", "/store/items?namespace=users.ada&key=drink", None),
    ("GET", "/store/items?namespace=users.ada&key=nope", None),
    ("POST", "/store/items/search", {"namespace_prefix": ["users"], "filter": {"n": 3}, "limit": 10, "offset": 0}),
    ("POST", "/store/items/search", {"namespace_prefix": ["users", "bob"]}),
    ("POST", "/store/items/search", {"namespace_prefix": ["users"], "query": "tea", "filter": {"text": "tea"}}),
    ("POST", "/store/namespaces", {"prefix": ["users"], "limit": 100, "offset": 0}),
    ("POST", "/store/namespaces", {}),
    ("DELETE", "/store/items", {"namespace": ["users", "ada"], "key": "drink"}),
    ("GET", "/store/items?namespace=users.ada&key=drink", None),
    ("DELETE", "/store/items", {"namespace": ["users", "ada"], "key": "never-there"}),
    ("GET", "/store/items?namespace=users.ada", None),
    ("PUT", "/store/items", {"namespace": ["users"], "key": "k", "value": "not an object"}),
    ("PUT", "/store/items", {"namespace": ["users", "a.b"], "key": "k", "value": {}}),
    ("POST", "/store/items/search", {}),
]
out = []
for method, path, body in steps:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req) as r:
            status, text = r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        status, text = e.code, None
    entry = {"method": method, "path": path, "body": body, "status": status}
    if text is not None and text != "":
        entry["response"] = json.loads(text)
    out.append(entry)
json.dump(out, sys.stdout, indent=1)
print()
