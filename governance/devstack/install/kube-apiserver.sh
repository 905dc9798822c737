#!/usr/bin/env bash
# Build a real kube-apiserver from the Go module proxy (no registry ships the
# binary). k8s.io/kubernetes points its k8s.io/* staging modules at ./staging;
# we rewrite those replaces to the published v0.X.Y modules of the same release.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=versions.env
. "$here/versions.env"
CACHE="${MM2GOV_CACHE:-$HOME/.cache/mm2gov}"
OUT="$CACHE/bin/kube-apiserver-$K8S_VERSION"
if [ -x "$OUT" ]; then echo "kube-apiserver $K8S_VERSION: cached at $OUT"; exit 0; fi
command -v go >/dev/null || { echo "error: Go is required to build kube-apiserver (install Go 1.26+)" >&2; exit 1; }
work="$CACHE/build/kube-apiserver-$K8S_VERSION"
mkdir -p "$work" "$CACHE/bin"
cd "$work"
staging_version="v0.${K8S_VERSION#v1.}"
gomod=$(GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | python3 -c 'import json,sys; print(json.load(sys.stdin)["GoMod"])')
{
  echo "module mm2gov.local/kube-apiserver"
  echo
  grep -E '^go [0-9]' "$gomod"
  echo
  echo "require k8s.io/kubernetes $K8S_VERSION"
  echo
  grep -oE 'k8s.io/[a-z0-9-]+ => \./staging/src/k8s.io/[a-z0-9-]+' "$gomod" \
    | awk -v v="$staging_version" '{print "replace " $1 " => " $1 " " v}'
} > go.mod
cat > tools.go <<'GO'
//go:build tools

package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
GO
echo "resolving kube-apiserver $K8S_VERSION modules (first time: several minutes)..."
GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1 || GOFLAGS=-mod=mod go get "k8s.io/kubernetes/cmd/kube-apiserver@$K8S_VERSION"
minor="${K8S_VERSION#v1.}"; minor="${minor%%.*}"
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
echo "building kube-apiserver $K8S_VERSION (first time: 5-15 minutes on 2 cores)..."
GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$OUT.tmp" k8s.io/kubernetes/cmd/kube-apiserver
mv "$OUT.tmp" "$OUT"
echo "kube-apiserver $K8S_VERSION: built at $OUT"
