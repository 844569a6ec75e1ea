#!/usr/bin/env bash
# Blocking byte-range locks over two real connections (a raw SMB2 client,
# blocking_lock.py): the interim STATUS_PENDING, the grant on unlock and on
# close, CANCEL, a waiter whose connection drops. Two workers, so the grant
# may cross from one worker's connection to another's.
source "$(dirname "$0")/lib.sh"

write_config "map to guest = bad user" "workers = 2"
guest_share
start_server
check "blocking locks" python3 "$RINGSMB_SOURCE_DIR/tests/integration/blocking_lock.py" "$PORT" share
grep -E "^(PASS|FAIL)" "$T/check.out" || true
finish
