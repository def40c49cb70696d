#!/usr/bin/env bash
# Fuzzes everything in IAPBridge that parses outside input, with libFuzzer and
# AddressSanitizer (docs/HARDENING.md).
#
#   scripts/fuzz.sh                   every target, 60 s each
#   scripts/fuzz.sh --seconds 600     every target, 10 minutes each
#   scripts/fuzz.sh --quick           CI: regressions, then 8 s per target
#   scripts/fuzz.sh abi outbox        only these targets
#   scripts/fuzz.sh --build-only      build the fuzzers, run nothing
#
# Targets (Fuzz/targets/<name>.swift): json, config, catalog, outbox,
# simulator, abi. The fuzzers are not part of `swift build`: they need
# -sanitize=fuzzer, so this script builds the library modules in its own
# scratch path (.build-fuzz) and links each target against them.
#
# Corpora: Fuzz/seeds/<target>/ (committed, hand-written) plus, at run time,
# the real catalogs (samples/catalog, $IAP_STOREKIT_CORPUS or
# ../shared/storekit-corpus: copied into the working corpus, never committed)
# and outboxes written by real bridges (the simulator target's seeds replayed
# with IAP_FUZZ_SAVE_OUTBOX). The working corpus grows in
# .build-fuzz/corpus/<target>/ across runs. Every input that once crashed is
# kept in Fuzz/regressions/<target>/ and replayed first, every run.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
export SWIFT_BACKTRACE=enable=no

SECONDS_PER_TARGET=60
QUICK=0
BUILD_ONLY=0
TARGETS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1; SECONDS_PER_TARGET=8; shift ;;
    --seconds) SECONDS_PER_TARGET="$2"; shift 2 ;;
    --build-only) BUILD_ONLY=1; shift ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) TARGETS+=("$1"); shift ;;
  esac
done
ALL=(json config catalog outbox simulator abi)
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=("${ALL[@]}")

SCRATCH=.build-fuzz
OUT=$SCRATCH/fuzz
mkdir -p "$OUT"

# ---- build ---------------------------------------------------------------
echo "fuzz: building the library with -sanitize=fuzzer,address ($SCRATCH)"
t0=$(date +%s)
# The build's own status decides: an older $SCRATCH keeps its objects, so a
# failed build would otherwise go on with stale fuzzers.
if ! swift build -c release --scratch-path "$SCRATCH" --target IAPBridge \
  -Xswiftc -sanitize=fuzzer,address -Xcc -fsanitize=fuzzer-no-link,address \
  -Xswiftc -assert-config -Xswiftc Debug >"$OUT/build.log" 2>&1; then
  grep -v '^\[' "$OUT/build.log" | tail -40 >&2
  echo "fuzz: the library build failed" >&2
  exit 1
fi
grep -v '^\[' "$OUT/build.log" || true
BIN=$(swift build -c release --scratch-path "$SCRATCH" --show-bin-path)
for m in CIAPSupport CIAPFrame IAPCore IAPSimulator IAPBridge; do
  [ -d "$BIN/$m.build" ] || { echo "fuzz: $BIN/$m.build missing: the library build failed" >&2; exit 1; }
