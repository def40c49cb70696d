#!/usr/bin/env bash
# Runs Tests/bindings/lua/test.lua and examples.lua under LuaJIT against the library.
#   IAP_LIB=/path/libIAPBridge.so bash Tests/bindings/lua/run.sh
set -euo pipefail
source "$(dirname "$0")/../env.sh"
command -v luajit >/dev/null 2>&1 || { echo "lua: FAILED: luajit is not installed (apt-get install luajit)" >&2; exit 1; }
echo "lua: $(luajit -v)"
timeout 120 luajit "$iap_repo/Tests/bindings/lua/test.lua"
# The examples of the binding's header and of docs/INTEGRATION.md, run as written.
timeout 120 luajit "$iap_repo/Tests/bindings/lua/examples.lua"
