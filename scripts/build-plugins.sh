#!/usr/bin/env bash
# Rebuilds every native library the Unity package ships, from the sources,
# on this Linux machine, and records what they were built from:
#
#   bash scripts/build-plugins.sh           rebuild into unity/com.iapbridge.sdk/Runtime/Plugins
#                                           and write unity/plugins-build.txt
#   bash scripts/build-plugins.sh --check   fail if a committed binary is stale: the sources,
#                                           toolchain or SDK changed since it was built, it
#                                           differs from its recorded hash, or (Apple ones)
#                                           a rebuild here gives different code (CI runs this)
#
#   Runtime/Plugins/Linux/x86_64/libIAPBridge.so   scripts/build-lib.sh (the Swift runtime inside)
#   Runtime/Plugins/macOS/libIAPBridge.dylib       universal arm64 + x86_64, macOS 12+, ad-hoc
#                                                  signed, exports exactly the header's functions
#   Runtime/Plugins/iOS/libIAPBridgeStatic.a       arm64 iOS 15+ device objects, for Unity's
#                                                  Xcode project (docs/APPLE.md says why a
#                                                  static library)
#
# The Apple objects come from scripts/check-apple.sh (run first, here, unless
# APPLE_CHECKED=1 says it just ran). Links use lld-19 against the SDK stubs
# plus the stub gaps check-apple.sh lists and explains (scripts/apple/
# undefined-*.txt), added by ../shared/apple-sdk/tbd-supplement.py. What was
# never done with them: loading on a Mac or an iPhone, Xcode's link, StoreKit
# at run time (no Apple device here).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
mode=build
[ "${1:-}" = "--check" ] && mode=check
die() { echo "build-plugins: FAILED: $*" >&2; exit 1; }

plugins=unity/com.iapbridge.sdk/Runtime/Plugins
stamp=unity/plugins-build.txt
sets=${APPLE_SDK_DIR:-$root/../shared/apple-sdk}
work=$root/.build-apple
LD=${LD:-/usr/lib/llvm-19/bin/ld64.lld}
binaries=("Linux/x86_64/libIAPBridge.so" "macOS/libIAPBridge.dylib" "iOS/libIAPBridgeStatic.a")