done
OBJS=$(ls "$BIN"/CIAPSupport.build/*.o "$BIN"/CIAPFrame.build/*.o "$BIN"/IAPCore.build/*.o "$BIN"/IAPSimulator.build/*.o "$BIN"/IAPBridge.build/*.o)
for t in "${TARGETS[@]}"; do
  [ -f "Fuzz/targets/$t.swift" ] || { echo "fuzz: no target $t (have: ${ALL[*]})" >&2; exit 2; }
  if [ "$OUT/$t" -nt "Fuzz/targets/$t.swift" ] && [ "$OUT/$t" -nt "Fuzz/common/FuzzSupport.swift" ] \
     && [ -z "$(find "$BIN"/*.build -name '*.o' -newer "$OUT/$t" | head -1)" ]; then
    continue
  fi
  echo "fuzz: linking $t"
  # -assert-config Debug keeps assert() (the C2 durability checks) under -O.
  swiftc -O -assert-config Debug -sanitize=fuzzer,address -use-ld=lld -parse-as-library \
    -module-name "Fuzz_$t" -I "$BIN/Modules" -Xcc -fmodule-map-file="$BIN/CIAPSupport.build/module.modulemap" \
    -Xcc -fmodule-map-file="$BIN/CIAPFrame.build/module.modulemap" \
    Fuzz/common/FuzzSupport.swift "Fuzz/targets/$t.swift" $OBJS -o "$OUT/$t"
done
echo "fuzz: build took $(( $(date +%s) - t0 ))s"
[ $BUILD_ONLY = 1 ] && exit 0

# ---- corpora -------------------------------------------------------------
SHM=/tmp
[ -w /dev/shm ] && SHM=/dev/shm
export IAP_FUZZ_SCRATCH=$(mktemp -d "$SHM/iap-fuzz.XXXXXX")
export IAP_FUZZ_CATALOG="$ROOT/samples/catalog/Game.storekit"
trap 'rm -rf "$IAP_FUZZ_SCRATCH"' EXIT
STOREKIT_CORPUS=${IAP_STOREKIT_CORPUS:-$ROOT/../shared/storekit-corpus}

corpus_for() {
  local t=$1 dir=$SCRATCH/corpus/$1
  mkdir -p "$dir"
  case "$t" in
    catalog|json)
      cp samples/catalog/*.storekit "$dir/" 2>/dev/null || true
      if ls "$STOREKIT_CORPUS"/*.storekit >/dev/null 2>&1; then
        cp "$STOREKIT_CORPUS"/*.storekit "$dir/"
      else
        echo "fuzz: NOTE: no real catalogs at $STOREKIT_CORPUS (set IAP_STOREKIT_CORPUS); seeding from samples only"
      fi ;;
    outbox)
      # Outboxes written by real bridges: replay the simulator seeds, keeping each outbox.
      if [ -x "$OUT/simulator" ] && ls Fuzz/seeds/simulator/* >/dev/null 2>&1; then
        IAP_FUZZ_SAVE_OUTBOX="$dir" "$OUT/simulator" Fuzz/seeds/simulator/* >/dev/null 2>&1 || true
      else
        echo "fuzz: NOTE: no simulator fuzzer built: outbox seeds are the committed ones only"
      fi ;;
  esac
  echo "$dir"
}

# ---- run -----------------------------------------------------------------
REPORT=$SCRATCH/report.txt
: > "$REPORT"
status=0
for t in "${TARGETS[@]}"; do
  ART=$SCRATCH/artifacts/$t
  mkdir -p "$ART"
  # Regressions first: every input that once crashed must pass now.
  leaks=1; case "$t" in simulator|abi) leaks=0 ;; esac
  if ls Fuzz/regressions/$t/* >/dev/null 2>&1; then
    if ! ASAN_OPTIONS=detect_leaks=$leaks "$OUT/$t" -timeout=20 Fuzz/regressions/$t/* > "$SCRATCH/$t.regressions.log" 2>&1; then
      echo "fuzz: $t: a regression input fails again:"; tail -30 "$SCRATCH/$t.regressions.log"
      status=1
      continue
    fi
    echo "fuzz: $t: $(ls Fuzz/regressions/$t | wc -l) regression inputs pass"
  fi
  dir=$(corpus_for "$t" | tail -1)
  dict=(); [ -f "Fuzz/dicts/$t.dict" ] && dict=(-dict="Fuzz/dicts/$t.dict")
  # LeakSanitizer (after each input and at exit): on, except for simulator
  # and abi, whose bridges run a delivery thread that may still be finishing a
  # callback (holding its locals) when the input returns: a false report, and
  # the per-input scan made the simulator target 2.4x slower. Those paths are
  # leak-checked at exit, after every thread settled, by scripts/sanitizers.sh
  # and scripts/valgrind.sh (docs/HARDENING.md).
  leaks=1; case "$t" in simulator|abi) leaks=0 ;; esac
  seeds=(); [ -d "Fuzz/seeds/$t" ] && seeds=("Fuzz/seeds/$t")
  log=$SCRATCH/$t.log
  echo "fuzz: $t: ${SECONDS_PER_TARGET}s"
  set +e
  ASAN_OPTIONS=detect_leaks=$leaks "$OUT/$t" -max_total_time="$SECONDS_PER_TARGET" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -detect_leaks=$leaks \
    -print_final_stats=1 -artifact_prefix="$ART/" "${dict[@]}" "$dir" "${seeds[@]}" > "$log" 2>&1
  rc=$?
  set -e
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || true)
  line="$t: ${SECONDS_PER_TARGET}s, ${execs:-?} executions, coverage ${cov:-?}, corpus $(ls "$dir" | wc -l) files"
  if [ $rc -ne 0 ]; then
    line="$line, FAILED (exit $rc): see $log and $ART/"
    grep -m3 -E 'ERROR|INVARIANT|Fatal error|deadly signal|timeout' "$log" || true
    status=1
  fi
  echo "fuzz: $line"
  echo "$line" >> "$REPORT"
done
echo "fuzz: summary (also in $REPORT)"
cat "$REPORT"
exit $status
