#!/usr/bin/env bash
# Runs the LÖVE test game (Tests/bindings/love/game) headless with LÖVE 11:
# the game directory is copied with bindings/lua/iap_bridge.lua dropped in, as
# a game developer would, and started with `love`. No display is needed (the
# game's conf.lua disables the window and graphics modules).
#   IAP_LIB=/path/libIAPBridge.so bash Tests/bindings/love/run.sh
set -euo pipefail
source "$(dirname "$0")/../env.sh"
command -v love >/dev/null 2>&1 || { echo "love: FAILED: love is not installed (apt-get install love)" >&2; exit 1; }
work=$(mktemp -d /tmp/iap-love-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir "$work/game" "$work/iap"
cp "$iap_repo/Tests/bindings/love/game/"*.lua "$work/game/"
cp "$iap_repo/bindings/lua/iap_bridge.lua" "$work/game/"
# LÖVE writes its save directory under XDG_DATA_HOME: keep it in the temp dir.
XDG_DATA_HOME="$work/xdg" IAP_DIR="$work/iap" timeout 60 love "$work/game"