# What the binaries are made from: the library sources (the stand-in and
# IAPTestSupport are test-only), the header, the build scripts, the
# toolchain and the SDK sets.
inputs_hash() {
  {
    find Sources include scripts/apple -type f ! -path 'Sources/StoreKitStandIn/*' ! -path 'Sources/IAPTestSupport/*' | LC_ALL=C sort
    echo Package.swift scripts/build-lib.sh scripts/build-plugins.sh scripts/check-apple.sh
  } | xargs sha256sum | sha256sum | cut -c1-64
}
toolchain() { swiftc --version 2>/dev/null | head -n 1; }
sdk_sets() { (cd "$sets" && sha256sum ./*.tar.xz tbd-supplement.py availability-shim.c | sha256sum | cut -c1-64); }

# ---- the Apple binaries, into DEST ------------------------------------------
build_apple() {  # DEST
  local dest=$1
  [ "${APPLE_CHECKED:-0}" = 1 ] || bash scripts/check-apple.sh
  [ -x "$LD" ] || die "$LD not found: apt-get install lld-19"
  local sdkdir=$work/sdk exports=$work/exports.txt
  grep -oE '^[a-z_0-9 \*]+\biap_[a-z_0-9]+\(' include/iap_bridge.h | grep -oE 'iap_[a-z_0-9]+' | sed 's/^/_/' | sort -u > "$exports"
  local thin=()
  for target in arm64-apple-macosx12.0 x86_64-apple-macosx12.0; do
    local t=$work/$target arch=${target%%-*} sdk=$sdkdir/MacOSX15.5.sdk
    [ -f "$t/obj/IAPBridge.o" ] || die "no objects for $target (scripts/check-apple.sh makes them)"
    local ov=$t/ship-overlay; rm -rf "$ov"; mkdir -p "$ov/System/Library/Frameworks" "$ov/usr/lib/swift"
    python3 "$sets/tbd-supplement.py" "$sdk" "$ov" "$t/undefined.txt" > "$t/log/supplement.txt"
    local sdkver
    sdkver=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["Version"])' "$sdk/SDKSettings.json")
    "$LD" -arch "$arch" -platform_version macos 12.0 "$sdkver" -syslibroot "$sdk" -syslibroot "$ov" \
      -F "$ov/System/Library/Frameworks" -L "$ov/usr/lib/swift" -L "$sdk/usr/lib/swift" -dylib \
      -install_name @rpath/libIAPBridge.dylib -o "$t/libIAPBridge.dylib" "$t"/obj/*.o "$t/shim.o" \
      -lSystem -lobjc -rpath /usr/lib/swift -exported_symbols_list "$exports" -dead_strip -adhoc_codesign \
      || die "linking the macOS $arch dylib"
    # What a host sees: exactly the header's functions, and a code signature
    # (arm64 macOS loads no unsigned code).
    llvm-nm -gU -j "$t/libIAPBridge.dylib" | sort -u | cmp -s - "$exports" \
      || die "the macOS $arch dylib does not export exactly the header's functions"
    llvm-objdump --macho --private-headers "$t/libIAPBridge.dylib" | grep -q LC_CODE_SIGNATURE \
      || die "the macOS $arch dylib has no code signature"
    thin+=("$t/libIAPBridge.dylib")
  done
  mkdir -p "$dest/macOS" "$dest/iOS"
  python3 scripts/apple/lipo.py "$dest/macOS/libIAPBridge.dylib" "${thin[@]}" > /dev/null

  # iOS: the device objects in one archive. Not the availability shim: in an
  # app, compiler-rt (which Xcode links) defines __isPlatformVersionAtLeast.
  local ios=$work/arm64-apple-ios15.0
  [ -f "$ios/obj/IAPBridge.o" ] || die "no iOS objects (scripts/check-apple.sh makes them)"
  rm -f "$dest/iOS/libIAPBridgeStatic.a"
  (cd "$ios/obj" && llvm-ar rcsD --format=darwin "$dest/iOS/libIAPBridgeStatic.a" CIAPSupport-*.o CIAPFrame-*.o IAPCore.o IAPSimulator.o IAPStoreKit.o IAPStores.o IAPBridge.o)
  check_ios_archive "$dest/iOS/libIAPBridgeStatic.a"
}

# A C program that calls the header's functions links against the archive
# the way an app's link would: only the members its calls need, the Swift
# runtime from the SDK, the listed stub gaps supplied.
check_ios_archive() {  # ARCHIVE
  local a=$1 ios=$work/arm64-apple-ios15.0 sdk=$work/sdk/iPhoneOS26.2.sdk
  local clang; clang=$(dirname "$(readlink -f "$(command -v swiftc)")")/clang
  local app=$ios/app; rm -rf "$app"; mkdir -p "$app/ov"
  printf '#include "iap_bridge.h"\nint main(void) { iap_bridge *b = 0; int r = iap_open("{}", &b); return r + (int)iap_version_number() + (iap_poll(b) != 0); }\n' > "$app/main.c"
  "$clang" -target arm64-apple-ios15.0 -isysroot "$sdk" -I include -O2 -c "$app/main.c" -o "$app/main.o"
  python3 "$sets/tbd-supplement.py" "$sdk" "$app/ov" "$ios/undefined.txt" > "$app/supplement.txt"
  "$LD" -arch arm64 -platform_version ios 15.0 26.2 -syslibroot "$sdk" -syslibroot "$app/ov" \
    -F "$app/ov/System/Library/Frameworks" -L "$app/ov/usr/lib/swift" -L "$sdk/usr/lib/swift" \
    -o "$app/app" "$app/main.o" "$ios/shim.o" "$a" -lSystem -lobjc -rpath /usr/lib/swift > "$app/link.txt" 2>&1 \
    || { cat "$app/link.txt"; die "an iOS app does not link against libIAPBridgeStatic.a"; }
}

describe() {  # FILE: size, and what a reader of the package needs to know
  local f=$1
  printf '%s %s bytes' "$(sha256sum "$f" | cut -c1-64)" "$(stat -c %s "$f")"
}

if [ "$mode" = build ]; then
  bash scripts/build-lib.sh out/lib
  cp out/lib/libIAPBridge.so "$plugins/Linux/x86_64/libIAPBridge.so"
  build_apple "$root/$plugins"
  {
    echo "# The native libraries in unity/com.iapbridge.sdk/Runtime/Plugins, written by"
    echo "# scripts/build-plugins.sh; scripts/build-plugins.sh --check fails when they are stale."
    echo "inputs $(inputs_hash)"
    echo "toolchain $(toolchain)"
    echo "sdk-sets $(sdk_sets)"
    for b in "${binaries[@]}"; do echo "binary $b $(describe "$plugins/$b")"; done
  } > "$stamp"
  cat "$stamp"
  exit 0
fi

# ---- --check ------------------------------------------------------------------
[ -f "$stamp" ] || die "$stamp is missing: run bash scripts/build-plugins.sh"
stale=0
want() { awk -v k="$1 " 'index($0, k) == 1 { print substr($0, length(k) + 1) }' "$stamp"; }
[ "$(want inputs)" = "$(inputs_hash)" ] || { echo "build-plugins: stale: the sources or build scripts changed since the binaries were built"; stale=1; }
[ "$(want toolchain)" = "$(toolchain)" ] || { echo "build-plugins: stale: built with '$(want toolchain)', this machine has '$(toolchain)'"; stale=1; }
[ "$(want sdk-sets)" = "$(sdk_sets)" ] || { echo "build-plugins: stale: the Apple SDK sets changed"; stale=1; }
for b in "${binaries[@]}"; do
  [ -f "$plugins/$b" ] || { echo "build-plugins: $plugins/$b is missing"; stale=1; continue; }
  [ "$(want "binary $b")" = "$(describe "$plugins/$b")" ] || { echo "build-plugins: $plugins/$b is not the binary $stamp records"; stale=1; }
done
[ "$stale" = 0 ] || die "run bash scripts/build-plugins.sh and commit the result"
# The same sources give the same binaries: rebuild the Apple ones here and
# compare. The macOS dylib must match byte for byte; the iOS archive too,
# except each object's 16-byte __swift_modhash, which follows the build's
# absolute paths (scripts/apple/same_archive.py). The Linux library embeds
# its build paths, so a clone elsewhere links different bytes: it is checked
# by the recorded hashes above, and CI's Mono step runs the committed file.
fresh=$work/fresh; rm -rf "$fresh"; mkdir -p "$fresh"
build_apple "$fresh"
cmp -s "$fresh/macOS/libIAPBridge.dylib" "$plugins/macOS/libIAPBridge.dylib" \
  || die "macOS/libIAPBridge.dylib rebuilt from these sources differs from the committed one"
python3 scripts/apple/same_archive.py "$fresh/iOS/libIAPBridgeStatic.a" "$plugins/iOS/libIAPBridgeStatic.a" > /dev/null \
  || die "iOS/libIAPBridgeStatic.a rebuilt from these sources differs from the committed one"
echo "build-plugins: the committed binaries are current (inputs, toolchain and SDK as recorded; the Apple ones rebuilt identical)"
for b in "${binaries[@]}"; do echo "  $b: $(stat -c %s "$plugins/$b") bytes"; done
