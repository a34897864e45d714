#!/usr/bin/env bash
# Runs Weft's engine benchmarks and the same graphs on LangGraph.js and
# Eino back to back, so their ratios hold for one machine at one moment
# (absolute times drift by up to 25 % between runs of a shared machine),
# then prints the peer table with each goal met or missed
# (scripts/peerratios).
#
#   WEFT_PEERS_DIR=../shared/peers bash scripts/peers.sh
#
# The three run in rounds (PEERS_ROUNDS, default 3: Weft -count 2, Eino
# -count 2, LangGraph.js one run of each scenario), not one after the
# other: a shared machine's speed drifts over minutes, and interleaving
# gives each side the same stretches of it.
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
go build -o "$scratch/peerratios" ./scripts/peerratios

rounds=${PEERS_ROUNDS:-3}
for r in $(seq "$rounds"); do
  load
  echo "== round $r of $rounds: Weft engine" >&2
  (cd engine && "$scratch/engine.test" -test.run '^$' -test.bench '^BenchmarkB' -test.benchmem -test.count 2) | tee -a "$out/weft.txt"
  load
  echo "== round $r of $rounds: Eino" >&2
  (cd "$scratch/eino" && "$scratch/eino.test" -test.run '^$' -test.bench . -test.benchmem -test.count 2) | tee -a "$out/eino.txt"
  load
  echo "== round $r of $rounds: LangGraph.js" >&2
  (cd "$scratch/langgraphjs" && node bench.mjs --runs 1) | tee -a "$out/langgraphjs.txt"
done
load
cat "$out/load.txt"
echo "raw results in $out" >&2
# Exit status 3: the table is printed, and a goal was missed.
rc=0
"$scratch/peerratios" "$out" | tee "$out/table.md" || rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || exit "$rc"
