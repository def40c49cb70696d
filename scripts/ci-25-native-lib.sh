#!/usr/bin/env bash
# CI: the self-contained native libraries (scripts/build-lib.sh: libIAPBridge.so
# with the Swift runtime inside, libIAPBridge.a + link-flags.txt), linked from C
# and C++ and run with no Swift toolchain on the library path.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build-lib.sh out/lib
bash Tests/native-lib/run.sh out/lib
