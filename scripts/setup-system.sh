#!/bin/sh
# The system packages the test suite needs beyond Node and pnpm, installed if missing:
#   redis-server  the Redis stores are tested against throw-away redis-server processes;
#   chromium      @floodgate/client's browser test drives a real Chromium (playwright-core).
# Debian/Ubuntu: installed with apt-get (as root, or through sudo). macOS: with Homebrew.
# Elsewhere: install both yourself; set CHROMIUM_PATH if Chromium is not at a usual path.
# `sh scripts/setup-system.sh --check` only reports what is missing (exit 1 if anything is).
set -eu

check_only=0
[ "${1:-}" = "--check" ] && check_only=1

chromium_path() {
  for p in "${CHROMIUM_PATH:-}" /usr/bin/chromium /usr/bin/chromium-browser \
    /Applications/Chromium.app/Contents/MacOS/Chromium; do
    if [ -n "$p" ] && [ -x "$p" ]; then echo "$p"; return 0; fi
  done
  return 1
}

missing=""
command -v redis-server >/dev/null 2>&1 || missing="$missing redis-server"
chromium_path >/dev/null || missing="$missing chromium"
[ -z "$missing" ] && exit 0

if [ "$check_only" = 1 ]; then
  echo "setup-system: missing:$missing (run: sh scripts/setup-system.sh)" >&2
  exit 1
fi

case "$(uname -s)" in
  Linux)
    if ! command -v apt-get >/dev/null 2>&1; then
      echo "setup-system: install$missing with your package manager (no apt-get here)" >&2
      exit 1
    fi
    sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    # Debian's package names are the same as the binaries' (redis-server, chromium).
    $sudo apt-get update >/dev/null
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y $missing >/dev/null
    ;;
  Darwin)
    if ! command -v brew >/dev/null 2>&1; then
      echo "setup-system: install Homebrew, then run this again (or install$missing yourself)" >&2
      exit 1
    fi
    case "$missing" in *redis-server*) brew install redis ;; esac
    case "$missing" in *chromium*) brew install --cask chromium ;; esac
    ;;
  *)
    echo "setup-system: install$missing yourself; set CHROMIUM_PATH to the Chromium binary" >&2
    exit 1
    ;;
esac

missing=""
command -v redis-server >/dev/null 2>&1 || missing="$missing redis-server"
chromium_path >/dev/null || missing="$missing chromium"
if [ -n "$missing" ]; then
  echo "setup-system: still missing:$missing" >&2
  exit 1
fi
