#!/usr/bin/env bash
# Durable handles over real TCP connections (a raw SMB2 client,
# durable_handle.py): a durable open survives its connection being cut (an
# RST) and is reconnected by the same user with its data and its lock;
# another user, another ClientGuid or another lease key is refused; a kept
# open that nobody reconnects is closed, delete-on-close included, when its
# timeout passes; a resilient open (FSCTL_LMR_REQUEST_RESILIENCY) likewise,
# without oplock or lease. Two workers, so the reconnect may land on the other one.
source "$(dirname "$0")/lib.sh"

write_config "workers = 2"
add_user alice 'Alice-pass-1'
add_user bob 'Bob-pass-1'
start_server
check "durable handles" python3 "$RINGSMB_SOURCE_DIR/tests/integration/durable_handle.py" "$PORT" share "$T/share" \
  'alice%Alice-pass-1' 'bob%Bob-pass-1'
grep -E "^(PASS|FAIL)" "$T/check.out" || true
finish
