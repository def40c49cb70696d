#!/usr/bin/env bash
# The IAPBridge benchmark, one command (see BENCHMARKS.md):
#   scripts/bench.sh            full run: every figure, medians over many samples
#   scripts/bench.sh --quick    the same lines from few samples (CI: breakage only)
# Builds the release libIAPBridge.so and iap-bench (scratch path
# .build-bench), compiles the C baselines (Benchmarks/baselines) against
# Debian's SQLite (libsqlite3-dev) -- SQLite is never part of `swift build` --
# then runs on the repository's own disk, in .build-bench/run.
# Figures go to stdout, one `name value unit` per line; build logs go to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=.build-bench

swift build -c release --scratch-path "$scratch" --product IAPBridge >&2
swift build -c release --scratch-path "$scratch" --product iap-bench >&2
bin=$(swift build -c release --scratch-path "$scratch" --show-bin-path)

if [ ! -f /usr/include/sqlite3.h ]; then
  echo "bench: the SQLite baseline needs Debian's libsqlite3-dev (apt-get install libsqlite3-dev)" >&2
  exit 1
fi
# gcc where there is one; the Swift toolchain's clang otherwise.
cc=${CC:-$(command -v gcc || command -v clang || true)}
[ -n "$cc" ] || { echo "bench: no C compiler (gcc or clang) for the baselines" >&2; exit 1; }
mkdir -p "$scratch/baselines"
"$cc" -O2 -fPIC -shared -std=c11 -Wall -Wextra -Werror \
  -o "$scratch/baselines/libiapbaselines.so" Benchmarks/baselines/*.c -lsqlite3

# A fresh directory on the repository's disk (iap-bench prints the device of
# both, and the file system, so a tmpfs or another disk would show).
run="$scratch/run"
rm -rf "$run"
mkdir -p "$run"
"$bin/iap-bench" --lib "$bin/libIAPBridge.so" --baselines "$scratch/baselines/libiapbaselines.so" \
  --catalog samples/catalog/Game.storekit --dir "$run" "$@"
rm -rf "$run"
