#!/usr/bin/env bash
# Build the real `kustomize` executable from the Go module proxy (test tooling: the manifests
# under k8s/ are built with it and dry-run against the local kube-apiserver). `go install module@version` builds
# the module's own go.mod graph, every module checked against its go.sum and Go's checksum database.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=../../governance/versions.env
. "$here/../../governance/versions.env"
CACHE="${MM2GOV_CACHE:-$HOME/.cache/mm2gov}"
OUT="$CACHE/bin/kustomize-$KUSTOMIZE_VERSION"
if [ -x "$OUT" ]; then echo "kustomize $KUSTOMIZE_VERSION: cached at $OUT"; exit 0; fi
command -v go >/dev/null || { echo "error: Go is required to build kustomize (install Go 1.26+: kustomize $KUSTOMIZE_VERSION needs it)" >&2; exit 1; }
mkdir -p "$CACHE/bin" "$CACHE/build/kustomize"
echo "building kustomize $KUSTOMIZE_VERSION (first time: a minute or two)..."
GOBIN="$CACHE/build/kustomize" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" \
  "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION"
mv "$CACHE/build/kustomize/kustomize" "$OUT"
echo "kustomize $KUSTOMIZE_VERSION: built at $OUT"
