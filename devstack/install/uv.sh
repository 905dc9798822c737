#!/usr/bin/env bash
# uv, the installer of the development environment (`make setup` runs `uv sync --locked` with it), into
# its own venv in the cache, from PyPI with the hashes of lock-uv.txt (pip --require-hashes).
# Why uv: one tool resolves a universal lock with hashes (uv.lock), refuses a lock that no longer
# satisfies pyproject.toml (`--locked`), and installs exactly the lock (extras removed) in seconds.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=../../governance/versions.env
. "$here/../../governance/versions.env"
CACHE="${MM2GOV_CACHE:-$HOME/.cache/mm2gov}"
venv="$CACHE/uv-$UV_VERSION"
if [ -x "$venv/bin/uv" ]; then echo "uv $UV_VERSION: cached at $venv/bin/uv"; exit 0; fi
grep -qx "uv==$UV_VERSION \\\\" "$here/lock-uv.txt" \
  || { echo "error: lock-uv.txt does not pin uv==$UV_VERSION (versions.env); run 'make lock'" >&2; exit 1; }
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check --no-deps --require-hashes -r "$here/lock-uv.txt"
echo "uv $UV_VERSION: installed at $venv/bin/uv"
