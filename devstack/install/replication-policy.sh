#!/usr/bin/env bash
# Build the per-flow MirrorMaker 2 ReplicationPolicy (replication-policy/: io.mm2gov.replication.*) against the
# pinned Kafka; every dedicated MM2 of the local stack has the jar on its class path (devstack/mirrormaker.py).
# Cached under a key of its sources and the Kafka version, so a source change rebuilds; the JUnit tests run in the build.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
CACHE="${MM2GOV_CACHE:-$HOME/.cache/mm2gov}"
# shellcheck source=../../governance/versions.env
. "$here/../../governance/versions.env"
# The same key as devstack/tools.py (sources_key) computes: sha256 over `sha256sum` of pom.xml and src/ (sorted), then the version.
key="$(cd "$root/replication-policy" && { find pom.xml src -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum; echo "kafka $KAFKA_VERSION"; } | sha256sum | cut -c1-16)"
OUT="$CACHE/replication-policy-$key"
JAR=mm2gov-replication-policy.jar
if [ -f "$OUT/.complete" ]; then echo "replication policy (kafka $KAFKA_VERSION): cached at $OUT"; exit 0; fi
command -v java >/dev/null || { echo "error: Java 17+ is required to build the replication policy (apt-get install openjdk-17-jdk-headless)" >&2; exit 1; }
command -v javac >/dev/null || { echo "error: a JDK (javac) is required to build the replication policy (apt-get install openjdk-17-jdk-headless)" >&2; exit 1; }
command -v mvn >/dev/null || { echo "error: Maven is required to build the replication policy (apt-get install maven)" >&2; exit 1; }
echo "building the replication policy against kafka $KAFKA_VERSION (runs its JUnit tests)..."
# Maven 3.8 prints stray ANSI resets even with -q -B: keep its output for when it fails
out="$(mvn -q -B -Dstyle.color=never -s "$here/maven-central-settings.xml" -f "$root/replication-policy/pom.xml" clean package \
  -Dkafka.version="$KAFKA_VERSION" -Dsurefire.printSummary=false 2>&1)" || { printf '%s\n' "$out" >&2; exit 1; }
rm -rf "$OUT.tmp"; mkdir -p "$OUT.tmp"
cp "$root/replication-policy/target/$JAR" "$OUT.tmp/"
touch "$OUT.tmp/.complete"
rm -rf "$OUT"; mv "$OUT.tmp" "$OUT"
echo "replication policy (kafka $KAFKA_VERSION): built at $OUT/$JAR"
