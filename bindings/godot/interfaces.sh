#!/usr/bin/env bash
# Fetches Godot's published C interfaces, which no Debian binary package and no
# PyPI package ships, from Debian's own source packages of Godot, and generates
# the headers with Godot's own generator scripts, as Godot's build does:
#   Godot 3 (GDNative):    the source of bookworm's godot 3.2.3 (the engine that
#                          `godot3-server` runs): modules/gdnative/include, plus
#                          gdnative_api_struct.gen.h made by gdnative_builders.py
#                          from gdnative_api.json
#   Godot 4 (GDExtension): the source of sid's godot 4.x: gdextension_interface.h
#                          made by core/extension/make_interface_header.py from
#                          gdextension_interface.json
# Nothing of Godot is copied into this repository: the files land in
#   ${GODOT_INTERFACES:-<repo>/.build/godot-interfaces}/{godot3,godot4}
# (.build is ignored by git). Downloads go through apt (a private list of deb-src
# lines; apt checks each file against the signed Sources index). Needs apt,
# python3, tar, xz-utils. Prints the versions it used.
#   bash bindings/godot/interfaces.sh          # both
#   bash bindings/godot/interfaces.sh godot3   # only one
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${GODOT_INTERFACES:-"$repo/.build/godot-interfaces"}
want=("${@:-godot3 godot4}")
want=(${want[*]})
mkdir -p "$out"
apt_dir="$out/apt"

apt_setup() {
  [ -f "$apt_dir/ready" ] && return
  mkdir -p "$apt_dir/lists/partial"
  cat > "$apt_dir/sources" <<'EOF'
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian sid main
EOF
  apt-get update -qq "${apt_opts[@]}" >/dev/null
  touch "$apt_dir/ready"
}
apt_opts=(-o "Dir::Etc::sourcelist=$apt_dir/sources" -o Dir::Etc::sourceparts=/dev/null
          -o "Dir::State::Lists=$apt_dir/lists" -o Dir::Cache=/nonexistent -o Debug::NoLocking=1)

# fetch SOURCE/SUITE DIR: downloads that source package's .orig tarball into DIR
# (its name is printed on stdout), its SHA256 checked by apt-helper.
fetch_orig() {
  local line uri name sum
  line=$(apt-get source --print-uris "${apt_opts[@]}" "$1" 2>/dev/null | grep "\.orig\.tar\." | head -1)
  [ -n "$line" ] || { echo "godot interfaces: apt has no source of $1" >&2; return 1; }
  read -r uri name _ sum <<<"$line"
  uri=${uri//\'/}
  if [ ! -f "$2/$name" ]; then
    /usr/lib/apt/apt-helper -o APT::Sandbox::User=root download-file "$uri" "$2/$name.part" "$sum" >/dev/null
    mv "$2/$name.part" "$2/$name"
  fi
  echo "$name"
}

godot3() {
  local dir="$out/godot3"
  [ -f "$dir/include/gdnative_api_struct.gen.h" ] && { echo "godot interfaces: godot3 $(cat "$dir/version")"; return; }
  rm -rf "$dir"; mkdir -p "$dir/src"
  apt_setup
  local tarball; tarball=$(fetch_orig godot/bookworm "$out")
  tar xf "$out/$tarball" -C "$dir/src" --strip-components=1 --wildcards \
    '*/modules/gdnative/include/*' '*/modules/gdnative/gdnative_api.json' \
    '*/modules/gdnative/gdnative_builders.py' '*/platform_methods.py' '*/LICENSE.txt'
  (cd "$dir/src" && python3 - <<'EOF'
import sys
sys.path[:0] = [".", "modules/gdnative"]
import gdnative_builders
gdnative_builders.build_gdnative_api_struct(
    ["modules/gdnative/include/gdnative_api_struct.gen.h", "gdnative_api_struct.gen.cpp"],
    ["modules/gdnative/gdnative_api.json"], None)
EOF
  )
  mv "$dir/src/modules/gdnative/include" "$dir/include"
  cp "$dir/src/LICENSE.txt" "$dir/LICENSE.txt"
  rm -rf "$dir/src" "$out/$tarball"
  echo "${tarball%.orig.tar.*}" > "$dir/version"
  echo "godot interfaces: godot3 $(cat "$dir/version") (GDNative headers generated from Debian's source)"
}

godot4() {
  local dir="$out/godot4"
  [ -f "$dir/gdextension_interface.h" ] && { echo "godot interfaces: godot4 $(cat "$dir/version")"; return; }
  rm -rf "$dir"; mkdir -p "$dir/src"
  apt_setup
  local tarball; tarball=$(fetch_orig godot/sid "$out")
  tar xf "$out/$tarball" -C "$dir/src" --strip-components=1 --wildcards \
    '*/core/extension/gdextension_interface.json' '*/core/extension/make_interface_header.py' \
    '*/methods.py' '*/platform_methods.py' '*/misc/utility/*' '*/LICENSE.txt'
  (cd "$dir/src" && python3 - <<'EOF'
import sys
sys.path[:0] = [".", "core/extension"]
import make_interface_header
make_interface_header.run(["gdextension_interface.h"], ["core/extension/gdextension_interface.json"], None)
EOF
  )
  mv "$dir/src/gdextension_interface.h" "$dir/gdextension_interface.h"
  cp "$dir/src/LICENSE.txt" "$dir/LICENSE.txt"
  rm -rf "$dir/src" "$out/$tarball"
  echo "${tarball%.orig.tar.*}" > "$dir/version"
  echo "godot interfaces: godot4 $(cat "$dir/version") (gdextension_interface.h generated from Debian's source)"
}

for w in "${want[@]}"; do
  case "$w" in
    godot3) godot3 ;;
    godot4) godot4 ;;
    *) echo "godot interfaces: unknown target $w (godot3, godot4)" >&2; exit 2 ;;
  esac
done
