#!/usr/bin/env bash
# Runs the pinned sqlc (sqlc.yaml): `hack/sqlc.sh generate` writes the stores' typed SQL,
# `hack/sqlc.sh diff` fails when it is stale. sqlc's PostgreSQL parser is C (cgo), so a C
# compiler is needed at generation time only: the generated Go is pure Go. The compiler is
# installed from Debian packages when missing and we are root.
set -euo pipefail
cd "$(dirname "$0")/.."

SQLC_VERSION=v1.31.1
log() { printf 'sqlc: %s\n' "$*" >&2; }

if ! command -v cc >/dev/null; then
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null ||
    { log "a C compiler (cc) is needed to build sqlc: install gcc"; exit 1; }
  log "installing gcc (sqlc's PostgreSQL parser needs cgo)"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc libc6-dev >&2
fi
CGO_ENABLED=1 exec go run "github.com/sqlc-dev/sqlc/cmd/sqlc@${SQLC_VERSION}" "${1:-generate}"
