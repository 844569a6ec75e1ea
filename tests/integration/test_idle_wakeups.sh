#!/usr/bin/env bash
# An idle server sleeps: after a client has come and gone, ringsmbd (its
# workers, the admin endpoint, the /metrics listener, the ringsmb-ctld
# supervisor) and ringsmb-ctld together switch context at most a few times
# in 10 seconds (each switch is a wake-up: /proc/PID/task/*/status), with
# io_uring and with epoll (two servers side by side, measured over the same
# 10 s). The same with a client logged in and idle, a file open (impacket;
# it sends no keep-alives). Then everything answers at once: a login,
# ringsmbctl status, /metrics, and SIGTERM (the stop wakes the sleeping
# threads itself).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/holders.sh"  # the idle clients, killed on exit

MAX_SWITCHES=3  # per server and its ctld, in 10 s; before: about 250 (timers of 100 ms to 1 s)
MPORT=$(free_port)
write_config "metrics listen = 127.0.0.1:$MPORT"
add_user alice 'secret-A1'
C=alice%secret-A1

# The epoll server: the same shares and users, its own port and state directory.
EPORT=$(free_port)
mkdir "$T/epoll"
sed -e "s/tcp port = $PORT/tcp port = $EPORT/" -e "s|state directory = $T\$|state directory = $T/epoll|" \
  -e "/metrics listen/d" "$T/ringsmb.conf" > "$T/epoll/ringsmb.conf"
EPID=""
trap 'stop_holders; [ -n "$EPID" ] && kill "$EPID" 2>/dev/null && wait "$EPID" 2>/dev/null; cleanup' EXIT

start_server
"$RINGSMBD" --config "$T/epoll/ringsmb.conf" --foreground --epoll > "$T/epoll/server.log" 2>&1 &
EPID=$!

connected() { grep -q "ringsmb-ctld (request port .*) is connected" "$1"; }
wait_for() { for _ in $(seq 1 100); do "$@" && return 0; sleep 0.1; done; return 1; }
check "io_uring server: ringsmb-ctld connected" wait_for connected "$T/server.log"
check "epoll server: ringsmb-ctld connected" wait_for connected "$T/epoll/server.log"
check "epoll server: the epoll backend" grep -q "(epoll)" "$T/epoll/server.log"

scrape() { python3 -c "import urllib.request,sys; sys.exit(b'ringsmb_up' not in urllib.request.urlopen('http://127.0.0.1:$MPORT/metrics', timeout=5).read())"; }
# A client comes and goes, the admin endpoint and /metrics answer once:
# what an idle NAS saw last.
check "io_uring server: a login and a listing" smb "$C" share "ls"
check "epoll server: a login and a listing" smbclient //127.0.0.1/share -p "$EPORT" -U "$C" -c ls
check "ringsmbctl status answers" "$RINGSMBCTL" --config "$T/ringsmb.conf" status
check "/metrics answers" scrape
sleep 1.2  # the workers' last tick (1 s) after the connections ended

# Context switches of every thread of ringsmbd and its ringsmb-ctld, one
# "PID/TID NAME COUNT" a line.
switches() {
  local pid=$1 ctld f
  ctld=$(pgrep -P "$pid" -x ringsmb-ctld || true)
  for f in /proc/"$pid"/task/*/status /proc/"$ctld"/task/*/status; do
    awk -v t="${f#/proc/}" '/^Name:/{n=$2} /ctxt_switches/{s+=$2} END{sub("/status","",t); print t, n, s}' "$f" 2>/dev/null || true
  done
}
# woken BEFORE AFTER: the switches between the two snapshots, total, then
# the threads that had any.
woken() {
  awk 'NR==FNR{a[$1]=$3; next} {d=$3-a[$1]; t+=d; if (d) w=w" "$2"("$1")="d} END{print t+0 w}' "$1" "$2"
}
# idle_for WHAT: the wake-ups of both servers over the same 10 s.
idle_for() {
  switches "$SERVER_PID" > "$T/io.before"
  switches "$EPID" > "$T/ep.before"
  sleep 10
  switches "$SERVER_PID" > "$T/io.after"
  switches "$EPID" > "$T/ep.after"
  read -r io_total io_threads <<<"$(woken "$T/io.before" "$T/io.after")"
  read -r ep_total ep_threads <<<"$(woken "$T/ep.before" "$T/ep.after")"
  echo "$1, 10 s: io_uring server $io_total switches${io_threads:+ (}${io_threads}${io_threads:+)}"
  echo "$1, 10 s: epoll server $ep_total switches${ep_threads:+ (}${ep_threads}${ep_threads:+)}"
  check "$1: io_uring server and its ctld wake at most $MAX_SWITCHES times in 10 s" [ "$io_total" -le "$MAX_SWITCHES" ]
  check "$1: epoll server and its ctld wake at most $MAX_SWITCHES times in 10 s" [ "$ep_total" -le "$MAX_SWITCHES" ]
}
idle_for "idle"

# A logged-in client that does nothing, with a file open: impacket holds
# the connection (it sends no keep-alives) until it is killed.
hold_client() {  # hold_client PORT OUT: logs in, opens a file, says "ready", waits
  /usr/bin/python3 - "$1" > "$2" 2>&1 <<'PY' &
import sys, time
from impacket.smbconnection import SMBConnection
c = SMBConnection("RINGSMB", "127.0.0.1", sess_port=int(sys.argv[1]), timeout=20)
c.login("alice", "secret-A1")
tid = c.connectTree("share")
c.openFile(tid, "held.txt", desiredAccess=0x12019f, creationOption=0x40, creationDisposition=5)
print("ready", flush=True)
time.sleep(60)
PY
}
hold_client "$PORT" "$T/hold.io"
holders+=($!)
hold_client "$EPORT" "$T/hold.ep"
holders+=($!)
both_ready() { grep -q ready "$T/hold.io" && grep -q ready "$T/hold.ep"; }
check "a client logged in and holding a file open on each server" wait_for both_ready
sleep 1.2  # the tick after the login, which finds nothing to look after
idle_for "a logged-in client idle"
stop_holders

# Asleep, not deaf.
check "after the idle time: a login and a listing" smb "$C" share "ls"
check "after the idle time: epoll server, a login and a listing" smbclient //127.0.0.1/share -p "$EPORT" -U "$C" -c ls
check "after the idle time: ringsmbctl status" "$RINGSMBCTL" --config "$T/ringsmb.conf" status
check "after the idle time: /metrics" scrape
stopped_within() {  # stopped_within PID: SIGTERM, and gone within 2 s
  kill "$1"
  for _ in $(seq 1 20); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
  return 1
}
check "io_uring server: SIGTERM stops it within 2 s" stopped_within "$SERVER_PID"
check "epoll server: SIGTERM stops it within 2 s" stopped_within "$EPID"
wait "$SERVER_PID" 2>/dev/null || true
wait "$EPID" 2>/dev/null || true
SERVER_PID=""
EPID=""
finish
