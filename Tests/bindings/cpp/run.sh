#!/usr/bin/env bash
# Compiles Tests/bindings/cpp/test.cpp against include/iap_bridge.hpp with g++
# and clang++ (-std=c++17 -Wall -Wextra -pedantic -Werror), with exceptions and
# with -fno-exceptions (Unreal's default), links the library and runs each;
# then Tests/bindings/cpp/examples.cpp: the C and C++ examples of the header
# comment, docs/INTEGRATION.md and README.md, run as written; then test.cpp
# once more with g++ -fsanitize=address (a handler closing or destroying its
# Bridge must not free memory it still uses).
#   IAP_LIB=/path/libIAPBridge.so bash Tests/bindings/cpp/run.sh
# CXXS="g++" restricts the compilers. A missing compiler fails.
set -euo pipefail
source "$(dirname "$0")/../env.sh"
cd "$iap_repo"
out=$(mktemp -d /tmp/iap-cpp-build.XXXXXX)
trap 'rm -rf "$out"' EXIT

# The examples developers copy, cut out of the files that document them (see
# Tests/bindings/cpp/examples.cpp): from its first line to the closing brace at
# its own indentation.
extract() {  # file, first line (a regex), comment prefix to strip, output
  awk -v start="$2" -v prefix="$3" '
    index($0, prefix) == 1 { line = substr($0, length(prefix) + 1) } index($0, prefix) != 1 { line = $0 }
    !on && line ~ start { on = 1; match(line, /^ */); indent = substr(line, 1, RLENGTH) }
    on { print line; if (line == indent "}") exit }
  ' "$1" > "$4"
  if [ ! -s "$4" ] || [ "$(tail -n 1 "$4" | tr -d ' ')" != "}" ]; then
    echo "cpp: FAILED: no complete example matching /$2/ in $1" >&2
    exit 1
  fi
}
frame_loop='^while \(auto m = bridge\.poll\(std::nothrow\)\.value_or\(std::nullopt\)\) \{'
extract include/iap_bridge.hpp "$frame_loop" ' *   ' "$out/example-hpp.inc"
extract docs/INTEGRATION.md "$frame_loop" '' "$out/example-doc.inc"
extract README.md '^void every_frame\(void\) \{' '' "$out/example-readme.inc"
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
  # The examples use the throwing calls too: built with exceptions.
  echo "cpp: $cxx, the examples of iap_bridge.hpp, docs/INTEGRATION.md and README.md"
  "$cxx" -std=c++17 -Wall -Wextra -pedantic -Werror -Iinclude -I"$out" \
    Tests/bindings/cpp/examples.cpp -L"$IAP_LIB_DIR" -l:"$(basename "$IAP_LIB")" -o "$out/examples"
  timeout 120 "$out/examples" "$IAP_CATALOG"
done
case " ${CXXS:-g++ clang++} " in
  *" g++ "*)
    echo "cpp: g++, AddressSanitizer, exceptions"
    g++ -std=c++17 -Wall -Wextra -pedantic -Werror -g -fsanitize=address -fno-omit-frame-pointer -Iinclude \
      Tests/bindings/cpp/test.cpp -L"$IAP_LIB_DIR" -l:"$(basename "$IAP_LIB")" -o "$out/test-asan"
    timeout 120 "$out/test-asan" "$IAP_CATALOG" ;;
esac
