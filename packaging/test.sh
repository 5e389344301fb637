#!/usr/bin/env bash
# Installs what lutra needs, builds everything (clang, ASan+UBSan, warnings as errors) and runs
# the whole test suite. This is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."

packaging/install-deps.sh
cmake --preset asan -DLUTRA_WERROR=ON >/dev/null
cmake --build --preset asan -- -k 0
# Every test runs once: a test that fails sometimes is a defect to fix, not to rerun.
ctest --preset asan --parallel "$(nproc)" "$@"
