#!/usr/bin/env bash
# Install every real component of the local stack into the cache (idempotent).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
for component in kafka kafka3 legacy-mm2 oracle replication-policy opa prometheus kustomize etcd kube-apiserver strimzi-crds spark-kafka chromium; do
  "$here/$component.sh"
done
