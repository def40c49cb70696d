#!/usr/bin/env bash
# Builds the native libraries an engine that links C needs, self-contained:
#
#   bash scripts/build-lib.sh [OUT]          (default OUT: out/lib)
#
# Linux (verified by scripts/ci-25-native-lib.sh):
#   OUT/libIAPBridge.so   release build with the Swift runtime inside
#                         (-static-stdlib): it needs libc, libm, libstdc++ and
#                         libgcc_s only, never a Swift toolchain. It exports the
#                         iap_* functions and hides the runtime's symbols, so
#                         it coexists with another Swift library in a process.
#   OUT/libIAPBridge.a    a static library that is complete on its own: the
#                         SDK's objects and the toolchain's swiftrt.o prelinked
#                         into one object (swiftrt.o registers the Swift
#                         metadata sections; without it the first call crashes),
#                         plus the members of the static Swift runtime
#                         archives the SDK needs (swiftCore, _Concurrency,
#                         _StringProcessing, _RegexParser, swiftGlibc,
#                         dispatch, BlocksRuntime).
#   OUT/link-flags.txt    one line: the system libraries a C or C++ link of
#                         libIAPBridge.a adds after it:
#                           cc game.o OUT/libIAPBridge.a $(cat OUT/link-flags.txt)
#   OUT/include/iap_bridge.h
#
# SwiftPM's own static product (.build-lib/release/libIAPBridgeStatic.a) holds
# the SDK's objects only: linked from C it needs the Swift runtime archives
# and swiftrt.o, which is what this script adds.
#
# macOS (NOT verified here: no Mac): OUT/libIAPBridge.dylib, universal
# (arm64 + x86_64); the Swift runtime is part of macOS 12+. The iOS
# XCFramework comes from scripts/build-xcframework.sh (a Mac with Xcode).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out/lib}
scratch=.build-lib   # its own build folder: release flags differ from the usual debug build
mkdir -p "$out/include"
cp include/iap_bridge.h "$out/include/"

die() { echo "build-lib: FAILED: $*" >&2; exit 1; }

case "$(uname -s)" in
  Darwin)
    swift build -c release --product IAPBridge --arch arm64 --arch x86_64 --scratch-path "$scratch"
    dylib=$(find "$scratch" -path '*/release/libIAPBridge.dylib' | head -n 1)
    [ -n "$dylib" ] || die "libIAPBridge.dylib was not built"
    cp "$dylib" "$out/libIAPBridge.dylib"
    lipo -info "$out/libIAPBridge.dylib"
    echo "build-lib: $out/libIAPBridge.dylib (macOS). The static library for Xcode: scripts/build-xcframework.sh"
    exit 0 ;;
  Linux) ;;
  *) die "build on Linux or macOS (Windows: docs/INTEGRATION.md, not verified)" ;;
esac

# ---- libIAPBridge.so -------------------------------------------------------
swift build -c release --product IAPBridge -Xswiftc -static-stdlib --scratch-path "$scratch"
swift build -c release --product IAPBridgeStatic -Xswiftc -static-stdlib --scratch-path "$scratch"
bin="$scratch/release"
cp "$bin/libIAPBridge.so" "$out/libIAPBridge.so"
strip --strip-unneeded "$out/libIAPBridge.so"

needed=$(readelf -d "$out/libIAPBridge.so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
echo "build-lib: libIAPBridge.so needs: $needed"
for n in $needed; do
  case "$n" in
    libswift*|libdispatch*|libFoundation*|libBlocksRuntime*|lib_Foundation*|libicu*) die "libIAPBridge.so needs $n (a Swift toolchain library)" ;;
  esac
done
if nm -D --defined-only "$out/libIAPBridge.so" | awk '{print $3}' | grep -q '^swift_'; then
  die "libIAPBridge.so exports Swift runtime symbols"
fi

# ---- libIAPBridge.a ----------------------------------------------------------
swiftc=$(command -v swiftc) || die "swiftc not found"
static_dir=$(cd "$(dirname "$(readlink -f "$swiftc")")/../lib/swift_static/linux" && pwd) || die "no lib/swift_static/linux in the toolchain"
arch=$(uname -m)
swiftrt="$static_dir/$arch/swiftrt.o"
[ -f "$swiftrt" ] || swiftrt="$static_dir/swiftrt.o"
[ -f "$swiftrt" ] || die "swiftrt.o not found in $static_dir"

work=$(mktemp -d /tmp/iap-build-lib.XXXXXX)
trap 'rm -rf "$work"' EXIT
ld -r -o "$work/IAPBridge.o" --whole-archive "$bin/libIAPBridgeStatic.a" --no-whole-archive "$swiftrt"

# The libraries the SDK's objects ask for (each Swift object lists them in its
# .swift1_autolink_entries section), plus what the toolchain adds to every
# -static-stdlib link (static-stdlib-args.lnk: dispatch for _Concurrency, ...).
# A library with an archive in swift_static is merged in; the rest are system
# libraries and go to link-flags.txt.
mkdir "$work/objs"
(cd "$work/objs" && ar x "$OLDPWD/$bin/libIAPBridgeStatic.a")
wanted=$( { for o in "$work"/objs/*.o; do
              readelf -p .swift1_autolink_entries "$o" 2>/dev/null | grep -o ' -l[^ ]*$' || true
            done
            tr -s ' \t' '\n\n' < "$static_dir/static-stdlib-args.lnk" | grep -E -- '^-l[^-]' || true
          } | sed 's/^ *-l//' | awk '!seen[$0]++')
mri="CREATE $work/libIAPBridge.a
ADDMOD $work/IAPBridge.o"
system_libs=()
for l in $wanted; do
  if [ -f "$static_dir/lib$l.a" ]; then
    mri="$mri
ADDLIB $static_dir/lib$l.a"
  else
    system_libs+=("-l$l")
  fi
done
printf '%s\nSAVE\nEND\n' "$mri" | ar -M
ranlib "$work/libIAPBridge.a"
strip --strip-debug "$work/libIAPBridge.a"
mv "$work/libIAPBridge.a" "$out/libIAPBridge.a"

# System libraries in a fixed, link-friendly order.
flags=""
for l in -lstdc++ -lm -ldl -lpthread -lutil; do
  for s in "${system_libs[@]}"; do [ "$s" = "$l" ] && flags="$flags $l"; done
done
for s in "${system_libs[@]}"; do
  case " $flags " in *" $s "*) ;; *) flags="$flags $s" ;; esac
done
echo "${flags# }" > "$out/link-flags.txt"

echo "build-lib: merged $(printf '%s\n' "$mri" | grep -c ADDLIB) Swift runtime archives into libIAPBridge.a"
echo "build-lib: done"
ls -l "$out/libIAPBridge.so" "$out/libIAPBridge.a" "$out/link-flags.txt"
echo "link-flags.txt: $(cat "$out/link-flags.txt")"
