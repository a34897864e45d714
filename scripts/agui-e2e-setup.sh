#!/usr/bin/env bash
# agui-e2e-setup.sh — install the npm packages of the AG-UI end-to-end test.
#
# Usage: bash scripts/agui-e2e-setup.sh
#
# Runs `npm ci` in agui/e2e, which installs exactly what package-lock.json
# pins: @ag-ui/client 1.0.x as "agui-new" and 0.0.59 as "agui-old". After it,
# `go test ./agui/` runs TestE2EClients, which drives the Go server with
# both clients under Node; without node_modules that test skips (or fails
# when CI=true). Needs Node (>= 18) and npm on PATH, and the npm registry.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$root/agui/e2e"

for tool in node npm; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "agui-e2e-setup: $tool is not on PATH; install Node.js (>= 18)" >&2
		exit 1
	fi
done
major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$major" -lt 18 ]; then
	echo "agui-e2e-setup: Node $(node --version) is too old; the AG-UI client needs >= 18" >&2
	exit 1
fi

cd "$dir"
npm ci --no-audit --no-fund
node -e 'for (const p of ["agui-new", "agui-old"]) console.log(p, require(p + "/package.json").version)' >&2
