#!/usr/bin/env bash
# Build the Java oracle (oracle/: asks Kafka's own code what MM2 makes of a config) against the pinned Kafka.
# Cached under a key of its sources and the Kafka version, so a source change rebuilds; the JUnit tests run in the build.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
CACHE="${MM2GOV_CACHE:-$HOME/.cache/mm2gov}"
# shellcheck source=../../governance/versions.env
. "$here/../../governance/versions.env"
# The same key as devstack/oracle.py computes: sha256 over `sha256sum` of pom.xml and src/ (sorted), then the version.
key="$(cd "$root/oracle" && { find pom.xml src -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum; echo "kafka $KAFKA_VERSION"; } | sha256sum | cut -c1-16)"
OUT="$CACHE/oracle-$key"
if [ -f "$OUT/.complete" ]; then echo "oracle (kafka $KAFKA_VERSION): cached at $OUT"; exit 0; fi
command -v java >/dev/null || { echo "error: Java 17+ is required to build the oracle (apt-get install openjdk-17-jdk-headless)" >&2; exit 1; }
command -v javac >/dev/null || { echo "error: a JDK (javac) is required to build the oracle (apt-get install openjdk-17-jdk-headless)" >&2; exit 1; }
command -v mvn >/dev/null || { echo "error: Maven is required to build the oracle (apt-get install maven)" >&2; exit 1; }
echo "building the oracle against kafka $KAFKA_VERSION (runs its JUnit tests)..."
mvn -q -B -Dstyle.color=never -s "$here/maven-central-settings.xml" -f "$root/oracle/pom.xml" clean package \
  -Dkafka.version="$KAFKA_VERSION" -Dsurefire.printSummary=false
rm -rf "$OUT"; mkdir -p "$OUT"
cp "$root/oracle/target/mm2gov-oracle.jar" "$OUT/"
touch "$OUT/.complete"
echo "oracle (kafka $KAFKA_VERSION): built at $OUT/mm2gov-oracle.jar"
