#!/usr/bin/env bash
# Directory leases over two real connections (a raw SMB 3.0 client,
# directory_lease.py): RH granted on a directory, broken (and acknowledged)
# when another client creates, writes, renames or deletes an entry, not when
# the holder changes it through an open naming the lease as its parent;
# and when a local process (touch, mv, rm on the share's disk) changes it.
# Two workers, so a break may cross from one worker's connection to another's.
source "$(dirname "$0")/lib.sh"

write_config "map to guest = bad user" "workers = 2"
guest_share
start_server
check "directory leases" python3 "$RINGSMB_SOURCE_DIR/tests/integration/directory_lease.py" "$PORT" share "$T/share"
grep -E "^(PASS|FAIL)" "$T/check.out" || true
finish
