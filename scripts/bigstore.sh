#!/usr/bin/env bash
# Builds the scale store the README's 10,000-thread / 100,000-checkpoint
# figures are measured on: 10,000 short threads and one thread ("long") of
# 100,000 checkpoints, about 2 GB of SQLite, from seed 1. Takes about three
# minutes on a quiet 2-core machine.
#   bash scripts/bigstore.sh [PATH] [FLAGS]   (PATH defaults to /tmp/weft-bigstore.db;
#                                              FLAGS: go run ./scripts/bigstore -h)
# The same flags give the same threads, values and sizes (checkpoint ids and
# times are the moment's). An existing file is left alone: remove it first.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-/tmp/weft-bigstore.db}"
shift || true
go run ./scripts/bigstore -o "$out" "$@"
ls -l "$out"
