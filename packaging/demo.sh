#!/usr/bin/env bash
# lutra's main job. Installs what lutra needs, builds the release tree and runs the demo.
# For now the demo walks through the parameter contract every datapath process publishes;
# later issues turn it into a local demo cluster with the console.
set -euo pipefail
cd "$(dirname "$0")/.."

packaging/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release

params=build/release/bin/lutra-params
step() { printf '\n$ %s\n' "$*"; "$@" || true; }
step "$params" list 'osc.ost0'
step "$params" get 'osc.*.max_pages_per_rpc' 'llite.*.read_ahead_stats'
# LU-9906's tuning line, as admins type it for lctl:
step "$params" set 'osc.*.max_pages_per_rpc=16M' 'osc.*.max_rpcs_in_flight=16' \
  'osc.*.max_dirty_mb=512' 'osc.*.checksums=0' 'llite.*.max_read_ahead_mb=2048'
# A batch with one bad value changes nothing and says why:
step "$params" set 'osc.*.max_pages_per_rpc=8M' 'osc.ost0.max_dirty_mb=512K'
