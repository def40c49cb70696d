#!/usr/bin/env bash
# CI: the docs say only what is true of the code (issue 23, items 4 and 9).
#   1. scripts/check-doc-names.py: every iap_*/IAP_* name in README.md and
#      docs/*.md is declared in include/iap_bridge.h (or is an environment
#      variable code reads), every C# binding name exists in the Unity
#      package's Runtime; first a self-test that it does catch invented names.
#   2. the fsync figures, 3. the glibc version, 4. links, paths and the docs'
#   facts against the sources, 5. the behaviour behind them on the library
#   (each below; docs/CLAIMS.md maps every claim to its check).
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

# 4. Every link and repository path of the docs exists (first: it does catch
#    a broken one), then the docs' facts against the sources
#    (scripts/docs/check_claims.py; first on a copy of the repository with 4
#    planted mismatches, each of which it must catch). docs/CLAIMS.md lists
#    every claim and where it is checked.
echo "== doc paths: self-test"
printf '%s\n' 'See [the guide](docs/NOPE.md), [a section](README.md#no-such-heading) and `scripts/ci-99-nope.sh`.' >"$PWD/.doc-paths-selftest.md"
trap 'rm -rf "$tmp" "$PWD/.doc-paths-selftest.md"' EXIT
if out=$(python3 scripts/docs/check_doc_paths.py "$PWD/.doc-paths-selftest.md"); then
  echo "$out"; echo "docs: FAILED: check_doc_paths.py accepted broken links" >&2; exit 1
fi
caught=$(grep -c '^doc paths: FAILED: .doc-paths-selftest.md' <<<"$out" || true)
rm -f "$PWD/.doc-paths-selftest.md"
[ "$caught" -eq 3 ] || { echo "$out"; echo "docs: FAILED: check_doc_paths.py caught $caught of 3 broken links" >&2; exit 1; }
echo "docs: the check catches all 3 broken links and paths"
echo "== doc paths: README.md and docs/*.md"
python3 scripts/docs/check_doc_paths.py

echo "== doc claims: self-test (4 planted mismatches must be caught)"
mkdir -p "$tmp/copy"
tar --exclude=./.build --exclude=./.git --exclude='*.a' --exclude='*.so' --exclude='*.dylib' -cf - . | tar -C "$tmp/copy" -xf -
sed -i 's/^| `clock` |/| `clocks` |/' "$tmp/copy/docs/SIMULATOR.md"
sed -i 's/var tickMs: Int64 = 1000/var tickMs: Int64 = 500/' "$tmp/copy/Sources/IAPSimulator/SimulatorOptions.swift"
sed -i 's/^| -12 | `IAP_E_UNKNOWN_KEY`/| -21 | `IAP_E_UNKNOWN_KEY`/' "$tmp/copy/README.md"
sed -i '0,/"resultName":"success"/s//"resultName":"succeeded"/' "$tmp/copy/docs/PROTOCOL.md"
if out=$(IAP_CLAIMS_ROOT="$tmp/copy" python3 scripts/docs/check_claims.py); then
  echo "$out"; echo "docs: FAILED: check_claims.py accepted planted mismatches" >&2; exit 1
fi
if ! grep -q '^claims: [0-9]* checked, 4 failed$' <<<"$out"; then
  echo "$out"; echo "docs: FAILED: check_claims.py did not catch exactly the 4 planted mismatches" >&2; exit 1
fi
echo "docs: the check catches all 4 planted mismatches"
echo "== doc claims: README.md and docs/*.md against the sources"
python3 scripts/docs/check_claims.py

# 4b. IAPCore's layout (docs/ARCHITECTURE.md): its parts use only the parts
#     below them (first: a planted upward use is caught).
echo "== core layout"
python3 scripts/layout/check_layout.py --self-test
python3 scripts/layout/check_layout.py

# 4c. The ABI fuzzer's return codes are the header's (first: a missing one is caught).
echo "== fuzzer's return codes"
python3 scripts/docs/check_fuzz_codes.py --self-test
python3 scripts/docs/check_fuzz_codes.py

# 2. The fsync figures of README.md and docs/DURABILITY.md, measured on the
#    library (the debug build CI's swift test made, else the committed one):
#    an LD_PRELOAD shim counts fsync/fdatasync.
echo "== fsync claims"
lib=${IAP_LIB:-.build/debug/libIAPBridge.so}
[ -f "$lib" ] || lib=unity/com.iapbridge.sdk/Runtime/Plugins/Linux/x86_64/libIAPBridge.so
gcc -shared -fPIC -O2 -o "$tmp/count_syncs.so" scripts/docs/count_syncs.c -ldl
mkdir -p "$tmp/fsync"
LD_PRELOAD="$tmp/count_syncs.so" python3 scripts/docs/check_fsync_claims.py "$PWD/$lib" "$tmp/fsync" "$PWD/samples/catalog/Game.storekit"

# 5. The behaviour behind the docs' claims, on the same library: simulator
#    ops and their arguments, config keys, limits, handle and confirm rules.
echo "== runtime claims"
mkdir -p "$tmp/runtime"
SWIFT_BACKTRACE=enable=no python3 scripts/docs/check_runtime_claims.py "$PWD/$lib" "$tmp/runtime" "$PWD/samples/catalog/Game.storekit"

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
