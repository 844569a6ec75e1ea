#!/usr/bin/env bash
# A ringsmbd started without --foreground (and outside systemd) detaches from
# its terminal; its log lines and those of the ringsmb-ctld it spawns must
# then reach syslog, not vanish. The test runs in a private mount namespace
# whose /dev is a fresh tmpfs, so that its own /dev/log listener stands in
# for the machine's syslog daemon without touching the machine's /dev.
source "$(dirname "$0")/lib.sh"

write_config
add_user alice secret

cat > "$T/listen.py" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
open(sys.argv[3], "w").close()  # ready
with open(sys.argv[2], "ab", buffering=0) as out:
    while True:
        out.write(s.recv(65536) + b"\n")
PY

cat > "$T/inner.sh" <<INNER
set -eu
mount -t tmpfs -o mode=755 tmpfs /dev
mknod -m 666 /dev/null c 1 3
mknod -m 666 /dev/zero c 1 5
mknod -m 666 /dev/urandom c 1 9
mknod -m 666 /dev/random c 1 8
python3 "$T/listen.py" /dev/log "$T/syslog.txt" "$T/ready" &
echo \$! > "$T/listener.pid"
for _ in \$(seq 1 50); do [ -e "$T/ready" ] && break; sleep 0.1; done
"$RINGSMBD" --config "$T/ringsmb.conf"
INNER

check "ringsmbd detaches (exit 0 from the parent)" unshare --mount --propagation private bash "$T/inner.sh"
for _ in $(seq 1 100); do grep -q "listening" "$T/syslog.txt" 2>/dev/null && break; sleep 0.1; done
check "ringsmbd's start-up lines reach syslog under its own name" \
  grep -qE '^<[0-9]+>.*ringsmbd\[[0-9]+\]: ringsmbd: [0-9]+ workers .* listening' "$T/syslog.txt"
check "the detached server serves" smb alice%secret share "ls"
daemon_pid=$(grep -oE 'ringsmbd\[[0-9]+\]' "$T/syslog.txt" | head -1 | tr -dc 0-9)
check "ringsmbd.pid names the detached server" test "$(cat "$T/ringsmbd.pid" 2>/dev/null)" = "$daemon_pid"
server_pid=$(cat "$T/ringsmbd.pid" 2>/dev/null || true)
if [ -n "$server_pid" ]; then
  kill "$server_pid"
  for _ in $(seq 1 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
fi
check "ringsmb-ctld, spawned by the detached server, logs to syslog too" grep -qE 'ringsmb-ctld\[[0-9]+\]: ' "$T/syslog.txt"
check "no line is written in the stderr format" bash -c "! grep -qE '\[(info|warn|error|debug)\] ' '$T/syslog.txt'"
kill "$(cat "$T/listener.pid")" 2>/dev/null || true
finish
