#!/usr/bin/env bash
# Opens and leases belong to users, and no user holds the server's shared
# resources (docs/security.md, "Opens and leases belong to users"): raw SMB2
# clients of two ordinary users (user_opens.py). An AppInstanceId closes
# only the same user's open, and only from a CREATE that passed its access
# check; a lease break goes only to a connection of the lease owner's user
# (not to one that merely sent the owner's ClientGuid in its NEGOTIATE);
# one connection's change-notify watches hold at most 1 MiB of changes;
# kept durable opens cost the descriptors the budget counts.
# Two workers, so the connections of a test may land on either.
source "$(dirname "$0")/lib.sh"

write_config "workers = 2"
add_user alice 'Alice-pass-1'
add_user bob 'Bob-pass-1' "$TEST_UNIX_USER2"
start_server
opens() {  # opens TEST...: user_opens.py against this server
  python3 "$RINGSMB_SOURCE_DIR/tests/integration/user_opens.py" "$PORT" share "$T/share" \
    'alice%Alice-pass-1' 'bob%Bob-pass-1' "$@"
}
check "AppInstanceId closes only the same user's open, after the access check" opens app_instance
grep -E "^(PASS|FAIL)" "$T/check.out" | sed 's/^/    /' || true
check "lease breaks go to the lease owner's user" opens lease_break
grep -E "^(PASS|FAIL)" "$T/check.out" | sed 's/^/    /' || true
check "change-notify memory is bounded per connection" opens notify_memory
grep -E "^(PASS|FAIL)|^    200" "$T/check.out" | sed 's/^/    /' || true

# Kept durable opens under a descriptor limit of 256 (ringsmbd raises its
# soft limit to the hard one; both are 256 here).
stop_server
printf '#!/bin/sh\nulimit -n 256\nexec "%s" "$@"\n' "$RINGSMBD" > "$T/ringsmbd-256"
chmod +x "$T/ringsmbd-256"
RINGSMBD="$T/ringsmbd-256"
start_server
check "kept durable opens cost what the descriptor budget counts" opens kept_fds
grep -E "^(PASS|FAIL)" "$T/check.out" | sed 's/^/    /' || true
finish
