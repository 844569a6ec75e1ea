#!/usr/bin/env bash
# Issue 11, defect 7: an unprivileged local user must not be able to keep
# the control channel (NETLINK_USERSOCK, where anyone may bind any free port
# and send to any port) from working: (a) by binding the port ids the
# daemons used to take (== their pids) before they start; (b) by flooding
# every netlink port of ringsmbd and ringsmb-ctld while clients log in.
source "$(dirname "$0")/lib.sh"

FLOOD_SECONDS=20
[ -n "${RINGSMB_QUICK:-}" ] && FLOOD_SECONDS=6
AS_NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
N="$T/nobody"  # where the unprivileged processes write
mkdir -p "$N" && chown nobody:nogroup "$N"
cp "$RINGSMB_SOURCE_DIR/tests/integration/nl_flood.py" "$T/nl_flood.py"
chmod 644 "$T/nl_flood.py"

write_config
add_user alice 'secret-A1'
C=alice%secret-A1

# (a) Squat the port ids of the next 3000 pids, then start the server.
"${AS_NOBODY[@]}" /usr/bin/python3 "$T/nl_flood.py" squat 3000 "$N/squat.range" &
SQUATTER=$!
for _ in $(seq 1 100); do [ -s "$N/squat.range" ] && break; sleep 0.1; done
read -r first last < "$N/squat.range"
check "the squatter holds ports $first..$last" test "$((last - first))" -gt 2000
start_server
ctld_pid=$(cat "$T/ringsmb-ctld.pid" 2>/dev/null || echo 0)
check "ringsmbd's pid ($SERVER_PID) is a squatted port id" test "$SERVER_PID" -ge "$first" -a "$SERVER_PID" -le "$last"
check "ringsmbd runs although its old port ids are taken" server_alive
check "a login works while the ports are squatted" smb "$C" share "ls"
check "ringsmbctl status works while the ports are squatted" "$RINGSMBCTL" --config "$T/ringsmb.conf" status
check "the port files are 0600" bash -c "[ \"\$(stat -c %a '$T/ringsmbd.port' '$T/ringsmb-ctld.port' | sort -u)\" = 600 ]"
kill "$SQUATTER"; wait "$SQUATTER" 2>/dev/null || true

# (b) Flood every netlink port of both daemons; the list is refreshed by
# root (the flooder cannot read the daemons' /proc/PID/fd) because the
# worker threads' channels open on their first login.
ctld_pid=$(cat "$T/ringsmb-ctld.pid")
refresh_ports() {
  while kill -0 "$1" 2>/dev/null; do
    python3 "$RINGSMB_SOURCE_DIR/tests/integration/nl_ports.py" "$SERVER_PID" "$ctld_pid" > "$T/ports.tmp"
    chmod 644 "$T/ports.tmp" && mv "$T/ports.tmp" "$T/ports"
    sleep 0.2
  done
}
python3 "$RINGSMB_SOURCE_DIR/tests/integration/nl_ports.py" "$SERVER_PID" "$ctld_pid" > "$T/ports"
chmod 644 "$T/ports"
check "both daemons have netlink ports to flood ($(wc -w < "$T/ports"))" test "$(wc -w < "$T/ports")" -ge 4
"${AS_NOBODY[@]}" /usr/bin/python3 "$T/nl_flood.py" flood "$FLOOD_SECONDS" "$T/ports" > "$N/flood.out" 2>&1 &
FLOODER=$!
refresh_ports "$FLOODER" &
REFRESHER=$!
logins=0 failed=0 status_ok=0 status_runs=0
end=$((SECONDS + FLOOD_SECONDS - 1))
while [ "$SECONDS" -lt "$end" ]; do
  if smb "$C" share "ls" > "$T/login.out" 2>&1; then logins=$((logins + 1)); else failed=$((failed + 1)); tail -3 "$T/login.out"; fi
  status_runs=$((status_runs + 1))
  "$RINGSMBCTL" --config "$T/ringsmb.conf" status > "$T/status.out" 2>&1 && status_ok=$((status_ok + 1))
done
wait "$FLOODER" || true
wait "$REFRESHER" 2>/dev/null || true
echo "flooder: $(cat "$N/flood.out"); logins ok $logins failed $failed; status ok $status_ok of $status_runs"
read -r _ sent _ refused _ other < "$N/flood.out" || true
check "the flooder sent datagrams (${sent:-0})" test "${sent:-0}" -gt 1000
check "the kernel refused datagrams to connected sockets (${refused:-0})" test "${refused:-0}" -gt 0
check "logins ran during the flood ($logins)" test "$logins" -ge 3
check "every login during the flood succeeded ($failed failed)" test "$failed" -eq 0
check "ringsmbctl status worked during the flood ($status_ok of $status_runs)" test "$status_ok" -eq "$status_runs"
check "a login after the flood" smb "$C" share "ls"
finish
