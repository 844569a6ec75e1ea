#!/usr/bin/env bash
# ringsmbctl status --prometheus: the Prometheus text format, checked with
# the prometheus_client parser (Debian's python3-prometheus-client); the
# gauges move as a client connects, logs in, connects a share and holds a
# file open; ringsmb_up 0 when the server is not running.
source "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3  # Debian's, which has prometheus_client
write_config
add_user alice 'secret-A1'
prom() { "$RINGSMBCTL" --config "$T/ringsmb.conf" status --prometheus; }
# value METRIC 'LABELS-AS-PYTHON-DICT': the sample's value, parsed by prometheus_client.
value() {
  prom | "$PY" -c '
import sys
from prometheus_client.parser import text_string_to_metric_families
want_name, want_labels = sys.argv[1], eval(sys.argv[2])
for fam in text_string_to_metric_families(sys.stdin.read()):
    for s in fam.samples:
        if s.name == want_name and s.labels == want_labels:
            print(int(s.value)); sys.exit(0)
print(0)' "$1" "$2"
}

check "not running: ringsmb_up 0, exit 0" bash -c "out=\$('$RINGSMBCTL' --config '$T/ringsmb.conf' status --prometheus) && grep -qx 'ringsmb_up 0' <<<\"\$out\""
start_server
check "the output parses as the Prometheus text format" bash -c \
  "'$RINGSMBCTL' --config '$T/ringsmb.conf' status --prometheus | '$PY' -c 'import sys; from prometheus_client.parser import text_string_to_metric_families as f; list(f(sys.stdin.read()))'"
idle() { [ "$(value ringsmb_up '{}')" = 1 ] && [ "$(value ringsmb_sessions '{"user": "alice"}')" = 0 ]; }
check "idle: ringsmb_up 1 and no sessions" idle

# A client that holds a session, a tree connect and an open file while the
# gauges are read (smbclient keeps reading commands from the pipe).
echo data > "$T/share/held.txt"
mkfifo "$T/cmds"
smbclient //127.0.0.1/share -p "$PORT" -U alice%secret-A1 < "$T/cmds" > "$T/client.log" 2>&1 &
CLIENT=$!
exec 9> "$T/cmds"
echo "open held.txt" >&9
moved() {
  for _ in $(seq 1 50); do
    [ "$(value ringsmb_sessions '{"user": "alice"}')" = 1 ] && [ "$(value ringsmb_tree_connects '{"share": "share"}')" = 1 ] &&
      [ "$(value ringsmb_open_files '{"share": "share", "user": "alice"}')" -ge 1 ] && [ "$(value ringsmb_connections '{}')" = 1 ] && return 0
    sleep 0.2
  done
  prom
  return 1
}
check "with a client: connections 1, alice's session, a tree connect on [share], an open file" moved
dialect() { [ "$(value ringsmb_connections_by_dialect '{"dialect": "3.1.1"}')" = 1 ]; }
check "... and the connection's dialect" dialect
echo quit >&9
exec 9>&-
wait "$CLIENT" || true
gone() {
  for _ in $(seq 1 50); do
    [ "$(value ringsmb_sessions '{"user": "alice"}')" = 0 ] && [ "$(value ringsmb_connections '{}')" = 0 ] && return 0
    sleep 0.2
  done
  return 1
}
check "after the client leaves: back to 0" gone
finish
