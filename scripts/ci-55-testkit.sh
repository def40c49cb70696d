#!/usr/bin/env bash
# CI: the test kit games use in their own test suites (testkit/, docs/TESTKIT.md),
# each language's kit against its tiny example game's purchase code, killed
# between paying and granting, restarted, granted exactly once; Ask to Buy
# approved and declined while the game is closed; a refund; a failed purchase;
# a lapsed subscription; and the check catching a planted bug:
#   Python  testkit/python/example (pytest; real child processes, SIGKILL)
#   Lua     testkit/lua/example (LuaJIT; real child processes, SIGKILL)
#   C       testkit/c/example (gcc; fork, SIGKILL); the header also compiles as C++
#   C#      the Unity package's IAPBridge.Testing and the Example Store sample's
#           edit-mode tests (Samples~/Example Store/Tests/Editor), compiled with
#           mcs and run by Mono's NUnit 2.6 console (Unity itself cannot run
#           here); then again against the sample with its key check removed,
#           which must fail.
# IAP_LIB overrides the library (default .build/debug/libIAPBridge.so).
set -euo pipefail
cd "$(dirname "$0")/.."
export SWIFT_BACKTRACE=enable=no
source Tests/bindings/env.sh
repo=$PWD
out=$(mktemp -d /tmp/iap-testkit-ci.XXXXXX)
trap 'rm -rf "$out"' EXIT

need() {  # a tool, the Debian package that has it
  command -v "$1" >/dev/null 2>&1 && return 0
  if [ "${CI:-}" = "true" ]; then echo "testkit: FAILED: $1 is required in CI (apt-get install $2)" >&2; exit 1; fi
  echo "testkit: SKIPPED the $1 part: $1 is not installed (apt-get install $2)"
  return 1
}
t() { date +%s.%N; }
took() { awk -v a="$1" -v b="$(t)" 'BEGIN { printf "%.1f", b - a }'; }

# Python
t0=$(t)
py=""
for candidate in python3 /usr/bin/python3; do
  if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c "import pytest" >/dev/null 2>&1; then py=$candidate; break; fi
done
if [ -n "$py" ]; then
  PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$repo/bindings/python:$repo/testkit/python" \
    timeout 300 "$py" -m pytest -q -p no:cacheprovider testkit/python/example
  echo "testkit: Python passed ($(took "$t0") s)"
elif [ "${CI:-}" = "true" ]; then
  echo "testkit: FAILED: pytest is required in CI (apt-get install python3-pytest)" >&2; exit 1
else
  echo "testkit: SKIPPED the Python part: pytest is not installed (apt-get install python3-pytest)"
fi

# Lua
t0=$(t)
if need luajit luajit; then
  LUA_PATH="$repo/bindings/lua/?.lua;$repo/testkit/lua/?.lua;$repo/testkit/lua/example/?.lua" \
    timeout 300 luajit testkit/lua/example/test_game.lua
  echo "testkit: Lua passed ($(took "$t0") s)"
fi

# C (and the header under C++)
t0=$(t)
if need gcc gcc; then
  gcc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Iinclude -Itestkit/c -Itestkit/c/example \
    testkit/c/example/test_game.c -L"$IAP_LIB_DIR" -l:"$(basename "$IAP_LIB")" -Wl,-rpath,"$IAP_LIB_DIR" -o "$out/test_game"
  if command -v g++ >/dev/null 2>&1; then
    printf '#define IAPTK_INTERCEPT\n#include "iap_testkit.h"\nint main() { iaptk_kit k; return iaptk_init(&k, "/x") ? 1 : (iaptk_cleanup(&k), 0); }\n' > "$out/cxx.cpp"
    g++ -std=c++17 -Wall -Wextra -Werror -Iinclude -Itestkit/c -fsyntax-only "$out/cxx.cpp"
  fi
  timeout 300 "$out/test_game"
  echo "testkit: C passed ($(took "$t0") s)"
