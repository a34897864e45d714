#!/usr/bin/env bash
# The studio's real window on the scale store: how soon the
# 100,000-checkpoint thread's head shows, when its whole timeline is in,
# and the window's resident memory then (scripts/bigwindow/main.go), as
# the median and range of BIGWINDOW_RUNS starts (default 5) under Xvfb
# with Mesa's software renderer, in its 1280×720 window with a fresh HOME.
#
#   bash scripts/bigwindow.sh        # builds the store first if $WEFT_BIGSTORE is missing
set -euo pipefail
cd "$(dirname "$0")/.."
case "${LANG:-C}" in C | C.* | POSIX) export LANG=en_US.UTF-8 ;; esac

export WEFT_BIGSTORE="${WEFT_BIGSTORE:-/tmp/weft-bigstore.db}"
[ -e "$WEFT_BIGSTORE" ] || bash scripts/bigstore.sh "$WEFT_BIGSTORE"
. scripts/lib/xvfb.sh
need bigwindow Xvfb

work=$(mktemp -d)
xvfb=""
cleanup() {
  [ -n "$xvfb" ] && kill "$xvfb" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/bigwindow" ./scripts/bigwindow

start_xvfb bigwindow 1400x900

for i in $(seq "${BIGWINDOW_RUNS:-5}"); do
  HOME="$work/home$i" "$work/bigwindow" -db "$WEFT_BIGSTORE" | tee -a "$work/runs.jsonl"
done
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
for k in shown_ms whole_ms rss_mb; do
  grep -o "\"$k\":[0-9-]*" "$work/runs.jsonl" | cut -d: -f2 | sort -n |
    awk -v k="$k" '{ v[n++] = $1 } END { m = (n % 2) ? v[(n-1)/2] : (v[n/2-1] + v[n/2]) / 2; printf "%s: median %s, range %s–%s\n", k, m, v[0], v[n-1] }'
done
