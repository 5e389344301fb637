#!/usr/bin/env bash
# The README's demo, as a new user runs it without a display: the demo cluster, the lutractl
# walk, then lutra-console's offscreen tour. Passes when the demo exits 0 and every screenshot
# the tour announced exists with content (the tour itself refuses near-blank pictures).
#   demo_tour.sh BIN_DIR
set -euo pipefail
bin=$1
top=$(cd "$(dirname "$0")/../../.." && pwd)
work=$(mktemp -d /tmp/lutra-demo-tour.XXXXXX)
trap 'rm -rf "$work"' EXIT

LUTRA_DEMO_BIN=$bin LUTRA_DEMO_TOUR=1 LUTRA_DEMO_DIR=$work/demo \
  "$top/packaging/demo.sh" </dev/null >"$work/demo.log" 2>&1 || {
  echo "demo_tour: packaging/demo.sh failed:" >&2
  tail -40 "$work/demo.log" >&2
  exit 1
}
mapfile -t shots < <(grep -oE '^  /[^ ]+\.png' "$work/demo.log" | tr -d ' ')
if [[ ${#shots[@]} -lt 9 ]]; then
  echo "demo_tour: expected at least 9 screenshots, the tour announced ${#shots[@]}" >&2
  tail -40 "$work/demo.log" >&2
  exit 1
fi
for shot in "${shots[@]}"; do
  size=$(stat -c %s "$shot" 2>/dev/null || echo 0)
  if [[ $size -lt 10000 ]]; then
    echo "demo_tour: $shot is missing or nearly empty ($size bytes)" >&2
    exit 1
  fi
  echo "demo_tour: $shot ($size bytes)"
done
