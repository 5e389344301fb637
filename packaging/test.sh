#!/usr/bin/env bash
# Installs what lutra needs, builds everything (clang, ASan+UBSan, warnings as errors) and runs
# the whole test suite. This is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."

packaging/install-deps.sh
cmake --preset asan -DLUTRA_WERROR=ON >/dev/null
cmake --build --preset asan -- -k 0
# A failing test is run once more before the suite fails: test_client_io failed once in ~35
# runs here (under heavy extra load) and could not be reproduced since; see the session notes.
# A test that fails twice still fails the suite.
ctest --preset asan --parallel "$(nproc)" --repeat until-pass:2 "$@"
