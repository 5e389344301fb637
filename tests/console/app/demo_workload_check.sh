#!/usr/bin/env bash
# The README's demo when a compute node's workload fails: packaging/demo.sh must stop at once
# with a message naming the node, the command and its log (not open the console on a cluster
# without that job, whose tour then waited minutes). Two runs through a lutra-bench wrapper:
# node002's workload exits before it starts (a failed mount), node003's stops after starting.
# Passes when each run exits non-zero before the console, says why, and leaves no process.
#   demo_workload_check.sh BIN_DIR
set -euo pipefail
bin=$(cd "$1" && pwd)
top=$(cd "$(dirname "$0")/../../.." && pwd)
work=$(mktemp -d /tmp/lutra-demo-workload.XXXXXX)
trap 'rm -rf "$work"' EXIT

fail() {
  echo "demo_workload_check: $*" >&2
  tail -30 "$work/demo.log" >&2
  exit 1
}

# A bin folder like $bin but for lutra-bench: job $1 runs the given shell code instead.
wrap() { # job code
  rm -rf "${work:?}/bin"
  mkdir "$work/bin"
  for file in "$bin"/*; do ln -s "$file" "$work/bin/"; done
  rm "$work/bin/lutra-bench"
  cat >"$work/bin/lutra-bench" <<SCRIPT
#!/usr/bin/env bash
if [[ " \$* " == *" --job $1 "* ]]; then
  $2
fi
exec "$bin/lutra-bench" "\$@"
SCRIPT
  chmod +x "$work/bin/lutra-bench"
}

run_demo() { # the demo without Prometheus: what is checked comes before it
  rm -rf "${work:?}/demo"
  local status=0
  LUTRA_DEMO_BIN=$work/bin LUTRA_DEMO_TOUR=1 LUTRA_DEMO_DIR=$work/demo \
    LUTRA_DEMO_PROMETHEUS=$work/no-prometheus "$top/packaging/demo.sh" </dev/null \
    >"$work/demo.log" 2>&1 || status=$?
  [[ $status -ne 0 ]] || fail "the demo exited 0 although a workload failed"
  ! grep -qE "lutra-console tour|no display: lutra-console" "$work/demo.log" || fail "the demo went on to the console"
  if pgrep -f "$work/" >/dev/null; then
    pgrep -af "$work/" >&2
    fail "processes of the demo are still running"
  fi
}

wrap 1002 'echo "lutra-bench: mount: ost0 refused the session (demo_workload_check)" >&2; exit 3'
run_demo
grep -qF "lutra demo: the workload of node002 ($work/bin/lutra-bench --loop --job 1002" \
  "$work/demo.log" || fail "no message naming node002's workload"
grep -qF "exited with status 3 before it started; the end of its log $work/demo/node002/bench.log:" \
  "$work/demo.log" || fail "the message does not say how it ended and where its log is"
grep -q "^lutra-bench: mount: ost0 refused the session" "$work/demo.log" ||
  fail "the workload's own words are not shown"
echo "demo_workload_check: a workload that did not start: $(grep 'the workload of' "$work/demo.log")"

wrap 1003 'echo "lutra-bench: job 1003 looping; control socket x" >&2; sleep 1; echo "lutra-bench: iteration failed (demo_workload_check)" >&2; exit 4'
run_demo
grep -qF "lutra demo: the workload of node003 ($work/bin/lutra-bench --loop --job 1003" \
  "$work/demo.log" || fail "no message naming node003's workload"
grep -qF "stopped; the end of its log $work/demo/node003/bench.log:" "$work/demo.log" ||
  fail "the message does not say the workload stopped"
grep -q "^lutra-bench: iteration failed" "$work/demo.log" || fail "the workload's words are not shown"
echo "demo_workload_check: a workload that stopped: $(grep 'the workload of' "$work/demo.log")"
