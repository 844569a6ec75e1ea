#!/usr/bin/env bash
# smbclient -Tx extraction of the standard small-file tree (bench/mktree.py)
# and -Tc back, compared file by file.
source "$(dirname "$0")/lib.sh"

write_config
add_user alice 'secret-A1'
start_server
C=alice%secret-A1
files=${RINGSMB_QUICK:+500}
files=${files:-5000}

python3 "$RINGSMB_SOURCE_DIR/bench/mktree.py" "$T/src/tree" --files "$files" > /dev/null
tar cf "$T/t.tar" -C "$T/src" tree

start=$(date +%s.%N)
check "smbclient -Tx of $files files" timeout 600 smbclient //127.0.0.1/share -p "$PORT" -U "$C" -Tx "$T/t.tar"
end=$(date +%s.%N)
echo "extract took $(echo "$end - $start" | bc 2>/dev/null || python3 -c "print($end-$start)") s"
check "extracted tree identical" diff -r "$T/src/tree" "$T/share/tree"

check "smbclient -Tc back" bash -c "cd $T && smbclient //127.0.0.1/share -p $PORT -U $C -Tc $T/back.tar tree >/dev/null"
mkdir -p "$T/back"
tar xf "$T/back.tar" -C "$T/back"
check "tar from the share identical" diff -r "$T/src/tree" "$T/back/tree"
finish
