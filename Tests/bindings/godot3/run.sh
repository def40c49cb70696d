#!/usr/bin/env bash
# The Godot 3 binding under the engine: builds the addon (bindings/godot/build.sh
# godot3), drops it into a copy of the headless test game
# (Tests/bindings/godot3/project) as res://addons/iap_bridge/, as a developer
# would, and runs the game with `godot3-server` (Debian's Godot 3.2.3, no
# display), one process per phase:
#   api, examples (every GDScript example loop of docs/INTEGRATION.md and of
#   the wrapper's header, run as written: cancel, sale, redelivery, refund),
#   buy (the game grants, saves and is killed with SIGKILL before its confirm),
#   restart (delivered again, confirmed, not granted twice), after (nothing back).
# Then the Godot 4 class's methods, called directly from C (no Godot 4 engine
# here: Tests/bindings/godot3/godot4_methods.c), when bindings/godot/interfaces.sh
# can provide Godot 4's interface header.
#   IAP_LIB=/path/libIAPBridge.so bash Tests/bindings/godot3/run.sh
set -euo pipefail
source "$(dirname "$0")/../env.sh"
command -v godot3-server >/dev/null 2>&1 || { echo "godot3: FAILED: godot3-server is not installed (apt-get install godot3-server)" >&2; exit 1; }
work=$(mktemp -d /tmp/iap-godot3-test.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
GODOT_BUILD="$work/build" bash "$iap_repo/bindings/godot/build.sh" godot3
cp -r "$iap_repo/Tests/bindings/godot3/project" "$work/project"
cp -r "$work/build/godot3/addons" "$work/project/"
mkdir -p "$work/iap" "$work/home"

# run PHASE: the game's output goes to $work/PHASE.log; prints its summary and
# anything that went wrong. Returns the game's exit status.
run() {
  local rc=0
  HOME="$work/home" XDG_DATA_HOME="$work/home/data" XDG_CONFIG_HOME="$work/home/config" \
  IAP_PHASE="$1" IAP_REPO="$iap_repo" IAP_DIR="$work/iap" IAP_CATALOG="$IAP_CATALOG" \
  SWIFT_BACKTRACE=enable=no \
    timeout 120 godot3-server --path "$work/project" >"$work/$1.log" 2>&1 || rc=$?
  grep -E "^godot3|FAIL|SCRIPT ERROR|At: res://" "$work/$1.log" || true
  if grep -q "SCRIPT ERROR" "$work/$1.log"; then
    echo "godot3: FAILED: $1: a script error (log above)" >&2
    return 99
  fi
  return $rc
}

failed=0
for phase in api examples; do
  run "$phase" || { echo "godot3: FAILED: $phase exited $?" >&2; failed=1; }
done

# The crash: the game must die by SIGKILL (exit 137) after its save.
rc=0; run buy || rc=$?
if [ "$rc" != 137 ]; then
  echo "godot3: FAILED: buy: the game was to be killed (137) before its confirm, exit $rc" >&2; failed=1
elif ! grep -q "the game crashes before confirming" "$work/buy.log"; then
  echo "godot3: FAILED: buy: killed, but not at its confirm" >&2; failed=1
else
  echo "godot3 buy: the game was killed (SIGKILL) between its save and its confirm"
fi
for phase in restart after; do
  run "$phase" || { echo "godot3: FAILED: $phase exited $?" >&2; failed=1; }
done

interfaces=${GODOT_INTERFACES:-"$iap_repo/.build/godot-interfaces"}
godot4=", Godot 4 methods"
if GODOT_INTERFACES=$interfaces bash "$iap_repo/bindings/godot/interfaces.sh" godot4; then
  cc -std=c11 -O1 -g -Wall -Wextra -Werror -pedantic -I"$iap_repo/include" -I"$iap_repo/bindings/godot/common" \
    -I"$iap_repo/bindings/godot/godot4" -I"$interfaces/godot4" "$iap_repo/Tests/bindings/godot3/godot4_methods.c" \
    -L"$IAP_LIB_DIR" -l:"$(basename "$IAP_LIB")" -o "$work/godot4_methods"
  SWIFT_BACKTRACE=enable=no timeout 60 "$work/godot4_methods" \
    "{\"store\":\"simulator\",\"dataDir\":\"$work/g4-data\",\"catalog\":\"$IAP_CATALOG\",\"simulator\":{\"stateDir\":\"$work/g4-state\"}}" \
    || { echo "godot3: FAILED: the Godot 4 class's methods" >&2; failed=1; }
else
  echo "godot3: SKIPPED the Godot 4 methods test: no Godot 4 interface header (see above)"
  godot4=""
fi
[ "$failed" = 0 ] || exit 1
echo "godot3: passed (api, examples, buy/kill/restart/after$godot4) under $(godot3-server --version 2>/dev/null | tail -1)"
