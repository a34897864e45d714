#!/usr/bin/env bash
# Records what LangGraph.js does with differential scenarios, for the engine's
# oracle suite (go test ./engine -run TestOracle).
#
#   bash scripts/oracle-record.sh NAME...   record engine/testdata/oracle/scenarios/NAME.json
#                                           into engine/testdata/oracle/expected/NAME.json
#   bash scripts/oracle-record.sh --all     record every scenario (and drop outputs without one)
#
# The reference runner is the oracle folder (runner.mjs, package.json,
# package-lock.json pinning LangGraph.js): $WEFT_ORACLE_DIR, by default
# ../shared/oracle next to the repository. It is copied to a scratch folder and
# set up with `npm ci` there, so the oracle folder itself is never written.
# Needs Node 20 and npm. CI does not run this: expected files are committed.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
oracle="${WEFT_ORACLE_DIR:-$repo/../shared/oracle}"
scenarios="$repo/engine/testdata/oracle/scenarios"
expected="$repo/engine/testdata/oracle/expected"

usage() {
  sed -n "4,7p" "$0" | sed "s/^# \{0,1\}//" >&2
  exit 2
}
[ $# -gt 0 ] || usage
names=()
if [ "$1" = "--all" ]; then
  [ $# -eq 1 ] || usage
else
  for n in "$@"; do
    n="${n%.json}"
    n="${n##*/}"
    [ -f "$scenarios/$n.json" ] || { echo "oracle-record: no scenario $scenarios/$n.json" >&2; exit 1; }
    names+=("$n")
  done
fi

if [ ! -f "$oracle/runner.mjs" ] || [ ! -f "$oracle/package-lock.json" ]; then
  echo "oracle-record: no oracle at $oracle (runner.mjs and package-lock.json missing)." >&2
  echo "Set WEFT_ORACLE_DIR to the folder of the LangGraph.js differential oracle." >&2
  exit 1
fi
for tool in node npm; do
  command -v "$tool" >/dev/null 2>&1 || { echo "oracle-record: $tool is needed (Node 20)" >&2; exit 1; }
done

scratch="$(mktemp -d "${TMPDIR:-/tmp}/weft-oracle.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
cp "$oracle/runner.mjs" "$oracle/package.json" "$oracle/package-lock.json" "$scratch/"
(cd "$scratch" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
mkdir -p "$expected"
(cd "$scratch" && ORACLE_SCENARIOS="$scenarios" ORACLE_EXPECTED="$expected" node runner.mjs "${names[@]}")
