#!/usr/bin/env bash
# Fetch Spark's Kafka source for the installed pyspark from Maven Central into the cache.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
CACHE="${MM2GOV_CACHE:-$HOME/.cache/mm2gov}"
# shellcheck source=../../governance/versions.env
. "$here/../../governance/versions.env"
python="$root/.venv/bin/python"; [ -x "$python" ] || python=python3
version="${PYSPARK_VERSION:-$("$python" -c 'import pyspark; print(pyspark.__version__)' 2>/dev/null || true)}"
[ -n "$version" ] || { echo "error: pyspark is not installed (run make setup)" >&2; exit 1; }
OUT="$CACHE/spark-kafka-$version"
if [ -f "$OUT/.complete" ]; then echo "spark-sql-kafka $version: cached at $OUT"; exit 0; fi
command -v mvn >/dev/null || { echo "error: Maven is required to fetch spark-sql-kafka (apt-get install maven)" >&2; exit 1; }
rm -rf "$OUT"; mkdir -p "$OUT"
echo "fetching spark-sql-kafka-0-10 $version from Maven Central..."
# Maven 3.8 prints stray ANSI resets even with -q -B: keep its output for when it fails
out="$(mvn -q -B -Dstyle.color=never -s "$here/maven-central-settings.xml" -f "$here/spark-kafka-pom.xml" \
  "org.apache.maven.plugins:maven-dependency-plugin:$MAVEN_DEPENDENCY_PLUGIN_VERSION:copy-dependencies" \
  -DoutputDirectory="$OUT" -DincludeScope=runtime -DexcludeGroupIds=org.apache.spark.unused -Dspark.version="$version" 2>&1)" \
  || { printf '%s\n' "$out" >&2; exit 1; }
"$here/verify-jars.sh" "$here/checksums/spark-kafka.sha256" "$OUT"
# Spark itself ships what the connector shares with it; keep only what it lacks
find "$OUT" -name 'spark-sql-kafka-*' -o -name 'spark-token-provider-kafka-*' -o -name 'kafka-clients-*' \
  -o -name 'commons-pool2-*' | sort > "$OUT/.jars"
touch "$OUT/.complete"
echo "spark-sql-kafka $version: $(wc -l < "$OUT/.jars") jars at $OUT"
