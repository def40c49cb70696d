#!/usr/bin/env bash
# Builds the Godot addon folders (Linux x86_64), ready to copy into a project
# as res://addons/iap_bridge/:
#   <out>/godot3/addons/iap_bridge/  iap_bridge.gd, iap_bridge.gdnlib,
#                                    libiap_godot3.so (GDNative), libIAPBridge.so
#   <out>/godot4/addons/iap_bridge/  iap_bridge.gdextension, libiap_godot4.so
#                                    (GDExtension), libIAPBridge.so
# out: ${GODOT_BUILD:-<repo>/.build/godot}. The library is $IAP_LIB (default
# .build/debug/libIAPBridge.so). Godot's headers come from
# bindings/godot/interfaces.sh (run here when missing).
#   bash bindings/godot/build.sh            # both
#   bash bindings/godot/build.sh godot3     # one
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
here="$repo/bindings/godot"
out=${GODOT_BUILD:-"$repo/.build/godot"}
interfaces=${GODOT_INTERFACES:-"$repo/.build/godot-interfaces"}
lib=${IAP_LIB:-"$repo/.build/debug/libIAPBridge.so"}
[ -f "$lib" ] || { echo "godot build: $lib does not exist (swift build, or set IAP_LIB)" >&2; exit 1; }
want=("${@:-godot3 godot4}")
want=(${want[*]})
GODOT_INTERFACES=$interfaces bash "$here/interfaces.sh" "${want[@]}"
cc=${CC:-cc}
# -Wl,-rpath,$ORIGIN: libIAPBridge.so is found beside the binding, where Godot
# keeps the addon's files (and copies them on export).
cflags=(-std=c11 -O2 -g -fPIC -shared -fvisibility=hidden -Wall -Wextra -Werror -pedantic
        -I"$repo/include" -I"$here/common")

addon() {  # addon godot3|godot4: an empty addon folder with libIAPBridge.so in it
  local dir="$out/$1/addons/iap_bridge"
  rm -rf "$dir"; mkdir -p "$dir"
  cp "$lib" "$dir/libIAPBridge.so"
  echo "$dir"
}

for w in "${want[@]}"; do
  case "$w" in
    godot3)
      dir=$(addon godot3)
      "$cc" "${cflags[@]}" -I"$interfaces/godot3/include" "$here/godot3/iap_gdnative.c" \
        -L"$dir" -lIAPBridge -Wl,-rpath,'$ORIGIN' -Wl,--no-undefined -o "$dir/libiap_godot3.so"
      cp "$here/godot3/iap_bridge.gd" "$here/godot3/iap_bridge.gdnlib" "$dir/"
      echo "godot build: $dir (GDNative, Godot 3 $(cat "$interfaces/godot3/version"))" ;;
    godot4)
      dir=$(addon godot4)
      "$cc" "${cflags[@]}" -I"$interfaces/godot4" "$here/godot4/iap_gdextension.c" \
        -L"$dir" -lIAPBridge -Wl,-rpath,'$ORIGIN' -Wl,--no-undefined -o "$dir/libiap_godot4.so"
      cp "$here/godot4/iap_bridge.gdextension" "$dir/"
      echo "godot build: $dir (GDExtension, compiled against $(cat "$interfaces/godot4/version"); not run here)" ;;
    *) echo "godot build: unknown target $w (godot3, godot4)" >&2; exit 2 ;;
  esac
done
