#!/usr/bin/env bash
# Log levels and log lines of a running server (with ringsmb-ctld):
# ringsmbctl debug changes both daemons' level at once and shows it, a
# reload (ringsmbctl or SIGHUP) applies the file's `log level`, -d uses the
# key's scale and stays across reloads. Reload warnings are printed and
# logged whichever way the reload is asked for, a refused reload is logged.
# Under the journal ($JOURNAL_STREAM matching stderr) every line carries its
# syslog priority (<3>, <4>, <6>, <7>), and ringsmb-ctld's lines its own name
# (its own journal stream when journald is there). Under journald, every
# line about a client goes with the journal's native protocol and carries
# SMB_CLIENT, SMB_USER and SMB_SHARE once known.
source "$(dirname "$0")/lib.sh"

wait_for() {  # wait_for command...: up to 5 s
  for _ in $(seq 1 50); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  "$@"
}

levels_are() {  # levels_are N: both daemons report N
  local out
  out=$(CTL debug)
  grep -qx "ringsmbd: log level $1" <<<"$out" && grep -qx "ringsmb-ctld: log level $1" <<<"$out"
}

set_file_level() { sed -i "s/^  log level = .*/  log level = $1/" "$T/ringsmb.conf"; }

write_config "log level = 1"
add_user alice 'secret-A1'
start_server

check "debug without LEVEL shows both daemons at the file's level" levels_are 1
expect_exit "debug 3 sets both" 0 "ringsmb-ctld: log level 3" CTL debug 3
check "... both report 3" levels_are 3
check "... ringsmbd logs the change under its name" \
  grep -qE '^ringsmbd\[warn\] log level 3 \(was 1\), asked by ringsmbctl debug' "$T/server.log"
check "... ringsmb-ctld too, under its own" \
  grep -qE '^ringsmb-ctld\[warn\] log level 3 \(was 1\), asked by ringsmbctl debug' "$T/server.log"
smb "alice%secret-A1" share "ls" >/dev/null 2>&1 || true
check "... a login now writes ctld's debug lines" grep -qE '^ringsmb-ctld\[debug\] ' "$T/server.log"
expect_exit "debug 11 is a usage error" 2 "" CTL debug 11
check "... and changes nothing" levels_are 3

set_file_level 2
expect_exit "ringsmbctl reload applies the file's log level" 0 "reloaded" CTL reload
check "... to both daemons" levels_are 2
set_file_level 0
kill -HUP "$SERVER_PID"
check "SIGHUP applies it too" wait_for levels_are 0
set_file_level 1
CTL reload >/dev/null

# Reload warnings: the same both ways, printed and logged.
sed -i 's/^\[share\]$/[share]\n  bogus key = 1/' "$T/ringsmb.conf"
expect_exit "ringsmbctl reload prints the file's warnings, exit 0" 0 "warning: $T/ringsmb.conf:" CTL reload
check "... naming the unknown key" grep -qF "unknown key 'bogus key' in [share]" "$T/last.out"
check "... and the server logs it" grep -qE "^ringsmb-ctld\[warn\] reload: .*unknown key 'bogus key'" "$T/server.log"
before=$(grep -c "unknown key 'bogus key'" "$T/server.log")
kill -HUP "$SERVER_PID"
check "SIGHUP logs the same warning" wait_for bash -c \
  "[ \$(grep -c \"unknown key 'bogus key'\" '$T/server.log') -gt $before ]"

# A refused reload: printed, exit 1, and in the server's log.
sed -i '/^  bogus key = 1$/d; s/^  log level = .*/&\n  deadtime = -1/' "$T/ringsmb.conf"
expect_exit "a reload of a file with errors is refused: exit 1" 1 "reload failed" CTL reload
check "... printing the error with its line and key" grep -qF "ringsmb.conf:8: deadtime: '-1' is not a number" "$T/last.out"
check "... which the server logs" grep -qE "^ringsmb-ctld\[error\] reload: .*deadtime: '-1' is not a number" "$T/server.log"
check "... and the server still serves" smb "alice%secret-A1" share "ls"
sed -i '/^  deadtime = -1$/d' "$T/ringsmb.conf"
stop_server

