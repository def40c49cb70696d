#!/usr/bin/env bash
# The long crash campaign (docs/DURABILITY.md):
#
#   scripts/campaign.sh --kills 5000 --seed 42          debug build (.build)
#   scripts/campaign.sh --release --kills 20000 --seed 7 release build (.build-campaign)
#
# Every other flag goes to iap-crash-campaign: --epoch K (kills between
# checkpoints, default 250), --work DIR, --max-delay-ms M, --keep.
# Prints the figures; exits non-zero if a paid order was lost, granted
# twice, or finished before the game confirmed it.
set -euo pipefail
cd "$(dirname "$0")/.."
export SWIFT_BACKTRACE=enable=no

build=(swift build)
if [ "${1:-}" = "--release" ]; then
  shift
  # The fault points are test hooks: compiled into this build on purpose.
  build=(swift build -c release --scratch-path .build-campaign -Xswiftc -DIAP_TEST_HOOKS)
fi
"${build[@]}" --product iap-crash-game >/dev/null
"${build[@]}" --product iap-crash-campaign >/dev/null
bin=$("${build[@]}" --show-bin-path)
exec "$bin/iap-crash-campaign" "$@"
