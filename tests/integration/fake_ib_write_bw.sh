#!/bin/sh
# A stand-in for perftest's ib_write_bw (test_ib_write_bw): server when the last argument is
# not an address; the server waits until its client is done; the first two clients are refused
# as by a server still starting. Records each call in $FAKE_DIR/calls. With $FAKE_DIR/zero present,
# the first client that runs prints that file (a 0 MB/s row) instead of $FAKE_DIR/output.
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
  rm -f "$FAKE_DIR/done" # the next run's server waits for its own client
  exit 0
fi
if [ "$(grep -c '^client' "$FAKE_DIR/calls")" -lt 3 ]; then
  echo "Couldn't connect to $last:18515"
  exit 1
fi
if [ -e "$FAKE_DIR/zero" ]; then
  cat "$FAKE_DIR/zero"
  rm -f "$FAKE_DIR/zero"
else
  cat "$FAKE_DIR/output"
fi
touch "$FAKE_DIR/done"
