#!/usr/bin/env bash
# Fetch Apache Kafka 4.x + MirrorMaker 2 jars from Maven Central into the cache.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
CACHE="${MM2GOV_CACHE:-$HOME/.cache/mm2gov}"
# shellcheck source=versions.env
. "$here/versions.env"
version="$KAFKA_VERSION"
OUT="$CACHE/kafka-$version"
agent="$OUT/agents/jmx_prometheus_javaagent-$JMX_EXPORTER_VERSION.jar"
if [ -f "$OUT/.complete" ] && [ -f "$agent" ]; then echo "kafka $version: cached at $OUT"; exit 0; fi
command -v java >/dev/null || { echo "error: Java 17+ is required for Kafka (apt-get install openjdk-17-jre-headless)" >&2; exit 1; }
command -v mvn >/dev/null || { echo "error: Maven is required to fetch Kafka (apt-get install maven)" >&2; exit 1; }
if [ ! -f "$OUT/.complete" ]; then
  rm -rf "$OUT"; mkdir -p "$OUT/libs"
  echo "fetching kafka $version and MirrorMaker 2 from Maven Central..."
  mvn -q -B -Dstyle.color=never -f "$here/kafka-pom.xml" dependency:copy-dependencies \
    -DoutputDirectory="$OUT/libs" -DincludeScope=runtime -Dkafka.version="$version"
  touch "$OUT/.complete"
fi
if [ ! -f "$agent" ]; then
  echo "fetching the Prometheus JMX exporter agent $JMX_EXPORTER_VERSION from Maven Central..."
  mvn -q -B -Dstyle.color=never dependency:copy \
    -Dartifact="io.prometheus.jmx:jmx_prometheus_javaagent:$JMX_EXPORTER_VERSION" -DoutputDirectory="$OUT/agents"
fi
echo "kafka $version: $(ls "$OUT/libs" | wc -l) jars at $OUT/libs, agent $(basename "$agent")"
