#!/usr/bin/env bash
# Builds the native libraries this machine can build and puts them into the
# Unity package's Runtime/Plugins folders, next to their import settings:
#
#   bash unity/install-plugins.sh [--no-build]
#
#   Linux:  Runtime/Plugins/Linux/x86_64/libIAPBridge.so   (scripts/build-lib.sh;
#           verified: CI builds it and Tests/mono/run.sh loads it from there)
#   macOS:  Runtime/Plugins/macOS/libIAPBridge.dylib       (scripts/build-lib.sh,
#           universal) and Runtime/Plugins/iOS/libIAPBridgeStatic.a, the iOS device
#           slice of scripts/build-xcframework.sh (needs Xcode). NOT verified: no
#           Mac was available when this was written.
#   Windows: not built here; see docs/INTEGRATION.md (Windows).
#
# --no-build: copy what out/lib (and build/xcframework) already hold.
# Then add the package to a Unity project from disk (Package Manager > Add
# package from disk > unity/com.iapbridge.sdk/package.json).
set -euo pipefail
cd "$(dirname "$0")/.."
pkg=unity/com.iapbridge.sdk
plugins=$pkg/Runtime/Plugins
build=1
[ "${1:-}" = "--no-build" ] && build=0

case "$(uname -s)" in
  Linux)
    [ "$build" = 1 ] && bash scripts/build-lib.sh out/lib
    cp out/lib/libIAPBridge.so "$plugins/Linux/x86_64/libIAPBridge.so"
    echo "install-plugins: $plugins/Linux/x86_64/libIAPBridge.so" ;;
  Darwin)
    [ "$build" = 1 ] && bash scripts/build-lib.sh out/lib
    cp out/lib/libIAPBridge.dylib "$plugins/macOS/libIAPBridge.dylib"
    echo "install-plugins: $plugins/macOS/libIAPBridge.dylib"
    if command -v xcodebuild >/dev/null 2>&1; then
      [ "$build" = 1 ] && bash scripts/build-xcframework.sh build/xcframework
      ios=build/xcframework/iOS/libIAPBridgeStatic.a
      if [ -f "$ios" ]; then
        cp "$ios" "$plugins/iOS/libIAPBridgeStatic.a"
        echo "install-plugins: $plugins/iOS/libIAPBridgeStatic.a"
      else
        echo "install-plugins: $ios was not built: no iOS library" >&2
      fi
    else
      echo "install-plugins: no Xcode: no iOS library (scripts/build-xcframework.sh needs it)" >&2
    fi ;;
  *) echo "install-plugins: run it on Linux or macOS (Windows: docs/INTEGRATION.md)" >&2; exit 1 ;;
esac
python3 unity/tools/unity-meta.py --check
