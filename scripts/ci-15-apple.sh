#!/usr/bin/env bash
# CI: IAPBridge compiled and linked for iOS 15 and macOS 12 against Apple's
# SDKs (../shared/apple-sdk), from Linux: no diagnostic, only the listed and
# explained undefined symbols, StoreKit checked against iOS 16.5, the C
# functions equal to the header's (scripts/check-apple.sh). Never skipped:
# without the SDK sets or lld-19 it fails.
set -euo pipefail
cd "$(dirname "$0")/.."
exec bash scripts/check-apple.sh
