#!/usr/bin/env bash
# Hostile session binding (docs/security.md, "Session binding"): a
# SESSION_SETUP with SMB2_SESSION_FLAG_BINDING for another connection's
# session, with the right key, a wrong one, another user's, unsigned, over
# SMB 2.1 or another 3.x dialect, forty times, and after a LOGOFF; each gets
# its MS-SMB2 status, and the session goes on working. Two workers, so the
# binding connections land on either.
source "$(dirname "$0")/lib.sh"

write_config "workers = 2"
add_user owner 'Owner-1'
add_user other 'Other-1' "$TEST_UNIX_USER2"
start_server

if timeout 60 python3 "$(dirname "$0")/session_bind_probe.py" "$PORT" share owner 'Owner-1' other 'Other-1' \
    > "$T/probe.out" 2>&1; then
  pass "every binding is refused with its status, the session stays ($(tail -1 "$T/probe.out"))"
else
  fail "session bind probe"
  sed 's/^/    /' "$T/probe.out" | tail -40
fi
check "the server is still up" server_alive
finish
