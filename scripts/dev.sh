#!/usr/bin/env bash
# Weft's one entry point for people and CI.
#   bash scripts/dev.sh studio [ARGS]  set up, build and open the studio (./weft.db unless -db names another)
#   bash scripts/dev.sh test           set up and run the whole test suite: gofmt, go vet, staticcheck, go test (race on engine and checkpoint)
#   bash scripts/dev.sh smoke          start the real window under Xvfb, check it stays up and draws something
#   bash scripts/dev.sh bench          run the benchmarks named in the README (not part of test: they take minutes)
#   bash scripts/dev.sh bench-big      build the 2 GB scale store if missing ($WEFT_BIGSTORE, default /tmp/weft-bigstore.db) and run the scale benchmarks on it
#   bash scripts/dev.sh setup          only install what is missing (Debian packages, Go modules)
set -euo pipefail
cd "$(dirname "$0")/.."
# Fyne cannot parse the C locale and says so on every start.
case "${LANG:-C}" in C | C.* | POSIX) export LANG=en_US.UTF-8 ;; esac

# Debian packages: cgo + OpenGL headers for Fyne, Xvfb and ImageMagick for the
# real-window check, PostgreSQL for the PostgreSQL saver's tests, Node for the
# AG-UI client's end-to-end test.
PACKAGES=(gcc libc6-dev pkg-config libgl1-mesa-dev libxcursor-dev libxrandr-dev libxinerama-dev libxi-dev libxxf86vm-dev
  xvfb xauth imagemagick xdotool postgresql)

setup() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  command -v node >/dev/null 2>&1 || missing+=(nodejs npm)
  if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
  command -v go >/dev/null 2>&1 || { echo "setup: Go 1.26 is needed (https://go.dev/dl)"; exit 1; }
  go mod download
  (cd model/eino && go mod download)
}

check_format() {
  local bad
  bad=$(git ls-files -co --exclude-standard '*.go' | xargs -r gofmt -l)
  if [ -n "$bad" ]; then
    echo "gofmt would change:"; echo "$bad"; return 1
  fi
}

run_tests() {
  check_format
  go vet ./...
  # Dead code and the mistakes vet misses; a deliberate exception carries a
  # //lint:ignore with its reason.
  go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
  # Every test runs here: one whose service is missing fails instead of
  # skipping (internal/testenv).
  export WEFT_TEST_SERVICES=required
  local pg_started=0 pg_env
  if [ -z "${WEFT_TEST_POSTGRES_DSN:-}" ]; then
    # eval "$(...)" would hide a failed start: check it, then eval.
    if ! pg_env=$(bash scripts/pg-test-server.sh start) || [[ "$pg_env" != *WEFT_TEST_POSTGRES_DSN=* ]]; then
      echo "test: the throw-away PostgreSQL server did not start (see above); the PostgreSQL tests need it" >&2
      return 1
    fi
    eval "$pg_env"
    pg_started=1
    trap 'bash scripts/pg-test-server.sh stop >/dev/null 2>&1 || true' EXIT
  fi
  bash scripts/npm-e2e-setup.sh
  go test -race -count=1 -timeout 30m ./engine/... ./checkpoint/... ./lgview/...
  go test -count=1 -timeout 30m ./...
  # Fuzz briefly (the seeds under testdata/fuzz run in every go test):
  # mutated store files and bundles must give data or an error, never a
  # panic or unbounded memory. -fuzzminimizetime keeps new inputs from
  # eating the budget. The budgets are counts of inputs (about 20, 20 and
  # 10 s here), not durations: Go 1.26's coordinator can fail a duration
  # budget at its deadline with a bare "context deadline exceeded" and no
  # failing input (golang/go#75804, fixed in Go 1.27).
  go test -run '^$' -fuzz '^FuzzOpenStore$' -fuzztime 8000x -fuzzminimizetime 10x ./checkpoint/sqlite
  go test -run '^$' -fuzz '^FuzzImportBundle$' -fuzztime 120000x -fuzzminimizetime 10x ./checkpoint/bundle
  go test -run '^$' -fuzz '^FuzzUnpack$' -fuzztime 200000x -fuzzminimizetime 10x ./checkpoint/internal/record
  # The Eino adapter is a module of its own (Eino stays out of Weft's build).
  (cd model/eino && go vet ./... && go test -count=1 ./...)
  if [ "$pg_started" = 1 ]; then bash scripts/pg-test-server.sh stop >/dev/null 2>&1 || true; trap - EXIT; fi
}

