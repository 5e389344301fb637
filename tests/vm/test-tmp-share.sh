#!/bin/bash
# vm test vm_runner_tmp_share: a directory under /tmp given to vm-run.sh --share is in the guest
# at the same path although the guest mounts a tmpfs over /tmp (as a build directory made with
# `cmake -B /tmp/build` must be); its programs run, and the guest's writes stay in the guest.
#   test-tmp-share.sh CACHE_DIR
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${1:?usage: test-tmp-share.sh CACHE_DIR}
dir=$(mktemp -d /tmp/lutra-vm-share.XXXXXX)
trap 'rm -rf "$dir"' EXIT
echo "marker $$ seen in the guest" >"$dir/marker"
cp /bin/true "$dir/program"

set +e
output=$(env -u LUTRA_BUILD_DIR "$here/vm-run.sh" --cache "$cache" --share "$dir" \
  --command "cat $dir/marker && $dir/program && echo guest >$dir/from-guest" 2>&1)
status=$?
set -e
echo "$output"
fail() {
  echo "FAIL: $*"
  exit 1
}
[[ $status -eq 0 ]] || fail "the job in the VM exited with $status"
[[ "$output" == *"marker $$ seen in the guest"* ]] || fail "the guest did not see $dir/marker"
[[ ! -e "$dir/from-guest" ]] || fail "the guest's write reached the host's $dir"
echo "PASS: $dir shared at the same path; the guest's writes stayed in the guest"
