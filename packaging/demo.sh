#!/usr/bin/env bash
# lutra's main job: a local demo cluster. Installs what lutra needs, builds the release tree,
# then starts on this machine
#   oss01      lutra-ctld + two lutra-targets (ost0, ost1) serving objects over tcp
#   node001-3  lutra-ctld + a lutra-bench --loop workload each (a client mount striped over
#              ost0/ost1, running under its own Slurm-like job id)
# and operates it the way an admin would, through lutractl fanned out over the cluster: status,
# tunables, a profile (diff, apply, verify), job stats, a per-job flush, the audit trail.
# Each node has a loopback address of its own (oss01 127.0.0.10, node001-3 127.0.0.11-13) and
# every ctld the same two ports, as on real hosts. A Prometheus (Debian's package) scrapes the
# ctlds through config/prometheus/ with 2 s intervals, its targets written by
# `lutractl prometheus-targets`; the console's cluster views draw its recording rules (without
# prometheus, or when it fails, the demo says so and the console streams every node instead).
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

# Waits for a line matching $2 in file $1 written by process $3 and prints it.
wait_line() {
  for _ in $(seq 1 300); do
    if grep -m1 "$2" "$1" 2>/dev/null; then return 0; fi
    kill -0 "$3" 2>/dev/null || break
    sleep 0.1
  done
  echo "lutra demo: no '$2' in $1 (output and log follow)" >&2
  cat "$1" "${1%.out}.log" >&2
  return 1
}

# The first ctld takes free ports; the others listen on the same ports at their own address.
grpc_port=0
metrics_port=0
start_ctld() { # node labels address
  local node=$1 labels=$2 host=$3 dir=$demo/$1
  mkdir -p "$dir/run"
  cat >"$dir/ctld.yaml" <<YAML
node: $node
labels: {$labels}
listen: $host:$grpc_port
metrics_listen: $host:$metrics_port
run_dir: $dir/run
db: $dir/ctld.db
profiles_dir: $PWD/config/profiles
sample_interval: 5s
auth:
  tokens: [{name: demo-admin, token_file: $token, role: admin}]
YAML
  "$bin/lutra-ctld" --config "$dir/ctld.yaml" >"$dir/ctld.out" 2>"$dir/ctld.log" &
  pids+=($!)
  local ready
  ready=$(wait_line "$dir/ctld.out" "ready" $!)
  sed -E 's/.*grpc=([^ ]+).*/\1/' <<<"$ready" >"$dir/address"
  sed -E 's/.*metrics=([^ ]+).*/\1/' <<<"$ready" >"$dir/metrics"
  grpc_port=$(sed 's/.*://' "$dir/address")
  metrics_port=$(sed 's/.*://' "$dir/metrics")
}

echo "lutra demo: starting the cluster in $demo"
start_ctld oss01 "role: oss" 127.0.0.10
targets=()
for ost in ost0 ost1; do
  mkdir -p "$demo/oss01/$ost"
  LUTRA_RUN_DIR=$demo/oss01/run "$bin/lutra-target" --name "$ost" --root "$demo/oss01/$ost" \
    --listen tcp://127.0.0.10:0 >"$demo/oss01/$ost.out" 2>"$demo/oss01/$ost.log" &
  pids+=($!)
  targets+=("$(wait_line "$demo/oss01/$ost.out" "listening on" $! | sed -E 's/.*listening on ([^ ]+).*/\1/')")
done
target_list=$(IFS=,; echo "${targets[*]}")

# A workload that did not start (or stopped) fails the demo at once, naming the node and its log:
# without it the console's tour would wait minutes for jobs and charts that never come.
workload_failed() { # node why
  echo "lutra demo: the workload of $1 ($(cat "$demo/$1/bench.cmd")) $2; the end of its log $demo/$1/bench.log:" >&2
  tail -15 "$demo/$1/bench.log" >&2
  exit 1
}
# Until the workload's first output: it mounted its client and serves its control socket.
await_workload() { # node pid
  local status=0
  for _ in $(seq 1 300); do
    grep -q "looping; control socket" "$demo/$1/bench.log" 2>/dev/null && return 0
    kill -0 "$2" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$2" 2>/dev/null; then
    workload_failed "$1" "did not start within 30 s"
  fi
  wait "$2" 2>/dev/null || status=$?
  workload_failed "$1" "exited with status $status before it started"
}
# Each workload still runs (a failed iteration ends its loop).
check_workloads() {
  local i
  for i in 1 2 3; do
    kill -0 "${bench_pids[$i]}" 2>/dev/null || workload_failed "node00$i" "stopped"
  done
}

