#!/usr/bin/env bash
# Named streams on a share of several ordinary users (docs/security.md,
# "Named streams"): a stream is guarded by its file's permissions (another
# user can neither create, overwrite, truncate, rename nor delete a stream
# of a file it cannot write, nor read one of a file it cannot read); a
# stream's size is bounded ("max stream size") and renaming a large stream
# onto the file's data does not hold up the worker's other connections;
# sidecar files of large streams belong to the file's owner and count
# against "max stream space per user".
source "$(dirname "$0")/lib.sh"
GUARDS="$(dirname "$0")/stream_guards.py"
LIMIT=$((64 << 20))  # the default "max stream size"

# One worker: the ECHO must share it with the rename.
write_config "workers = 1"
add_user owner 'Owner-1'
add_user other 'Other-1' "$TEST_UNIX_USER2"
start_server
for f in f g h; do check "owner: put $f.txt" smb owner%Owner-1 share "put /etc/hostname $f.txt"; done
chmod 0644 "$T/share/f.txt"
chmod 0666 "$T/share/g.txt"
chmod 0600 "$T/share/h.txt"

guarded() {  # guarded DESCRIPTION ARGS...: stream_guards.py's PASS/FAIL lines, each a check
  local what=$1 out
  shift
  out=$(timeout 120 python3 "$GUARDS" "$PORT" share "$@" 2>&1) || true
  while IFS= read -r line; do
    case $line in
      PASS:*) pass "${line#PASS: }" ;;
      FAIL:*) fail "${line#FAIL: }" ;;
    esac
  done <<< "$out"
  grep -q '^PASS:' <<< "$out" || { fail "$what: no result"; sed 's/^/    /' <<< "$out" | tail -20; }
}

guarded "guards" owner Owner-1 other Other-1 guards
guarded "stall" owner Owner-1 - - stall "$LIMIT"

# Sidecars: owned by the owner of the file the stream belongs to.
rm -f "$T/share/big.txt"
put_is() {  # put_is USER PASS NAME SIZE STATUS: SIZE bytes written to stream NAME, answered STATUS
  python3 "$GUARDS" "$PORT" share "$1" "$2" - - put "$3" "$4" | grep -qx "put=$5"
}
sidecars_of() { find "$T/streams" -type f -user "$1" | wc -l; }
check "owner: a 200 kB stream of the own file" put_is owner Owner-1 f.txt:big 200000 SUCCESS
check "other: a 200 kB stream of the owner's 0666 file" put_is other Other-1 g.txt:big 200000 SUCCESS
owned_dir "$T/share/od" "$TEST_UNIX_USER2"
check "other: put a file of its own" smb other%Other-1 share "put /etc/hostname od/o.txt"
check "other: a 200 kB stream of it" put_is other Other-1 od/o.txt:big 200000 SUCCESS
check "two sidecars belong to the owner of f.txt and g.txt" test "$(sidecars_of "$TEST_UNIX_USER")" = 2
check "one belongs to the other user, owner of o.txt" test "$(sidecars_of "$TEST_UNIX_USER2")" = 1
check "none is root's" test "$(sidecars_of root)" = 0

# max stream space per user: what the sidecars of one owner's files may
# hold (400 kB of the owner's are in use).
stop_server
write_config "workers = 1" "max stream space per user = 1M"
add_user owner 'Owner-1'
start_server
check "600 kB more fit in 1 MiB" put_is owner Owner-1 f.txt:a 600000 SUCCESS
check "600 kB more again: DISK_FULL" put_is owner Owner-1 f.txt:b 600000 DISK_FULL
check "delete the first" bash -c "python3 '$GUARDS' $PORT share owner Owner-1 - - del f.txt:a | grep -qx del=SUCCESS"
check "now the second fits" put_is owner Owner-1 f.txt:b 600000 SUCCESS
stop_server
start_server
check "after a restart the sidecars on disk count: DISK_FULL" put_is owner Owner-1 f.txt:c 600000 DISK_FULL
finish
