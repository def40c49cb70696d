#!/usr/bin/env bash
# Links a small C program (static_link_test.c) against the libraries
# scripts/build-lib.sh made and runs it with no Swift runtime on the library
# path (an empty environment): the static library from C and from C++ with
# only the flags of link-flags.txt, and the shared library.
#
#   bash Tests/native-lib/run.sh [LIBDIR]       (default: out/lib; run build-lib.sh first)
set -euo pipefail
cd "$(dirname "$0")/../.."
lib=$(cd "${1:-out/lib}" && pwd)
catalog=$(pwd)/samples/catalog/Game.storekit
for f in libIAPBridge.a libIAPBridge.so link-flags.txt include/iap_bridge.h; do
  [ -f "$lib/$f" ] || { echo "native-lib: FAILED: $lib/$f missing (run scripts/build-lib.sh)" >&2; exit 1; }
done
read -r -a flags < "$lib/link-flags.txt"
tmp=$(mktemp -d /tmp/iap-native-lib.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
failed=0

run() {  # name binary
  local name=$1 exe=$2
  # Nothing of a Swift toolchain may be needed: no libswift*, libdispatch, libFoundation.
  if ldd "$exe" | grep -E 'libswift|libdispatch|libFoundation|libBlocksRuntime|not found'; then
    echo "FAIL $name: needs a library it should not (above)"; failed=1; return
  fi
  if env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH= SWIFT_BACKTRACE=enable=no timeout 60 "$exe" "$catalog" > "$tmp/$name.log" 2>&1; then
    echo "ok   $name: $(grep -c '^ok ' "$tmp/$name.log") checks passed, with an empty environment"
  else
    echo "FAIL $name:"; sed 's/^/    /' "$tmp/$name.log"; failed=1
  fi
}

src=Tests/native-lib/static_link_test.c
cc -std=c11 -D_DEFAULT_SOURCE -Wall -Werror -O1 -I"$lib/include" "$src" "$lib/libIAPBridge.a" "${flags[@]}" -o "$tmp/static-c"
run "static library, C link (cc ... libIAPBridge.a $(cat "$lib/link-flags.txt"))" "$tmp/static-c"

if command -v c++ >/dev/null 2>&1; then
  c++ -x c++ -Wall -Werror -O1 -I"$lib/include" "$src" -x none "$lib/libIAPBridge.a" "${flags[@]}" -o "$tmp/static-cxx"
  run "static library, C++ link" "$tmp/static-cxx"
else
  echo "native-lib: c++ not installed: the C++ link was not tried"
fi

cc -std=c11 -D_DEFAULT_SOURCE -Wall -Werror -O1 -I"$lib/include" "$src" -L"$lib" -lIAPBridge -Wl,-rpath,"$lib" -o "$tmp/shared-c"
run "shared library (libIAPBridge.so, -static-stdlib)" "$tmp/shared-c"

if [ "$failed" -ne 0 ]; then echo "native-lib: FAILED" >&2; exit 1; fi
echo "native-lib: static and shared libraries work with no Swift toolchain at run time"
