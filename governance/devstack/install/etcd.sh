#!/usr/bin/env bash
# etcd for the local kube-apiserver, from Debian's packages.
set -euo pipefail
if command -v etcd >/dev/null; then echo "etcd: $(command -v etcd)"; exit 0; fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing etcd-server from Debian..."
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server >/dev/null
  # The package may start a system etcd on the default ports; the stack uses its own.
  (systemctl stop etcd 2>/dev/null || service etcd stop 2>/dev/null || true) >/dev/null 2>&1
  echo "etcd: $(command -v etcd)"
else
  echo "error: etcd not found; install Debian's etcd-server package (needs root)" >&2
  exit 1
fi
