#!/usr/bin/env bash
# ringsmbctl status --prometheus: the Prometheus text format, checked with
# the prometheus_client parser (Debian's python3-prometheus-client); the
# gauges move as a client connects, logs in, connects a share and holds a
# file open; ringsmb_up 0 when the server is not running; the counters move
# as a client writes and reads and as a login fails; /metrics is not served
# by default and is served on loopback with "metrics listen"; the counters
# per share and per user move with what each user does on each share.
source "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3  # Debian's, which has prometheus_client
write_config
owned_dir "$T/other"
add_share other "$T/other" "writeable = yes"
add_user alice 'secret-A1'
add_user bob 'secret-B2'
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

# Per share and per user: alice works on [share], bob on [other]; each
# one's bytes and requests land on its own share and user only.

# The values of the samples below, in this order, from one scrape.
snapshot() {
  prom | "$PY" -c '
import sys
from prometheus_client.parser import text_string_to_metric_families
want = [
    ("share_written_bytes_total", {"share": "share"}), ("share_read_bytes_total", {"share": "share"}),
    ("share_written_bytes_total", {"share": "other"}), ("share_read_bytes_total", {"share": "other"}),
    ("user_written_bytes_total", {"user": "alice"}), ("user_read_bytes_total", {"user": "alice"}),
    ("user_written_bytes_total", {"user": "bob"}),
    ("share_requests_total", {"share": "share", "command": "create", "class": "error"}),
    ("user_requests_total", {"user": "alice", "command": "create", "class": "error"}),
    ("share_requests_total", {"share": "other", "command": "write", "class": "success"}),
    ("user_requests_total", {"user": "bob", "command": "tree_connect", "class": "success"}),
    ("user_requests_total", {"user": "bob", "command": "session_setup", "class": "success"}),
    ("share_request_duration_seconds_count", {"share": "other"}),
    ("user_request_duration_seconds_count", {"user": "bob"}),
]
got = {}
for fam in text_string_to_metric_families(sys.stdin.read()):
    for s in fam.samples:
        got[(s.name, tuple(sorted(s.labels.items())))] = int(s.value)
print(" ".join(str(got.get(("ringsmb_" + n, tuple(sorted(l.items()))), 0)) for n, l in want))
'
}
read -r sw0 sr0 ow0 or0 aw0 ar0 bw0 sce0 ace0 oww0 btc0 bss0 olat0 blat0 <<< "$(snapshot)"
head -c 100000 /dev/urandom > "$T/bob.bin"
check "alice writes and reads 300000 bytes on [share]" \
  smb alice%secret-A1 share "put $T/upload.bin scoped.bin; get scoped.bin $T/scoped.bin"
expect_status "alice misses a file on [share]" NT_STATUS_OBJECT_NAME_NOT_FOUND \
  smb alice%secret-A1 share "get no-such-file $T/none"
check "bob writes 100000 bytes on [other]" smb bob%secret-B2 other "put $T/bob.bin bob.bin"
read -r sw1 sr1 ow1 or1 aw1 ar1 bw1 sce1 ace1 oww1 btc1 bss1 olat1 blat1 <<< "$(snapshot)"
check "[share] wrote 300000 and read 300000 bytes more ($((sw1 - sw0)), $((sr1 - sr0)))" \
  [ $((sw1 - sw0)) = 300000 -a $((sr1 - sr0)) = 300000 ]
check "[other] wrote 100000 bytes more and read none ($((ow1 - ow0)), $((or1 - or0)))" \
  [ $((ow1 - ow0)) = 100000 -a $((or1 - or0)) = 0 ]
check "alice wrote 300000 and read 300000 bytes more, bob wrote 100000 ($((aw1 - aw0)), $((ar1 - ar0)), $((bw1 - bw0)))" \
  [ $((aw1 - aw0)) = 300000 -a $((ar1 - ar0)) = 300000 -a $((bw1 - bw0)) = 100000 ]
check "alice's missing file is a CREATE error on [share] and for alice" [ "$sce1" -gt "$sce0" -a "$ace1" -gt "$ace0" ]
check "bob's WRITEs on [other], his login and tree connect are counted" \
  [ "$oww1" -gt "$oww0" -a "$btc1" = $((btc0 + 1)) -a "$bss1" = $((bss0 + 1)) ]
check "the latency histograms of [other] and bob moved" [ "$olat1" -gt "$olat0" -a "$blat1" -gt "$blat0" ]
scoped_types() {
  prom | "$PY" -c '
import sys
from prometheus_client.parser import text_string_to_metric_families
fams = {f.name: f for f in text_string_to_metric_families(sys.stdin.read())}
for kind in ("share", "user"):
    assert fams[f"ringsmb_{kind}_requests"].type == "counter"
    assert fams[f"ringsmb_{kind}_read_bytes"].type == "counter"
    h = fams[f"ringsmb_{kind}_request_duration_seconds"]
    assert h.type == "histogram", h.type
    for who in {s.labels[kind] for s in h.samples}:
        b = [s.value for s in h.samples if s.name.endswith("_bucket") and s.labels[kind] == who]
        c = [s.value for s in h.samples if s.name.endswith("_count") and s.labels[kind] == who][0]
        assert b == sorted(b) and b[-1] == c, (kind, who, b, c)
labels = {s.labels.get("share") for s in fams["ringsmb_share_requests"].samples}
assert {"share", "other"} <= labels <= {"share", "other", "IPC$"}, labels  # configured shares only
'
}
check "the per-share and per-user families parse: counters and cumulative histograms, configured names only" scoped_types
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
check "a client lists [share]" smb alice%secret-A1 share ls
scoped_served() {
  local out
  out=$(scrape) &&
    grep -q '^ringsmb_share_requests_total{share="share",command="query_directory",class="success"} [1-9]' <<< "$out" &&
    grep -q '^ringsmb_user_requests_total{user="alice",command="tree_connect",class="success"} 1$' <<< "$out"
}
check "... and /metrics has its requests by share and by user" scoped_served
check "... with the Prometheus content type" bash -c "curl -sfI 'http://127.0.0.1:$MPORT/metrics' | grep -qi '^Content-Type: text/plain; version=0.0.4'"
check "other paths get 404" bash -c "[ \$(curl -s -o /dev/null -w '%{http_code}' 'http://127.0.0.1:$MPORT/') = 404 ]"
# /proc/net/tcp: local address 0100007F:PORT (127.0.0.1), state 0A (LISTEN).
bound_where() { awk -v p="$(printf '%04X' "$MPORT")" '$4 == "0A" && split($2, a, ":") == 2 && a[2] == p {print $2}' /proc/net/tcp /proc/net/tcp6; }
check "the listener is bound to 127.0.0.1 only ($(bound_where | tr '\n' ' '))" [ "$(bound_where)" = "0100007F$(printf ':%04X' "$MPORT")" ]
finish
