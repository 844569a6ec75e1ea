#!/usr/bin/env bash
# Multichannel (MS-SMB2 3.3.5.5 session binding): connections bound to one
# session share its opens, survive the loss of the first one, are limited
# to 32, refuse another user's authentication, and one LOGOFF ends them
# all; `ringsmbctl status` lists a session's channels (2, then 1 after one
# drops). Two workers, so that bindings land on either and the binding
# connection moves to the session's worker.
source "$(dirname "$0")/lib.sh"

write_config "workers = 2"
add_user owner 'Owner-1'
add_user other 'Other-1' "$TEST_UNIX_USER2"
start_server

if timeout 60 python3 "$(dirname "$0")/multichannel_probe.py" "$PORT" share owner 'Owner-1' other 'Other-1' \
    > "$T/probe.out" 2>&1; then
  pass "bound channels share the session ($(tail -1 "$T/probe.out"))"
else
  fail "multichannel probe"
  sed 's/^/    /' "$T/probe.out" | tail -40
fi
if timeout 60 python3 "$(dirname "$0")/multichannel_status.py" "$PORT" share owner 'Owner-1' \
    "$RINGSMBCTL" "$T/ringsmb.conf" > "$T/status.out" 2>&1; then
  pass "ringsmbctl status shows a session's channels ($(tail -1 "$T/status.out"))"
else
  fail "ringsmbctl status and the channels"
  sed 's/^/    /' "$T/status.out" | tail -40
fi
check "the server is still up" server_alive
finish
