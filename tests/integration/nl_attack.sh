# An unprivileged local attacker of the control channel (nl_flood.py run as
# nobody): squats the netlink port ids of the next pids before the server
# starts, or floods every netlink port of both daemons. Source after lib.sh.
AS_NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
N="$T/nobody"  # where the unprivileged processes write
mkdir -p "$N" && chown nobody:nogroup "$N"
cp "$RINGSMB_SOURCE_DIR/tests/integration/nl_flood.py" "$T/nl_flood.py"
chmod 644 "$T/nl_flood.py"

# squat_ports COUNT: binds the port ids of the next COUNT pids; sets
# SQUATTER (its pid) and SQUAT_FIRST/SQUAT_LAST (the range it holds).
squat_ports() {
  "${AS_NOBODY[@]}" /usr/bin/python3 "$T/nl_flood.py" squat "$1" "$N/squat.range" &
  SQUATTER=$!
  for _ in $(seq 1 100); do [ -s "$N/squat.range" ] && break; sleep 0.1; done
  read -r SQUAT_FIRST SQUAT_LAST < "$N/squat.range"
}

# Root lists the daemons' netlink ports for the flooder (which cannot read
# their /proc/PID/fd), again and again: worker channels open on first login.
list_nl_ports() {
  python3 "$RINGSMB_SOURCE_DIR/tests/integration/nl_ports.py" "$SERVER_PID" "$(cat "$T/ringsmb-ctld.pid")" > "$T/ports.tmp"
  chmod 644 "$T/ports.tmp" && mv "$T/ports.tmp" "$T/ports"
}
refresh_nl_ports() {
  while kill -0 "$1" 2>/dev/null; do list_nl_ports; sleep 0.2; done
}

# start_flood SECONDS: floods every netlink port of both daemons in the
# background; sets FLOODER and REFRESHER. end_flood waits for both and sets
# FLOOD_SENT and FLOOD_REFUSED from the flooder's report.
start_flood() {
  list_nl_ports
  "${AS_NOBODY[@]}" /usr/bin/python3 "$T/nl_flood.py" flood "$1" "$T/ports" > "$N/flood.out" 2>&1 &
  FLOODER=$!
  refresh_nl_ports "$FLOODER" &
  REFRESHER=$!
}
end_flood() {
  wait "$FLOODER" || true
  wait "$REFRESHER" 2>/dev/null || true
  echo "    flooder: $(cat "$N/flood.out")"
  local _a _b _c other
  read -r _a FLOOD_SENT _b FLOOD_REFUSED _c other < "$N/flood.out" || true
}
