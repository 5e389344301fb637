#!/usr/bin/env bash
# lutra's main job. Installs what lutra needs, builds the release tree and runs the demo.
# For now the demo walks through what exists: the parameter contract every datapath process
# publishes, then real lutra-target processes measured by lutra-bench against same-run
# baselines, with the client engine on top.
# Later issues turn it into a local demo cluster with the console.
set -euo pipefail
cd "$(dirname "$0")/.."

packaging/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release

bin=build/release/bin
step() { printf '\n$ %s\n' "$*"; "$@" || true; }
step "$bin/lutra-params" list 'osc.ost0'
step "$bin/lutra-params" get 'osc.*.max_pages_per_rpc' 'llite.*.read_ahead_stats'
# LU-9906's tuning line, as admins type it for lctl:
step "$bin/lutra-params" set 'osc.*.max_pages_per_rpc=16M' 'osc.*.max_rpcs_in_flight=16' \
  'osc.*.max_dirty_mb=512' 'osc.*.checksums=0' 'llite.*.max_read_ahead_mb=2048'
# A batch with one bad value changes nothing and says why:
step "$bin/lutra-params" set 'osc.*.max_pages_per_rpc=8M' 'osc.ost0.max_dirty_mb=512K'
# A real target process over the tcp plugin, against raw TCP between the same two processes,
# and group commit against one fdatasync per write:
step "$bin/lutra-bench" --duration 1 rpc
step "$bin/lutra-bench" --duration 1 commit
# The client engine (page cache, readahead, locks, write-back) over two striped targets:
step "$bin/lutra-bench" ior-easy --file-mb 32
step "$bin/lutra-bench" small-read
