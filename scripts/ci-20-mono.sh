#!/usr/bin/env bash
# CI: the Unity C# binding, compiled with mcs and run under Mono (the runtime
# of the Unity editor) against the library the package builds. Fails in CI
# when Mono is missing; see Tests/mono/run.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
exec bash Tests/mono/run.sh