workloads=("ior-easy --file-mb 16" "ior-hard --ranks 2 --segments 200" "cached-read --file-mb 8")
declare -A bench_pids
for i in 1 2 3; do
  node=node00$i
  start_ctld "$node" "role: compute, rack: r1" "127.0.0.1$i"
  bench_args=(--loop --job "100$i" --name "job100$i" --target "$target_list")
  # shellcheck disable=SC2206
  bench_args+=(${workloads[$((i - 1))]})
  echo "$bin/lutra-bench ${bench_args[*]}" >"$demo/$node/bench.cmd"
  LUTRA_RUN_DIR=$demo/$node/run "$bin/lutra-bench" "${bench_args[@]}" \
    >"$demo/$node/bench.out" 2>"$demo/$node/bench.log" &
  pids+=($!)
  bench_pids[$i]=$!
done
for i in 1 2 3; do
  await_workload "node00$i" "${bench_pids[$i]}"
done
echo "lutra demo: workloads running: $(for i in 1 2 3; do printf 'node00%s job100%s (%s)  ' "$i" "$i" "${workloads[$((i - 1))]%% *}"; done)"

hosts=$(cat "$demo"/{oss01,node001,node002,node003}/address | paste -sd,)
computes=$(cat "$demo"/node00{1,2,3}/address | paste -sd,)
oss=$(cat "$demo/oss01/address")
node002=$(cat "$demo/node002/address")
lutractl() { "$bin/lutractl" --token-file "$token" "$@"; }
step() { printf '\n$ lutractl %s\n' "$*"; lutractl "$@" || true; }

# The console's cluster file: one group per role, the demo's admin token (`prometheus:` is added
# once Prometheus has scraped every node).
cluster_name="lutra demo"
cat >"$demo/cluster.yaml" <<YAML
name: $cluster_name
token_file: $token
groups:
  - name: oss
    hosts: $oss
  - name: compute
    hosts: $computes
YAML

