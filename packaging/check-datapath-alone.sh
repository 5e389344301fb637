#!/usr/bin/env bash
# Dependencies point down: the datapath (datapath/, plugins/) configures and builds with ctld/,
# console/, config/, tests/ and packaging/ absent. Copies only datapath/, plugins/ and the top
# CMakeLists.txt into WORK_DIR/src and builds it there with LUTRA_DATAPATH_ONLY=ON (warnings as
# errors, no sanitizers, no debug info: quick). WORK_DIR is kept between runs so a rerun builds
# only what changed.
# Usage: check-datapath-alone.sh [WORK_DIR [LOCK_FILE]]  (the build takes LOCK_FILE when given:
# the one build at a time on a shared machine). CTest runs it as datapath_builds_alone.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$src/build/datapath-alone}
lock=${2:-}
mkdir -p "$work"
work=$(cd "$work" && pwd)
rm -rf "$work/src"
mkdir "$work/src"
# cp -a keeps modification times, so the kept build dir recompiles only what changed.
cp -a "$src/CMakeLists.txt" "$src/datapath" "$src/plugins" "$work/src/"
for absent in ctld console config tests packaging; do
  [[ ! -e "$work/src/$absent" ]] || { echo "FAIL: $absent/ was copied" >&2; exit 1; }
done
build() {
  cmake -S "$work/src" -B "$work/build" -G Ninja -DLUTRA_DATAPATH_ONLY=ON -DLUTRA_WERROR=ON \
    -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE= >"$work/configure.log" 2>&1 ||
    { tail -40 "$work/configure.log"; echo "FAIL: the datapath alone does not configure" >&2; return 1; }
  cmake --build "$work/build" >"$work/build.log" 2>&1 ||
    { grep -E "error|FAILED" "$work/build.log" | head -40
      echo "FAIL: the datapath alone does not build (log: $work/build.log)" >&2; return 1; }
}
if [[ -n "$lock" ]]; then
  export -f build
  export work
  flock "$lock" bash -c build
else
  build
fi
for program in lutra-target lutra-params lutra-bench; do
  [[ -x "$work/build/bin/$program" ]] || { echo "FAIL: $program was not built" >&2; exit 1; }
done
echo "datapath builds alone: $(ls "$work/build/bin" | tr '\n' ' ')"
