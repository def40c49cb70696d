#!/usr/bin/env bash
# Assembles everything a Unity project needs, laid out as Unity expects:
#
#   bash samples/unity/make-package.sh [OUT]      (default OUT: out/unity)
#
# then copy OUT/Assets into your Unity project's folder (it merges with yours):
#   Assets/Plugins/IAPBridge/            the C# binding (+ Editor/ for iOS builds)
#   Assets/Plugins/x86_64/libIAPBridge.so    (on Linux)  or
#   Assets/Plugins/macOS/libIAPBridge.dylib  (on macOS)  the native library, release build
#   Assets/StreamingAssets/Game.storekit the sample catalog the simulator reads
#   Assets/IAPBridgeExample/             the example store (IAPStoreExample + its logic)
#
# The iOS library (libIAPBridgeStatic.a) is built with Xcode: docs/INTEGRATION.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-out/unity}
scratch=.build-unity   # its own build folder: release flags differ from the usual debug build

case "$(uname -s)" in
  Linux)
    # -static-stdlib puts the Swift runtime inside the .so: nothing else to ship.
    swift build -c release --product IAPBridge -Xswiftc -static-stdlib --scratch-path "$scratch"
    lib="$scratch/release/libIAPBridge.so"; dest="$out/Assets/Plugins/x86_64" ;;
  Darwin)
    # The Swift runtime is part of macOS 12+.
    swift build -c release --product IAPBridge --scratch-path "$scratch"
    lib="$scratch/release/libIAPBridge.dylib"; dest="$out/Assets/Plugins/macOS" ;;
  *) echo "make-package: build the library on Linux or macOS" >&2; exit 1 ;;
esac

mkdir -p "$dest" "$out/Assets/Plugins/IAPBridge/Editor" "$out/Assets/StreamingAssets" "$out/Assets/IAPBridgeExample"
cp "$lib" "$dest/"
if [ "$(uname -s)" = Linux ] && command -v strip >/dev/null 2>&1; then strip "$dest/$(basename "$lib")"; fi
cp samples/unity/IAPBridge/*.cs "$out/Assets/Plugins/IAPBridge/"
cp samples/unity/IAPBridge/Editor/*.cs "$out/Assets/Plugins/IAPBridge/Editor/"
cp samples/unity/Example/*.cs "$out/Assets/IAPBridgeExample/"
cp samples/catalog/Game.storekit "$out/Assets/StreamingAssets/"

echo "make-package: done. Copy $out/Assets into your Unity project, then follow docs/INTEGRATION.md (Unity in 5 minutes)."
find "$out/Assets" -type f | sort