fi

# C#: the Unity package's kit and the sample's edit-mode tests under Mono's NUnit
t0=$(t)
nunit_fw=/usr/lib/cli/nunit.framework-2.6.3/nunit.framework.dll
if need mcs mono-mcs && need nunit-console nunit-console; then
  [ -f "$nunit_fw" ] || { echo "testkit: FAILED: $nunit_fw is missing (apt-get install libnunit-cil-dev)" >&2; exit 1; }
  python3 unity/tools/unity-meta.py --check
  pkg=unity/com.iapbridge.sdk
  sample="$pkg/Samples~/Example Store"
  cs=(mcs -nologo -warnaserror -target:library)
  "${cs[@]}" -out:"$out/IAPBridge.Runtime.dll" "$pkg"/Runtime/*.cs
  "${cs[@]}" -r:"$out/IAPBridge.Runtime.dll" -out:"$out/IAPBridge.Testing.dll" "$pkg"/Testing/*.cs
  "${cs[@]}" -r:"$out/IAPBridge.Runtime.dll" -out:"$out/IAPBridge.Example.dll" "$sample/GameSave.cs" "$sample/Shop.cs"
  "${cs[@]}" -r:"$out/IAPBridge.Runtime.dll" -r:"$out/IAPBridge.Example.dll" -r:"$out/IAPBridge.Testing.dll" -r:"$nunit_fw" \
    -out:"$out/IAPBridge.Example.Tests.dll" "$sample"/Tests/Editor/*.cs
  (cd "$out" && timeout 300 nunit-console -nologo -noshadow -noresult IAPBridge.Example.Tests.dll) > "$out/nunit.log" 2>&1 \
    || { cat "$out/nunit.log"; echo "testkit: FAILED: the sample's edit-mode tests under NUnit" >&2; exit 1; }
  summary=$(grep '^Tests run:' "$out/nunit.log")
  case "$summary" in "Tests run: 0,"*|"") cat "$out/nunit.log"; echo "testkit: FAILED: NUnit ran no test" >&2; exit 1 ;; esac
  echo "testkit: the sample's edit-mode tests under NUnit: $summary"
  # The same tests against the sample with its "already granted" check removed: they must fail.
  mkdir "$out/bug"
  sed 's/else if (Save.WasGranted(p.Key))/else if (false \&\& Save.WasGranted(p.Key))/' "$sample/Shop.cs" > "$out/bug/Shop.cs"
  grep -q 'false && Save.WasGranted' "$out/bug/Shop.cs" || { echo "testkit: FAILED: could not plant the bug in Shop.cs (its key check changed?)" >&2; exit 1; }
  mcs -nologo -nowarn:162,429 -target:library -r:"$out/IAPBridge.Runtime.dll" -out:"$out/bug/IAPBridge.Example.dll" "$sample/GameSave.cs" "$out/bug/Shop.cs"
  cp "$out"/IAPBridge.Runtime.dll "$out"/IAPBridge.Testing.dll "$out"/IAPBridge.Example.Tests.dll "$out/bug/"
  if (cd "$out/bug" && timeout 300 nunit-console -nologo -noshadow -noresult IAPBridge.Example.Tests.dll) > "$out/bug.log" 2>&1; then
    cat "$out/bug.log"; echo "testkit: FAILED: the sample's tests passed with the sample's key check removed" >&2; exit 1
  fi
  grep -q 'KilledBetweenPayingAndGranting_GrantedExactlyOnce("before_confirm")' "$out/bug.log" \
    || { cat "$out/bug.log"; echo "testkit: FAILED: the planted double grant was not caught by the kill at before_confirm" >&2; exit 1; }
  echo "testkit: with the sample's key check removed: $(grep '^Tests run:' "$out/bug.log") (the double grant is caught)"
  echo "testkit: C# passed ($(took "$t0") s)"
fi
echo "testkit: passed"
