#!/usr/bin/env bash
# Runs Tests/bindings/lua/test.lua under LuaJIT against the library.
#   IAP_LIB=/path/libIAPBridge.so bash Tests/bindings/lua/run.sh
set -euo pipefail
source "$(dirname "$0")/../env.sh"
command -v luajit >/dev/null 2>&1 || { echo "lua: FAILED: luajit is not installed (apt-get install luajit)" >&2; exit 1; }
echo "lua: $(luajit -v)"
timeout 120 luajit "$iap_repo/Tests/bindings/lua/test.lua"
