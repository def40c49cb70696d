#!/usr/bin/env bash
# The long power-loss explorer run (docs/DURABILITY.md): the explorer's
# workload repeated ROUNDS times (default 20); CI runs three rounds inside
# `swift test`. Prints the recorded events, crash states and violations.
#   scripts/power-loss.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
export SWIFT_BACKTRACE=enable=no
IAP_POWERLOSS_ROUNDS="${1:-20}" swift test --filter "PowerLossTests" 2>&1 | grep -E "power-loss explorer|✘|passed after|failed after"
