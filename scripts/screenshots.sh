#!/usr/bin/env bash
# Takes the README's pictures of the studio's debugger: the real window
# under Xvfb, driven with xdotool, each picture a 1280×720 PNG (the window as it opens) reduced to
# 128 colours (docs/studio/*.png):
#   step-into.png   Shift+F10 at the barrier of a parallel step, a write dropped
#   watches.png     watches at the selected checkpoint and along the timeline
#   what-if.png     a parallel step with one task's write dropped, the state recomputed
#   compare.png     that what-if kept as a fork and run on, beside the main branch
#   step-into-subgraph.png  Shift+F10 inside a subgraph node, at its barrier
#
#   bash scripts/screenshots.sh         # needs Xvfb, xdotool, ImageMagick
#   SHOTS_DIR=/tmp/shots bash scripts/screenshots.sh
#
# The clicks are at the places the default layout of the 1280×720 window
# puts things (a fresh HOME gives the default panel sizes); a change to the
# layout moves them. Xvfb runs on SHOTS_DISPLAY, or the first free display
# from :110 on.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${LANG:-C}" in C | C.* | POSIX) export LANG=en_US.UTF-8 ;; esac

out=${SHOTS_DIR:-docs/studio}
work=$(mktemp -d)
xvfb=""
app=""
cleanup() {
  [ -n "$app" ] && kill "$app" 2>/dev/null || true
  [ -n "$xvfb" ] && kill "$xvfb" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

. scripts/lib/xvfb.sh
need screenshots Xvfb xdotool import convert


echo "screenshots: building weft…" >&2
go build -o "$work/weft" .
weft="$work/weft"
mkdir -p "$out"
shots=$(cd "$out" && pwd)
cd "$work" # the status line names the store as given: step.db, w.db

start_xvfb screenshots 1280x720 "${SHOTS_DISPLAY:-}"
export HOME="$work/home"
mkdir -p "$HOME"

start_app() {
  "$weft" -db "$1" >>"$work/app.log" 2>&1 &
  app=$!
  sleep 5
  xdotool mousemove 640 400
}
stop_app() {
  kill "$app" 2>/dev/null || true
  wait "$app" 2>/dev/null || true
  app=""
}
# shot NAME saves the screen as a 128-colour PNG.
shot() {
  sleep "${2:-1}"
  import -window root "$work/$1.png"
  convert "$work/$1.png" -colors 128 "PNG8:$shots/$1.png"
  echo "screenshots: $out/$1.png ($(du -k "$shots/$1.png" | cut -f1) KB)" >&2
}
click() { xdotool mousemove "$1" "$2" click 1; sleep "${3:-0.6}"; }

# 1. Step into: a writing-assistant thread stopped before its parallel
# research step (a breakpoint from the command line). Shift+F10 stops at
# the plan, before each of the three tasks, then at the barrier, where the
# second task's write is dropped (the Step tab, a third of the right
# column, shows one write at a time: a wheel turn brings up the second).
"$weft" run "writing assistant" -db step.db -create -thread tide-pools \
  -input '{"topic":"tide pools"}' -break before:research >/dev/null
start_app step.db
for _ in 1 2 3 4 5; do xdotool key shift+F10; sleep 0.8; done
xdotool mousemove 1040 505 click 5
sleep 0.6
click 827 517            # research #2's write: untick it
shot step-into
stop_app

# 2. Watches: a thread revised twice, the watches (and a conditional
# breakpoint) restored from the per-graph file the studio keeps them in.
"$weft" run "writing assistant" -db w.db -create -thread tide-pools -input '{"topic":"tide pools"}' >/dev/null
"$weft" resume tide-pools -db w.db -answer '"revise"' >/dev/null
"$weft" resume tide-pools -db w.db -answer '{"action": "revise", "feedback": "add a safety tip"}' >/dev/null
mkdir -p "$HOME/.config/weft"
cat >"$HOME/.config/weft/debug-writing-assistant-d1a2525d.json" <<'JSON'
{
  "graph": "writing assistant",
  "breakpoints": ["before:publish if revisions < 3"],
  "watches": ["revisions > 2", "len(notes)", "draft contains \"safety\""]
}
JSON
start_app w.db
click 1115 374           # the Watches tab
shot watches

# 3. What if: the research step (three tasks, from "1 plan") with the
# second task's note dropped.
click 240 556            # "1 plan" on the timeline
click 70 14              # Run menu
click 200 318 1.2        # What if…
click 175 265 1.2        # untick research #2 → notes
shot what-if

# 4. Compare: keep the what-if as a fork and run it on to the review
# (F5); View → Compare checkpoints puts its head beside the main branch's.
click 1050 636 1.5       # Keep as fork
xdotool key F5
sleep 2
click 119 14             # View menu
click 220 244 1.5        # Compare checkpoints…
xdotool mousemove 640 450 click --repeat 8 --delay 80 5   # down to the texts' word diffs
shot compare
stop_app

# 5. Step into a subgraph: a map-reduce thread stopped before its two
# summarize tasks (Sends to a subgraph). Shift+F10 stops at the parent's
# plan and first task, then inside the subgraph: its start step's phases,
# the plan of gather, and its barrier; subgraphs are shown expanded.
"$weft" run map-reduce -db sub.db -create -thread seashore \
  -input '{"subjects":["kelp","reef"]}' -break before:summarize >/dev/null
start_app sub.db
click 110 49             # the graph chooser
click 60 160 1.2         # map-reduce: its one thread opens
click 661 94 1           # Expand subgraphs
xdotool mousemove 640 700 click 1
for _ in 1 2 3 4 5 6 7; do xdotool key shift+F10; sleep 0.8; done
shot step-into-subgraph
stop_app
