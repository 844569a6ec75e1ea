#!/usr/bin/env bash
# FLUSH's fsync runs on the blocking pool, not on the worker (issue 14):
# with one worker, another connection's ECHO is answered while a FLUSH of
# much dirty data is still syncing (flush_off_worker.py), and while a large
# file's blocks are freed by its delete-on-close, a SET_INFO that shrinks
# it or a CREATE that overwrites it (free_off_worker.py). Large WRITEs' pwrite
# runs there too, and what follows them on their connection still sees
# their data (async_write_order.py). Then smbclient's own traffic still
# works on the same server. Connections that stream large WRITEs move to
# the worker's bulk worker and keep working there (bulk_worker.py).
source "$(dirname "$0")/lib.sh"

dirty_mib=1024
[ -n "${RINGSMB_QUICK:-}" ] && dirty_mib=256
write_config "map to guest = bad user" "workers = 1"
guest_share
start_server
# Dirty page cache for the fsync to write: written locally, not synced.
dd if=/dev/zero of="$T/share/dirty" bs=1M count="$dirty_mib" status=none
chown "$TEST_GUEST_USER": "$T/share/dirty"  # the share owner's file, as on a NAS
check "FLUSH off the worker" python3 "$RINGSMB_SOURCE_DIR/tests/integration/flush_off_worker.py" "$PORT" share dirty
grep -E "^(PASS|FAIL)|ECHO answered|too fast|nothing to compare" "$T/check.out" || true
# Large WRITEs run their pwrite on the pool too: requests pipelined behind
# them on the same connection (READ, SET_INFO end of file, a small WRITE,
# FLUSH, CLOSE) still see their data, in order (async_write_order.py).
check "pipelined requests after large WRITEs see their data" \
  python3 "$RINGSMB_SOURCE_DIR/tests/integration/async_write_order.py" "$PORT" share ordered "$T/share/ordered"
# Large frames are received by the worker's receiving thread: a stalled
# one holds no one up, pipelined large and small requests keep their
# order, resets in the middle leave the server serving
# (recv_off_worker.py); the metric counts the bytes it took.
check "large frames received off the worker" \
  python3 "$RINGSMB_SOURCE_DIR/tests/integration/recv_off_worker.py" "$PORT" share offworker "$T/share/offworker"
off_worker=$(metric ringsmb_received_off_worker_bytes_total)
echo "ringsmb_received_off_worker_bytes_total: $off_worker"
check "ringsmb_received_off_worker_bytes_total counts them" test "${off_worker:-0}" -ge $((4 * 1024 * 1024))
# A connection that streams large WRITEs moves to the worker's bulk
# worker with all its state: breaks still reach it, it goes on serving,
# resets there leave the server serving (bulk_worker.py).
share_written='ringsmb_share_written_bytes_total{share="share"}'
moved0=$(metric ringsmb_connections_moved_total)
written0=$(metric "$share_written")
check "a connection streaming large WRITEs moves to the bulk worker and keeps working" \
  python3 "$RINGSMB_SOURCE_DIR/tests/integration/bulk_worker.py" "$PORT" share bulky "$T/share/bulky"
grep -E "^FAIL" "$T/check.out" || true
moved1=$(metric ringsmb_connections_moved_total)
written1=$(metric "$share_written")
# 8 + 6 MiB (A), 5 MiB (C), 6 MiB (D): the bulk worker counts them under
# the share too (the moved connections' slots are looked up again there).
echo "ringsmb_share_written_bytes_total{share=\"share\"}: ${written0:-none} -> ${written1:-none}"
check "the share's written bytes count what the moved connections wrote" \
  test "$(( ${written1:-0} - ${written0:-0} ))" -ge $((25 * 1024 * 1024))
echo "ringsmb_connections_moved_total: $moved0 -> $moved1"
# A, C (reset) and D stream 4 MiB or more in a row.
check "ringsmb_connections_moved_total counts the three that streamed" test "$((moved1 - moved0))" -ge 3
# "bulk worker nice" (default 10): the bulk worker and its receiver run at
# nice 10, the listening worker and its receiver at 0.
thread_nice() { ps -L -o comm=,nice= -p "$SERVER_PID" | awk -v t="$1" '$1 == t {print $2}' | sort -u | tr '\n' ' '; }
ps -L -o comm=,nice= -p "$SERVER_PID" | sort | uniq -c
check "the bulk worker's thread runs at nice 10" test "$(thread_nice ringsmbd-bulk1)" = "10 "
check "the listening worker's thread runs at nice 0" test "$(thread_nice ringsmbd-w0)" = "0 "
check "one receiver at nice 10, one at 0" test "$(thread_nice ringsmbd-recv)" = "0 10 "
# Large files, written to disk (the blocks of unwritten data free at once).
big_mib=100
[ -n "${RINGSMB_QUICK:-}" ] && big_mib=32
for f in doomed shrunk overwritten; do
  dd if=/dev/zero of="$T/share/$f" bs=1M count="$big_mib" conv=fsync status=none
  chown "$TEST_GUEST_USER": "$T/share/$f"
done
check "freeing a large file's blocks off the worker" \
  python3 "$RINGSMB_SOURCE_DIR/tests/integration/free_off_worker.py" "$PORT" share "$T/share" doomed shrunk overwritten
grep -E "takes|ECHO answered|too fast" "$T/check.out" || true
check "the server still serves" smb "%" share "ls" -N
rm -f "$T/share/dirty"
finish
