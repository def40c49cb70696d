# Sourced by the binding test runners: finds the library and the Swift runtime.
#   IAP_LIB          the library to test (default: .build/debug/libIAPBridge.so,
#                    which `swift test` or `swift build` produces)
#   IAP_CATALOG      the .storekit catalog (default: samples/catalog/Game.storekit)
# Exports IAP_LIB, IAP_LIB_DIR, IAP_CATALOG (absolute) and LD_LIBRARY_PATH.
iap_repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
IAP_LIB=${IAP_LIB:-"$iap_repo/.build/debug/libIAPBridge.so"}
if [ ! -f "$IAP_LIB" ]; then
  echo "bindings: the library $IAP_LIB does not exist (run swift build, or set IAP_LIB)" >&2
  exit 1
fi
IAP_LIB=$(readlink -f "$IAP_LIB")
IAP_LIB_DIR=$(dirname "$IAP_LIB")
IAP_CATALOG=$(readlink -f "${IAP_CATALOG:-$iap_repo/samples/catalog/Game.storekit}")
swift_rt=""
if command -v swift >/dev/null 2>&1; then
  swift_rt="$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")/lib/swift/linux"
fi
[ -n "$swift_rt" ] && [ -d "$swift_rt" ] || swift_rt=/opt/swift/usr/lib/swift/linux
export IAP_LIB IAP_LIB_DIR IAP_CATALOG
export LD_LIBRARY_PATH="$swift_rt:$IAP_LIB_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
