#!/usr/bin/env bash
# CI: the host unloads the library after iap_close, 100 times (C8,
# docs/CONTRACT.md): dlopen, open, buy, confirm, close, dlclose, and no
# thread of the SDK left behind. Uses the library `swift test` built.
set -euo pipefail
cd "$(dirname "$0")/.."
export SWIFT_BACKTRACE=enable=no
lib="${IAP_LIB:-$PWD/.build/debug/libIAPBridge.so}"
[ -f "$lib" ] || swift build --product IAPBridge
runtime="$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")/lib/swift/linux"
[ -d "$runtime" ] || runtime=/opt/swift/usr/lib/swift/linux
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cc -O1 -Wall -Wextra -o "$work/unload" Tests/unload/main.c -ldl
LD_LIBRARY_PATH="$runtime" timeout 300 "$work/unload" "$lib" "$PWD/samples/catalog/Game.storekit" "$work" "${UNLOAD_ROUNDS:-100}"
if command -v luajit >/dev/null; then
  bash Tests/bindings/lua/unload-loop.sh
elif [ "${CI:-}" = "true" ]; then
  echo "unload: FAILED: luajit is required in CI for the Lua unload loop (apt-get install luajit)" >&2
  exit 1
else
  echo "unload: SKIPPED the Lua unload loop: no luajit"
fi
