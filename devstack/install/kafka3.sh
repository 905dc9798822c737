#!/usr/bin/env bash
# Fetch an older Apache Kafka (KAFKA3_VERSION, the last 3.x release) from Maven Central into the cache: its
# KRaft broker, which the broker-compatibility test runs as the source of a 4.x target, and its MirrorMaker 2,
# which the version-upgrade and migration tests run as the MM2 a flow is rolled from (issue 16).
# The folder's name carries "-mm2" since MM2's jars joined the broker's: a cache filled before that (no
# connect-mirror jar) is left alone, not reused.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
CACHE="${MM2GOV_CACHE:-$HOME/.cache/mm2gov}"
# shellcheck source=../../governance/versions.env
. "$here/../../governance/versions.env"
version="$KAFKA3_VERSION"
OUT="$CACHE/kafka-3.x-$version-mm2"
if [ -f "$OUT/.complete" ]; then echo "kafka $version (older broker, MM2): cached at $OUT"; exit 0; fi
command -v mvn >/dev/null || { echo "error: Maven is required to fetch Kafka (apt-get install maven)" >&2; exit 1; }
rm -rf "$OUT"; mkdir -p "$OUT/libs"
echo "fetching the older kafka $version (broker, MirrorMaker 2) from Maven Central..."
out="$(mvn -q -B -Dstyle.color=never -s "$here/maven-central-settings.xml" -f "$here/kafka3-pom.xml" \
  "org.apache.maven.plugins:maven-dependency-plugin:$MAVEN_DEPENDENCY_PLUGIN_VERSION:copy-dependencies" \
  -DoutputDirectory="$OUT/libs" -DincludeScope=runtime -Dkafka.version="$version" 2>&1)" \
  || { printf '%s\n' "$out" >&2; exit 1; }
"$here/verify-jars.sh" "$here/checksums/kafka3.sha256" "$OUT/libs"
touch "$OUT/.complete"
echo "kafka $version (older broker, MM2): $(ls "$OUT/libs" | wc -l) jars at $OUT/libs"
