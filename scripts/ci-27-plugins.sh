#!/usr/bin/env bash
# CI: the native libraries the Unity package ships (Runtime/Plugins) are
# current: built from these sources with this toolchain, and byte for byte
# what a rebuild gives (the Apple ones from ci-15's objects, the Linux one
# against ci-25's out/lib). scripts/build-plugins.sh rebuilds them.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f .build-apple/arm64-apple-ios15.0/obj/IAPBridge.o ] && export APPLE_CHECKED=1
exec bash scripts/build-plugins.sh --check
