#!/usr/bin/env bash
# The sanitizer runs (docs/HARDENING.md):
#   AddressSanitizer (+ LeakSanitizer): the C harness, the demo, the hardening
#     driver's open/close cycles, its crash-campaign loop and a short stress;
#   ThreadSanitizer: the 8-thread stress (every entry point at once, close and
#     reopen racing, callbacks calling back in) and the C harness.
# Each sanitizer builds the package in its own scratch path (.build-asan,
# .build-tsan). Fails on any sanitizer report, failed check or deadlock.
#
#   scripts/sanitizers.sh              both
#   scripts/sanitizers.sh address      one of them (address | thread)
#   STRESS_OPS=5000 scripts/sanitizers.sh thread    a longer stress
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
export SWIFT_BACKTRACE=enable=no
KINDS=("$@")
[ ${#KINDS[@]} -gt 0 ] || KINDS=(address thread)
CATALOG=$ROOT/samples/catalog/Game.storekit
BASE=/tmp
[ -w /dev/shm ] && BASE=/dev/shm
WORK=$(mktemp -d "$BASE/iap-sanitizers.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
STRESS_OPS=${STRESS_OPS:-1500}
status=0

build() {  # build <sanitizer> <scratch> <product>...
  local san=$1 scratch=$2; shift 2
  for p in "$@"; do
    if ! swift build --sanitize "$san" --scratch-path "$scratch" --product "$p" > "$WORK/build.log" 2>&1; then
      cat "$WORK/build.log" >&2
      echo "sanitizers: the $san build of $p failed" >&2
      exit 1
    fi
    grep -E "warning:" "$WORK/build.log" >&2 || true
  done
  swift build --sanitize "$san" --scratch-path "$scratch" --show-bin-path
}

# run <name> <log> <command...>: fails on a non-zero exit or any sanitizer report.
run() {
  local name=$1 log=$2; shift 2
  local t0 rc
  t0=$(date +%s)
  set +e
  "$@" > "$log" 2>&1
  rc=$?
  set -e
  local reports
  reports=$(grep -c -E "^(==[0-9]+==ERROR|WARNING: ThreadSanitizer|SUMMARY: (Address|Leak|Thread)Sanitizer)" "$log" || true)
  if [ $rc -ne 0 ] || [ "$reports" != 0 ]; then
    echo "sanitizers: $name FAILED (exit $rc, $reports sanitizer reports); log kept in .build-sanitizers/"
    grep -m 40 -E -A 12 "ERROR|WARNING: ThreadSanitizer|FAIL" "$log" | head -80 || tail -40 "$log"
    mkdir -p "$ROOT/.build-sanitizers" && cp "$log" "$ROOT/.build-sanitizers/${name// /-}.failed.log"
    status=1
  else
    echo "sanitizers: $name passed in $(( $(date +%s) - t0 ))s: $(tail -1 "$log")"
  fi
}

for kind in "${KINDS[@]}"; do
  t0=$(date +%s)
  case "$kind" in
    address)
      BIN=$(build address .build-asan iap-hardening-driver iap-c-harness iap-demo | tail -1)
      echo "sanitizers: address build took $(( $(date +%s) - t0 ))s"
      # Leaks: LeakSanitizer reports memory no longer reachable at exit. The
      # Swift runtime's metadata caches and Dispatch's threads stay reachable
      # through globals, so they are not reported: there is no suppression.
      export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1:detect_stack_use_after_return=1
      run "address harness" "$WORK/asan-harness.log" "$BIN/iap-c-harness" --catalog "$CATALOG" --dir "$WORK/asan-harness"
      run "address demo" "$WORK/asan-demo.log" "$BIN/iap-demo" --catalog "$CATALOG" --dir "$WORK/asan-demo"
      run "address cycles" "$WORK/asan-cycles.log" "$BIN/iap-hardening-driver" cycles --catalog "$CATALOG" --dir "$WORK/asan-cycles" --count 10
      run "address campaign" "$WORK/asan-campaign.log" "$BIN/iap-hardening-driver" campaign --catalog "$CATALOG" --dir "$WORK/asan-campaign" --rounds 21
      run "address stress" "$WORK/asan-stress.log" "$BIN/iap-hardening-driver" stress --catalog "$CATALOG" --dir "$WORK/asan-stress" --ops 600 --limit 300
      unset ASAN_OPTIONS
      ;;
    thread)
      BIN=$(build thread .build-tsan iap-hardening-driver iap-c-harness | tail -1)
      echo "sanitizers: thread build took $(( $(date +%s) - t0 ))s"
      export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:report_signal_unsafe=0"
      run "thread stress" "$WORK/tsan-stress.log" "$BIN/iap-hardening-driver" stress --catalog "$CATALOG" --dir "$WORK/tsan-stress" \
          --threads 8 --ops "$STRESS_OPS" --limit 600
      run "thread harness" "$WORK/tsan-harness.log" "$BIN/iap-c-harness" --catalog "$CATALOG" --dir "$WORK/tsan-harness"
      unset TSAN_OPTIONS
      ;;
    *) echo "sanitizers: unknown kind $kind (address | thread)" >&2; exit 2 ;;
  esac
  echo "sanitizers: $kind took $(( $(date +%s) - t0 ))s"
done
exit $status
