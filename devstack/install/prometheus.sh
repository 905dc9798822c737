#!/usr/bin/env bash
# Build the real `prometheus`, `promtool`, `alertmanager` and `amtool` from the Go module proxy, like opa.sh: the
# local stack scrapes MM2's JMX exporters, evaluates the generated alert rules and routes their alerts with them;
# promtool checks and unit-tests the generated rules, amtool checks the generated Alertmanager configuration.
# Each is built from its module's own go.mod and go.sum (modules checked against them and Go's checksum database).
# Prometheus 3.x's Go module is tagged v0.3XX.Y for release 3.XX.Y. The web UI assets are left out (no
# `builtinassets` tag): the stack uses the HTTP API only.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=../../governance/versions.env
. "$here/../../governance/versions.env"
CACHE="${MM2GOV_CACHE:-$HOME/.cache/mm2gov}"
mkdir -p "$CACHE/bin" "$CACHE/build"

build() {  # build NAME PACKAGE MODULE-VERSION RELEASE
  local name="$1" package="$2" version="$3" release="$4"
  local out="$CACHE/bin/$name-$version" gobin="$CACHE/build/$name-$version"
  if [ -x "$out" ]; then echo "$name $version: cached at $out"; return; fi
  command -v go >/dev/null || { echo "error: Go is required to build $name (install Go 1.26+)" >&2; exit 1; }
  mkdir -p "$gobin"
  echo "building $name $release (first time: several minutes)..."
  GOBIN="$gobin" CGO_ENABLED=0 go install -trimpath \
    -ldflags "-s -w -X github.com/prometheus/common/version.Version=$release" "$package@$version"
  mv "$gobin/$name" "$out"
  echo "$name $release: built at $out"
}

module="${PROMETHEUS_VERSION#v0.}"                    # 316.0
minor="${module%%.*}"                                 # 316
release="${minor:0:1}.$((10#${minor:1})).${module#*.}"  # 3.16.0
build promtool github.com/prometheus/prometheus/cmd/promtool "$PROMETHEUS_VERSION" "$release"
build prometheus github.com/prometheus/prometheus/cmd/prometheus "$PROMETHEUS_VERSION" "$release"

# Alertmanager embeds its web UI (ui/app/dist), which the module on the proxy does not carry: build inside a
# copy of the module with an empty placeholder page there (the stack uses the HTTP API only).
build_alertmanager() {  # build_alertmanager NAME
  local name="$1" version="$ALERTMANAGER_VERSION"
  local out="$CACHE/bin/$name-$version" src="$CACHE/build/alertmanager-src-$version"
  if [ -x "$out" ]; then echo "$name $version: cached at $out"; return; fi
  command -v go >/dev/null || { echo "error: Go is required to build $name (install Go 1.26+)" >&2; exit 1; }
  if [ ! -f "$src/.complete" ]; then
    local dir
    dir=$(cd "$CACHE/build" && GOFLAGS=-mod=mod go mod download -json "github.com/prometheus/alertmanager@$version" \
      | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')
    rm -rf "$src" && cp -r "$dir" "$src" && chmod -R u+w "$src"
    mkdir -p "$src/ui/app/dist"
    echo '<!doctype html><title>Alertmanager</title><p>Web UI not built; use the API.' > "$src/ui/app/dist/index.html"
    touch "$src/.complete"
  fi
  echo "building $name ${version#v} (first time: several minutes)..."
  (cd "$src" && CGO_ENABLED=0 go build -trimpath -o "$out.tmp" \
    -ldflags "-s -w -X github.com/prometheus/common/version.Version=${version#v}" "./cmd/$name")
  mv "$out.tmp" "$out"
  echo "$name ${version#v}: built at $out"
}

build_alertmanager alertmanager
build_alertmanager amtool
