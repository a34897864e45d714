#!/usr/bin/env bash
# Measures weft dev's restart as a person sees it: from the moment a
# rebuild of the program finishes until its new window shows, pixel for
# pixel, what the old one showed (the same thread, checkpoint, panels and
# tabs), on the real window under Xvfb.
#
#   bash scripts/devrestart.sh                 # needs Xvfb, xdotool, cc, libx11-dev, libXtst
#   DEVRESTART_RUNS=20 bash scripts/devrestart.sh
#   DEVRESTART_SHOTS=DIR bash scripts/devrestart.sh   # also keep screenshots in DIR
#
# The program is a user's own: a module of its own that opens the studio
# on the tool agent with ui.Run and uses this repository through a replace
# directive. Each run edits its graph's description (the binary changes,
# the window's content does not), weft dev rebuilds and restarts it, and
# scripts/latency/probe waits until the region right of the thread list,
# above the status bar, is back to what it was. The build's end is the
# time weft dev logs ("build #N ok in … at HH:MM:SS.mmm"). weft dev's own
# figure (the restored checkpoint applied, before it is painted) is
# reported too. Xvfb runs on DEVRESTART_DISPLAY, or the first free display
# from :110 on. Leave the repository alone while it runs: weft dev watches
# it too (the program replaces weft with it), so an edit there rebuilds.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
case "${LANG:-C}" in C | C.* | POSIX) export LANG=en_US.UTF-8 ;; esac

runs=${DEVRESTART_RUNS:-10}
work=$(mktemp -d)
xvfb=""
dev=""
cleanup() {
  [ -n "${DEVRESTART_LOG:-}" ] && cp "$work/dev.log" "$DEVRESTART_LOG"
  [ -n "$dev" ] && kill "$dev" 2>/dev/null && wait "$dev" 2>/dev/null || true
  [ -n "$xvfb" ] && kill "$xvfb" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

. scripts/lib/xvfb.sh
need devrestart Xvfb xdotool cc

echo "devrestart: building weft and the probe…" >&2
go build -o "$work/weft" .
cc -O2 -o "$work/probe" scripts/latency/probe/probe.c -lX11 -l:libXtst.so.6

# The user's program.
mkdir -p "$work/app"
cat >"$work/app/go.mod" <<EOF
module example.com/agentapp

go 1.26.0

require github.com/weftstudio/weft v0.0.0

replace github.com/weftstudio/weft => $repo
EOF
cp go.sum "$work/app/go.sum"
cat >"$work/app/main.go" <<'EOF'
package main

import (
	"log"

	"github.com/weftstudio/weft/examples"
	"github.com/weftstudio/weft/ui"
	"github.com/weftstudio/weft/ui/studio"
)

const description = "The bank agent, edit 0."

func main() {
	d, err := examples.Agent(nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := ui.Run(studio.Graph{Graph: d.Graph, Description: description, Example: d.Example}); err != nil {
		log.Fatal(err)
	}
}
EOF

start_xvfb devrestart 1400x900 "${DEVRESTART_DISPLAY:-}"
# A fresh HOME gives the default panel sizes; Go keeps its caches.
export GOCACHE=$(go env GOCACHE) GOMODCACHE=$(go env GOMODCACHE) GOPATH=$(go env GOPATH)
export HOME="$work/home" GOFLAGS=-mod=mod WEFT_DEMO_PACE=0
mkdir -p "$HOME"

shot() {
  if [ -n "${DEVRESTART_SHOTS:-}" ]; then
    mkdir -p "$DEVRESTART_SHOTS"
    import -window root "$DEVRESTART_SHOTS/$1.png"
  fi
}
# until_log waits (up to $2 s) for a line of weft dev's log matching $1.
until_log() {
  for _ in $(seq 1 $(($2 * 20))); do
    grep -q -- "$1" "$work/dev.log" && return 0
    sleep 0.05
  done
  echo "devrestart: weft dev never logged '$1':" >&2
  cat "$work/dev.log" >&2
  exit 1
}

# Build once first: go adds the program's requirements to its go.mod, which
# would otherwise count as an edit during weft dev's first build.
(cd "$work/app" && go build -o /dev/null .)
(cd "$work/app" && exec "$work/weft" dev -- -create -db "$work/dev.db") >"$work/dev.log" 2>&1 &
dev=$!
until_log "build #1 ok" 600
sleep 4
# A thread of the agent, stopped at its approval question; then the
# checkpoint before it.
xdotool mousemove 640 400
xdotool key ctrl+n
sleep 1
xdotool key Return
sleep 1.5
xdotool key F5
sleep 1.5
xdotool key Left
xdotool mousemove 640 700 # over the status bar, outside the region compared
sleep 0.5
shot before
sleep 1.5 # the session is saved every second

: >"$work/restart"
: >"$work/inapp"
for i in $(seq 1 "$runs"); do
  # The build this edit makes is the one after the last logged.
  n=$(($(grep -c "weft dev: building #" "$work/dev.log") + 1))
  "$work/probe" back 210 70 1070 585 120000 >"$work/back" &
  probe=$!
  sleep 0.3
  sed -i "s/edit $((i - 1))\./edit $i./" "$work/app/main.go"
  wait "$probe"
  back=$(cat "$work/back")
  until_log "build #$n is back\|build #$n is up" 30
  at=$(sed -n "s/.*build #$n ok in .* at \([0-9:.]*\)$/\1/p" "$work/dev.log")
  built=$(date -d "today $at" +%s%3N)
  if [ "$back" -gt 0 ]; then
    echo $((back / 1000 - built)) >>"$work/restart"
  else
    echo -1 >>"$work/restart"
  fi
  sed -n "s/.*build #$n is back on the same checkpoint \([0-9.]*\)\(m\?s\) after.*/\1 \2/p" "$work/dev.log" |
    awk '{ print ($2 == "s") ? $1 * 1000 : $1 }' >>"$work/inapp"
  [ "$i" = 1 ] && shot after
  sleep 1.5
done

stats() {
  sort -n "$1" | awk '$1 >= 0 { v[n++] = $1 } $1 < 0 { lost++ }
    END { if (n == 0) { print "no samples"; exit }
          m = (n % 2) ? v[(n-1)/2] : (v[n/2-1] + v[n/2]) / 2
          p = v[int(0.9 * (n-1) + 0.5)]
          printf "median %.0f ms · p90 %.0f ms · range %.0f–%.0f ms · %d samples", m, p, v[0], v[n-1], n
          if (lost) printf " (%d never came back the same)", lost }'
}
load=$(cut -d' ' -f1-3 /proc/loadavg)
echo "weft dev restart, real window under Xvfb (Mesa software rendering), $(date -u +%Y-%m-%d), $(nproc) cores, load average $load"
echo "build finished → same checkpoint on screen:  $(stats "$work/restart")"
echo "build finished → restored (weft dev's figure, before painting):  $(stats "$work/inapp")"