# The demos' files agent runs on the filesystem MCP server from npm, in
# .weft-demo/files (made with two sample files the first time).
studio_files() {
  local fs=tool/mcp/e2e/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js
  if [ ! -f "$fs" ] && ! bash scripts/npm-e2e-setup.sh tool/mcp/e2e; then
    echo "studio: the files agent demo is left out: its MCP server (npm) could not be installed" >&2
    return 0
  fi
  export WEFT_DEMO_FILES="${WEFT_DEMO_FILES:-$PWD/.weft-demo/files}"
  export WEFT_DEMO_FILES_SERVER="${WEFT_DEMO_FILES_SERVER:-node $PWD/$fs}"
}

smoke() {
  go build -o weft .
  local dir shot
  dir=$(mktemp -d)
  shot="$dir/shot.png"
  local n=97
  while [ -e "/tmp/.X$n-lock" ]; do n=$((n + 1)); done # a display nobody uses
  Xvfb ":$n" -screen 0 1366x768x24 -nolisten tcp >/dev/null 2>&1 &
  local xpid=$!
  sleep 1
  DISPLAY=":$n" ./weft -db "$dir/smoke.db" -create >"$dir/app.log" 2>&1 &
  local apid=$!
  sleep 8
  if ! kill -0 "$apid" 2>/dev/null; then
    echo "smoke: the studio exited early:"; cat "$dir/app.log"; kill "$xpid"; return 1
  fi
  DISPLAY=":$n" import -window root "$shot"
  kill "$apid" "$xpid" 2>/dev/null || true
  wait "$apid" 2>/dev/null || true
  # A blank screen has a single colour: demand a real picture.
  local colours
  colours=$(convert "$shot" -format '%k' info:)
  echo "smoke: the studio stayed up; the screenshot has $colours colours"
  if [ "$colours" -lt 50 ]; then
    echo "smoke: the screenshot looks blank"; return 1
  fi
}

case "${1:-}" in
  setup) setup ;;
  studio) shift; setup; studio_files; go build -o weft . && exec ./weft "$@" ;;
  test) setup; run_tests ;;
  smoke) setup; smoke ;;
  bench) setup
    # The studio's scale-store benchmarks are bench-big's: skip them here.
    go test -run '^$' -bench . -skip 'Studio(OpenStore10kThreads|Timeline100k)$' -benchmem -count 5 ./engine/... ./checkpoint/... ./render/... ./ui/... ./agui/... ./agent/... ./inspect/... ./replay/...
    # The scale benchmarks' in-process variants; the 2 GB ones are bench-big.
    go test -run '^$' -bench 'Small$' -benchmem -count 5 ./scripts/bigstore ;;
  bench-big)
    setup
    export WEFT_BIGSTORE="${WEFT_BIGSTORE:-/tmp/weft-bigstore.db}"
    [ -e "$WEFT_BIGSTORE" ] || bash scripts/bigstore.sh "$WEFT_BIGSTORE"
    go test -run '^$' -bench '10kThreads|100k|StorageSummary$' -benchmem -count 5 ./scripts/bigstore
    go test -run '^$' -bench 'Studio(OpenStore10kThreads|Timeline100k)$' -benchmem -count 5 ./ui/studio ;;
  *) sed -n '2,8p' "$0"; exit 2 ;;
esac
