#!/usr/bin/env bash
# CI: the durability proof (docs/DURABILITY.md), in about a minute:
#   1. the byte-damage sweep (truncate at every offset, flip every bit) as a Swift test;
#   2. the fsync count per purchase, checked against the design (1 + 1 shared);
#   3. a crash campaign of 200+ real SIGKILLs of a C game on the C ABI.
# The simulated store runs with "durable": false here: it skips fsync, but a
# SIGKILL leaves the page cache intact, so its state stays consistent across
# every kill (only a power cut needs the syncs, and those are Apple's).
set -euo pipefail
cd "$(dirname "$0")/.."
export SWIFT_BACKTRACE=enable=no

swift build --product iap-crash-game >/dev/null
swift build --product iap-crash-campaign >/dev/null
bin=$(swift build --show-bin-path)

out="${TMPDIR:-/tmp}/iap-ci-sweep-$$.log"
fsync_work="${TMPDIR:-/tmp}/iap-ci-fsync-$$"
work="${TMPDIR:-/tmp}/iap-ci-campaign-$$"
# Nothing left in the temp directory, whatever the outcome (the campaign's
# own failure report is printed before this runs).
trap 'rm -rf "$out" "$fsync_work" "$work"' EXIT

echo "== byte-damage sweep"
if swift test --filter ByteDamageSweepTests >"$out" 2>&1; then
  grep -E "byte-damage sweep:|Suite .* passed" "$out"
  rm -f "$out"
else
  tail -40 "$out"
  echo "byte-damage sweep: FAIL"
  exit 1
fi

echo "== fsyncs per purchase"
"$bin/iap-crash-campaign" fsync --work "$fsync_work"

echo "== crash campaign"
"$bin/iap-crash-campaign" --kills "${IAP_CI_KILLS:-200}" --seed "${IAP_CI_SEED:-20261122}" --work "$work"
rm -rf "$work"
