#!/bin/bash
# The verbs tests, run INSIDE the VM by the vm_verbs_suite CTest test (one boot for all):
#   conformance    the transport conformance suite over verbs on rxe0
#   client-target  a real lutra-target on verbs://, the client writing and reading back with
#                  checksums (test_vm_verbs_client_target)
#   bench          ib_write_bw on rxe0, then lutra-bench rpc --transport verbs: vs_ib_write_bw
# Each part leaves <part>.log and <part>.status in the results share; vm-result.sh turns them
# into the CTest tests vm_verbs_<part>. Needs LUTRA_BUILD_DIR (forwarded by vm-run.sh).
set -u
: "${LUTRA_BUILD_DIR:?}" "${LUTRA_VM_RESULTS:?}" "${LUTRA_VM_ADDRESS:?}" "${LUTRA_VM_DEVICE:?}"
bin=$LUTRA_BUILD_DIR/bin
results=$LUTRA_VM_RESULTS
export LUTRA_PLUGIN_PATH=$LUTRA_BUILD_DIR/lib

now() { date +%s%N; }
seconds_since() { awk -v ns=$(($(now) - $1)) 'BEGIN { printf "%.1f", ns / 1e9 }'; }

part() {
  local name=$1
  shift
  local start
  start=$(now)
  echo "== $name: $*"
  "$@" >"$results/$name.log" 2>&1
  local status=$?
  echo "$status" >"$results/$name.status"
  echo "== $name: exit $status after $(seconds_since "$start")s"
}

# ib_write_bw between two processes on the same rxe device (64 iterations: its duration mode
# (-D) counts 0 iterations under TCG), then lutra-bench over verbs; the
# ratio only means something within one run (TCG makes absolute numbers meaningless).
# shellcheck disable=SC2317 # called through part()
bench() {
  local size=$((1 << 20))
  ib_write_bw -d "$LUTRA_VM_DEVICE" -x 1 -F -s "$size" -n 64 >/tmp/ib_server.log 2>&1 &
  local server=$!
  for _ in $(seq 100); do
    ss -ltn 2>/dev/null | grep -q ':18515 ' && break
    sleep 0.1
  done
  ib_write_bw -d "$LUTRA_VM_DEVICE" -x 1 -F -s "$size" -n 64 "$LUTRA_VM_ADDRESS" >/tmp/ib_client.log 2>&1
  local client_status=$?
  wait "$server"
  cat /tmp/ib_client.log
  # The result line: #bytes #iterations BW-peak BW-average[MB/sec] MsgRate.
  local average
  average=$(awk -v size="$size" '$1 == size && NF >= 5 { print $4 }' /tmp/ib_client.log | tail -1)
  if [[ $client_status -ne 0 || -z "$average" ]]; then
    echo "bench: ib_write_bw failed (exit $client_status); server said:"
    cat /tmp/ib_server.log
    return 1
  fi
  echo "ib_write_bw on $LUTRA_VM_DEVICE: ${average} MiB/s (perftest MB/sec)"
  "$bin/lutra-bench" --duration 2 rpc --transport verbs --address "$LUTRA_VM_ADDRESS" \
    --threads 2 --object-mb 16 --ib-write-bw "$average"
}

echo "== guest: $(nproc) CPUs, $(awk '/MemTotal/ { print $2 / 1024 " MiB" }' /proc/meminfo)"
part conformance env LUTRA_CONFORMANCE_TRANSPORTS=verbs LUTRA_CONFORMANCE_HOST="$LUTRA_VM_ADDRESS" \
  "$bin/test_transport_conformance"
part client-target "$bin/test_vm_verbs_client_target"
part bench bench
exit 0
