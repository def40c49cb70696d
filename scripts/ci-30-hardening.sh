#!/usr/bin/env bash
# CI step (run by .ci/run after `swift test`, which already ran the bad-input
# matrix, the plain 8-thread stress, the JSON round trips and the file-system
# tests in HardeningTests): a short libFuzzer pass per target after replaying
# every past crash, the AddressSanitizer and ThreadSanitizer runs, and
# valgrind memcheck. A few minutes on 2 cores; docs/HARDENING.md has the
# long versions.
set -euo pipefail
cd "$(dirname "$0")/.."
export SWIFT_BACKTRACE=enable=no
start=$(date +%s)
step() {
  local t0=$(date +%s)
  echo "hardening: $*"
  "$@"
  echo "hardening: $1 took $(( $(date +%s) - t0 ))s"
}
step scripts/fuzz.sh --quick
STRESS_OPS=${STRESS_OPS:-300} step scripts/sanitizers.sh address thread
step scripts/valgrind.sh
echo "hardening: total $(( $(date +%s) - start ))s"
