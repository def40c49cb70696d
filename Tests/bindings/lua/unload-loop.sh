#!/usr/bin/env bash
# Runs Tests/bindings/lua/unload.lua in N (default 100) separate luajit
# processes, each loading the library, buying, confirming, closing, unloading
# it and exiting. Fails on the first run that does not exit cleanly (a crash
# at unload shows as exit status 128+signal). Run by scripts/ci-45-unload.sh.
#   IAP_LIB=/path/libIAPBridge.so bash Tests/bindings/lua/unload-loop.sh [N]
set -euo pipefail
source "$(dirname "$0")/../env.sh"
n=${1:-100}
dir=$(mktemp -d /tmp/iap-lua-unload.XXXXXX)
trap 'rm -rf "$dir"' EXIT
pass=0 fail=0
for i in $(seq 1 "$n"); do
  rc=0
  out=$(IAP_DIR="$dir" timeout 60 luajit "$iap_repo/Tests/bindings/lua/unload.lua" 2>&1) || rc=$?
  if [ "$rc" -eq 0 ] && [ "$out" = "unload: ok" ]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    if [ "$rc" -gt 128 ]; then why="killed by signal $((rc - 128))"; else why="exit status $rc"; fi
    echo "lua-unload: run $i failed ($why): $(printf '%s' "$out" | tail -n 5)" >&2
  fi
done
echo "lua-unload: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
