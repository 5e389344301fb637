#!/usr/bin/env bash
# Runs a job inside a QEMU VM with Debian's kernel and soft-RoCE (rdma_rxe on eth0 = rxe0,
# 10.0.2.15), the host's root read-only over virtio-9p (every host binary and build tree at the
# same path), and brings back the job's output and exit status. See README.md.
#
#   vm-run.sh [--cache DIR] [--results DIR] [--timeout SECONDS] [--kernel FILE] [--share DIR]...
#             (--script FILE | --command 'shell command')
#
# --share DIR (and $LUTRA_BUILD_DIR when set): its own 9p mount at the same path in the guest,
# mounted after the guest's tmpfs /tmp, so a build directory under /tmp is there too.
#
# Exit status: the job's, or 125 when the VM could not run the job (printed loudly).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${LUTRA_VM_CACHE:-${TMPDIR:-/tmp}/lutra-vm-cache-$(id -u)}
results=
timeout_s=900
kernel=
job=
command=
shares=()
# QEMU/TCG as measured on this kind of machine; KVM here cannot run a stock kernel.
accel=${LUTRA_VM_ACCEL:-tcg,thread=multi}

die() {
  echo "vm-run: FAILED: $*" >&2
  exit 125
}

while [[ $# -gt 0 ]]; do
  case "$1" in
  --cache) cache=$2; shift 2 ;;
  --results) results=$2; shift 2 ;;
  --timeout) timeout_s=$2; shift 2 ;;
  --kernel) kernel=$2; shift 2 ;;
  --script) job=$2; shift 2 ;;
  --command) command=$2; shift 2 ;;
  --share) shares+=("$2"); shift 2 ;;
  *) die "unknown argument '$1' (see the usage at the top of $0)" ;;
  esac
done
[[ -n "$job" || -n "$command" ]] || die "give --script FILE or --command 'CMD'"
[[ -z "$job" || -r "$job" ]] || die "job script '$job' is not readable"

for tool in qemu-system-x86_64 cpio xz modprobe timeout sha256sum ldd awk; do
  command -v "$tool" >/dev/null || die "'$tool' is not installed (packaging/install-deps.sh installs it)"
done
busybox=/bin/busybox
linkage=$(ldd "$busybox" 2>&1 || true)
if [[ ! -x "$busybox" || "$linkage" != *"not a dynamic executable"* ]]; then
  die "$busybox is not a static busybox (apt-get install busybox-static)"
fi

