#!/usr/bin/env bash
# CI: the docs say only what is true of the code (issue 23, items 4 and 9).
#   1. scripts/check-doc-names.py: every iap_*/IAP_* name in README.md and
#      docs/*.md is declared in include/iap_bridge.h (or is an environment
#      variable code reads), every C# binding name exists in the Unity
#      package's Runtime; first a self-test that it does catch invented names.
set -euo pipefail
cd "$(dirname "$0")/.."

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== doc names: self-test (invented names must be caught)"
printf '%s\n' 'Call `iap_frobnicate(b)`, check `IAP_E_NOPE`, `Bridge.Frob()`, `bridge.Zap()` and `ZapReceived`.' >"$tmp/bad.md"
if out=$(python3 scripts/check-doc-names.py "$tmp/bad.md"); then
  echo "$out"
  echo "docs: FAILED: check-doc-names.py accepted invented names" >&2
  exit 1
fi
caught=$(grep -c '^check-doc-names: FAILED: .*bad.md' <<<"$out" || true)
if [ "$caught" -ne 5 ]; then
  echo "$out"
  echo "docs: FAILED: check-doc-names.py caught $caught of the 5 invented names" >&2
  exit 1
fi
echo "docs: the check catches all 5 invented names"

echo "== doc names: README.md and docs/*.md"
python3 scripts/check-doc-names.py

# 2. The fsync figures of README.md and docs/DURABILITY.md, measured on the
#    library (the debug build CI's swift test made, else the committed one):
#    an LD_PRELOAD shim counts fsync/fdatasync.
echo "== fsync claims"
lib=${IAP_LIB:-.build/debug/libIAPBridge.so}
[ -f "$lib" ] || lib=unity/com.iapbridge.sdk/Runtime/Plugins/Linux/x86_64/libIAPBridge.so
gcc -shared -fPIC -O2 -o "$tmp/count_syncs.so" scripts/docs/count_syncs.c -ldl
mkdir -p "$tmp/fsync"
LD_PRELOAD="$tmp/count_syncs.so" python3 scripts/docs/check_fsync_claims.py "$PWD/$lib" "$tmp/fsync" "$PWD/samples/catalog/Game.storekit"

# 3. The glibc the Linux library needs, as INTEGRATION.md states it (the
#    committed Unity plugin: the one users get).
echo "== glibc claim"
so=unity/com.iapbridge.sdk/Runtime/Plugins/Linux/x86_64/libIAPBridge.so
needs=$(objdump -T "$so" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1 | sed 's/GLIBC_//')
for said in $(grep -o 'glibc 2\.[0-9]*' docs/INTEGRATION.md | sed 's/glibc //' | sort -u); do
  if [ "$said" != "$needs" ]; then
    echo "docs: FAILED: INTEGRATION.md says glibc $said, $so needs GLIBC_$needs" >&2
    exit 1
  fi
done
echo "docs: $so needs glibc $needs, as INTEGRATION.md says"
