#!/usr/bin/env bash
# Prints the path of a headless-capable Chromium for the web view's browser test, installing
# the Debian chromium package first when there is none and we are root.
#
#   DUROXIDE_TEST_CHROMIUM=$(hack/chromium.sh) go test ./ui
#
# $DUROXIDE_TEST_CHROMIUM, when set to an executable, is used as it is.
set -euo pipefail

log() { echo "chromium: $*" >&2; }

find_browser() {
  if [ -n "${DUROXIDE_TEST_CHROMIUM:-}" ] && [ -x "$DUROXIDE_TEST_CHROMIUM" ]; then echo "$DUROXIDE_TEST_CHROMIUM"; return; fi
  local b
  for b in chromium chromium-browser google-chrome-stable google-chrome; do
    if command -v "$b" >/dev/null; then command -v "$b"; return; fi
  done
  return 1
}

install_browser() {
  [ "$(id -u)" = 0 ] || { log "no Chromium and not root: install the chromium package or set DUROXIDE_TEST_CHROMIUM"; exit 1; }
  command -v apt-get >/dev/null || { log "no Chromium and no apt-get: set DUROXIDE_TEST_CHROMIUM"; exit 1; }
  log "installing the Debian chromium package"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >&2
}

find_browser || { install_browser; find_browser; }
