#!/usr/bin/env bash
# Log levels and log lines of a running server (with ringsmb-ctld):
# ringsmbctl debug changes both daemons' level at once and shows it, a
# reload (ringsmbctl or SIGHUP) applies the file's `log level`, -d uses the
# key's scale and stays across reloads. Reload warnings are printed and
# logged whichever way the reload is asked for, a refused reload is logged.
# Under the journal ($JOURNAL_STREAM matching stderr) every line carries its
# syslog priority (<3>, <4>, <6>, <7>), and ringsmb-ctld's lines its own name
# (its own journal stream when journald is there).
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
finish
