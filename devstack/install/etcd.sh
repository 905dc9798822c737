#!/usr/bin/env bash
# etcd for the local kube-apiserver, from Debian's packages, at ETCD_DEB_VERSION (versions.env).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=../../governance/versions.env
. "$here/../../governance/versions.env"
upstream="${ETCD_DEB_VERSION%%-*}"  # 3.4.23-4+b4 -> 3.4.23
if command -v etcd >/dev/null; then
  found="$(etcd --version 2>/dev/null | sed -n 's/^etcd Version: //p')"
  [ "$found" = "$upstream" ] \
    || { echo "error: $(command -v etcd) is etcd ${found:-of an unknown version}; the stack is tested with etcd $upstream (Debian's etcd-server $ETCD_DEB_VERSION)" >&2; exit 1; }
  echo "etcd $found: $(command -v etcd)"; exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing etcd-server $ETCD_DEB_VERSION from Debian..."
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "etcd-server=$ETCD_DEB_VERSION" >/dev/null
  # The package may start a system etcd on the default ports; the stack uses its own.
  (systemctl stop etcd 2>/dev/null || service etcd stop 2>/dev/null || true) >/dev/null 2>&1
  echo "etcd: $(command -v etcd)"
else
  echo "error: etcd not found; install Debian's etcd-server $ETCD_DEB_VERSION (apt-get install etcd-server=$ETCD_DEB_VERSION, needs root)" >&2
  exit 1
fi
