#!/usr/bin/env bash
# Issue 11, defect 6: unfinished session setups on one connection are
# bounded (kMaxSessionsInProgress, 32: beyond it SESSION_SETUP fails with
# STATUS_INSUFFICIENT_RESOURCES), and what each later frame costs does not
# grow with their number (40,000 used to make every frame cost 825 us).
source "$(dirname "$0")/lib.sh"

setups=40000 extra_us=200
[ -n "${RINGSMB_QUICK:-}" ] && setups=5000 extra_us=1000
write_config
add_user alice 'secret-A1'
start_server
check "$setups unfinished session setups: bounded, ECHO stays fast" \
  python3 "$RINGSMB_SOURCE_DIR/tests/integration/limits_client.py" half-open "$PORT" "$setups" "$extra_us"
sed 's/^/    /' "$T/check.out"
check "a real client still works" smb alice%secret-A1 share "ls"
finish
