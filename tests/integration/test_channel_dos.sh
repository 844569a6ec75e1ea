#!/usr/bin/env bash
# Issue 11, defect 7: an unprivileged local user must not be able to keep
# the control channel (NETLINK_USERSOCK, where anyone may bind any free port
# and send to any port) from working: (a) by binding the port ids the
# daemons used to take (== their pids) before they start; (b) by flooding
# every netlink port of ringsmbd and ringsmb-ctld while clients log in.
source "$(dirname "$0")/lib.sh"

FLOOD_SECONDS=20
[ -n "${RINGSMB_QUICK:-}" ] && FLOOD_SECONDS=6
source "$(dirname "$0")/nl_attack.sh"

write_config
add_user alice 'secret-A1'
C=alice%secret-A1

# (a) Squat the port ids of the next 3000 pids, then start the server.
squat_ports 3000
first=$SQUAT_FIRST last=$SQUAT_LAST
check "the squatter holds ports $first..$last" test "$((last - first))" -gt 2000
start_server
check "ringsmbd's pid ($SERVER_PID) is a squatted port id" test "$SERVER_PID" -ge "$first" -a "$SERVER_PID" -le "$last"
check "ringsmbd runs although its old port ids are taken" server_alive
check "a login works while the ports are squatted" smb "$C" share "ls"
check "ringsmbctl status works while the ports are squatted" "$RINGSMBCTL" --config "$T/ringsmb.conf" status
check "the port files are 0600" bash -c "[ \"\$(stat -c %a '$T/ringsmbd.port' '$T/ringsmb-ctld.port' | sort -u)\" = 600 ]"
kill "$SQUATTER"; wait "$SQUATTER" 2>/dev/null || true

# (b) Flood every netlink port of both daemons while clients log in.
start_flood "$FLOOD_SECONDS"
check "both daemons have netlink ports to flood ($(wc -w < "$T/ports"))" test "$(wc -w < "$T/ports")" -ge 4
logins=0 failed=0 status_ok=0 status_runs=0
end=$((SECONDS + FLOOD_SECONDS - 1))
while [ "$SECONDS" -lt "$end" ]; do
  if smb "$C" share "ls" > "$T/login.out" 2>&1; then logins=$((logins + 1)); else failed=$((failed + 1)); tail -3 "$T/login.out"; fi
  status_runs=$((status_runs + 1))
  "$RINGSMBCTL" --config "$T/ringsmb.conf" status > "$T/status.out" 2>&1 && status_ok=$((status_ok + 1))
done
end_flood
echo "logins ok $logins failed $failed; status ok $status_ok of $status_runs"
check "the flooder sent datagrams (${FLOOD_SENT:-0})" test "${FLOOD_SENT:-0}" -gt 1000
check "the kernel refused datagrams to connected sockets (${FLOOD_REFUSED:-0})" test "${FLOOD_REFUSED:-0}" -gt 0
check "logins ran during the flood ($logins)" test "$logins" -ge 3
check "every login during the flood succeeded ($failed failed)" test "$failed" -eq 0
check "ringsmbctl status worked during the flood ($status_ok of $status_runs)" test "$status_ok" -eq "$status_runs"
check "a login after the flood" smb "$C" share "ls"
finish
