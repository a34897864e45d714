#!/usr/bin/env bash
# pg-test-server.sh — a throw-away PostgreSQL server for Weft's tests.
#
# Usage:
#   eval "$(bash scripts/pg-test-server.sh start)"   # start; exports WEFT_TEST_POSTGRES_DSN
#   go test ./checkpoint/postgres/
#   bash scripts/pg-test-server.sh stop              # stop it and delete its files
#   bash scripts/pg-test-server.sh status            # say whether one is running
#
# `start` creates a new cluster with the Debian PostgreSQL binaries
# (/usr/lib/postgresql/15/bin, or $PG_BIN), in a temporary directory, listening
# on 127.0.0.1 on a free port and on a unix socket in that directory, creates
# the database weft_test and prints, on standard output and nothing else,
# shell lines to eval:
#
#   export WEFT_TEST_POSTGRES_DSN='postgres://postgres@127.0.0.1:PORT/weft_test?sslmode=disable'
#   export WEFT_PG_TEST_DIR='/tmp/weft-pg.XXXXXX'
#
# Progress and errors go to standard error. Each `start` makes a new server,
# so several shells (or developers) on one machine each get their own; a
# server this shell started before (named by $WEFT_PG_TEST_DIR) is stopped
# first. `stop` stops the server named by $WEFT_PG_TEST_DIR, or else the one
# started last (the file /tmp/weft-pg-test.current names it); stopping when
# nothing runs is not an error.
#
# initdb and postgres refuse to run as root: as root the script runs them as
# the `postgres` OS user (runuser), with a data directory that user owns; as
# any other user it runs them as that user. If the binaries are missing and the
# script runs as root, it installs the Debian package postgresql-15 first.
#
# The server is for tests only: authentication is `trust` and it runs with
# fsync=off and synchronous_commit=off (a crash may lose data; the test
# database is thrown away anyway). Set WEFT_PG_DURABLE=1 to keep PostgreSQL's
# durable defaults, for example to benchmark commits as production would.
set -euo pipefail

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
POINTER=/tmp/weft-pg-test.current
DB=weft_test

log() { echo "pg-test-server: $*" >&2; }
die() { log "error: $*"; exit 1; }

# as_pg runs a command as the server's OS user.
as_pg() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

ensure_binaries() {
	if [ -x "$PG_BIN/initdb" ] && [ -x "$PG_BIN/pg_ctl" ]; then
		return
	fi
	if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
		log "no PostgreSQL binaries in $PG_BIN; installing the Debian package postgresql-15"
		if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql-15 >&2; then
			apt-get update >&2
			DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql-15 >&2
		fi
	fi
	[ -x "$PG_BIN/initdb" ] || die "no PostgreSQL binaries in $PG_BIN (install the Debian package postgresql-15, or set PG_BIN)"
	if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
		die "running as root but there is no 'postgres' OS user to run the server as"
	fi
}

# port_busy reports whether something listens on 127.0.0.1:$1.
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# current_dir prints the directory of the running instance, if any.
current_dir() {
	local d=${WEFT_PG_TEST_DIR:-}
	if [ -z "$d" ] && [ -f "$POINTER" ]; then
		d=$(cat "$POINTER")
	fi
	if [ -n "$d" ] && [ -d "$d" ]; then
		echo "$d"
	fi
}

stop() {
	local d
	d=$(current_dir)
	if [ -z "$d" ]; then
		log "no test server to stop"
		rm -f "$POINTER"
		return 0
	fi
	case "$d" in
	/tmp/weft-pg.*) ;;
	*) die "refusing to delete $d: not a directory this script made" ;;
	esac
	if [ -f "$d/data/postmaster.pid" ]; then
		log "stopping the server in $d"
		as_pg "$PG_BIN/pg_ctl" -D "$d/data" -m fast -w -t 30 stop >&2 || log "pg_ctl stop failed; deleting $d anyway"
	fi
	rm -rf "$d"
	if [ -f "$POINTER" ] && [ "$(cat "$POINTER")" = "$d" ]; then
		rm -f "$POINTER"
	fi
	log "stopped and deleted $d"
}

start() {
	ensure_binaries
	if [ -n "${WEFT_PG_TEST_DIR:-}" ] && [ -d "$WEFT_PG_TEST_DIR" ]; then
		stop
	fi
	local d port tries=0
	d=$(mktemp -d /tmp/weft-pg.XXXXXX)
	chmod 755 "$d"
	mkdir -p "$d/data" "$d/sock"
	if [ "$(id -u)" -eq 0 ]; then
		chown -R postgres:postgres "$d"
	fi
	chmod 700 "$d/data"
	echo "$d" >"$POINTER"

	log "initdb in $d/data"
	as_pg "$PG_BIN/initdb" -D "$d/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 --no-sync >"$d/initdb.log" 2>&1 ||
		{ cat "$d/initdb.log" >&2; die "initdb failed (log above)"; }

	local durability="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
	if [ "${WEFT_PG_DURABLE:-}" = 1 ]; then
		durability=""
	fi
	while :; do
		port=$((20000 + RANDOM % 40000))
		tries=$((tries + 1))
		if port_busy "$port"; then
			continue
		fi
		if as_pg "$PG_BIN/pg_ctl" -D "$d/data" -l "$d/server.log" -w -t 30 \
			-o "-c listen_addresses=127.0.0.1 -p $port -k $d/sock -c max_connections=200 $durability" start >&2; then
			break
		fi
		[ "$tries" -lt 5 ] || { cat "$d/server.log" >&2; die "the server did not start (log above)"; }
		log "start on port $port failed; trying another port"
	done

	as_pg "$PG_BIN/createdb" -h 127.0.0.1 -p "$port" -U postgres "$DB" >&2 || die "createdb $DB failed"
	log "PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') is running on 127.0.0.1:$port (socket dir $d/sock), database $DB"
	echo "export WEFT_TEST_POSTGRES_DSN='postgres://postgres@127.0.0.1:$port/$DB?sslmode=disable'"
	echo "export WEFT_PG_TEST_DIR='$d'"
}

status() {
	local d
	d=$(current_dir)
	if [ -n "$d" ] && as_pg "$PG_BIN/pg_ctl" -D "$d/data" status >&2; then
		return 0
	fi
	log "no test server is running"
	return 1
}

case "${1:-}" in
start) start ;;
stop) stop ;;
status) status ;;
*)
	echo "usage: bash $0 start|stop|status   (eval \"\$(bash $0 start)\" exports WEFT_TEST_POSTGRES_DSN)" >&2
	exit 2
	;;
esac
