#!/usr/bin/env bash
# Builds IAPBridge.xcframework from this package: the static library
# libIAPBridgeStatic.a (the C ABI, the core, the simulated store and the
# StoreKit 2 backend) with include/iap_bridge.h, for iOS devices, the iOS
# simulator and macOS. For Xcode projects and Unity iOS builds (docs/APPLE.md).
#
# Needs a Mac with Xcode 16 or later (Xcode 26 to submit to the App Store). It cannot run on Linux, so CI does not
# run it, and it has not been run from this repository (docs/APPLE.md).
#
#   scripts/build-xcframework.sh [output-dir]      default: build/xcframework
set -euo pipefail

cd "$(dirname "$0")/.."
out="${1:-build/xcframework}"
scheme=IAPBridgeStatic
lib=libIAPBridgeStatic.a

if ! command -v xcodebuild >/dev/null 2>&1; then
  echo "xcodebuild not found: this script needs macOS with Xcode 16 or later (Xcode 26 to submit to the App Store) (docs/APPLE.md)" >&2
  exit 1
fi

rm -rf "$out"
mkdir -p "$out"

slices=()
for platform in "iOS" "iOS Simulator" "macOS"; do
  name="${platform// /-}"
  archive="$out/$name.xcarchive"
  derived="$out/DerivedData-$name"
  xcodebuild archive -quiet \
    -scheme "$scheme" \
    -destination "generic/platform=$platform" \
    -archivePath "$archive" \
    -derivedDataPath "$derived" \
    SKIP_INSTALL=NO
  # A static library product normally comes out as lib<product>.a; some Xcode
  # versions leave a prelinked object file (<product>.o) instead: wrap it.
  mkdir -p "$out/$name"
  found=$(find "$archive" "$derived" -name "$lib" -type f | head -n 1)
  if [ -n "$found" ]; then
    cp "$found" "$out/$name/$lib"
  else
    object=$(find "$derived" -name "$scheme.o" -type f | head -n 1)
    if [ -z "$object" ]; then
      echo "neither $lib nor $scheme.o was produced for $platform" >&2
      exit 1
    fi
    libtool -static -o "$out/$name/$lib" "$object"
  fi
  slices+=(-library "$out/$name/$lib" -headers include)
done

xcodebuild -create-xcframework "${slices[@]}" -output "$out/IAPBridge.xcframework"
echo "built $out/IAPBridge.xcframework"
