#!/usr/bin/env bash
# Records what LangGraph.js (or Python LangGraph) does with differential
# scenarios, for the engine's oracle suite (go test ./engine -run TestOracle).
#
#   bash scripts/oracle-record.sh NAME...   record engine/testdata/oracle/scenarios/NAME.json
#                                           into engine/testdata/oracle/expected/NAME.json
#   bash scripts/oracle-record.sh --all     record every scenario (and drop outputs without one)
#   bash scripts/oracle-record.sh --python NAME...|--all   the same with Python LangGraph,
#                                           into engine/testdata/oracle/python-expected/
#
# The runners are the project's copies in engine/testdata/oracle/runner
# (runner.mjs with package.json and package-lock.json pinning LangGraph.js;
# runner.py), copied to a scratch folder (LangGraph.js set up there with
# `npm ci`). Python LangGraph runs from source: the oracle folder's python/
# ($WEFT_ORACLE_DIR, by default ../shared/oracle next to the repository),
# never written. Needs Node 20 and npm, or Python 3.11. CI does not run this:
# expected files are committed.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
oracle="${WEFT_ORACLE_DIR:-$repo/../shared/oracle}"
runner="$repo/engine/testdata/oracle/runner"
scenarios="$repo/engine/testdata/oracle/scenarios"
expected="$repo/engine/testdata/oracle/expected"
python=""
if [ "${1:-}" = "--python" ]; then
  python=1
  expected="$repo/engine/testdata/oracle/python-expected"
  shift
fi

usage() {
  sed -n "4,9p" "$0" | sed "s/^# \{0,1\}//" >&2
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

scratch="$(mktemp -d "${TMPDIR:-/tmp}/weft-oracle.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$expected"
if [ -n "$python" ]; then
  if [ ! -d "$oracle/python/site/langgraph" ] || [ ! -d "$oracle/python/shims" ]; then
    echo "oracle-record: no Python LangGraph at $oracle/python (site/langgraph and shims missing)." >&2
    echo "Set WEFT_ORACLE_DIR to the folder of the differential oracle." >&2
    exit 1
  fi
  command -v python3 >/dev/null 2>&1 || { echo "oracle-record: python3 is needed (3.11)" >&2; exit 1; }
  cp "$runner/runner.py" "$scratch/"
  (cd "$scratch" && PYTHONPATH="$oracle/python/shims:$oracle/python/site" ORACLE_SCENARIOS="$scenarios" ORACLE_EXPECTED="$expected" python3 runner.py "${names[@]}")
  exit
fi
for tool in node npm; do
  command -v "$tool" >/dev/null 2>&1 || { echo "oracle-record: $tool is needed (Node 20)" >&2; exit 1; }
done

cp "$runner/runner.mjs" "$runner/package.json" "$runner/package-lock.json" "$scratch/"
(cd "$scratch" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
(cd "$scratch" && ORACLE_SCENARIOS="$scenarios" ORACLE_EXPECTED="$expected" node runner.mjs "${names[@]}")
