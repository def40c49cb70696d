#!/usr/bin/env bash
# CI: the benchmark in quick mode (scripts/bench.sh --quick), to catch
# breakage. It asserts no timing goal -- the CI machine is shared and noisy,
# and BENCHMARKS.md holds the figures of a full run -- only that every figure
# line is printed, is a number, and is sane, plus the properties that do not
# depend on timing: the empty poll allocates nothing, every commit syncs
# exactly once (C2), the library loads neither Foundation nor ICU. Then the
# CPU-bound goals counted in instructions (scripts/bench-callgrind.sh):
# callgrind's counts do not move with the neighbours, so they are gated.
set -euo pipefail
cd "$(dirname "$0")/.."
export SWIFT_BACKTRACE=enable=no

out="${TMPDIR:-/tmp}/iap-ci-bench-$$.txt"
trap 'rm -f "$out"' EXIT
if ! scripts/bench.sh --quick >"$out"; then
  cat "$out"
  echo "ci-bench: scripts/bench.sh --quick failed" >&2
  exit 1
fi
cat "$out"

# Every figure the full run prints, and what a sane value is:
#   num: any number (memory deltas may be negative)   pos: a number > 0
#   zero: exactly 0   one: 1 (syncs per commit)
expected="
lib_size_kb pos
links_icu zero
links_foundation zero
poll_empty_ns pos
poll_empty_call_ns pos
poll_empty_vs_call pos
poll_empty_allocs zero
poll_empty_calls pos
poll_empty_samples pos
commit_us pos
commit_floor_us pos
commit_sqlite_us pos
commit_atomic_file_us pos
commit_handoff_floor_us pos
commit_vs_fsync pos
commit_vs_sqlite pos
commit_vs_atomic_file pos
commit_vs_handoff_floor pos
commit_slow_us pos
commit_slow_floor_us pos
commit_slow_vs_fsync pos
commit_slow_sleeping_poll_us pos
commit_slow_sleeping_poll_vs_fsync pos
commit_slow_samples pos
commit_cpu_us pos
commit_syncs_per_commit one
commit_record_bytes pos
commit_samples pos
confirm_burst_1000_ms pos
confirm_burst_1000_frame_ms pos
confirm_burst_1000_floor_us pos
confirm_burst_1000_vs_fsync pos
confirm_burst_1000_finished_ms pos
confirm_burst_1000_finished_vs_fsync pos
confirm_burst_1000_syncs pos
confirm_burst_1000_nosync_ms pos
confirm_burst_1000_cpu_ms pos
confirm_call_cpu_ns pos
confirm_burst_1000_samples pos
open_pending_ms_10 pos
open_pending_ms_1000 pos
open_pending_ms_100000 pos
open_pending_per_record_100000_vs_1000 pos
open_pending_samples_10 pos
open_pending_samples_1000 pos
open_pending_samples_100000 pos
rss_growth_kb num
rss_growth_first_50k_kb num
rss_growth_second_50k_kb num
heap_growth_kb num
heap_growth_second_50k_kb num
sdk_heap_retained_kb num
store_heap_retained_kb num
rss_cycle_us_nosync pos
rss_cycles pos
scan_garbage_mb_per_s_1mb pos
scan_garbage_mb_per_s_8mb pos
scan_garbage_8mb_vs_1mb_rate pos
frame_buy_click_p50_us pos
frame_buy_click_p99_us pos
frame_buy_click_max_us pos
frame_buy_click_calls pos
frame_buy_sdk_p50_us pos
frame_buy_sdk_p99_us pos
frame_buy_sdk_max_us pos
frame_buy_sdk_calls pos
frame_confirm_p50_us pos
frame_confirm_p99_us pos
frame_confirm_max_us pos
frame_confirm_calls pos
frame_request_products_p50_us pos
frame_request_products_p99_us pos
frame_request_products_max_us pos
frame_request_products_calls pos
frame_restore_p50_us pos
frame_restore_p99_us pos
frame_restore_max_us pos
frame_restore_calls pos
frame_poll_p50_us pos
frame_poll_p99_us pos
frame_poll_max_us pos
frame_poll_calls pos
frame_preempt_floor_p50_us num
frame_preempt_floor_p99_us num
frame_preempt_floor_max_us pos
frame_preempt_floor_calls pos
frame_preempt_floor_over_1ms num
frame_wake_floor_p50_us num
frame_wake_floor_p99_us pos
frame_wake_floor_max_us pos
frame_wake_floor_calls pos
frame_cold_refused_request_p50_us pos
frame_cold_refused_request_p99_us pos
frame_cold_refused_request_max_us pos
frame_cold_refused_request_calls pos
frame_request_products_p99_vs_wake_floor pos
frame_slow_buy_click_p50_us pos
frame_slow_buy_click_p99_us pos
frame_slow_buy_click_max_us pos
frame_slow_buy_click_calls pos
frame_slow_buy_sdk_p50_us pos
frame_slow_buy_sdk_p99_us pos
frame_slow_buy_sdk_max_us pos
frame_slow_buy_sdk_calls pos
frame_slow_confirm_p50_us pos
frame_slow_confirm_p99_us pos
frame_slow_confirm_max_us pos
frame_slow_confirm_calls pos
frame_slow_request_products_p50_us pos
frame_slow_request_products_p99_us pos
frame_slow_request_products_max_us pos
frame_slow_request_products_calls pos
frame_slow_restore_p50_us pos
frame_slow_restore_p99_us pos
frame_slow_restore_max_us pos
frame_slow_restore_calls pos
frame_slow_poll_p50_us pos
frame_slow_poll_p99_us pos
frame_slow_poll_max_us pos
frame_slow_poll_calls pos
sustain_sdk_cpu_us_per_purchase_10 pos
sustain_sdk_cpu_us_per_purchase_100 pos
sustain_sdk_cpu_us_per_purchase_1000 pos
sustain_sdk_cpu_us_per_purchase_10000 pos
sustain_sdk_cpu_10000_vs_10 pos
flood_calls_1x pos
flood_purchases_1x pos
flood_peak_rss_kb_1x pos
flood_heap_kb_1x pos
flood_calls_4x pos
flood_purchases_4x pos
flood_peak_rss_kb_4x pos
flood_heap_kb_4x pos
flood_calls_16x pos
flood_purchases_16x pos
flood_peak_rss_kb_16x pos
flood_heap_kb_16x pos
flood_peak_rss_growth_1x_to_16x_kb num
flood_peak_rss_16x_vs_1x pos
flood_peak_rss_growth_per_purchase_bytes num
flood_sdk_heap_retained_kb num
flood_calls_per_s pos
flood_busy pos
flood_close_ms pos
flood_slow_calls_1x pos
flood_slow_purchases_1x pos
flood_slow_peak_rss_kb_1x pos
flood_slow_heap_kb_1x pos
flood_slow_calls_4x pos
flood_slow_purchases_4x pos
flood_slow_peak_rss_kb_4x pos
flood_slow_heap_kb_4x pos
flood_slow_calls_16x pos
flood_slow_purchases_16x pos
flood_slow_peak_rss_kb_16x pos
flood_slow_heap_kb_16x pos
flood_slow_peak_rss_growth_1x_to_16x_kb num
flood_slow_peak_rss_16x_vs_1x pos
flood_slow_peak_rss_growth_per_purchase_bytes num
flood_slow_sdk_heap_retained_kb num
flood_slow_calls_per_s pos
flood_slow_busy pos
flood_slow_close_ms pos
"

