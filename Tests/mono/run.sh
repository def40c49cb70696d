#!/usr/bin/env bash
# The Unity package (unity/com.iapbridge.sdk) as laid out, compiled with mcs
# into the assemblies its .asmdef files define, and run under Mono against
# the library (.build/debug/libIAPBridge.so):
#
#   IAPBridge.Runtime.dll   Runtime/*.cs
#   IAPBridge.Example.dll   Samples~/Example Store/{GameSave,Shop}.cs (the example's logic)
#   driver.exe              Tests/mono/Driver.cs: the binding, the example, and
#                           domain unloads (AppDomains) with a bridge open
#   missing/                the runtime compiled to load a library that does not
#                           exist + MissingLibraryDriver.cs: what a user without
#                           a native library for their platform sees
#
# Also: the package's layout and .meta files (unity/tools/unity-meta.py
# --check: no asset without its .meta, no .meta without its asset, and
# --self-test: the check itself catches planted orphans; both run first, with
# or without Mono), and every assembly compiled as Unity compiles it (editor, iOS
# player, desktop player) against a stub of the UnityEngine/UnityEditor API
# it uses, so a typo in Unity-only code is caught even though Unity cannot
# run here.
#
#   bash Tests/mono/run.sh          (from anywhere; exits non-zero on failure)
#
# Without mono/mcs: under CI=true this fails; otherwise it says it skipped.
set -euo pipefail
cd "$(dirname "$0")/../.."

# The package's layout and .meta files: needs only python3.
python3 unity/tools/unity-meta.py --check
python3 unity/tools/unity-meta.py --self-test

if ! command -v mono >/dev/null 2>&1 || ! command -v mcs >/dev/null 2>&1; then
  if [ "${CI:-}" = "true" ]; then
    echo "mono: FAILED: mono and mcs are required in CI (apt-get install mono-mcs mono-runtime)" >&2
    exit 1
  fi
  echo "mono: SKIPPED: mono/mcs not installed (apt-get install mono-mcs mono-runtime); only the package's .meta files were checked"
  exit 0
fi

pkg=unity/com.iapbridge.sdk

swift build --product IAPBridge >/dev/null
bin=$(swift build --show-bin-path)
lib="$bin/libIAPBridge.so"
[ -f "$lib" ] || lib="$bin/libIAPBridge.dylib"
[ -f "$lib" ] || { echo "mono: FAILED: the library was not built in $bin" >&2; exit 1; }

out=$(mktemp -d /tmp/iap-mono-build.XXXXXX)
trap 'rm -rf "$out"' EXIT

