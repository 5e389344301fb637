#!/usr/bin/env bash
# lutra's main job. Installs what lutra needs, builds the release tree and runs the demo.
# For now the demo prints the parameter catalogue every datapath process publishes; later
# issues turn it into a local demo cluster with the console.
set -euo pipefail
cd "$(dirname "$0")/.."

packaging/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release
build/release/bin/lutra-params "$@"
