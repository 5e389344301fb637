#!/bin/bash
# One fuzz-smoke session (CTest label fuzz-smoke): a libFuzzer target on a seed that changes per
# run, printed first so a failure can be replayed, with inputs up to the protocol's message limit.
#   run-fuzzer.sh FUZZER SEEDS_DIR WORK_DIR SECONDS
# LUTRA_FUZZ_SEED=N replays a run. New inputs go to WORK_DIR (the build tree); merge-corpus.sh
# moves the ones that add coverage into the corpus in the source tree.
set -euo pipefail
fuzzer=${1:?usage: run-fuzzer.sh FUZZER SEEDS_DIR WORK_DIR SECONDS}
seeds=${2:?}
work=${3:?}
seconds=${4:?}
max_len=65536 # protocol::kMaxMessageSize: the largest message a peer can send
seed=${LUTRA_FUZZ_SEED:-$(( $(date +%s%N) % 4294967295 + 1 ))}
[[ "$seed" =~ ^[0-9]+$ ]] || { echo "run-fuzzer: LUTRA_FUZZ_SEED must be a number, not '$seed'" >&2; exit 2; }
mkdir -p "$work"
echo "fuzz: $(basename "$fuzzer") seed $seed (replay: LUTRA_FUZZ_SEED=$seed $0 $*)"
# Artifacts (WORK_DIR-crash-*, -leak-*, -timeout-*) are named in the output.
exec "$fuzzer" -seed="$seed" -max_len="$max_len" -max_total_time="$seconds" \
  -artifact_prefix="$work-" -print_final_stats=1 "$work" "$seeds"
