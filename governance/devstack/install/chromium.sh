#!/usr/bin/env bash
# Headless Chromium for the audit report rendering tests, from Debian's packages.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then echo "chromium: /usr/bin/chromium"; exit 0; fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing chromium from Debian..."
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
  echo "chromium: $(/usr/bin/chromium --version 2>/dev/null || echo /usr/bin/chromium)"
else
  echo "error: /usr/bin/chromium not found; install Debian's chromium package (needs root)" >&2
  exit 1
fi
