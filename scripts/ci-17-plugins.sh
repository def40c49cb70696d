#!/usr/bin/env bash
# CI: the native libraries the Unity package ships (Runtime/Plugins) are
# current: built from these sources, toolchain and SDK sets (the hashes in
# unity/plugins-build.txt), each the file recorded there, and the Apple ones
# rebuilt here from ci-15's objects give the same code.
# scripts/build-plugins.sh rebuilds them all.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f .build-apple/arm64-apple-ios15.0/obj/IAPBridge.o ] && export APPLE_CHECKED=1
exec bash scripts/build-plugins.sh --check