# Prometheus scraping every ctld through config/prometheus/, its intervals shortened from 15 s to
# 2 s so the recording rules have 1-minute rates within seconds. It starts now and scrapes while
# the lutractl walk below runs.
prom_dir=$demo/prometheus
prom_bin=${LUTRA_DEMO_PROMETHEUS:-prometheus}
prom_url=
prom_pid=
# Any port from 20000-31999 no one listens on (below the kernel's ephemeral ports).
free_port() {
  local used port
  used=$(ss -Htln | awk '{print $4}' | sed 's/.*://')
  for _ in $(seq 1 100); do
    port=$((20000 + RANDOM % 12000))
    grep -qx "$port" <<<"$used" || { echo "$port"; return 0; }
  done
  return 1
}
start_prometheus() {
  if ! command -v "$prom_bin" >/dev/null; then
    echo "lutra demo: $prom_bin not found (Debian's prometheus package, see packaging/install-deps.sh)"
    return 1
  fi
  mkdir -p "$prom_dir/rules"
  cp config/prometheus/rules/lutra.rules.yml "$prom_dir/rules/"
  sed -e 's/^\(  scrape_interval:\) 15s/\1 2s/' -e 's/^\(  evaluation_interval:\) 15s/\1 2s/' \
    -e 's/^\(  scrape_timeout:\) 10s/\1 2s/' config/prometheus/prometheus.yml >"$prom_dir/prometheus.yml"
  if [[ $(grep -cE '^  (scrape_interval|evaluation_interval|scrape_timeout): 2s' "$prom_dir/prometheus.yml") -ne 3 ]]; then
    echo "lutra demo: config/prometheus/prometheus.yml no longer sets the 15 s/10 s intervals this demo shortens"
    return 1
  fi
  step prometheus-targets --cluster "$demo/cluster.yaml" --ask-nodes --metrics-port "$metrics_port" \
    -o "$prom_dir/lutra-targets.json"
  if [[ ! -s $prom_dir/lutra-targets.json ]]; then
    echo "lutra demo: lutractl prometheus-targets wrote no target list"
    return 1
  fi
  local port why="no free port in 20000-31999"
  for _ in 1 2 3; do # another program may take the port first
    port=$(free_port) || break
    "$prom_bin" --config.file="$prom_dir/prometheus.yml" --storage.tsdb.path="$prom_dir/data" \
      --web.listen-address="127.0.0.1:$port" >"$prom_dir/prometheus.log" 2>&1 &
    prom_pid=$!
    pids+=("$prom_pid")
    why="127.0.0.1:$port/-/ready did not answer within 30 s"
    for _ in $(seq 1 150); do
      if curl -fsS -m 2 -o /dev/null "http://127.0.0.1:$port/-/ready" 2>/dev/null; then
        prom_url=http://127.0.0.1:$port
        echo "lutra demo: Prometheus $prom_url started (scrapes every 2 s; log: $prom_dir/prometheus.log)"
        return 0
      fi
      if ! kill -0 "$prom_pid" 2>/dev/null; then
        wait "$prom_pid" 2>/dev/null
        why="$prom_bin exited with status $?"
        break
      fi
      sleep 0.2
    done
    kill "$prom_pid" 2>/dev/null || true
    grep -q "address already in use" "$prom_dir/prometheus.log" || break
  done
  echo "lutra demo: Prometheus did not start: $why; the end of $prom_dir/prometheus.log:"
  tail -5 "$prom_dir/prometheus.log"
  return 1
}
# The value of an instant query whose answer is one number ("" when it has none).
prom_number() {
  curl -fsS -m 2 -G --data-urlencode "query=$1" "$prom_url/api/v1/query" 2>/dev/null |
    sed -nE 's/.*"value":\[[^,]*,"([0-9.]+)"\].*/\1/p'
}
# Until Prometheus has scraped every node and recorded the compute nodes' hit ratios.
await_prometheus() {
  local up="" rated=""
  for _ in $(seq 1 150); do
    up=$(prom_number "count(up{job=\"lutra-ctld\",cluster=\"$cluster_name\"} == 1)")
    rated=$(prom_number "count(node:lutra_read_ahead_hit_ratio:rate1m{cluster=\"$cluster_name\"})")
    if [[ ${up:-0} -eq 4 && ${rated:-0} -eq 3 ]]; then
      echo "lutra demo: Prometheus $prom_url scraped all 4 nodes; readahead hit ratios of 3 compute nodes recorded"
      return 0
    fi
    sleep 0.2
  done
  echo "lutra demo: Prometheus $prom_url did not scrape every node within 30 s (${up:-0} of 4 nodes up, ${rated:-0} of 3 hit ratios recorded)"
  return 1
}
echo
echo "lutra demo: the fleet's telemetry: Prometheus scraping every node's ctld /metrics"
start_prometheus || prom_url=

# Every ctld has found its datapath processes (the workloads mount and start their I/O).
for _ in $(seq 1 300); do
  [[ $(lutractl -H "$hosts" instances 2>/dev/null | grep -c connected) -ge 5 ]] && break
  check_workloads
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

check_workloads
if [[ -n $prom_url ]] && await_prometheus; then
  echo "prometheus: $prom_url" >>"$demo/cluster.yaml"
  echo "lutra demo: the console's cluster views chart the fleet from Prometheus $prom_url; try $prom_url/graph?g0.expr=node%3Alutra_read_ahead_hit_ratio%3Arate1m"
else
  [[ -z $prom_pid ]] || kill "$prom_pid" 2>/dev/null || true
  prom_url=
  echo "lutra demo: going on without Prometheus: the console streams every node's counters instead"
fi
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
  [[ -z $prom_url ]] || echo "  $prom_url (Prometheus: the fleet's recording rules, node:lutra_*)"
  echo "Ctrl-C stops it."
  while true; do sleep 3600; done
fi
