#!/usr/bin/env bash
# A directory renamed while handles below it are open (rename_below.py, a
# raw SMB 3.0 client): handles kept only by RH leases (the Linux kernel
# client's deferred closes and cached directories) are broken and waited
# for, and the rename succeeds once the client closes them; a handle
# without a lease, or one kept after the break or whose holder never
# answers, refuses it (ACCESS_DENIED).
source "$(dirname "$0")/lib.sh"

write_config "lease break timeout = 1000"
add_user alice 'secret-A1'
start_server
check "directory renames over open handles below" \
  python3 "$RINGSMB_SOURCE_DIR/tests/integration/rename_below.py" "$PORT" share alice 'secret-A1'
grep -E "^(PASS|FAIL)" "$T/check.out" || true
finish
