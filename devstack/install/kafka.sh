#!/usr/bin/env bash
# Fetch Apache Kafka 4.x + MirrorMaker 2 jars from Maven Central into the cache.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
CACHE="${MM2GOV_CACHE:-$HOME/.cache/mm2gov}"
# shellcheck source=../../governance/versions.env
. "$here/../../governance/versions.env"
version="$KAFKA_VERSION"
DEPENDENCY_PLUGIN="org.apache.maven.plugins:maven-dependency-plugin:$MAVEN_DEPENDENCY_PLUGIN_VERSION"
OUT="$CACHE/kafka-$version"
agent="$OUT/agents/jmx_prometheus_javaagent-$JMX_EXPORTER_VERSION.jar"
if [ -f "$OUT/.complete" ] && [ -f "$agent" ]; then echo "kafka $version: cached at $OUT"; exit 0; fi
command -v java >/dev/null || { echo "error: Java 17+ is required for Kafka (apt-get install openjdk-17-jre-headless)" >&2; exit 1; }
command -v mvn >/dev/null || { echo "error: Maven is required to fetch Kafka (apt-get install maven)" >&2; exit 1; }
# Maven 3.8 prints stray ANSI resets even with -q -B: keep its output for when it fails
if [ ! -f "$OUT/.complete" ]; then
  rm -rf "$OUT"; mkdir -p "$OUT/libs"
  echo "fetching kafka $version and MirrorMaker 2 from Maven Central..."
  out="$(mvn -q -B -Dstyle.color=never -s "$here/maven-central-settings.xml" -f "$here/kafka-pom.xml" \
    "$DEPENDENCY_PLUGIN:copy-dependencies" -DoutputDirectory="$OUT/libs" -DincludeScope=runtime -Dkafka.version="$version" 2>&1)" \
    || { printf '%s\n' "$out" >&2; exit 1; }
  "$here/verify-jars.sh" "$here/checksums/kafka.sha256" "$OUT/libs"
  touch "$OUT/.complete"
fi
if [ ! -f "$agent" ]; then
  echo "fetching the Prometheus JMX exporter agent $JMX_EXPORTER_VERSION from Maven Central..."
  out="$(mvn -q -B -Dstyle.color=never -s "$here/maven-central-settings.xml" "$DEPENDENCY_PLUGIN:copy" \
    -Dartifact="io.prometheus.jmx:jmx_prometheus_javaagent:$JMX_EXPORTER_VERSION" -DoutputDirectory="$OUT/agents.tmp" 2>&1)" \
    || { printf '%s\n' "$out" >&2; exit 1; }
  "$here/verify-jars.sh" "$here/checksums/jmx-exporter.sha256" "$OUT/agents.tmp"
  rm -rf "$OUT/agents"; mv "$OUT/agents.tmp" "$OUT/agents"
fi
echo "kafka $version: $(ls "$OUT/libs" | wc -l) jars at $OUT/libs, agent $(basename "$agent")"
