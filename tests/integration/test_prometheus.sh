#!/usr/bin/env bash
# ringsmbctl status --prometheus: the Prometheus text format, checked with
# the prometheus_client parser (Debian's python3-prometheus-client); the
# gauges move as a client connects, logs in, connects a share and holds a
# file open; ringsmb_up 0 when the server is not running; the counters move
# as a client writes and reads and as a login fails; /metrics is not served
# by default and is served on loopback with "metrics listen".
source "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3  # Debian's, which has prometheus_client
write_config
add_user alice 'secret-A1'
prom() { "$RINGSMBCTL" --config "$T/ringsmb.conf" status --prometheus; }
# value METRIC 'LABELS-AS-PYTHON-DICT': the sample's value, parsed by prometheus_client.
value() { prom | sample_of "$1" "$2"; }
sample_of() {
  "$PY" -c '
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

# Counters: a client writes a 300 KB file and reads it back.
head -c 300000 /dev/urandom > "$T/upload.bin"
writes0=$(value ringsmb_requests_total '{"command": "write", "class": "success"}')
reads0=$(value ringsmb_requests_total '{"command": "read", "class": "success"}')
rx0=$(value ringsmb_received_bytes_total '{}')
tx0=$(value ringsmb_sent_bytes_total '{}')
accepted0=$(value ringsmb_connections_accepted_total '{}')
check "a client writes and reads a file" smb alice%secret-A1 share "put $T/upload.bin upload.bin; get upload.bin $T/download.bin"
counters_moved() {
  [ "$(value ringsmb_requests_total '{"command": "write", "class": "success"}')" -gt "$writes0" ] &&
    [ "$(value ringsmb_requests_total '{"command": "read", "class": "success"}')" -gt "$reads0" ] &&
    [ "$(value ringsmb_received_bytes_total '{}')" -ge $((rx0 + 300000)) ] &&
    [ "$(value ringsmb_sent_bytes_total '{}')" -ge $((tx0 + 300000)) ] &&
    [ "$(value ringsmb_connections_accepted_total '{}')" -gt "$accepted0" ] &&
    [ "$(value ringsmb_request_duration_seconds_count '{"command": "write"}')" -ge 1 ]
}
check "requests by command, bytes both ways, connections accepted and the latency histogram moved" counters_moved
histogram_ok() {
  prom | "$PY" -c '
import sys
from prometheus_client.parser import text_string_to_metric_families
fams = {f.name: f for f in text_string_to_metric_families(sys.stdin.read())}
h = fams["ringsmb_request_duration_seconds"]
assert h.type == "histogram", h.type
b = [s for s in h.samples if s.name.endswith("_bucket") and s.labels["command"] == "write"]
c = [s.value for s in h.samples if s.name.endswith("_count") and s.labels["command"] == "write"][0]
vals = [s.value for s in b]
assert vals == sorted(vals) and b[-1].labels["le"] == "+Inf" and vals[-1] == c, (vals, c)
assert fams["ringsmb_requests"].type == "counter"
'
}
check "the latency histogram parses as a histogram, cumulative, +Inf = count" histogram_ok
failures0=$(value ringsmb_login_failures_total '{}')
smbclient //127.0.0.1/share -p "$PORT" -U alice%wrong-password -c ls > /dev/null 2>&1 || true
check "a wrong password counts a login failure" bash -c "[ \$('$RINGSMBCTL' --config '$T/ringsmb.conf' status --prometheus | grep '^ringsmb_login_failures_total ' | cut -d' ' -f2) -gt $failures0 ]"

# /metrics: off by default (ringsmbd listens on its SMB port only).
tcp_listeners() {
  "$PY" - "$SERVER_PID" <<'PY'
import os, sys
pid = sys.argv[1]
inodes = set()
for fd in os.listdir(f"/proc/{pid}/fd"):
    try:
        link = os.readlink(f"/proc/{pid}/fd/{fd}")
    except OSError:
        continue
    if link.startswith("socket:["):
        inodes.add(link[8:-1])
ports = set()
for table in ("/proc/net/tcp", "/proc/net/tcp6"):
    for line in open(table).readlines()[1:]:
        f = line.split()
        if f[3] == "0A" and f[9] in inodes:  # LISTEN
            ports.add(int(f[1].split(":")[1], 16))
print(" ".join(str(p) for p in sorted(ports)))
PY
}
listeners=$(tcp_listeners)
check "without 'metrics listen' ringsmbd listens on its SMB port only ($listeners)" [ "$listeners" = "$PORT" ]

stop_server
MPORT=$(free_port)
write_config "metrics listen = $MPORT"
start_server
scrape() { curl -sf --max-time 5 "http://127.0.0.1:$MPORT/metrics"; }
served() {
  for _ in $(seq 1 50); do scrape > /dev/null && return 0; sleep 0.1; done
  return 1
}
check "with 'metrics listen = PORT', /metrics answers on 127.0.0.1" served
check "... in the text format prometheus_client parses, gauges and counters" bash -c \
  "curl -sf 'http://127.0.0.1:$MPORT/metrics' | '$PY' -c 'import sys; from prometheus_client.parser import text_string_to_metric_families as f; n = {x.name for x in f(sys.stdin.read())}; assert {\"ringsmb_up\", \"ringsmb_sessions\", \"ringsmb_requests\", \"ringsmb_request_duration_seconds\"} <= n, n'"
check "... with the Prometheus content type" bash -c "curl -sfI 'http://127.0.0.1:$MPORT/metrics' | grep -qi '^Content-Type: text/plain; version=0.0.4'"
check "other paths get 404" bash -c "[ \$(curl -s -o /dev/null -w '%{http_code}' 'http://127.0.0.1:$MPORT/') = 404 ]"
# /proc/net/tcp: local address 0100007F:PORT (127.0.0.1), state 0A (LISTEN).
bound_where() { awk -v p="$(printf '%04X' "$MPORT")" '$4 == "0A" && split($2, a, ":") == 2 && a[2] == p {print $2}' /proc/net/tcp /proc/net/tcp6; }
check "the listener is bound to 127.0.0.1 only ($(bound_where | tr '\n' ' '))" [ "$(bound_where)" = "0100007F$(printf ':%04X' "$MPORT")" ]
finish