runtime=("$pkg"/Runtime/*.cs)
editor=("$pkg"/Editor/*.cs)
sample="$pkg/Samples~/Example Store"
logic=("$sample/GameSave.cs" "$sample/Shop.cs")

# -warnaserror: the package must compile cleanly for the developer who installs it.
mcs -nologo -warnaserror -target:library -out:"$out/IAPBridge.Runtime.dll" "${runtime[@]}"
mcs -nologo -warnaserror -target:library -r:"$out/IAPBridge.Runtime.dll" -out:"$out/IAPBridge.Example.dll" "${logic[@]}"
mcs -nologo -warnaserror -target:exe -r:"$out/IAPBridge.Runtime.dll" -r:"$out/IAPBridge.Example.dll" \
  -out:"$out/driver.exe" Tests/mono/Driver.cs Tests/mono/DriverOffers.cs
mkdir "$out/missing"
mcs -nologo -warnaserror -target:library -define:IAPBRIDGE_TEST_MISSING_LIBRARY -out:"$out/missing/IAPBridge.Runtime.dll" "${runtime[@]}"
mcs -nologo -warnaserror -target:exe -r:"$out/missing/IAPBridge.Runtime.dll" -out:"$out/missing/missing.exe" Tests/mono/MissingLibraryDriver.cs
# What a Windows editor or player gets today: no library, one clear message.
mkdir "$out/windows"
mcs -nologo -warnaserror -target:library -define:"IAPBRIDGE_TEST_MISSING_LIBRARY;UNITY_STANDALONE_WIN" -out:"$out/windows/IAPBridge.Runtime.dll" "${runtime[@]}"
mcs -nologo -warnaserror -target:exe -r:"$out/windows/IAPBridge.Runtime.dll" -out:"$out/windows/missing.exe" Tests/mono/MissingLibraryDriver.cs

# Compile-only: each assembly as Unity compiles it, against the stub.
mcs -nologo -warnaserror -target:library -out:"$out/UnityEngine.dll" Tests/mono/UnityEngineStub.cs
mkdir "$out/unity"
for defines in "UNITY_5_3_OR_NEWER;UNITY_EDITOR;UNITY_EDITOR_LINUX;UNITY_STANDALONE_LINUX" \
               "UNITY_5_3_OR_NEWER;UNITY_EDITOR;UNITY_EDITOR_OSX;UNITY_IOS" \
               "UNITY_5_3_OR_NEWER;UNITY_EDITOR;UNITY_EDITOR_WIN;UNITY_STANDALONE_WIN" \
               "UNITY_5_3_OR_NEWER;UNITY_IOS" "UNITY_5_3_OR_NEWER;UNITY_STANDALONE_OSX"; do
  u=(-nologo -warnaserror -target:library -define:"$defines" -r:"$out/UnityEngine.dll")
  mcs "${u[@]}" -out:"$out/unity/IAPBridge.Runtime.dll" "${runtime[@]}"
  mcs "${u[@]}" -r:"$out/unity/IAPBridge.Runtime.dll" -out:"$out/unity/IAPBridge.Example.dll" "$sample"/*.cs
  case "$defines" in
    *UNITY_EDITOR*) mcs "${u[@]}" -r:"$out/unity/IAPBridge.Runtime.dll" -out:"$out/unity/IAPBridge.Editor.dll" "${editor[@]}" ;;
  esac
done
echo "mono: the package's assemblies compile for the Unity editor (Linux, macOS+iOS, Windows) and for iOS and macOS players (against the UnityEngine stub)"

# Where plain Mono finds the library, as docs/INTEGRATION.md ("Plain Mono")
# says: [DllImport("IAPBridge")] is tried as libIAPBridge.so next to the
# assembly that declares it (IAPBridge.Runtime.dll), then through the dynamic
# loader (LD_LIBRARY_PATH, ld.so.cache); not in the current directory.
if [ "$(uname -s)" = Linux ]; then
  find_dir="$out/find"
  mkdir -p "$find_dir/app" "$find_dir/elsewhere"
  cp "$out/IAPBridge.Runtime.dll" "$find_dir/app/"
  mcs -nologo -warnaserror -target:exe -r:"$find_dir/app/IAPBridge.Runtime.dll" -out:"$find_dir/app/find.exe" Tests/mono/FindLibrary.cs
  find_run() {  # expected exit status, what, then the environment to run with
    local want=$1 what=$2 rc=0
    shift 2
    (cd "$find_dir/elsewhere" && env -u LD_LIBRARY_PATH "$@" timeout 60 mono "$find_dir/app/find.exe" >/dev/null 2>&1) || rc=$?
    if [ "$rc" -ne "$want" ]; then
      echo "mono: FAILED: plain Mono, $what: exit $rc, expected $want" >&2
      exit 1
    fi
  }
  find_run 1 "no library anywhere (the binding answers IAP_E_NOT_SUPPORTED)"
  cp "$lib" "$find_dir/elsewhere/libIAPBridge.so"
  find_run 1 "libIAPBridge.so in the current directory only (not searched)"
  find_run 0 "libIAPBridge.so found through LD_LIBRARY_PATH" LD_LIBRARY_PATH="$find_dir/elsewhere"
  rm "$find_dir/elsewhere/libIAPBridge.so"
  cp "$lib" "$find_dir/app/libIAPBridge.so"
  find_run 0 "libIAPBridge.so next to IAPBridge.Runtime.dll, no LD_LIBRARY_PATH"
  echo "mono: plain Mono loads libIAPBridge.so next to IAPBridge.Runtime.dll or through LD_LIBRARY_PATH, not from the current directory"
fi

# mono loads "IAPBridge" as libIAPBridge.so through the dynamic loader's path.
export LD_LIBRARY_PATH="$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export DYLD_LIBRARY_PATH="$bin${DYLD_LIBRARY_PATH:+:$DYLD_LIBRARY_PATH}"
export SWIFT_BACKTRACE=enable=no
# A runtime hang (a frozen GC, a process that cannot exit) must fail, not stall CI.
status=0
for run in "driver.exe samples/catalog/Game.storekit" "missing/missing.exe samples/catalog/Game.storekit" \
           "windows/missing.exe samples/catalog/Game.storekit windows"; do
  set -- $run
  rc=0
  timeout 300 mono --debug "$out/$1" "${@:2}" || rc=$?
  if [ "$rc" -eq 124 ]; then echo "mono: FAILED: $1 did not finish within 300 s (hung)" >&2; fi
  [ "$rc" -eq 0 ] || status=$rc
done
# What a git-URL install loads in the Linux editor: the package's committed
# Runtime/Plugins/Linux/x86_64/libIAPBridge.so (scripts/build-plugins.sh), not
# the build folder's, with no Swift toolchain on the loader's path.
plugin_dir=$pkg/Runtime/Plugins/Linux/x86_64
if [ -f "$plugin_dir/libIAPBridge.so" ]; then
  rc=0
  LD_LIBRARY_PATH=$(cd "$plugin_dir" && pwd) timeout 300 mono --debug "$out/driver.exe" samples/catalog/Game.storekit > "$out/plugin.log" 2>&1 || rc=$?
  if [ "$rc" -eq 0 ]; then
    echo "mono: the driver passes against the package's committed Linux plugin ($(tail -n 1 "$out/plugin.log"))"
  else
    cat "$out/plugin.log"; echo "mono: FAILED: the driver against the package's committed Linux plugin (rc $rc)" >&2; status=1
  fi
else
  echo "mono: FAILED: $plugin_dir/libIAPBridge.so is missing (scripts/build-plugins.sh)" >&2; status=1
fi
exit "$status"
