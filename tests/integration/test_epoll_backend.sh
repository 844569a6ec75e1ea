#!/usr/bin/env bash
# The epoll backend runs the same handlers: put/get, listing and a small
# tree extraction with `ringsmbd --epoll`; a large put moves its
# connection to the bulk worker (Reactor::release/adopt of epoll).
source "$(dirname "$0")/lib.sh"

write_config
add_user alice 'secret-A1'
start_server --epoll
C=alice%secret-A1
check "server reports the epoll backend" grep -q "(epoll)" "$T/server.log"
head -c 3000000 /dev/urandom > "$T/data"
check "put/get byte for byte over epoll" bash -c "
  smbclient //127.0.0.1/share -p $PORT -U $C -c 'put $T/data d; get d $T/back' >/dev/null && cmp $T/data $T/back"
python3 "$RINGSMB_SOURCE_DIR/bench/mktree.py" "$T/src/tree" --files 300 > /dev/null
tar cf "$T/t.tar" -C "$T/src" tree
check "smbclient -Tx over epoll" timeout 300 smbclient //127.0.0.1/share -p "$PORT" -U "$C" -Tx "$T/t.tar"
check "tree identical" diff -r "$T/src/tree" "$T/share/tree"
head -c $((24 * 1024 * 1024)) /dev/urandom > "$T/big"
check "a 24 MiB put and get byte for byte over epoll" bash -c "
  smbclient //127.0.0.1/share -p $PORT -U $C -c 'put $T/big big; get big $T/big.back' >/dev/null && cmp $T/big $T/big.back"
moved=$(metric ringsmb_connections_moved_total)
check "the put's connection moved to the bulk worker (ringsmb_connections_moved_total $moved)" test "${moved:-0}" -ge 1
check "encrypted transfer over epoll" bash -c "
  smbclient //127.0.0.1/share -p $PORT -U $C -m SMB3_11 --client-protection=encrypt -c 'get d $T/back2' >/dev/null && cmp $T/data $T/back2"
finish