# Under the journal, with -d 0: priorities, ctld's name, and -d stays.
: > "$T/server.log"
export JOURNAL_STREAM
JOURNAL_STREAM=$(stat -c '%d:%i' "$T/server.log")
set_file_level 2
start_server -d 0
unset JOURNAL_STREAM
check "-d 0 is the key's scale: both daemons at 0" levels_are 0
CTL reload >/dev/null
check "... and a reload keeps it" levels_are 0
sed -i 's/^  log level = .*/&\n  deadtime = -1/' "$T/ringsmb.conf"
kill -HUP "$SERVER_PID"
check "a refused SIGHUP reload is an error line with priority 3" \
  wait_for grep -qE "^<3>reload: .*deadtime: '-1' is not a number" "$T/server.log"
CTL reload >/dev/null 2>&1 || true
check "ringsmb-ctld's lines carry its name after the priority" \
  wait_for grep -qE "^<3>ringsmb-ctld: reload: .*deadtime: '-1'" "$T/server.log"
CTL debug 1 >/dev/null
check "the change is a warning line (<4>)" grep -qE '^<4>log level 1 \(was 0\)' "$T/server.log"
check "no line of level 1 or 2 at log level 0 (before debug 1)" bash -c \
  "! sed '/log level 1 (was 0)/q' '$T/server.log' | grep -qE '^<[67]>'"
check "every line starts with a priority" bash -c "! grep -vqE '^<[3467]>' '$T/server.log'"
stop_server
expect_exit "debug when the server is not running: exit 6" 6 "not running" CTL debug 2

# ringsmb-ctld started by ringsmbd opens a journal stream of its own under its
# name. In a private mount namespace, a listener on a fresh
# /run/systemd/journal/stdout stands in for journald.
sed -i '/^  deadtime = -1$/d' "$T/ringsmb.conf"
cat > "$T/journal.py" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(4)
open(sys.argv[3], "w").close()  # ready
c, _ = s.accept()
with open(sys.argv[2], "ab", buffering=0) as out:
    while True:
        data = c.recv(65536)
        if not data: break
        out.write(data)
PY
: > "$T/ctld.err"
cat > "$T/inner.sh" <<INNER
set -eu
mount -t tmpfs -o mode=755 tmpfs /run
mkdir -p /run/systemd/journal
python3 "$T/journal.py" /run/systemd/journal/stdout "$T/stream.txt" "$T/ready" &
for _ in \$(seq 1 50); do [ -e "$T/ready" ] && break; sleep 0.1; done
export JOURNAL_STREAM=\$(stat -c '%d:%i' "$T/ctld.err")
"$RINGSMB_BUILD_DIR/daemon/ringsmb-ctld" --config "$T/ringsmb.conf" --foreground --parent \$\$ 2>> "$T/ctld.err" &
for _ in \$(seq 1 50); do grep -q 'ready, ABI' "$T/stream.txt" 2>/dev/null && break; sleep 0.1; done
kill \$! 2>/dev/null || true
wait 2>/dev/null || true
INNER
unshare --mount --propagation private bash "$T/inner.sh" > "$T/inner.out" 2>&1 || true
check "ringsmb-ctld opens its own journal stream, named ringsmb-ctld, with priorities" \
  bash -c "head -c 24 '$T/stream.txt' | cmp -s - <(printf 'ringsmb-ctld\n\n6\n1\n0\n0\n0\n')"
check "... and writes its lines there, each with its priority" grep -qE '^<6>ringsmb-ctld \(pid [0-9]+\) ready' "$T/stream.txt"
check "... not on the stream it inherited" bash -c "! grep -q 'ready, ABI' '$T/ctld.err'"

# Under journald, lines about a client carry SMB_CLIENT, SMB_USER and
# SMB_SHARE. ringsmbd runs in a private mount namespace where a listener on
# a fresh /run/systemd/journal/socket stands in for journald's native
# socket; stderr is the journal stream ($JOURNAL_STREAM).
cat > "$T/journal_socket.py" <<'PY'
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o666)  # as journald's: threads serving a share run as its user
with open(sys.argv[3] + ".tmp", "w") as f:
    f.write(str(os.getpid()))
