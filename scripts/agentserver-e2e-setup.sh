#!/usr/bin/env bash
# agentserver-e2e-setup.sh — install LangGraph's JS SDK for the Agent Server
# API's end-to-end test.
#
# Usage: bash scripts/agentserver-e2e-setup.sh
#
# Runs `npm ci` in agentserver/e2e, which installs exactly what
# package-lock.json pins: @langchain/langgraph-sdk 1.15.0. After it,
# `go test ./agentserver/` runs TestSDK, which drives the server with the
# SDK under Node; without node_modules that test skips (or fails when
# CI=true). Needs Node (>= 18) and npm on PATH, and the npm registry.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$root/agentserver/e2e"

for tool in node npm; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "agentserver-e2e-setup: $tool is not on PATH; install Node.js (>= 18)" >&2
		exit 1
	fi
done
major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$major" -lt 18 ]; then
	echo "agentserver-e2e-setup: Node $(node --version) is too old; the SDK needs >= 18" >&2
	exit 1
fi

cd "$dir"
npm ci --no-audit --no-fund
node -e 'console.log("@langchain/langgraph-sdk", require("@langchain/langgraph-sdk/package.json").version)' >&2
