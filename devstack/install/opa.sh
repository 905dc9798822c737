#!/usr/bin/env bash
# Build the real `opa` executable from the Go module proxy (no registry ships it). `go install module@version`
# builds the module's own go.mod graph, every module checked against its go.sum and Go's checksum database.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=../../governance/versions.env
. "$here/../../governance/versions.env"
CACHE="${MM2GOV_CACHE:-$HOME/.cache/mm2gov}"
OUT="$CACHE/bin/opa-$OPA_VERSION"
if [ -x "$OUT" ]; then echo "opa $OPA_VERSION: cached at $OUT"; exit 0; fi
command -v go >/dev/null || { echo "error: Go is required to build opa (install Go 1.26+)" >&2; exit 1; }
mkdir -p "$CACHE/bin" "$CACHE/build/opa"
echo "building opa $OPA_VERSION (first time: a few minutes)..."
GOBIN="$CACHE/build/opa" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" "github.com/open-policy-agent/opa@$OPA_VERSION"
mv "$CACHE/build/opa/opa" "$OUT"
echo "opa $OPA_VERSION: built at $OUT"
