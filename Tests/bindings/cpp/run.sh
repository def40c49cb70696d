#!/usr/bin/env bash
# Compiles Tests/bindings/cpp/test.cpp against include/iap_bridge.hpp with g++
# and clang++ (-std=c++17 -Wall -Wextra -pedantic -Werror), with exceptions and
# with -fno-exceptions (Unreal's default), links the library and runs each.
#   IAP_LIB=/path/libIAPBridge.so bash Tests/bindings/cpp/run.sh
# CXXS="g++" restricts the compilers. A missing compiler fails.
set -euo pipefail
source "$(dirname "$0")/../env.sh"
cd "$iap_repo"
out=$(mktemp -d /tmp/iap-cpp-build.XXXXXX)
trap 'rm -rf "$out"' EXIT
for cxx in ${CXXS:-g++ clang++}; do
  if ! command -v "$cxx" >/dev/null 2>&1; then
    # The Swift toolchain ships clang++ next to swift.
    tc="$(dirname "$(readlink -f "$(command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)")")/$cxx"
    [ -x "$tc" ] || { echo "cpp: FAILED: $cxx is not installed" >&2; exit 1; }
    cxx=$tc
  fi
  for mode in exceptions no-exceptions; do
    flags=()
    [ "$mode" = no-exceptions ] && flags=(-fno-exceptions)
    echo "cpp: $cxx ($("$cxx" -dumpversion)), $mode"
    "$cxx" -std=c++17 -Wall -Wextra -pedantic -Werror ${flags[@]+"${flags[@]}"} -Iinclude \
      Tests/bindings/cpp/test.cpp -L"$IAP_LIB_DIR" -l:"$(basename "$IAP_LIB")" -o "$out/test-$mode"
    timeout 120 "$out/test-$mode" "$IAP_CATALOG"
  done
done
