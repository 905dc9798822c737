#!/usr/bin/env bash
# Headless Chromium for the audit report rendering tests, from Debian's packages: major CHROMIUM_MIN_MAJOR or
# newer (versions.env says why a floor, not an exact version).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=../../governance/versions.env
. "$here/../../governance/versions.env"
chromium=/usr/bin/chromium
check() {
  local major
  major="$("$chromium" --version 2>/dev/null | sed -n 's/^Chromium \([0-9]*\)\..*/\1/p')"
  [ -n "$major" ] && [ "$major" -ge "$CHROMIUM_MIN_MAJOR" ] \
    || { echo "error: $chromium is Chromium ${major:-of an unknown version}; the report tests need $CHROMIUM_MIN_MAJOR or newer (apt-get install chromium)" >&2; exit 1; }
  echo "chromium $major: $chromium"
}
if [ -x "$chromium" ]; then check; exit 0; fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing chromium from Debian..."
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
  check
else
  echo "error: $chromium not found; install Debian's chromium package, $CHROMIUM_MIN_MAJOR or newer (needs root)" >&2
  exit 1
fi
