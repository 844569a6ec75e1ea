#!/usr/bin/env bash
# Hostile input: garbage, truncated, oversized frames, bad offsets, '..'
# names, a compound chain of thousands of elements. Each gets an error or a
# dropped connection, and ringsmbd keeps serving.
source "$(dirname "$0")/lib.sh"

write_config "map to guest = bad user"
guest_share
add_user alice 'secret-A1'
start_server
check "raw hostile requests" python3 "$RINGSMB_SOURCE_DIR/tests/integration/rawsmb.py" "$PORT" share
cat "$T/check.out" | grep -E "^(PASS|FAIL)" || true
check "a real client still works" smb alice%secret-A1 share "ls"
finish
