#!/usr/bin/env bash
# The epoll backend runs the same handlers: put/get, listing and a small
# tree extraction with `ringsmbd --epoll`.
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
check "encrypted transfer over epoll" bash -c "
  smbclient //127.0.0.1/share -p $PORT -U $C -m SMB3_11 --client-protection=encrypt -c 'get d $T/back2' >/dev/null && cmp $T/data $T/back2"
finish
