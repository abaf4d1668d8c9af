#!/usr/bin/env bash
# A throwaway PostgreSQL for tests, on 127.0.0.1.
#
#   hack/test-postgres.sh run CMD...   start a server, run CMD with DUROXIDE_TEST_POSTGRES_URL
#                                      set, stop the server (also when CMD fails or is interrupted)
#   hack/test-postgres.sh start DIR    start a server with its data in DIR; prints its URL
#   hack/test-postgres.sh stop DIR     stop it and remove DIR
# PG_PORT fixes the port (default: a free random one); PG_DATABASE creates and names the
# database in the URL (default postgres).
#
# With DUROXIDE_TEST_POSTGRES_URL already set, `run` uses that server and starts none.
# Server binaries: $PG_BIN, else the newest /usr/lib/postgresql/*/bin; when there are none and
# we are root, the Debian package is installed (without starting or creating its own cluster).
set -euo pipefail

log() { echo "test-postgres: $*" >&2; }

find_bin() {
  if [ -n "${PG_BIN:-}" ] && [ -x "$PG_BIN/initdb" ]; then echo "$PG_BIN"; return; fi
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -n "$d" ] && [ -x "$d/initdb" ]; then echo "$d"; return; fi
  return 1
}

install_server() {
  [ "$(id -u)" = 0 ] || { log "no PostgreSQL server binaries and not root: install the postgresql package or set PG_BIN"; exit 1; }
  command -v apt-get >/dev/null || { log "no PostgreSQL server binaries and no apt-get: set PG_BIN"; exit 1; }
  log "installing the Debian postgresql package"
  mkdir -p /etc/postgresql-common
  grep -qs '^create_main_cluster' /etc/postgresql-common/createcluster.conf ||
    echo 'create_main_cluster = false' >> /etc/postgresql-common/createcluster.conf
  local policy=/usr/sbin/policy-rc.d restore=""
  if [ ! -e "$policy" ]; then printf '#!/bin/sh\nexit 101\n' > "$policy"; chmod +x "$policy"; restore=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
  [ -n "$restore" ] && rm -f "$policy"
  return 0
}

# as_owner runs a server command as the postgres user when we are root
# (initdb and postgres refuse to run as root).
as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start() {
  local dir=$1 bin port
  bin=$(find_bin) || { install_server; bin=$(find_bin); }
  mkdir -p "$dir"
  if [ "$(id -u)" = 0 ]; then chown postgres: "$dir"; fi
  as_owner "$bin/initdb" -D "$dir/data" -U duroxide --auth=trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 ||
    { cat "$dir/initdb.log" >&2; exit 1; }
  local db=${PG_DATABASE:-postgres} tries=10
  [ -n "${PG_PORT:-}" ] && tries=1
  for _ in $(seq 1 $tries); do
    port=${PG_PORT:-$(( 20000 + RANDOM % 20000 ))}
    if as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start \
        -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$dir -c max_connections=400 -c shared_buffers=256MB" >/dev/null; then
      echo "$bin" > "$dir/bin"
      echo "$port" > "$dir/port"
      if [ "$db" != postgres ]; then
        as_owner "$bin/psql" -q -h "$dir" -p "$port" -U duroxide -d postgres -c "CREATE DATABASE \"$db\"" >/dev/null
      fi
      echo "postgres://duroxide@127.0.0.1:$port/$db?sslmode=disable"
      return 0
    fi
    log "port $port unavailable${PG_PORT:+ (PG_PORT is set: is another server on it?)}"
  done
  cat "$dir/server.log" >&2
  exit 1
}

# crash_restart stops the server as a crash would (pg_ctl stop -m immediate:
# no checkpoint, recovery on start) and starts it again on the same port.
crash_restart() {
  local dir=$1 bin
  bin=$(cat "$dir/bin")
  as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start \
    -o "-c listen_addresses=127.0.0.1 -p $(cat "$dir/port") -c unix_socket_directories=$dir -c max_connections=400 -c shared_buffers=256MB" >/dev/null
}

stop() {
  local dir=$1
  [ -f "$dir/bin" ] && as_owner "$(cat "$dir/bin")/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}

run() {
  if [ -n "${DUROXIDE_TEST_POSTGRES_URL:-}" ]; then exec "$@"; fi
  # Global, not local: the EXIT trap runs after this function has returned.
  PG_RUN_DIR=$(mktemp -d /tmp/dxpg.XXXXXX)
  trap 'stop "$PG_RUN_DIR"' EXIT
  trap 'exit 130' INT TERM
  DUROXIDE_TEST_POSTGRES_URL=$(start "$PG_RUN_DIR")
  # The server is ours: tools may crash-restart it (cmd/chaos).
  DUROXIDE_TEST_POSTGRES_DIR=$PG_RUN_DIR
  export DUROXIDE_TEST_POSTGRES_URL DUROXIDE_TEST_POSTGRES_DIR
  log "PostgreSQL $(basename "$(dirname "$(cat "$PG_RUN_DIR/bin")")") running on ${DUROXIDE_TEST_POSTGRES_URL#*@}"
  "$@"
}

case "${1:-}" in
  run) shift; run "$@" ;;
  start) start "$2" ;;
  stop) stop "$2" ;;
  crash-restart) crash_restart "$2" ;;
  *) echo "usage: $0 run CMD... | start DIR | stop DIR | crash-restart DIR" >&2; exit 2 ;;
esac
