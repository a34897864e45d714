#!/usr/bin/env bash
# Runs Weft's engine benchmarks and the same graphs on LangGraph.js and
# Eino back to back, so their ratios hold for one machine at one moment
# (absolute times drift by up to 25 % between runs of a shared machine).
#
#   WEFT_PEERS_DIR=../shared/peers bash scripts/peers.sh
#
# WEFT_PEERS_DIR holds the peer harnesses (langgraphjs/, eino/); they are
# copied to a scratch directory, since their runs write results and
# node_modules. Needs node and npm. Raw outputs go to PEERS_OUT (default a
# fresh directory, printed at the end); the machine's load is recorded
# before and after, since a ratio means little on a busy machine.
set -euo pipefail
cd "$(dirname "$0")/.."

peers=${WEFT_PEERS_DIR:?WEFT_PEERS_DIR must name the folder holding the peer harnesses (langgraphjs/ and eino/)}
[ -d "$peers/langgraphjs" ] && [ -d "$peers/eino" ] || { echo "peers.sh: $peers has no langgraphjs/ or eino/" >&2; exit 2; }
command -v node >/dev/null && command -v npm >/dev/null || { echo "peers.sh: node and npm are needed for LangGraph.js" >&2; exit 2; }

out=${PEERS_OUT:-$(mktemp -d)}
mkdir -p "$out"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cp -r "$peers/langgraphjs" "$peers/eino" "$scratch/"

load() { echo "$(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/load.txt"; }

# Dependencies first, so no download runs between the measured parts.
(cd "$scratch/langgraphjs" && npm ci --no-audit --no-fund >/dev/null)
go test -c -o "$scratch/engine.test" ./engine
(cd "$scratch/eino" && go test -c -o "$scratch/eino.test" .)

load
echo "== Weft engine" >&2
(cd engine && "$scratch/engine.test" -test.run '^$' -test.bench '^BenchmarkB' -test.benchmem -test.count 5) | tee "$out/weft.txt"
load
echo "== Eino" >&2
(cd "$scratch/eino" && "$scratch/eino.test" -test.run '^$' -test.bench . -test.benchmem -test.count 5) | tee "$out/eino.txt"
load
echo "== LangGraph.js" >&2
(cd "$scratch/langgraphjs" && node bench.mjs --runs 3) | tee "$out/langgraphjs.txt"
load
cat "$out/load.txt"
echo "raw results in $out" >&2
