#!/bin/bash
# Slurm epilog: release what the finished job left in the lutra client cache on this node
# (write back its dirty pages, cancel its unused locks, drop its pages), like Lustre's
# `lctl set_param ldlm.namespaces.*.lru_size=clear` but for this job only.
#
# Install as Epilog= in slurm.conf (or a script it runs). A failing epilog drains the node, so:
#  - a flush that fails on an instance (e.g. a target unreachable) is reported and exits 1:
#    the node drains and an admin looks at it, because dirty data may still be on it;
#  - ctld itself being unreachable is not the job's fault: --fail-soft reports it in the log and
#    exits 0, so a restarting ctld does not drain the whole cluster.
# Choose per site; this example drains only when a flush really failed.
set -u
job="${SLURM_JOB_ID:?SLURM_JOB_ID is not set: run this as a Slurm epilog}"
log_tag="lutra-epilog[$job]"

output=$(lutractl --timeout 60s --json flush --job "$job" 2>&1)
status=$?
if [[ $status -eq 0 ]]; then
    logger -t "$log_tag" "flushed: $(printf '%s' "$output" | tr -d '\n' | cut -c1-400)"
    exit 0
fi
if printf '%s' "$output" | grep -q 'UNAVAILABLE'; then
    logger -t "$log_tag" "lutra-ctld unreachable, job cache not flushed: $output"
    exit 0
fi
logger -t "$log_tag" "flush failed: $output"
exit 1
