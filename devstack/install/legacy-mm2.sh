#!/usr/bin/env bash
# Fetch the MirrorMaker 2 of the two Kafka releases either side of the oldest one admission accepts
# (MIN_MM2_VERSION in governance/kafka/version.py): KAFKA_MM2_BELOW_MIN_VERSION and KAFKA_MM2_AT_MIN_VERSION, MM2
# only (legacy-mm2-pom.xml), from Maven Central into one cache folder per release, each checked against its own
# list (checksums/legacy-mm2-<version>.sha256). tests/integration/test_mm2_version_boundary.py runs both on a
# generated flow file and observes which internal topics each names.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
CACHE="${MM2GOV_CACHE:-$HOME/.cache/mm2gov}"
# shellcheck source=../../governance/versions.env
. "$here/../../governance/versions.env"
for version in "$KAFKA_MM2_BELOW_MIN_VERSION" "$KAFKA_MM2_AT_MIN_VERSION"; do
  OUT="$CACHE/kafka-mm2-$version"
  if [ -f "$OUT/.complete" ]; then echo "kafka $version (MM2 only, version boundary): cached at $OUT"; continue; fi
  command -v mvn >/dev/null || { echo "error: Maven is required to fetch Kafka (apt-get install maven)" >&2; exit 1; }
  rm -rf "$OUT"; mkdir -p "$OUT/libs"
  echo "fetching the MirrorMaker 2 of kafka $version (version boundary) from Maven Central..."
  out="$(mvn -q -B -Dstyle.color=never -s "$here/maven-central-settings.xml" -f "$here/legacy-mm2-pom.xml" \
    "org.apache.maven.plugins:maven-dependency-plugin:$MAVEN_DEPENDENCY_PLUGIN_VERSION:copy-dependencies" \
    -DoutputDirectory="$OUT/libs" -DincludeScope=runtime -Dkafka.version="$version" 2>&1)" \
    || { printf '%s\n' "$out" >&2; exit 1; }
  "$here/verify-jars.sh" "$here/checksums/legacy-mm2-$version.sha256" "$OUT/libs"
  touch "$OUT/.complete"
  echo "kafka $version (MM2 only, version boundary): $(ls "$OUT/libs" | wc -l) jars at $OUT/libs"
done
