#!/usr/bin/env bash
# Fetch an older Apache Kafka broker (KAFKA3_VERSION, the last 3.x release, KRaft) from Maven Central into
# the cache: the broker-compatibility test runs it as the source of a 4.x target (issue 16).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
CACHE="${MM2GOV_CACHE:-$HOME/.cache/mm2gov}"
# shellcheck source=versions.env
. "$here/versions.env"
version="$KAFKA3_VERSION"
OUT="$CACHE/kafka-3.x-$version"
if [ -f "$OUT/.complete" ]; then echo "kafka $version (older broker): cached at $OUT"; exit 0; fi
command -v mvn >/dev/null || { echo "error: Maven is required to fetch Kafka (apt-get install maven)" >&2; exit 1; }
rm -rf "$OUT"; mkdir -p "$OUT/libs"
echo "fetching the older broker kafka $version from Maven Central..."
out="$(mvn -q -B -Dstyle.color=never -s "$here/maven-central-settings.xml" -f "$here/kafka3-pom.xml" \
  dependency:copy-dependencies -DoutputDirectory="$OUT/libs" -DincludeScope=runtime -Dkafka.version="$version" 2>&1)" \
  || { printf '%s\n' "$out" >&2; exit 1; }
touch "$OUT/.complete"
echo "kafka $version (older broker): $(ls "$OUT/libs" | wc -l) jars at $OUT/libs"
