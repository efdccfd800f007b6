#!/usr/bin/env bash
# Rewrites test/golden/expected/ from the current build after an intended change of results
# (review the diff, then commit it with the change that caused it).
#   test/golden/regenerate.sh [BUILD_DIR]      (default: build)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
cmake --build "$build" -j2 --target mofasim golden_check
MOFASIM_GOLDEN_UPDATE=1 ctest --test-dir "$build" -L golden -j2
git -C "$root" status --short -- test/golden/expected
