#!/usr/bin/env bash
# Issue 11, acceptance: at the default limits, 500 idle connections, 40
# connections holding half-sent 8 MiB frames and one client pipelining 200
# 8 MiB READs without reading keep ringsmbd's RSS at most 256 MiB
# (docs/security.md), and a fresh smbclient logs in and lists the share
# within 2 s meanwhile; all of it after an unprivileged local process
# squatted the netlink port ids before start-up and while it floods every
# netlink port of both daemons. RINGSMB_QUICK (the sanitizer run) scales it
# down.
source "$(dirname "$0")/lib.sh"

idle=500 frames=40 reads=200 rss_bound=256 flood_s=25
# Under the sanitizers, shadow memory and the quarantine of freed blocks add
# to the RSS: the bound there is looser (before the limits it was 1 GiB).
[ -n "${RINGSMB_QUICK:-}" ] && idle=100 frames=10 reads=40 rss_bound=512 flood_s=15
source "$(dirname "$0")/holders.sh"
source "$(dirname "$0")/nl_attack.sh"

write_config "map to guest = bad user"
guest_share
head -c $((8 * 1024 * 1024)) /dev/urandom > "$T/share/big"
add_user alice 'secret-A1'
squat_ports 3000
start_server
check "the server started over squatted netlink ports ($SQUAT_FIRST..$SQUAT_LAST)" server_alive
start_flood "$flood_s"
echo "    RSS at start: $(rss_mib) MiB"
n=$(hold idle hold-idle "$PORT" "$idle" 2)
check "$idle idle connections held (got $n)" test "$n" -eq "$idle"
hold frames hold-frames "$PORT" "$frames" 200 > /dev/null
SHARE_DIR="$T/share" HOLD_S=6 python3 "$client" pipelined-reads "$PORT" share "$SERVER_PID" big "$reads" "$rss_bound" \
  > "$T/reads.out" 2>&1 &
reader=$!
sleep 3
peak=$(rss_mib)
start=$(date +%s%N)
check "a fresh smbclient logs in and lists the share" smb alice%secret-A1 share "ls"
took_ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "    meanwhile: RSS $peak MiB, smbclient took $took_ms ms"
check "smbclient within 2 s (${took_ms} ms)" test "$took_ms" -le 2000
check "the netlink flood was still running then" kill -0 "$FLOODER"
check "RSS at most $rss_bound MiB under the load ($peak MiB)" test "$peak" -le "$rss_bound"
check "the pipelining client then gets every response, correct" wait "$reader"
sed 's/^/    /' "$T/reads.out"
end_flood
check "the flooder sent datagrams (${FLOOD_SENT:-0})" test "${FLOOD_SENT:-0}" -gt 1000
kill "$SQUATTER"; wait "$SQUATTER" 2>/dev/null || true
stop_holders
finish
