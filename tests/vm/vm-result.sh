#!/usr/bin/env bash
# Reports one part of a VM suite run as its own CTest test: prints the part's log and exits
# with its status. Fails loudly when the VM run (the fixture's setup test) left no result.
#   vm-result.sh RESULTS_DIR PART
set -u
results=$1
part=$2
if [[ ! -f "$results/$part.status" ]]; then
  echo "vm-result: FAILED: no result for '$part' in $results: the VM run did not get to it" \
    "(see the output of vm_verbs_suite)" >&2
  [[ -f "$results/$part.log" ]] && cat "$results/$part.log"
  exit 1
fi
cat "$results/$part.log"
status=$(cat "$results/$part.status")
echo "vm-result: '$part' exited with status $status inside the VM"
exit "$status"
