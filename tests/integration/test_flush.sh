#!/usr/bin/env bash
# FLUSH's fsync runs on the blocking pool, not on the worker (issue 14):
# with one worker, another connection's ECHO is answered while a FLUSH of
# much dirty data is still syncing (flush_off_worker.py). Large WRITEs' pwrite
# runs there too, and what follows them on their connection still sees
# their data (async_write_order.py). Then smbclient's own traffic still
# works on the same server.
source "$(dirname "$0")/lib.sh"

dirty_mib=1024
[ -n "${RINGSMB_QUICK:-}" ] && dirty_mib=256
write_config "map to guest = bad user" "workers = 1"
sed -i 's/^\[share\]$/[share]\n  guest ok = yes/' "$T/ringsmb.conf"
start_server
# Dirty page cache for the fsync to write: written locally, not synced.
dd if=/dev/zero of="$T/share/dirty" bs=1M count="$dirty_mib" status=none
chmod 666 "$T/share/dirty"
check "FLUSH off the worker" python3 "$RINGSMB_SOURCE_DIR/tests/integration/flush_off_worker.py" "$PORT" share dirty
grep -E "^(PASS|FAIL)|ECHO answered|too fast" "$T/check.out" || true
# Large WRITEs run their pwrite on the pool too: requests pipelined behind
# them on the same connection (READ, SET_INFO end of file, a small WRITE,
# FLUSH, CLOSE) still see their data, in order (async_write_order.py).
check "pipelined requests after large WRITEs see their data" \
  python3 "$RINGSMB_SOURCE_DIR/tests/integration/async_write_order.py" "$PORT" share ordered "$T/share/ordered"
check "the server still serves" smb "%" share "ls" -N
rm -f "$T/share/dirty"
finish
