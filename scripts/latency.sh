#!/usr/bin/env bash
# Measures the studio as a person sees it: the real window under Xvfb,
# input sent through XTEST, and the screen read back until it changes
# (scripts/latency/probe/probe.c). It reports
#   start → first frame         launching weft until its window shows content
#                               (and once with an empty Graphviz cache)
#   F10 → new checkpoint shown  the key until the timeline is repainted with it
#   timeline click → inspector  a click on a checkpoint until the inspector shows it
#   resident memory             weft with a 10,000-checkpoint thread open
# as the median, 90th percentile and range of LATENCY_RUNS runs (default 20;
# 5 launches for the first frame), with the machine's load.
#
#   bash scripts/latency.sh            # needs Xvfb, xdotool, cc, libx11-dev, libXtst
#   LATENCY_RUNS=40 bash scripts/latency.sh
#   LATENCY_SHOTS=DIR bash scripts/latency.sh   # also keep screenshots in DIR
#   LATENCY_LOAD=1 bash scripts/latency.sh      # with N busy loops beside the window (a machine at load N)
#
# The screen regions are those of the default layout of the 1280×720 window
# at the top-left of a 1400×900 screen; a fresh HOME gives the default
# panel sizes. Xvfb runs on LATENCY_DISPLAY, or the first free display from
# :110 on.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${LANG:-C}" in C | C.* | POSIX) export LANG=en_US.UTF-8 ;; esac

runs=${LATENCY_RUNS:-20}
work=$(mktemp -d)
xvfb=""
app=""
busy=()
cleanup() {
  for b in "${busy[@]}"; do kill "$b" 2>/dev/null || true; done
  [ -n "$app" ] && kill "$app" 2>/dev/null || true
  [ -n "$xvfb" ] && kill "$xvfb" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

. scripts/lib/xvfb.sh
need latency Xvfb xdotool cc

echo "latency: building weft, the probe and a 10,000-checkpoint store…" >&2
go build -o "$work/weft" .
cc -O2 -o "$work/probe" scripts/latency/probe/probe.c -lX11 -l:libXtst.so.6
go run ./scripts/latency/mkstore -db "$work/big.db" -n 10000

start_xvfb latency 1400x900 "${LATENCY_DISPLAY:-}"
# A loaded machine: LATENCY_LOAD busy loops of their own, at normal
# priority, for the whole measurement.
for _ in $(seq 1 "${LATENCY_LOAD:-0}"); do
  sh -c 'while :; do :; done' &
  busy+=($!)
done
export HOME="$work/home"
mkdir -p "$HOME"

start_app() {
  "$work/weft" -create -db "$1" >>"$work/app.log" 2>&1 &
  app=$!
}
stop_app() {
  kill "$app" 2>/dev/null || true
  wait "$app" 2>/dev/null || true
  app=""
}
shot() {
  if [ -n "${LATENCY_SHOTS:-}" ]; then
    mkdir -p "$LATENCY_SHOTS"
    import -window root "$LATENCY_SHOTS/$1.png"
  fi
}
# stats prints "median p90 min max" of the numbers in file $1 (ms), -1s
# (nothing changed before the timeout) counted apart.
stats() {
  sort -n "$1" | awk '$1 >= 0 { v[n++] = $1 } $1 < 0 { lost++ }
    END { if (n == 0) { print "no samples"; exit }
          m = (n % 2) ? v[(n-1)/2] : (v[n/2-1] + v[n/2]) / 2
          p = v[int(0.9 * (n-1) + 0.5)]
          printf "median %.0f ms · p90 %.0f ms · range %.0f–%.0f ms · %d samples", m, p, v[0], v[n-1], n
          if (lost) printf " (%d timed out)", lost }'
}

# 1. Start → first frame: the window's top rows change from the empty
# screen. The probe takes the empty screen first, then weft starts. The
# first launch (i=0) finds no compiled Graphviz in the fresh HOME's cache,
# as on a first start after installing; it is reported apart.
: >"$work/first"
for i in 0 1 2 3 4 5; do
  "$work/probe" wait 0 0 1280 80 15000 >"$work/t1" &
  probe=$!
  sleep 0.2
  t0=$(date +%s%6N)
  start_app "$work/first$i.db"
  wait "$probe"
  t1=$(cat "$work/t1")
  ms=-1
  [ "$t1" -gt 0 ] && ms=$(((t1 - t0) / 1000))
  if [ "$i" = 0 ]; then cold=$ms; else echo "$ms" >>"$work/first"; fi
  sleep 1
  stop_app
done

# 2. F10 → the frame with the new checkpoint on the timeline: threads of
# the writing assistant started with Ctrl+N, Enter; four steps each (plan,
# research, structure, write).
: >"$work/f10"
start_app "$work/steps.db"
sleep 4
xdotool mousemove 640 400
n=0
while [ "$n" -lt "$runs" ]; do
  xdotool key ctrl+n
  sleep 1
  xdotool key Return
  sleep 1.5
  for _ in 1 2 3 4; do
    [ "$n" -lt "$runs" ] || break
    "$work/probe" key F10 0 565 1280 100 3000 >>"$work/f10"
    n=$((n + 1))
    sleep 0.5
  done
done
shot f10
stop_app

# 3. Timeline click → the inspector showing that checkpoint: clicks on the
# dots of the newest thread's first three checkpoints (every thread above
# has at least three), each a different one from the last.
: >"$work/click"
start_app "$work/steps.db"
sleep 4
for i in $(seq 1 "$runs"); do
  col=$((i % 3))
  "$work/probe" click $((16 + 112 * col)) 596 815 120 460 210 3000 >>"$work/click"
  sleep 0.5
done
shot click
stop_app

# 4. Resident memory with the 10,000-checkpoint thread open (it is the
# newest thread, so the window opens on it).
start_app "$work/big.db"
sleep 12
rss=$(ps -o rss= -p "$app")
shot memory
stop_app

load=$(cut -d' ' -f1-3 /proc/loadavg)
cores=$(nproc)
echo "Weft studio latency, real window under Xvfb (Mesa software rendering), $(date -u +%Y-%m-%d), $cores cores, load average $load, ${LATENCY_LOAD:-0} busy loops beside it"
echo "start → first frame:         $(stats "$work/first"); first start with an empty cache: $cold ms"
echo "F10 → new checkpoint shown:  $(stats "$work/f10")"
echo "timeline click → inspector:  $(stats "$work/click")"
echo "resident memory, 10,000-checkpoint thread open: $((rss / 1024)) MB"
