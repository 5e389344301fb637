#!/bin/sh
# A stand-in for perftest's ib_write_bw (test_ib_write_bw): server when the last argument is
# not an address; the server waits until its client is done; the first two clients are refused
# as by a server still starting. Records each call in $FAKE_DIR/calls.
for last; do :; done
case "$last" in
  [0-9]*.*) role=client ;;
  *) role=server ;;
esac
echo "$role $*" >>"$FAKE_DIR/calls"
if [ "$role" = server ]; then
  if [ -n "$FAKE_SERVER_FAILS" ]; then
    echo " Failed to get IB devices list"
    exit 1
  fi
  while [ ! -e "$FAKE_DIR/done" ]; do sleep 0.02; done
  exit 0
fi
if [ "$(grep -c '^client' "$FAKE_DIR/calls")" -lt 3 ]; then
  echo "Couldn't connect to $last:18515"
  exit 1
fi
cat "$FAKE_DIR/output"
touch "$FAKE_DIR/done"
