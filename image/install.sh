#!/usr/bin/env bash
# Install mm2gov and the tools it runs into one self-contained prefix: the image's install steps
# (image/Dockerfile runs exactly this), and what a test runs into a temporary prefix on a machine
# without a container engine (tests/integration/test_image_install.py).
#
#   install.sh --prefix DIR --wheel mm2gov-*.whl --opa OPA --java-home JRE --spark-kafka-jars DIR
#              [--find-links WHEELHOUSE] [--python PYTHON]
#
# Result:
#   DIR/venv/                 a virtualenv with mm2gov[audit] (PySpark) from the wheel
#   DIR/bin/opa               the given opa
#   DIR/share/spark-kafka/    Spark's Kafka source and what Spark itself lacks of it
#   DIR/bin/mm2gov            the entry point: runs the venv's mm2gov with MM2GOV_OPA, JAVA_HOME and
#                             MM2GOV_SPARK_KAFKA_JARS set to the above (unless already set)
# With --find-links, pip installs from that wheelhouse only (no index). Nothing else is read or written.
set -euo pipefail
usage() { sed -n '6,7p' "$0" | sed 's/^# *//' >&2; exit 2; }
die() { echo "error: $*" >&2; exit 1; }
prefix="" wheel="" opa="" java_home="" jars="" links="" python="${PYTHON:-python3}"
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix="$2"; shift 2 ;;
    --wheel) wheel="$2"; shift 2 ;;
    --opa) opa="$2"; shift 2 ;;
    --java-home) java_home="$2"; shift 2 ;;
    --spark-kafka-jars) jars="$2"; shift 2 ;;
    --find-links) links="$2"; shift 2 ;;
    --python) python="$2"; shift 2 ;;
    -h|--help) usage ;;
    *) echo "error: unknown argument $1" >&2; usage ;;
  esac
done
[ -n "$prefix" ] && [ -n "$wheel" ] && [ -n "$opa" ] && [ -n "$java_home" ] && [ -n "$jars" ] || usage
[ -f "$wheel" ] || die "--wheel $wheel: no such file"
[ -x "$opa" ] || die "--opa $opa: not an executable"
[ -x "$java_home/bin/java" ] || die "--java-home $java_home: no bin/java there"
major="$("$java_home/bin/java" -version 2>&1 | sed -n '1s/.*version "\([0-9]*\).*/\1/p')"
[ "${major:-0}" -ge 17 ] || die "--java-home $java_home: Java $major, 17+ needed (Kafka 4, Spark 4)"
# Spark ships what the connector shares with it; only these four are added (as install/spark-kafka.sh keeps)
mapfile -t kafka_jars < <(find "$jars" -maxdepth 1 \( -name 'spark-sql-kafka-*.jar' -o -name 'spark-token-provider-kafka-*.jar' \
  -o -name 'kafka-clients-*.jar' -o -name 'commons-pool2-*.jar' \) | sort)
[ "${#kafka_jars[@]}" -eq 4 ] || die "--spark-kafka-jars $jars: expected spark-sql-kafka, spark-token-provider-kafka, kafka-clients and commons-pool2 jars, found ${#kafka_jars[@]}"

mkdir -p "$prefix/bin" "$prefix/share/spark-kafka"
prefix="$(cd "$prefix" && pwd)"
echo "mm2gov: installing $(basename "$wheel") into $prefix"
"$python" -m venv "$prefix/venv"
pip=("$prefix/venv/bin/python" -m pip install -q --disable-pip-version-check --no-compile)
[ -z "$links" ] || pip+=(--no-index --find-links "$links")
"${pip[@]}" "$wheel[audit]"
"$prefix/venv/bin/python" -m compileall -q "$prefix/venv/lib" >/dev/null  # a read-only root filesystem writes no .pyc later
install -m 0755 "$opa" "$prefix/bin/opa"
install -m 0644 "${kafka_jars[@]}" "$prefix/share/spark-kafka/"
cat > "$prefix/bin/mm2gov" <<LAUNCHER
#!/bin/sh
# mm2gov with the tools of this prefix ($prefix); a variable already set wins.
export MM2GOV_OPA="\${MM2GOV_OPA:-$prefix/bin/opa}"
export JAVA_HOME="\${JAVA_HOME:-$java_home}"
export MM2GOV_SPARK_KAFKA_JARS="\${MM2GOV_SPARK_KAFKA_JARS:-$prefix/share/spark-kafka}"
exec "$prefix/venv/bin/mm2gov" "\$@"
LAUNCHER
chmod 0755 "$prefix/bin/mm2gov"
"$prefix/bin/mm2gov" doctor >/dev/null || { "$prefix/bin/mm2gov" doctor >&2; die "the installed tools are incomplete (above)"; }
echo "mm2gov: installed; run $prefix/bin/mm2gov (mm2gov doctor: every tool found)"
