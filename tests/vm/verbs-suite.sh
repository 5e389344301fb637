#!/bin/bash
# The verbs tests, run INSIDE the VM by the vm_verbs_suite CTest test (one boot for all):
#   conformance    the transport conformance suite over verbs on rxe0
#   client-target  a real lutra-target on verbs://, the client writing and reading back with
#                  checksums (test_vm_verbs_client_target)
#   bench          lutra-bench rpc --transport verbs, which runs ib_write_bw on rxe0 itself:
#                  vs_ib_write_bw
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

# lutra-bench over verbs; it runs ib_write_bw (server and client on the same rxe device, a fixed
# count of iterations: its duration mode (-D) counts 0 iterations under TCG) as a side of each
# round. The
# ratio only means something within one run (TCG makes absolute numbers meaningless).
# shellcheck disable=SC2317 # called through part()
bench() {
  "$bin/lutra-bench" --duration 2 rpc --transport verbs --address "$LUTRA_VM_ADDRESS" \
    --ib-device "$LUTRA_VM_DEVICE" --threads 2 --object-mb 16
}

echo "== guest: $(nproc) CPUs, $(awk '/MemTotal/ { print $2 / 1024 " MiB" }' /proc/meminfo)"
part conformance env LUTRA_CONFORMANCE_TRANSPORTS=verbs LUTRA_CONFORMANCE_HOST="$LUTRA_VM_ADDRESS" \
  "$bin/test_transport_conformance"
part client-target "$bin/test_vm_verbs_client_target"
part bench bench
exit 0
