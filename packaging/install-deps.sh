#!/usr/bin/env bash
# Installs every build and test dependency of lutra on Debian 12 with apt.
# Idempotent: when everything is already installed it prints nothing and exits 0.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build ccache pkg-config git
  clang libclang-rt-14-dev clang-format clang-tidy
  # datapath
  libisal-dev libibverbs-dev librdmacm-dev ibverbs-providers rdma-core
  # ctld
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libsqlite3-dev sqlite3 libyaml-cpp-dev libcli11-dev libcpp-httplib-dev nlohmann-json3-dev
  libsystemd-dev
  # console (Qt Charts needs the OpenGL dev package, only a Recommends of qt6-base-dev)
  qt6-base-dev qt6-base-dev-tools qt6-charts-dev libqt6opengl6-dev libgl-dev libxkbcommon-dev
  # GUI tests without a display
  xvfb xauth
  # tests (promtool, from prometheus, checks ctld's /metrics output); the demo runs prometheus
  # and asks it over HTTP with curl
  prometheus curl
  # packaging (Debian packages and their checks: cpack, dpkg-shlibdeps, lintian, man pages,
  # unit, desktop and AppStream validators)
  dpkg-dev lintian help2man desktop-file-utils appstream systemd
  # vm tests (soft-RoCE under QEMU)
  qemu-system-x86 linux-image-amd64 busybox-static cpio xz-utils rdma-core ibverbs-utils
  ibverbs-providers rdmacm-utils iproute2 kmod perftest
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [[ "$status" == installed ]] || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -ne 0 ]]; then
  sudo=sudo
else
  sudo=
fi
echo "lutra: installing ${#missing[@]} Debian packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "lutra: dependencies installed"
