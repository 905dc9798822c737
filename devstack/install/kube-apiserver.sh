#!/usr/bin/env bash
# Build a real kube-apiserver from the Go module proxy (no registry ships the binary), from the module graph
# committed in kube_apiserver/ (go.mod, go.sum): `go build -mod=readonly` downloads exactly those modules and
# checks each against go.sum. k8s.io/kubernetes points its k8s.io/* staging modules at ./staging, so go.mod
# rewrites those replaces to the published v0.X.Y modules of the same release.
# MM2GOV_RELOCK=1 (make lock) regenerates go.mod and go.sum for K8S_VERSION instead of building.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=../../governance/versions.env
. "$here/../../governance/versions.env"
CACHE="${MM2GOV_CACHE:-$HOME/.cache/mm2gov}"
OUT="$CACHE/bin/kube-apiserver-$K8S_VERSION"
locked="$here/kube_apiserver"
command -v go >/dev/null || { echo "error: Go is required to build kube-apiserver (install Go 1.26+)" >&2; exit 1; }

if [ "${MM2GOV_RELOCK:-}" = 1 ]; then
  work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
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
  cp "$locked/tools.go" .
  echo "resolving kube-apiserver $K8S_VERSION modules..."
  GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1 || GOFLAGS=-mod=mod go get "k8s.io/kubernetes/cmd/kube-apiserver@$K8S_VERSION"
  cp go.mod go.sum "$locked/"
  echo "kube-apiserver $K8S_VERSION: go.mod and go.sum locked ($(wc -l < go.sum) go.sum lines)"
  exit 0
fi

if [ -x "$OUT" ]; then echo "kube-apiserver $K8S_VERSION: cached at $OUT"; exit 0; fi
grep -qx "require k8s.io/kubernetes $K8S_VERSION" "$locked/go.mod" \
  || { echo "error: versions.env names K8S_VERSION=$K8S_VERSION but $locked/go.mod pins another release; run 'make lock'" >&2; exit 1; }
work="$CACHE/build/kube-apiserver-$K8S_VERSION"
rm -rf "$work"; mkdir -p "$work" "$CACHE/bin"
cp "$locked/go.mod" "$locked/go.sum" "$locked/tools.go" "$work/"
cd "$work"
minor="${K8S_VERSION#v1.}"; minor="${minor%%.*}"
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
echo "building kube-apiserver $K8S_VERSION (first time: 5-15 minutes on 2 cores)..."
GOFLAGS=-mod=readonly CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$OUT.tmp" k8s.io/kubernetes/cmd/kube-apiserver
mv "$OUT.tmp" "$OUT"
echo "kube-apiserver $K8S_VERSION: built at $OUT"
