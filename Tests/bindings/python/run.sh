#!/usr/bin/env bash
# Runs Tests/bindings/python with pytest against the library.
#   IAP_LIB=/path/libIAPBridge.so bash Tests/bindings/python/run.sh
# Uses python3 if it has pytest, else the system's /usr/bin/python3
# (apt-get install python3-pytest).
set -euo pipefail
source "$(dirname "$0")/../env.sh"
py=""
for candidate in python3 /usr/bin/python3; do
  if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c "import pytest" >/dev/null 2>&1; then
    py=$candidate
    break
  fi
done
[ -n "$py" ] || { echo "python: FAILED: pytest is not installed (apt-get install python3-pytest)" >&2; exit 1; }
echo "python: $("$py" --version 2>&1), pytest $("$py" -c 'import pytest; print(pytest.__version__)')"
cd "$iap_repo"
PYTHONDONTWRITEBYTECODE=1 timeout 300 "$py" -m pytest -q -p no:cacheprovider Tests/bindings/python
