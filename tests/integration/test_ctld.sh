#!/usr/bin/env bash
# ringsmbd with ringsmb-ctld (the default with --config): logins go through
# ctld; a SIGKILL of ctld in the middle of a copy leaves the session working,
# ctld is restarted and new logins work; a hung ctld makes logins fail
# cleanly; netlink messages from an unprivileged process are dropped and
# logged; SIGHUP reloads the shares.
source "$(dirname "$0")/lib.sh"

write_config
add_user alice 'secret-A1'
start_server
C=alice%secret-A1

ctld_pid() { cat "$T/ringsmb-ctld.pid" 2>/dev/null || true; }
connected_count() { grep -c "ringsmb-ctld (request port .*) is connected" "$T/server.log" || true; }
# wait_connected N: until the server log shows N handshakes (a restarted ctld).
wait_connected() {
  for _ in $(seq 1 100); do
    [ "$(connected_count)" -ge "$1" ] && return 0
    sleep 0.1
  done
  return 1
}

check "ringsmb-ctld runs and wrote its pid file" bash -c "kill -0 \$(cat $T/ringsmb-ctld.pid)"
check "login and listing through ringsmb-ctld" smb "$C" share "ls"
expect_status "a wrong password is refused by ringsmb-ctld" NT_STATUS_LOGON_FAILURE smb "alice%wrong" share "ls"

# One smbclient session spans the crash: a put, a pause (during which ctld
# is killed), another put and a get on the same session.
head -c $((32 * 1024 * 1024)) /dev/urandom > "$T/big"
old=$(ctld_pid)
(
  smb "$C" share "put $T/big big1; ! sleep 3; put $T/big big2; get big1 $T/back1" > "$T/copy.out" 2>&1
  echo $? > "$T/copy.rc"
) &
copier=$!
sleep 1.5
kill -KILL "$old"
wait "$copier" || true
check "the session survives a SIGKILL of ringsmb-ctld mid-copy" test "$(cat "$T/copy.rc")" = 0
check "bytes written after the crash are intact" cmp "$T/big" "$T/share/big2"
check "bytes read after the crash are intact" cmp "$T/big" "$T/back1"
# The supervisor reaps ctld on its next round; on a loaded machine that can
# come after the copy finished, so wait for the log line a little.
check "ringsmbd noticed the crash" bash -c "for _ in \$(seq 1 100); do
  grep -q 'ringsmb-ctld (pid $old) was killed' '$T/server.log' && exit 0; sleep 0.1; done; exit 1"
check "ringsmb-ctld was restarted" wait_connected 2
check "the restarted ringsmb-ctld has a new pid" bash -c "[ \"\$(cat $T/ringsmb-ctld.pid)\" != '$old' ]"
check "a new login works after the restart" smb "$C" share "ls"

# A hung ctld (stopped, not dead): logins fail with LOGON_FAILURE after the
# request timeout instead of hanging; afterwards everything works again.
hung=$(ctld_pid)
kill -STOP "$hung"
expect_status "a login while ringsmb-ctld hangs fails cleanly" NT_STATUS_LOGON_FAILURE smb "$C" share "ls"
kill -CONT "$hung"
check "logins work again once ringsmb-ctld resumes" smb "$C" share "ls"

# An unprivileged process sends SHUTDOWN to ctld: dropped, logged, ignored.
cat > "$T/sender.py" <<'EOF'
import socket, struct, sys
port = int(sys.argv[1])
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 2)  # NETLINK_USERSOCK
s.bind((0, 0))
# nlmsghdr (len, type=family 0x7273, flags=NLM_F_REQUEST, seq, pid) + genlmsghdr (cmd=SHUTDOWN(20), version 1)
msg = struct.pack("=IHHII", 20, 0x7273, 1, 1, 0) + struct.pack("=BBH", 20, 1, 0)
s.sendto(msg, (port, 0))
EOF
chmod 644 "$T/sender.py"
nobody_uid=$(id -u nobody)
check "an unprivileged process can send the message" \
  setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/bin/python3 "$T/sender.py" "$(cat "$T/ringsmb-ctld.port")"
sleep 0.5
check "the unprivileged message is dropped and logged" \
  grep -q "dropped netlink message .*uid $nobody_uid .*neither 0 nor ours" "$T/server.log"
check "ringsmb-ctld ignored it and still serves" smb "$C" share "ls"

# SIGHUP reloads: a share added to the file is served without a restart.
owned_dir "$T/extra"
add_share extra "$T/extra" "writeable = yes"
kill -HUP "$SERVER_PID"
sleep 0.5
check "a share added before SIGHUP is served" smb "$C" extra "ls"
check "ringsmbctl reload" "$RINGSMBCTL" --config "$T/ringsmb.conf" reload

# ringsmbctl shutdown stops ctld and ringsmbd.
check "ringsmbctl shutdown" "$RINGSMBCTL" --config "$T/ringsmb.conf" shutdown
stopped() { for _ in $(seq 1 50); do server_alive || return 0; sleep 0.1; done; return 1; }
check "ringsmbd stopped after shutdown" stopped
wait "$SERVER_PID" 2>/dev/null || true
SERVER_PID=""

finish
