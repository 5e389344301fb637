#!/bin/bash
# Stage 2 of the VM guest, run by the initramfs after switch_root into the host's root (read-only
# 9p under a tmpfs overlay): mounts the results share, brings up eth0 (QEMU user networking) and
# soft-RoCE rxe0 on it, runs the job and writes its exit status back, then powers off.
# Kernel command line (arrive as environment variables): lutra_results=<host path of the share>,
# lutra_shares=<host paths shared at the same path, comma-separated>.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TMPDIR=/tmp LANG=C.UTF-8

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run

poweroff_now() {
  sync
  /bin/busybox poweroff -f
}

# Shared directories (vm-run --share, the build directory): each its own read-only 9p mount
# under a tmpfs overlay at its own path, after the tmpfs /tmp above so a build directory under
# /tmp is there too; writes stay in the guest. Before the results share, which may be inside one.
IFS=, read -r -a shared <<<"${lutra_shares:-}"
for i in "${!shared[@]}"; do
  dir=${shared[$i]}
  layer=/run/lutra-share$i
  mkdir -p "$layer/lower" "$layer/upper" "$layer/work" "$dir"
  if ! mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=524288 "share$i" \
    "$layer/lower" ||
    ! mount -t overlay overlay \
      -o "lowerdir=$layer/lower,upperdir=$layer/upper,workdir=$layer/work" "$dir"; then
    echo "lutra-vm: cannot mount the shared directory $dir (9p tag share$i)" >/dev/console
    poweroff_now
  fi
done

results=${lutra_results:-}
if [[ -z "$results" ]]; then
  echo "lutra-vm: no lutra_results= on the kernel command line" >/dev/console
  poweroff_now
fi
mkdir -p "$results"
if ! mount -t 9p -o trans=virtio,version=9p2000.L,cache=none,msize=524288 results "$results"; then
  echo "lutra-vm: cannot mount the results share at $results" >/dev/console
  poweroff_now
fi

# Everything below goes to the results share, so the runner can show why the guest failed.
exec >>"$results/guest-setup.log" 2>&1
setup_failed() {
  echo "lutra-vm: setup failed: $*"
  echo "setup: $*" >"$results/setup-failed"
  poweroff_now
}
step() {
  echo "+ $*"
  "$@" || setup_failed "$*"
}

echo "lutra-vm: stage 2 at uptime $(cut -d' ' -f1 /proc/uptime)s"
hostname lutra-vm
step ip link set lo up
step modprobe virtio_net
for _ in $(seq 50); do [[ -e /sys/class/net/eth0 ]] && break; sleep 0.1; done
step ip link set eth0 up
step ip addr add 10.0.2.15/24 dev eth0
step modprobe rdma_rxe
step modprobe rdma_ucm
step rdma link add rxe0 type rxe netdev eth0
for _ in $(seq 100); do
  [[ -e /dev/infiniband/rdma_cm && -e /dev/infiniband/uverbs0 ]] && break
  sleep 0.1
done
[[ -e /dev/infiniband/rdma_cm ]] || setup_failed "/dev/infiniband/rdma_cm did not appear"
[[ -e /dev/infiniband/uverbs0 ]] || setup_failed "/dev/infiniband/uverbs0 did not appear"
step rdma link show
step ibv_devices
# The RoCE v2 GID of 10.0.2.15 is installed asynchronously once the port is up.
for _ in $(seq 100); do
  grep -q '0a00:020f' /sys/class/infiniband/rxe0/ports/1/gids/1 2>/dev/null && break
  sleep 0.1
done
grep -q '0a00:020f' /sys/class/infiniband/rxe0/ports/1/gids/1 ||
  setup_failed "rxe0 has no IPv4 GID for 10.0.2.15"
echo "lutra-vm: rxe0 ready at uptime $(cut -d' ' -f1 /proc/uptime)s"

# shellcheck disable=SC1091 # written by vm-run.sh
source "$results/env.sh"
export LUTRA_VM=1 LUTRA_VM_RESULTS="$results" LUTRA_VM_ADDRESS=10.0.2.15 LUTRA_VM_DEVICE=rxe0
cd /tmp || poweroff_now
bash "$results/job.sh" >"$results/output.log" 2>&1
echo $? >"$results/status"
poweroff_now
