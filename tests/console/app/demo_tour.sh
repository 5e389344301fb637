#!/usr/bin/env bash
# The README's demo, as a new user runs it without a display: the demo cluster, its Prometheus,
# the lutractl walk, then lutra-console's offscreen tour. Passes when the demo exits 0, every
# screenshot the tour announced exists with content (the tour itself refuses near-blank
# pictures), the console drew the cluster views from the demo's Prometheus (the status bar names
# it, the band and the worst nodes have its data, it is asked every 2 s as the demo's rules run),
# the Jobs view showed every job's read and write rate, and Prometheus stopped with the demo.
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

# Prometheus: started, scraped every node, named in the cluster file, the console's source.
fail() {
  echo "demo_tour: $*" >&2
  grep -E '^lutra( demo|-console tour):' "$work/demo.log" | tail -20 >&2
  exit 1
}
url=$(sed -nE 's|^lutra demo: Prometheus (http://127\.0\.0\.1:[0-9]+) scraped all 4 nodes.*|\1|p' "$work/demo.log")
[[ -n $url ]] || fail "the demo did not say its Prometheus scraped all 4 nodes"
grep -qx "prometheus: $url" "$work/demo/cluster.yaml" || fail "cluster.yaml does not name $url"
grep -q "^lutra-console tour: status bar: 4 of 4 nodes ready · fleet charts from Prometheus $url\$" \
  "$work/demo.log" || fail "the console's status bar does not say the fleet charts come from $url"
charts=$(grep -E "^lutra-console tour: cluster charts from Prometheus $url: " "$work/demo.log") ||
  fail "the tour did not report the cluster charts from $url"
read -r history bands worst < <(sed -nE 's/.*: ([0-9]+) of 4 nodes with a hit ratio history, ([0-9]+) band points, ([0-9]+) worst nodes ranked$/\1 \2 \3/p' <<<"$charts")
# The three compute nodes read; oss01 has no readahead.
[[ ${history:-0} -eq 3 && ${bands:-0} -gt 0 && ${worst:-0} -eq 3 ]] ||
  fail "the cluster charts lack Prometheus' data: $charts"
echo "demo_tour: ${charts#lutra-console tour: }"
# The console asks Prometheus as often as the demo's rules run (2 s), not every 15 s.
grep -q "^lutra-console tour: Prometheus asked every 2000 ms (Prometheus' evaluation_interval 2s)\$" \
  "$work/demo.log" || fail "the console does not poll Prometheus at its 2 s evaluation interval"
# The jobs read and write all the time: the Jobs screenshot shows their rates, not "measuring…".
rates=$(grep -E "^lutra-console tour: job rates: " "$work/demo.log") || fail "the tour did not report job rates"
for job in 1001 1002 1003; do
  grep -qE "[:;] $job read [^;]+/s write [^;]+/s(;|\$)" <<<"$rates" || fail "job $job has no read and write rate: $rates"
done
echo "demo_tour: ${rates#lutra-console tour: }"
if curl -fsS -m 2 -o /dev/null "$url/-/ready" 2>/dev/null; then
  fail "$url still answers after the demo stopped"
fi
