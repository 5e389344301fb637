#!/usr/bin/env bash
# lutra's main job: a local demo cluster. Installs what lutra needs, builds the release tree,
# then starts on this machine
#   oss01      lutra-ctld + two lutra-targets (ost0, ost1) serving objects over tcp
#   node001-3  lutra-ctld + a lutra-bench --loop workload each (a client mount striped over
#              ost0/ost1, running under its own Slurm-like job id)
# and operates it the way an admin would, through lutractl fanned out over the cluster: status,
# tunables, a profile (diff, apply, verify), job stats, a per-job flush, the audit trail.
# Then it opens lutra-console on the cluster (a cluster file it writes): in a window when there
# is a display, until the window is closed; without one, the console walks through every view
# offscreen and saves a screenshot of each into a folder it names (then, on a terminal, the
# cluster keeps running until Ctrl-C: try lutractl yourself).
#
# It builds only what it runs (no tests). LUTRA_DEMO_BIN=<dir> uses binaries built elsewhere
# (CI runs the tour with its own build); LUTRA_DEMO_TOUR=1 takes the offscreen tour even with a
# display; LUTRA_DEMO_DIR picks the working folder.
set -euo pipefail
cd "$(dirname "$0")/.."

packaging/install-deps.sh
if [[ -n "${LUTRA_DEMO_BIN:-}" ]]; then
  bin=$(cd "$LUTRA_DEMO_BIN" && pwd)
else
  cmake --preset release -DLUTRA_BUILD_TESTS=OFF >/dev/null
  cmake --build --preset release --target lutra-ctld lutractl lutra-target lutra-bench \
    lutra-ctl-bench lutra-transport-tcp lutra-console
  bin=$PWD/build/release/bin
fi
demo=${LUTRA_DEMO_DIR:-$(mktemp -d /tmp/lutra-demo.XXXXXX)}
mkdir -p "$demo"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  echo "lutra demo: stopped; logs and databases are in $demo"
}
trap cleanup EXIT

token=$demo/admin.token
echo "demo-admin-token-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')" >"$token"
chmod 600 "$token"

# Waits for a line matching $2 in file $1 and prints it.
wait_line() {
  for _ in $(seq 1 300); do
    if grep -m1 "$2" "$1" 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "lutra demo: timed out waiting for '$2' in $1" >&2
  cat "$1" >&2
  return 1
}

start_ctld() { # node labels...
  local node=$1 labels=$2 dir=$demo/$1
  mkdir -p "$dir/run"
  cat >"$dir/ctld.yaml" <<YAML
node: $node
labels: {$labels}
listen: 127.0.0.1:0
metrics_listen: 127.0.0.1:0
run_dir: $dir/run
db: $dir/ctld.db
profiles_dir: $PWD/config/profiles
sample_interval: 5s
auth:
  tokens: [{name: demo-admin, token_file: $token, role: admin}]
YAML
  "$bin/lutra-ctld" --config "$dir/ctld.yaml" >"$dir/ctld.out" 2>"$dir/ctld.log" &
  pids+=($!)
  wait_line "$dir/ctld.out" "ready" | sed -E 's/.*grpc=([^ ]+).*/\1/' >"$dir/address"
}

echo "lutra demo: starting the cluster in $demo"
start_ctld oss01 "role: oss"
targets=()
for ost in ost0 ost1; do
  mkdir -p "$demo/oss01/$ost"
  LUTRA_RUN_DIR=$demo/oss01/run "$bin/lutra-target" --name "$ost" --root "$demo/oss01/$ost" \
    --listen tcp://127.0.0.1:0 >"$demo/oss01/$ost.out" 2>"$demo/oss01/$ost.log" &
  pids+=($!)
  targets+=("$(wait_line "$demo/oss01/$ost.out" "listening on" | sed -E 's/.*listening on ([^ ]+).*/\1/')")
done
target_list=$(IFS=,; echo "${targets[*]}")

workloads=("ior-easy --file-mb 16" "ior-hard --ranks 2 --segments 200" "cached-read --file-mb 8")
for i in 1 2 3; do
  node=node00$i
  start_ctld "$node" "role: compute, rack: r1"
  # shellcheck disable=SC2086
  LUTRA_RUN_DIR=$demo/$node/run "$bin/lutra-bench" --loop --job "100$i" --name "job100$i" \
    --target "$target_list" ${workloads[$((i - 1))]} >"$demo/$node/bench.out" 2>"$demo/$node/bench.log" &
  pids+=($!)
done

hosts=$(cat "$demo"/{oss01,node001,node002,node003}/address | paste -sd,)
computes=$(cat "$demo"/node00{1,2,3}/address | paste -sd,)
oss=$(cat "$demo/oss01/address")
node002=$(cat "$demo/node002/address")
lutractl() { "$bin/lutractl" --token-file "$token" "$@"; }
step() { printf '\n$ lutractl %s\n' "$*"; lutractl "$@" || true; }
# Every ctld has found its datapath processes (the workloads mount and start their I/O).
for _ in $(seq 1 300); do
  [[ $(lutractl -H "$hosts" instances 2>/dev/null | grep -c connected) -ge 5 ]] && break
  sleep 0.2
done

step -H "$hosts" status
step -H "$hosts" instances
step -H "$computes" get_param 'llite.*.max_read_ahead_mb' 'osc.ost0.max_pages_per_rpc'
step -H "$oss" get_param 'obdfilter.*.num_exports'
# One bad value: the whole batch is refused on every node, nothing changes.
step -H "$computes" set_param 'llite.*.max_read_ahead_mb=1024' 'osc.*.max_pages_per_rpc=99999'
step -H "$computes" set_param 'osc.*.max_rpcs_in_flight=16'
step -H "$computes" profiles
step -H "$computes" diff compute
step -H "$computes" apply compute
step -H "$computes" verify compute
step -H "$computes" jobs
step -H "$node002" flush --job 1002
step -H "$node002" history --limit 5
echo
echo "lutra demo: Prometheus metrics of node001: http://$(sed -n 's/.*metrics=\([^ ]*\).*/\1/p' "$demo/node001/ctld.out")/metrics"
echo "lutra demo: performance of the pieces: $bin/lutra-bench --help (rpc, small-read, ior-easy ...), $bin/lutra-ctl-bench --help (ctl, fanout, history-year, soak)"

# The console on the same cluster: one group per role, the demo's admin token.
cat >"$demo/cluster.yaml" <<YAML
name: lutra demo
token_file: $token
groups:
  - name: oss
    hosts: $oss
  - name: compute
    hosts: $computes
YAML
if [[ -z "${LUTRA_DEMO_TOUR:-}" && ( -n "${DISPLAY:-}" || -n "${WAYLAND_DISPLAY:-}" ) ]]; then
  echo "lutra demo: opening lutra-console (close its window to stop the demo)"
  "$bin/lutra-console" --cluster "$demo/cluster.yaml"
  exit 0
fi
echo
echo "lutra demo: no display: lutra-console tours every view offscreen"
QT_QPA_PLATFORM=offscreen "$bin/lutra-console" --cluster "$demo/cluster.yaml" --tour "$demo/screenshots"
echo "lutra demo: the console's screenshots are in $demo/screenshots (open them with any image viewer)"

if [[ -t 0 ]]; then
  echo "lutra demo: the cluster is running. Try:"
  echo "  $bin/lutractl --token-file $token -H $hosts get_param 'ldlm.namespaces.*.lock_unused_count'"
  echo "Ctrl-C stops it."
  while true; do sleep 3600; done
fi
