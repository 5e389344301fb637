#!/bin/bash
# Grows the corpus in the source tree with what the fuzz-smoke runs found: libFuzzer's -merge=1
# adds to tests/fuzz/corpus/<corpus> only the inputs of the build tree's work corpus that reach
# new coverage. Review and commit the new files.
#   merge-corpus.sh [BUILD_DIR]     (default: build/asan; a clang build, where they are libFuzzer)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$(cd "${1:-$here/../../build/asan}" && pwd)
for pair in fuzz_params:params fuzz_protocol:protocol fuzz_profile:profile; do
  fuzzer=${pair%%:*}
  corpus=$here/corpus/${pair#*:}
  work=$build/tests/fuzz/corpus-$fuzzer
  [[ -x "$build/bin/$fuzzer" ]] || { echo "merge-corpus: no $build/bin/$fuzzer (build it)" >&2; exit 1; }
  [[ -d "$work" ]] || { echo "merge-corpus: no $work (run ctest -L fuzz-smoke)" >&2; exit 1; }
  before=$(find "$corpus" -type f | wc -l)
  "$build/bin/$fuzzer" -merge=1 -max_len=65536 "$corpus" "$work" >"$work.merge.log" 2>&1 ||
    { cat "$work.merge.log" >&2; exit 1; }
  echo "$fuzzer: $(( $(find "$corpus" -type f | wc -l) - before )) new inputs in $corpus"
done
