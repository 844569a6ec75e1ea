#!/usr/bin/env bash
# Issue 11, defect 4: a client that pipelines 8 MiB READs and never reads
# its socket must not grow the server's memory without bound ("max send
# queue size": its requests are not read while its replies wait), and
# once it reads, every response arrives whole and correct.
source "$(dirname "$0")/lib.sh"

reads=200 bound_mib=128
# Under the sanitizers, the shadow memory and the quarantine of freed blocks
# add to the RSS: the bound there is looser (it still catches the +600 MiB).
[ -n "${RINGSMB_QUICK:-}" ] && reads=120 bound_mib=384
write_config "map to guest = bad user"
guest_share
head -c $((8 * 1024 * 1024)) /dev/urandom > "$T/share/big"
add_user alice 'secret-A1'
start_server
# Before the bound, 200 READs took the RSS up by about 1 GiB; at the
# default 32 MiB bound it grows by the queue, one reply in the making and
# the reply buffers' capacity.
check "$reads pipelined 8 MiB READs, unread: RSS bounded, then all correct" \
  env SHARE_DIR="$T/share" python3 "$RINGSMB_SOURCE_DIR/tests/integration/limits_client.py" \
  pipelined-reads "$PORT" share "$SERVER_PID" big "$reads" "$bound_mib"
sed 's/^/    /' "$T/check.out" | grep -E "RSS|responses" || true
# Compounded READs are copied into memory (only a lone unsigned READ is
# sent from the file, as signed and encrypted ones are copied too).
check "$((reads / 2)) pipelined compounds of two 4 MiB READs, unread: RSS bounded, then all correct" \
  env SHARE_DIR="$T/share" python3 "$RINGSMB_SOURCE_DIR/tests/integration/limits_client.py" \
  pipelined-reads "$PORT" share "$SERVER_PID" big "$((reads / 2))" "$bound_mib" 2
sed 's/^/    /' "$T/check.out" | grep -E "RSS|responses" || true
# One frame can ask for much more: a compound of 32 8 MiB READs (256 MiB).
check "a compound of 32 x 8 MiB READs: memory bounded, the READs beyond it INSUFFICIENT_RESOURCES" \
  python3 "$RINGSMB_SOURCE_DIR/tests/integration/limits_client.py" \
  compound-burst "$PORT" share "$SERVER_PID" big 32 "$bound_mib"
sed 's/^/    /' "$T/check.out" | grep -E "compound" || true
check "a real client still works" smb alice%secret-A1 share "ls"
# The epoll backend pauses and resumes receiving its own way.
stop_server
start_server --epoll
check "epoll: $((reads / 2)) pipelined compounds, unread: RSS bounded, then all correct" \
  env SHARE_DIR="$T/share" python3 "$RINGSMB_SOURCE_DIR/tests/integration/limits_client.py" \
  pipelined-reads "$PORT" share "$SERVER_PID" big "$((reads / 2))" "$bound_mib" 2
sed 's/^/    /' "$T/check.out" | grep -E "RSS|responses" || true
finish