fail=0
count=0
while read -r name kind; do
  [ -n "$name" ] || continue
  count=$((count + 1))
  line=$(grep -E "^$name [^ ]+ [^ ]+$" "$out" || true)
  if [ "$(printf '%s\n' "$line" | grep -c .)" -ne 1 ]; then
    echo "ci-bench: figure $name is missing or printed more than once" >&2
    fail=1
    continue
  fi
  value=$(printf '%s\n' "$line" | awk '{print $2}')
  if ! awk -v v="$value" -v k="$kind" 'BEGIN {
      if (v !~ /^-?[0-9]+(\.[0-9]+)?$/) exit 1
      if (k == "pos" && !(v + 0 > 0)) exit 1
      if (k == "zero" && v + 0 != 0) exit 1
      if (k == "one" && (v + 0 < 1 || v + 0 > 1.1)) exit 1
      exit 0 }'; then
    echo "ci-bench: figure $name = $value is not $kind" >&2
    fail=1
  fi
done <<< "$expected"

# No figure line the list above does not know (a new one must be added here).
printed=$(grep -cvE '^#' "$out" || true)
if [ "$printed" -ne "$count" ]; then
  echo "ci-bench: $printed figure lines printed, $count expected" >&2
  fail=1
fi
[ "$fail" -eq 0 ] && echo "ci-bench: all $count figure lines present and sane (timing goals are not checked in CI)"

# Instruction counts: the empty poll against an empty call, the game
# thread's iap_buy and iap_confirm, the SDK threads' cost per purchase at 10
# to 10,000 purchases (flat), each gated with a margin.
if ! scripts/bench-callgrind.sh; then
  echo "ci-bench: an instruction-count gate failed (scripts/bench-callgrind.sh)" >&2
  fail=1
fi
exit "$fail"
