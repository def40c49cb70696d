#!/usr/bin/env bash
# valgrind memcheck over the C harness and the hardening driver
# (docs/HARDENING.md). Fails on any memcheck error and on any byte
# "definitely" or "indirectly" lost.
#
# "still reachable" and "possibly lost" are reported, not failed: every such
# block comes from the Swift runtime's global caches (type metadata,
# witness tables, ConcurrentReadableHashMap) and Dispatch's worker threads,
# allocated once per type or thread and pointed to from the middle (hence
# "possibly"). To show they are caches and not leaks, the driver's open/close
# cycle runs twice, N and 4N times: the "possibly lost" bytes must not grow
# with the number of cycles. No suppressions file is used.
#
# valgrind 3.19 cannot read the DWARF 5 that Swift 6 emits by default, so this
# builds with DWARF 4 in its own scratch path (.build-valgrind).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
export SWIFT_BACKTRACE=enable=no
command -v valgrind >/dev/null || { echo "valgrind.sh: valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
CATALOG=$ROOT/samples/catalog/Game.storekit
BASE=/tmp
[ -w /dev/shm ] && BASE=/dev/shm
WORK=$(mktemp -d "$BASE/iap-valgrind.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
CYCLES=${CYCLES:-4}

t0=$(date +%s)
for p in iap-hardening-driver iap-c-harness; do
  if ! swift build --scratch-path .build-valgrind --product "$p" -Xswiftc -dwarf-version=4 -Xcc -gdwarf-4 > "$WORK/build.log" 2>&1; then
    cat "$WORK/build.log" >&2; echo "valgrind.sh: build of $p failed" >&2; exit 1
  fi
done
BIN=$(swift build --scratch-path .build-valgrind --show-bin-path)
echo "valgrind: build took $(( $(date +%s) - t0 ))s"

status=0
bytes() {  # bytes <log> <kind>: the byte count of one leak-summary line
  grep -E "$2: [0-9,]+ bytes" "$1" | tail -1 | sed -E "s/.*$2: ([0-9,]+) bytes.*/\1/" | tr -d ,
}
# Bytes of the "possibly lost" records allocated by the Swift runtime's type
# metadata machinery (its 16 KiB metadata pools, its concurrent hash maps, the
# witness-table caches): metadata lives as long as the process by design, and
# when a new pool is started depends on which generic types a run happened to
# instantiate first, not on the number of bridges opened.
runtime_bytes() {  # runtime_bytes <log>
  awk '
    / are possibly lost in loss record / { flush(); n = $2; gsub(",", "", n); inrec = 1; rt = 0; next }
    inrec && /MetadataAllocator|ConcurrentReadableHashMap|swift_getWitnessTable|swift_getTypeByMangled/ { rt = 1 }
    inrec && /^==[0-9]+== *$/ { flush() }
    function flush() { if (inrec && rt) total += n; inrec = 0 }
    END { flush(); print total + 0 }' "$1"
}

memcheck() {  # memcheck <name> <command...>
  local name=$1; shift
  local log="$WORK/$name.log" t=$(date +%s) rc
  set +e
  valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite,indirect,possible \
    --errors-for-leak-kinds=definite,indirect --error-exitcode=99 --num-callers=30 "$@" > "$log" 2>&1
  rc=$?
  set -e
  local def ind pos reach errs
  def=$(bytes "$log" "definitely lost"); ind=$(bytes "$log" "indirectly lost")
  pos=$(bytes "$log" "possibly lost"); reach=$(bytes "$log" "still reachable")
  errs=$(grep -E "ERROR SUMMARY" "$log" | tail -1 | sed -E 's/.*ERROR SUMMARY: ([0-9]+) errors.*/\1/')
  # A summary line is absent when its count is 0.
  echo "valgrind: $name: exit $rc, ${errs:-?} errors, definitely lost ${def:-0} B, indirectly lost ${ind:-0} B, possibly lost ${pos:-0} B, still reachable ${reach:-0} B ($(( $(date +%s) - t ))s)"
  if [ "$rc" != 0 ] || [ "${def:-0}" != 0 ] || [ "${ind:-0}" != 0 ] || [ "${errs:-1}" != 0 ]; then
    echo "valgrind: $name FAILED; log:"; grep -v "^==[0-9]*== *$" "$log" | head -120
    cp "$log" "$ROOT/.build-valgrind/$name.failed.log"
    status=1
  fi
  eval "POSSIBLY_$name=${pos:-0}"
  eval "RUNTIME_$name=$(runtime_bytes "$log")"
}

memcheck harness "$BIN/iap-c-harness" --catalog "$CATALOG" --dir "$WORK/harness"
memcheck cycles_short "$BIN/iap-hardening-driver" cycles --catalog "$CATALOG" --dir "$WORK/cycles1" --count "$CYCLES"
memcheck cycles_long "$BIN/iap-hardening-driver" cycles --catalog "$CATALOG" --dir "$WORK/cycles2" --count $(( 4 * CYCLES ))
memcheck stress "$BIN/iap-hardening-driver" stress --catalog "$CATALOG" --dir "$WORK/stress" --threads 4 --ops 60 --limit 600
# "possibly lost" is the runtime's caches only if it does not grow with the work
# done. Outside the runtime's metadata (runtime_bytes) it may vary by a few
# hundred bytes with the paths a run happens to take; a bridge leaked per
# cycle would add kilobytes over the 3N extra cycles.
grow=$(( (POSSIBLY_cycles_long - RUNTIME_cycles_long) - (POSSIBLY_cycles_short - RUNTIME_cycles_short) ))
if [ $grow -gt 1024 ]; then
  echo "valgrind: FAILED: \"possibly lost\" outside the runtime's type metadata grew by $grow bytes from $CYCLES to $(( 4 * CYCLES )) cycles: a real leak"
  status=1
else
  echo "valgrind: \"possibly lost\" outside the runtime's type metadata does not grow with the work done (within 1 KiB): $(( POSSIBLY_cycles_short - RUNTIME_cycles_short )) B after $CYCLES cycles, $(( POSSIBLY_cycles_long - RUNTIME_cycles_long )) B after $(( 4 * CYCLES )) (metadata: $RUNTIME_cycles_short B, $RUNTIME_cycles_long B)"
fi
echo "valgrind: took $(( $(date +%s) - t0 ))s"
exit $status