# Shared directories: absolute, existing, and a plain path (the kernel command line carries them).
[[ -n "${LUTRA_BUILD_DIR:-}" ]] && shares+=("$LUTRA_BUILD_DIR")
share_list=
share_args=()
for dir in "${shares[@]}"; do
  [[ -d "$dir" ]] || die "--share $dir: no such directory"
  dir=$(cd "$dir" && pwd -P)
  [[ "$dir" =~ ^/[A-Za-z0-9._/+-]*$ ]] ||
    die "--share $dir: only letters, digits and ._/+- can go on the guest's kernel command line"
  [[ ",$share_list," == *",$dir,"* ]] && continue
  tag=share$((${#share_args[@]} / 4)) # the guest mounts share<i> at the i-th path of the list
  share_args+=(-fsdev "local,id=$tag,path=$dir,security_model=none,readonly=on,multidevs=remap"
    -device "virtio-9p-pci,fsdev=$tag,mount_tag=$tag")
  share_list+=${share_list:+,}$dir
done

# ---- The kernel: the newest Debian kernel that ships rdma_rxe.
if [[ -z "$kernel" ]]; then
  for candidate in $(find /boot -maxdepth 1 -name 'vmlinuz-*' | sort -V -r); do
    version=${candidate#/boot/vmlinuz-}
    if [[ -n $(find "/lib/modules/$version" -name 'rdma_rxe.ko*' -print -quit 2>/dev/null) ]]; then
      kernel=$candidate
      break
    fi
  done
  [[ -n "$kernel" ]] || die "no /boot/vmlinuz-* with rdma_rxe.ko in /lib/modules (apt-get install linux-image-amd64)"
fi
[[ -r "$kernel" ]] || die "kernel '$kernel' is not readable"
version=${kernel##*/vmlinuz-}
[[ -d "/lib/modules/$version" ]] || die "no /lib/modules/$version for $kernel"

# ---- Cache: the uncompressed vmlinux (QEMU boots it through its PVH note, ~5 s faster under TCG
# than the bzImage) and the initramfs, rebuilt when any input changes.
initramfs_modules=(virtio_pci 9pnet_virtio 9p overlay)
key=$( {
  stat -c '%n %s %Y' "$kernel" "$busybox" "/lib/modules/$version/modules.dep"
  cat "$here/initramfs-init.sh"
  echo "${initramfs_modules[*]}"
} | sha256sum | cut -c1-16)
entry="$cache/$version-$key"
if [[ ! -s "$entry/vmlinux" || ! -s "$entry/initramfs.cpio" ]]; then
  mkdir -p "$cache"
  staging=$(mktemp -d "$cache/.build.XXXXXX")
  trap 'rm -rf "$staging"' EXIT
  echo "vm-run: building the VM image for $version in $entry" >&2
  offset=$(LC_ALL=C grep -obUaP '\xfd\x37\x7a\x58\x5a\x00' "$kernel" | head -1 | cut -d: -f1)
  [[ -n "$offset" ]] || die "$kernel holds no xz stream (not a Debian bzImage?)"
  # xz complains about the data after the stream; the ELF is complete.
  tail -c +$((offset + 1)) "$kernel" | xz -dc >"$staging/vmlinux" 2>/dev/null || true
  head -c 4 "$staging/vmlinux" | grep -q ELF || die "could not extract vmlinux from $kernel"

  root="$staging/root"
  mkdir -p "$root/bin" "$root/modules" "$root/proc" "$root/sys" "$root/dev"
  cp "$busybox" "$root/bin/busybox"
  install -m 755 "$here/initramfs-init.sh" "$root/init"
  : >"$root/modules/order"
  for module in "${initramfs_modules[@]}"; do
    while read -r verb path _; do
      [[ "$verb" == insmod ]] || continue
      name=$(basename "$path")
      name=${name%.xz}
      grep -qx "$name" "$root/modules/order" && continue
      case "$path" in
      *.xz) xz -dc "$path" >"$root/modules/$name" ;;
      *) cp "$path" "$root/modules/$name" ;;
      esac
      echo "$name" >>"$root/modules/order"
    done < <(modprobe -S "$version" --show-depends "$module")
  done
  (cd "$root" && find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0 >"$staging/initramfs.cpio")
  rm -rf "$root" "${entry:?}"
  mv "$staging" "$entry"
  trap - EXIT
  # Drop entries of older inputs.
  find "$cache" -mindepth 1 -maxdepth 1 -type d ! -path "$entry" -name "*-*" -mmin +60 \
    -exec rm -rf {} + 2>/dev/null || true
fi

# ---- The results share: job.sh in, output.log and status out.
cleanup_results=
if [[ -z "$results" ]]; then
  results=$(mktemp -d "${TMPDIR:-/tmp}/lutra-vm-results.XXXXXX")
  cleanup_results=$results
fi
mkdir -p "$results"
results=$(cd "$results" && pwd)
# Results of an earlier run go; a directory vm-run did not make is never emptied.
if [[ -f "$results/.lutra-vm-results" ]]; then
  find "$results" -mindepth 1 -delete
elif [[ -n $(ls -A "$results") ]]; then
  die "--results $results is not empty and was not made by vm-run"
fi
touch "$results/.lutra-vm-results"
# The guest starts with an empty environment: pass on the sanitizers' options and LUTRA_*.
for name in $(compgen -e); do
  case "$name" in
  ASAN_OPTIONS | UBSAN_OPTIONS | LSAN_OPTIONS | LUTRA_*) printf 'export %s=%q\n' "$name" "${!name}" ;;
  esac
done >"$results/env.sh"
if [[ -n "$job" ]]; then
  cp "$job" "$results/job.sh"
else
  printf '%s\n' "$command" >"$results/job.sh"
fi

start=$(date +%s%N)
set +e
timeout -k 10 "$timeout_s" qemu-system-x86_64 \
  -accel "$accel" -cpu max -m 1024 -smp 2 \
  -nodefaults -no-user-config -no-reboot -display none -monitor none \
  -serial "file:$results/console.log" \
  -kernel "$entry/vmlinux" -initrd "$entry/initramfs.cpio" \
  -append "console=ttyS0 quiet panic=-1 lutra_stage2=$here/guest-stage2.sh lutra_results=$results lutra_shares=$share_list" \
  -fsdev local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap \
  -device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
  -fsdev "local,id=results,path=$results,security_model=none,multidevs=remap" \
  -device virtio-9p-pci,fsdev=results,mount_tag=results \
  "${share_args[@]}" \
  -netdev user,id=net0 -device virtio-net-pci,netdev=net0
qemu_status=$?
set -e
elapsed=$(awk -v ns=$(($(date +%s%N) - start)) 'BEGIN { printf "%.1f", ns / 1e9 }')

[[ -f "$results/output.log" ]] && cat "$results/output.log"
if [[ ! -f "$results/status" ]]; then
  echo "---- guest console:" >&2
  tail -n 40 "$results/console.log" >&2 2>/dev/null || true
  echo "---- guest setup:" >&2
  cat "$results/guest-setup.log" >&2 2>/dev/null || true
  [[ $qemu_status -eq 124 ]] && die "the VM did not finish within ${timeout_s}s"
  [[ -f "$results/setup-failed" ]] && die "guest $(cat "$results/setup-failed")"
  die "the VM ended (qemu status $qemu_status) without reporting the job's exit status"
fi
status=$(cat "$results/status")
echo "vm-run: job exit status $status, VM wall time ${elapsed}s (kernel $version, accel $accel)" >&2
[[ -n "$cleanup_results" ]] && rm -rf "$cleanup_results"
exit "$status"
