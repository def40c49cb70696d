#!/usr/bin/env bash
# Compiles and links IAPBridge for Apple platforms, from Linux, against
# Apple's own SDK interfaces (../shared/apple-sdk), and checks the result:
#
#   bash scripts/check-apple.sh                 check (CI runs this)
#   bash scripts/check-apple.sh --write-expected   also rewrite the lists of
#                                                  undefined symbols (review the diff)
#
# For each target (arm64-apple-ios15.0 against iPhoneOS 26.2; arm64- and
# x86_64-apple-macosx12.0 against MacOSX 15.5):
#  1. every library module (CIAPSupport, CIAPFrame, IAPCore, IAPSimulator, IAPStoreKit, IAPStores,
#     IAPBridge, and the Swift API IAPKit, which is not linked into the
#     library) compiles to a Mach-O object, whole-module and -O, the way a
#     release build does, and the compiler reports nothing: no error, no
#     warning (for iOS also IAPCore as a debug build compiles it, test hooks
#     on). Any diagnostic fails the check.
#  2. the objects link into libIAPBridge.dylib with ld64.lld (Debian's
#     lld-19) against the SDK's .tbd stubs; what stays undefined must be
#     exactly scripts/apple/undefined-<platform>-<arch>.txt, each line a symbol and
#     a machine-checked reason (stub gaps of the snapshot); StoreKit symbols
#     are checked against iOS 16.5's StoreKit.tbd (Apple's own): one missing
#     there must be referenced weakly (an API newer than iOS 16.5, used behind
#     #available); the C functions defined are exactly the header's.
# Writes .build-apple/<target>/obj/*.o (scripts/build-apple-libs.sh packs
# the shipped binaries from them). Module caches stay in .build-apple/sdk/mc:
# a cold run builds Swift, Foundation, UIKit and StoreKit from their
# interfaces (about a minute per SDK on 2 cores), a warm one skips that.
#
# Never skips silently: without the SDK sets or lld-19 it fails and says why.
# APPLE_SDK_DIR overrides where the sets are (default ../shared/apple-sdk).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
write_expected=0
[ "${1:-}" = "--write-expected" ] && write_expected=1

die() { echo "check-apple: FAILED: $*" >&2; exit 1; }
# A module's Swift files, folders included (IAPCore is laid out in parts:
# scripts/layout/check_layout.py), in one fixed order so builds repeat.
swift_sources() { find "Sources/$1" -name '*.swift' | LC_ALL=C sort; }
sets=${APPLE_SDK_DIR:-$root/../shared/apple-sdk}
[ -f "$sets/prepare.sh" ] || die "no Apple SDK sets at $sets (set APPLE_SDK_DIR to the folder holding prepare.sh)"
LD=${LD:-/usr/lib/llvm-19/bin/ld64.lld}
[ -x "$LD" ] || die "$LD not found: apt-get install lld-19 (the Swift toolchain's ld64.lld refuses iOS and macOS)"
command -v llvm-nm >/dev/null || die "llvm-nm not found (it comes with the Swift toolchain)"

work=$root/.build-apple
sdkdir=$work/sdk
bash "$sets/prepare.sh" "$sdkdir" > /dev/null
# docs/APPLE.md's table of every StoreKit API the backend uses: each cited
# line of the iPhoneOS 26.2 interface declares what the row names, with the
# availability the row states.
python3 scripts/apple/check_api_table.py "$sdkdir/iPhoneOS26.2.sdk/System/Library/Frameworks/StoreKit.framework/Modules/StoreKit.swiftmodule/arm64e-apple-ios.swiftinterface" \
  || die "docs/APPLE.md's StoreKit API table does not match the iPhoneOS 26.2 interface (above)"