os.rename(sys.argv[3] + ".tmp", sys.argv[3])
with open(sys.argv[2], "ab", buffering=0) as out:
    while True:
        out.write(s.recv(65536) + b"\x1e")
PY
cat > "$T/journal-ns.sh" <<INNER
set -eu
mount -t tmpfs -o mode=755 tmpfs /run
mkdir -p /run/systemd/journal
python3 "$T/journal_socket.py" /run/systemd/journal/socket "$T/journal.dgrams" "$T/journal.pid" < /dev/null > /dev/null 2>&1 &
for _ in \$(seq 1 50); do [ -e "$T/journal.pid" ] && break; sleep 0.1; done
export JOURNAL_STREAM=\$(stat -c '%d:%i' "$T/server.log")
exec "$RINGSMBD" "\$@"
INNER
printf '#!/bin/sh\nexec unshare --mount --propagation private bash "%s" "$@"\n' "$T/journal-ns.sh" > "$T/ringsmbd-journal"
chmod 755 "$T/ringsmbd-journal"
set_file_level 2
: > "$T/journal.dgrams"
REAL_RINGSMBD=$RINGSMBD
RINGSMBD=$T/ringsmbd-journal
start_server
RINGSMBD=$REAL_RINGSMBD
smb "alice%secret-A1" share "ls" > /dev/null 2>&1 || true
smb "alice%wrong-password" share "ls" > /dev/null 2>&1 || true
# share close while alice is connected: its line is about her tree connect.
rm -f "$T/cmds"
mkfifo "$T/cmds"
timeout 60 smbclient //127.0.0.1/share -p "$PORT" -U "alice%secret-A1" < "$T/cmds" > /dev/null 2>&1 &
LONG_PID=$!
exec 3> "$T/cmds"
echo "ls" >&3
for _ in $(seq 1 50); do CTL status | grep -q "share  *alice" && break; sleep 0.1; done
CTL share close share > /dev/null
exec 3>&-
wait "$LONG_PID" || true
stop_server
[ -s "$T/journal.pid" ] && kill "$(cat "$T/journal.pid")" 2> /dev/null || true
# journal_has 'python condition over m, a dict of one datagram's fields': some datagram meets it.
journal_has() {
  python3 - "$T/journal.dgrams" "$1" <<'PY'
import sys
records = [r for r in open(sys.argv[1], "rb").read().split(b"\x1e") if r]
def fields(r):
    m = {}
    for line in r.decode().splitlines():
        k, _, v = line.partition("=")
        m[k] = v
    return m
ms = [fields(r) for r in records]
sys.exit(0 if any(eval(sys.argv[2], {}, {"m": m, "ms": ms}) for m in ms) else 1)
PY
}
check "a session's line goes to the journal with SMB_CLIENT and SMB_USER" journal_has \
  "\"for 'alice'\" in m.get('MESSAGE', '') and m.get('SMB_CLIENT') == '127.0.0.1' and m.get('SMB_USER') == 'alice' and m.get('SYSLOG_IDENTIFIER') == 'ringsmbd' and m.get('PRIORITY') == '6'"
check "a tree connect's line carries SMB_SHARE too" journal_has \
  "'closed by the administrator' in m.get('MESSAGE', '') and m.get('SMB_USER') == 'alice' and m.get('SMB_SHARE') == 'share' and m.get('PRIORITY') == '6'"
check "ringsmb-ctld's login_failure event: SMB_CLIENT, SMB_USER and RINGSMB_EVENT" journal_has \
  "m.get('RINGSMB_EVENT') == 'login_failure' and m.get('SMB_USER') == 'alice' and m.get('SMB_CLIENT') == '127.0.0.1' and m.get('SYSLOG_IDENTIFIER') == 'ringsmb-ctld'"
check "every datagram is about a client (SMB_CLIENT)" journal_has "all('SMB_CLIENT' in x for x in ms)"
check "no line about a client fell back to the stream" bash -c "! grep -E '^<[0-9]>127\.0\.0\.1: ' '$T/server.log'"
check "... and the session's line is not on the stream as well" bash -c "! grep -q \"for 'alice'\" '$T/server.log'"
check "lines about no client stay on the stream, with their priority" grep -qE '^<6>.*listening' "$T/server.log"
finish
