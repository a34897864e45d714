#!/usr/bin/env bash
# npm-e2e-setup.sh — install the npm packages of the end-to-end tests that
# drive Weft with real clients and servers under Node.
#
# Usage: bash scripts/npm-e2e-setup.sh [DIR ...]
#
# Runs `npm ci` in each DIR (default: all of them), which installs exactly
# what its package-lock.json pins:
#   agui/e2e              @ag-ui/client 1.0.x as "agui-new" and 0.0.59 as "agui-old" (TestE2EClients)
#   agentserver/e2e       @langchain/langgraph-sdk 1.15.0 (TestSDK)
#   internal/lgserver/app LangGraph's own dev server, @langchain/langgraph-cli 1.5.1 (tests against a real LangGraph server)
#   tool/mcp/e2e          MCP servers @modelcontextprotocol/server-everything and server-filesystem 2026.8.31 (tool/mcp's e2e tests)
# Without node_modules those tests skip, or fail where services are required
# (CI, the README's test command). Needs Node (>= 18), npm and the npm registry.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dirs=("$@")
if [ ${#dirs[@]} -eq 0 ]; then
	dirs=(agui/e2e agentserver/e2e internal/lgserver/app tool/mcp/e2e)
fi

for tool in node npm; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "npm-e2e-setup: $tool is not on PATH; install Node.js (>= 18)" >&2
		exit 1
	fi
done
major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$major" -lt 18 ]; then
	echo "npm-e2e-setup: Node $(node --version) is too old; the clients need >= 18" >&2
	exit 1
fi

for d in "${dirs[@]}"; do
	if [ ! -f "$root/$d/package-lock.json" ]; then
		echo "npm-e2e-setup: $d has no package-lock.json" >&2
		exit 1
	fi
	echo "npm-e2e-setup: npm ci in $d" >&2
	(cd "$root/$d" && npm ci --no-audit --no-fund --loglevel=error)
	(cd "$root/$d" && npm ls --depth=0 >&2) || true
done