clang=$(dirname "$(readlink -f "$(command -v swiftc)")")/clang
modules=(IAPCore IAPSimulator IAPStoreKit IAPStores IAPBridge)
sk165=$work/ref/storekit-ios16.5.txt
ref165=$work/ref/ios16.5.txt
mkdir -p "$work/ref"
python3 scripts/apple/tbd_symbols.py arm64 "$sdkdir/iPhoneOS16.5.sdk/System/Library/Frameworks/StoreKit.framework/StoreKit.tbd" > "$sk165"
python3 scripts/apple/tbd_symbols.py arm64 "$sdkdir/iPhoneOS16.5.sdk" > "$ref165"
[ "$(grep -c '^_\$s' "$sk165")" -gt 900 ] || die "iPhoneOS 16.5's StoreKit.tbd lists too few Swift symbols: the set is damaged"

failures=0
total_diag=0
check_target() {  # SDK TARGET PLATFORM-LIST
  local sdkname=$1 target=$2 list=$3
  local sdk=$sdkdir/$sdkname dest=$work/$target
  local arch=${target%%-*} platform min
  case "$target" in
    *-ios*) platform=ios; min=${target##*-ios} ;;
    *-macosx*) platform=macos; min=${target##*-macosx} ;;
  esac
  local sdkver
  sdkver=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["Version"])' "$sdk/SDKSettings.json")
  echo "check-apple: $target against $sdkname"
  rm -rf "$dest"; mkdir -p "$dest/obj" "$dest/modules" "$dest/c" "$dest/log"
  cp Sources/CIAPSupport/include/*.h "$dest/c/"
  { echo "module CIAPSupport {"; for h in "$dest"/c/*.h; do echo "  header \"$(basename "$h")\""; done
    echo "  export *"; echo "}"; } > "$dest/c/module.modulemap"
  local t0 diag=0 log
  t0=$(date +%s)
  # 1. Compile. Every line the compilers print that names an error or a
  # warning counts, wherever it points (a module map, an SDK header, ours).
  # The C targets: CIAPSupport (helpers) and CIAPFrame (iap_poll's C
  # entry), which no Swift module imports, so it has no module map here.
  for c in Sources/CIAPSupport/*.c Sources/CIAPFrame/*.c; do
    local ctarget
    ctarget=$(basename "$(dirname "$c")")
    log=$dest/log/$ctarget-$(basename "$c" .c).log
    "$clang" -target "$target" -isysroot "$sdk" -O2 -Wall -Wextra -I Sources/CIAPSupport/include -I Sources/CIAPFrame/include \
      -c "$c" -o "$dest/obj/$ctarget-$(basename "$c" .c).o" > "$log" 2>&1 || echo "error: clang failed on $c" >> "$log"
  done
  local common=(-target "$target" -sdk "$sdk" -resource-dir "$sdkdir/resource-dir" -module-cache-path "$sdkdir/mc"
                -swift-version 6 -parse-as-library -runtime-compatibility-version none -I "$dest/c" -I "$dest/modules")
  for mod in "${modules[@]}"; do
    log=$dest/log/$mod.log
    swiftc "${common[@]}" -O -whole-module-optimization -module-name "$mod" -emit-module \
      -emit-module-path "$dest/modules/$mod.swiftmodule" -c -o "$dest/obj/$mod.o" $(swift_sources "$mod") > "$log" 2>&1 \
      || echo "error: swiftc failed on module $mod" >> "$log"
  done
  # The Swift API (IAPKit, the IAPBridgeSwift product) compiles the same
  # way, with nothing reported; it is not part of libIAPBridge, so its
  # object stays out of obj/ (the link and the symbol lists below).
  mkdir -p "$dest/swiftapi"
  log=$dest/log/IAPKit.log
  swiftc "${common[@]}" -O -whole-module-optimization -module-name IAPKit -emit-module \
    -emit-module-path "$dest/modules/IAPKit.swiftmodule" -c -o "$dest/swiftapi/IAPKit.o" $(swift_sources IAPKit) > "$log" 2>&1 \
    || echo "error: swiftc failed on module IAPKit" >> "$log"
  if [ "$platform" = ios ]; then
    # A debug build (Xcode's default for a package) compiles IAPCore's test hooks too.
    log=$dest/log/IAPCore-debug.log
    swiftc "${common[@]}" -Onone -DIAP_TEST_HOOKS -DDEBUG -typecheck -module-name IAPCore $(swift_sources IAPCore) > "$log" 2>&1 \
      || echo "error: swiftc failed on IAPCore (debug, test hooks)" >> "$log"
  fi
  diag=$(cat "$dest"/log/*.log | grep -cE '(error|warning):' || true)
  cat "$dest"/log/*.log | grep -E '(error|warning):' | sed 's/^/  /' | sort -u || true
  echo "  compile: $diag diagnostics ($(( $(date +%s) - t0 ))s)"
  total_diag=$((total_diag + diag))
  if [ "$diag" -ne 0 ]; then failures=$((failures + 1)); return; fi

  # 2. Link, with every undefined symbol reported instead of stopping at the
  # first, then the symbol checks.
  "$clang" -target "$target" -isysroot "$sdk" -O2 -c "$sets/availability-shim.c" -o "$dest/shim.o"
  local ov=$dest/overlay
  link_check() {
    "$LD" -arch "$arch" -platform_version "$platform" "$min" "$sdkver" -syslibroot "$sdk" -syslibroot "$ov" -dylib \
      -install_name @rpath/libIAPBridge.dylib -o "$dest/libIAPBridge-check.dylib" "$dest"/obj/*.o "$dest/shim.o" \
      -L "$sdk/usr/lib/swift" -lSystem -lobjc -flat_namespace -undefined warning > "$dest/log/link.txt" 2>&1 || true
  }
  link_check
  # A library the SDK's stubs re-export but the snapshot lacks (MacOSX 15.5:
  # Foundation.tbd) gets an empty placeholder stub, so the link goes on; its
  # symbols then show as undefined, with the reason no-foundation-stub.
  local missing
  missing=$(sed -n 's/.*unable to locate re-export with install name //p' "$dest/log/link.txt" | sort -u)
  if [ -n "$missing" ]; then
    local tg=$arch-$platform
    for name in $missing; do
      mkdir -p "$ov$(dirname "$name")"
      printf -- "--- !tapi-tbd\ntbd-version: 4\ntargets: [ %s ]\ninstall-name: '%s'\ncurrent-version: 1\ncompatibility-version: 1\n...\n" \
        "$tg" "$name" > "$ov$name.tbd"
      echo "  placeholder: $name.tbd (the snapshot lacks this stub)"
    done
    link_check
  fi
  if grep -E 'error:' "$dest/log/link.txt"; then
    echo "  FAIL: the link reported errors (above)"; failures=$((failures + 1)); return
  fi
  sed -n 's/.*undefined symbol: //p' "$dest/log/link.txt" | sort -u > "$dest/undefined.txt"
  local extra=()
  [ "$write_expected" = 1 ] && extra+=(--write-expected)
  [ "$platform" = ios ] && extra+=(--storekit-reference "$sk165")
  extra+=(--required "scripts/apple/required-$platform.txt")
  python3 scripts/apple/check_symbols.py --objects "$dest/obj" --undefined "$dest/undefined.txt" \
    --expected "scripts/apple/$list" --reference "$ref165" --header include/iap_bridge.h "${extra[@]}" \
    || failures=$((failures + 1))
}

t_all=$(date +%s)
check_target iPhoneOS26.2.sdk arm64-apple-ios15.0 undefined-ios-arm64.txt
check_target MacOSX15.5.sdk arm64-apple-macosx12.0 undefined-macos-arm64.txt
check_target MacOSX15.5.sdk x86_64-apple-macosx12.0 undefined-macos-x86_64.txt
echo "check-apple: $total_diag diagnostics over 3 targets; $failures target(s) failed; $(( $(date +%s) - t_all ))s"
[ "$failures" -eq 0 ] || die "see above"
echo "check-apple: passed"
