#!/usr/bin/env bash
# verify-jars.sh LIST DIR: the jars Maven fetched into DIR are exactly those of LIST (`sha256sum` lines, committed
# under checksums/), byte for byte: none missing, none added, none changed. Maven itself only compares a jar with
# the checksum file served beside it; LIST is what was fetched when the pin was last moved, on purpose.
# MM2GOV_RELOCK=1 writes LIST from DIR instead (make lock does, after a deliberate version change).
set -euo pipefail
list="$1" dir="$2"
[ -d "$dir" ] || { echo "error: $dir is not a folder" >&2; exit 1; }
actual="$(cd "$dir" && find . -maxdepth 1 -name '*.jar' -printf '%f\0' | LC_ALL=C sort -z | xargs -0 -r sha256sum)"
if [ "${MM2GOV_RELOCK:-}" = 1 ]; then
  printf '%s\n' "$actual" > "$list"
  echo "$(basename "$list"): $(grep -c . "$list") jars locked"
  exit 0
fi
[ -f "$list" ] || { echo "error: no checksum list $list; run 'make lock'" >&2; exit 1; }
if ! diff_out="$(diff <(LC_ALL=C sort "$list") <(printf '%s\n' "$actual" | LC_ALL=C sort))"; then
  echo "error: the jars fetched into $dir are not those $(basename "$list") pins (a version moved without 'make lock', or Maven Central served other bytes):" >&2
  printf '%s\n' "$diff_out" | sed -n 's/^< \([0-9a-f]*\)  \(.*\)/  expected \2 (sha256 \1)/p; s/^> \([0-9a-f]*\)  \(.*\)/  fetched  \2 (sha256 \1)/p' >&2
  exit 1
fi
echo "$(basename "$list"): $(grep -c . "$list") jars verified"
