#!/usr/bin/env bash
# Makes the Unity package ready to install, with the native library this
# machine can build inside it:
#
#   bash samples/unity/make-package.sh [OUT]      (default OUT: out/unity)
#
# The package folder is packed as it is, with the native libraries committed
# in unity/com.iapbridge.sdk/Runtime/Plugins/ (CI checks on every run that
# they are built from the sources on main; rebuilding them needs Apple's SDK
# sets beside the clone: scripts/build-plugins.sh, docs/APPLE.md), as
# OUT/com.iapbridge.sdk-<version>.tgz, the npm-style tarball Unity's Package
# Manager installs (+ > Add package from tarball).
#
# Or skip the tarball: Package Manager > + > Add package from disk >
# unity/com.iapbridge.sdk/package.json, or by git URL
# (...IAPBridge.git?path=/unity/com.iapbridge.sdk). docs/INTEGRATION.md has all three.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-out/unity}
pkg=unity/com.iapbridge.sdk
for lib in Linux/x86_64/libIAPBridge.so macOS/libIAPBridge.dylib iOS/libIAPBridgeStatic.a; do
  [ -f "$pkg/Runtime/Plugins/$lib" ] || { echo "make-package: FAILED: $pkg/Runtime/Plugins/$lib is missing (git checkout it, or rebuild: bash scripts/build-plugins.sh)" >&2; exit 1; }
done
version=$(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' "$pkg/package.json" | head -n 1)
mkdir -p "$out"
tgz="$out/com.iapbridge.sdk-$version.tgz"
tar -C unity --exclude='.*' --transform 's,^com.iapbridge.sdk,package,' -czf "$tgz" com.iapbridge.sdk
echo "make-package: $tgz"
tar -tzf "$tgz" | grep -v '\.meta$' | sort
