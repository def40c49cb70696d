#!/usr/bin/env bash
# Makes the Unity package ready to install, with the native library this
# machine can build inside it:
#
#   bash samples/unity/make-package.sh [OUT]      (default OUT: out/unity)
#
# 1. The native libraries in unity/com.iapbridge.sdk/Runtime/Plugins/ are checked
#    (scripts/build-plugins.sh --check) and rebuilt when stale.
# 2. The package folder is packed as OUT/com.iapbridge.sdk-<version>.tgz, the
#    npm-style tarball Unity's Package Manager installs (+ > Add package from
#    tarball).
#
# Or skip the tarball: Package Manager > + > Add package from disk >
# unity/com.iapbridge.sdk/package.json, or by git URL
# (...IAPBridge.git?path=/unity/com.iapbridge.sdk). docs/INTEGRATION.md has all three.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-out/unity}
pkg=unity/com.iapbridge.sdk
[ -f unity/plugins-build.txt ] && bash scripts/build-plugins.sh --check >/dev/null 2>&1 || bash scripts/build-plugins.sh
version=$(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' "$pkg/package.json" | head -n 1)
mkdir -p "$out"
tgz="$out/com.iapbridge.sdk-$version.tgz"
tar -C unity --exclude='.*' --transform 's,^com.iapbridge.sdk,package,' -czf "$tgz" com.iapbridge.sdk
echo "make-package: $tgz"
tar -tzf "$tgz" | grep -v '\.meta$' | sort
