#!/usr/bin/env bash
# Builds the library, compiles the Unity binding + the example store's logic +
# the headless driver with mcs, and runs the driver with mono against
# .build/debug/libIAPBridge.so. Also compiles the Unity-only example
# (IAPStoreExample.cs) against a stub of the UnityEngine API it uses, so a
# typo there is caught even though Unity cannot run here.
#
#   bash Tests/mono/run.sh          (from anywhere; exits non-zero on failure)
#
# Without mono/mcs: under CI=true this fails; otherwise it says it skipped.
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! command -v mono >/dev/null 2>&1 || ! command -v mcs >/dev/null 2>&1; then
  if [ "${CI:-}" = "true" ]; then
    echo "mono: FAILED: mono and mcs are required in CI (apt-get install mono-mcs mono-runtime)" >&2
    exit 1
  fi
  echo "mono: SKIPPED: mono/mcs not installed (apt-get install mono-mcs mono-runtime); nothing was tested"
  exit 0
fi

swift build --product IAPBridge >/dev/null
bin=$(swift build --show-bin-path)
lib="$bin/libIAPBridge.so"
[ -f "$lib" ] || lib="$bin/libIAPBridge.dylib"
[ -f "$lib" ] || { echo "mono: FAILED: the library was not built in $bin" >&2; exit 1; }

out=$(mktemp -d /tmp/iap-mono-build.XXXXXX)
trap 'rm -rf "$out"' EXIT

binding=(samples/unity/IAPBridge/*.cs)
example=(samples/unity/Example/GameSave.cs samples/unity/Example/Shop.cs)

# -warnaserror: the binding must compile cleanly for the developer who drops it in.
mcs -nologo -warnaserror -target:exe -out:"$out/driver.exe" "${binding[@]}" "${example[@]}" Tests/mono/Driver.cs

# Compile-only: the binding as Unity compiles it (UnityEngine's AOT attribute,
# iOS static linking), plus the MonoBehaviour example, against the stub.
mcs -nologo -warnaserror -target:library -define:UNITY_5_3_OR_NEWER -out:"$out/UnityEngine.dll" Tests/mono/UnityEngineStub.cs
for defines in "UNITY_5_3_OR_NEWER;UNITY_EDITOR" "UNITY_5_3_OR_NEWER;UNITY_EDITOR;UNITY_IOS" "UNITY_5_3_OR_NEWER;UNITY_IOS"; do
  mcs -nologo -warnaserror -target:library -define:"$defines" -r:"$out/UnityEngine.dll" -out:"$out/unity-check.dll" \
    "${binding[@]}" samples/unity/IAPBridge/Editor/*.cs samples/unity/Example/*.cs
done
echo "mono: binding and example compile for the Unity editor and for iOS (against the UnityEngine stub)"

# mono loads "IAPBridge" as libIAPBridge.so through the dynamic loader's path.
export LD_LIBRARY_PATH="$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export DYLD_LIBRARY_PATH="$bin${DYLD_LIBRARY_PATH:+:$DYLD_LIBRARY_PATH}"
# A runtime hang (a frozen GC, a process that cannot exit) must fail, not stall CI.
rc=0
timeout 300 mono --debug "$out/driver.exe" samples/catalog/Game.storekit || rc=$?
if [ "$rc" -eq 124 ]; then
  echo "mono: FAILED: the driver did not finish within 300 s (hung)" >&2
fi
exit "$rc"
