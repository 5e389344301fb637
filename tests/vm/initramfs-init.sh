#!/bin/busybox sh
# /init of the VM runner's initramfs (busybox only). Mounts the host's root read-only over
# virtio-9p under a tmpfs overlay and switch_roots into it, so the guest runs every host binary
# and build tree at the same path. switch_root, not chroot: the kernel later runs /sbin/modprobe
# of the new root (rdma link add asks for a crc32 module), which needs a real root switch.
# The kernel passes lutra_stage2=... from its command line as an environment variable.
/bin/busybox --install -s /bin
export PATH=/bin

fail() {
  echo "lutra-vm initramfs: $*" >/dev/console
  echo o >/proc/sysrq-trigger
  sleep 60
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
# Modules in dependency order (written by vm-run.sh from modprobe --show-depends).
while read -r module; do
  insmod "/modules/$module" || fail "insmod $module failed"
done </modules/order

mkdir -p /lower /upper /newroot
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=524288 hostroot /lower ||
  fail "cannot mount the host root over virtio-9p (mount tag hostroot)"
mount -t tmpfs -o size=60% tmpfs /upper || fail "cannot mount the overlay's tmpfs"
mkdir -p /upper/data /upper/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/upper/data,workdir=/upper/work /newroot ||
  fail "cannot mount the overlay root"
[ -n "$lutra_stage2" ] || fail "no lutra_stage2= on the kernel command line"
[ -x "/newroot$lutra_stage2" ] || fail "stage 2 script $lutra_stage2 is not in the host root"
umount /proc /sys /dev
exec switch_root /newroot /bin/bash "$lutra_stage2"
