#!/usr/bin/env bash
# CI: the engine bindings against the library `swift test` built.
#   C++    include/iap_bridge.hpp       g++ and clang++, with and without exceptions
#   Lua    bindings/lua/iap_bridge.lua  LuaJIT, and a headless LÖVE 11 game
#   Python bindings/python/iap_bridge.py pytest
# and the examples developers copy (the bindings' header comments, the C++,
# Lua and Python sections of docs/INTEGRATION.md, README.md's C loop), run as
# written against a cancelled purchase, a redelivery and a refund.
# IAP_LIB overrides the library (default .build/debug/libIAPBridge.so).
# The Lua unload loop (Tests/bindings/lua/unload-loop.sh) runs in
# ci-45-unload.sh, beside the C one.
set -euo pipefail
cd "$(dirname "$0")/.."
export IAP_LIB=${IAP_LIB:-"$PWD/.build/debug/libIAPBridge.so"}

bash Tests/bindings/cpp/run.sh
bash Tests/bindings/lua/run.sh
bash Tests/bindings/love/run.sh
bash Tests/bindings/python/run.sh
echo "bindings: C++, Lua, LÖVE and Python passed"
