#!/usr/bin/env bash
# Previous Versions on a real btrfs: a loop-mounted image with a subvolume
# as the share and read-only snapshots in its .snapshots directory (Samba's
# vfs_shadow_copy2 defaults), taken between writes. smbclient reads old
# versions through @GMT paths and allinfo, smbtorture runs smb2.twrp.* and
# smb2.ioctl.shadow_copy, all as an ordinary user; nothing in a snapshot
# can be changed, and a symlink in a snapshot leads nowhere outside it.
# A second subvolume has snapper's layout (.snapshots/<N>/snapshot and
# <N>/info.xml), found without any shadow: option ("vfs objects = snapper").
source "$(dirname "$0")/lib.sh"

mount_btrfs_image 200M     # .snapshots is root's, as snapper or a cron job makes it
S1=@GMT-2026.01.01-10.00.00
S2=@GMT-2026.01.02-11.30.00
snapshot() { btrfs -q subvolume snapshot -r "$M/data" "$M/data/.snapshots/$1" > /dev/null; }
as_owner() { runuser -u "$TEST_UNIX_USER" -- "$@"; }

# Version 1: a file, a directory with a hard link in it, a symlink aiming
# out of the share and one climbing out of the snapshot.
as_owner bash -c "echo version-1 > '$M/data/file.txt'; mkdir '$M/data/subdir'; echo old > '$M/data/old.txt'
  ln '$M/data/file.txt' '$M/data/subdir/hardlink'; ln -s /etc/passwd '$M/data/abs-link'
  ln -s ../../../../../etc/passwd '$M/data/up-link'"
snapshot "$S1"
as_owner bash -c "echo version-2 > '$M/data/file.txt'; rm '$M/data/old.txt'"
snapshot "$S2"
as_owner bash -c "echo version-3 > '$M/data/file.txt'; echo new > '$M/data/new.txt'"

# snapper's layout: .snapshots its own subvolume, each snapshot a read-only
# subvolume <N>/snapshot beside <N>/info.xml with its time in UTC.
btrfs -q subvolume create "$M/vol" > /dev/null
chown "$TEST_UNIX_USER": "$M/vol"
btrfs -q subvolume create "$M/vol/.snapshots" > /dev/null
as_owner bash -c "echo snapper-1 > '$M/vol/file.txt'"
mkdir "$M/vol/.snapshots/1"
btrfs -q subvolume snapshot -r "$M/vol" "$M/vol/.snapshots/1/snapshot" > /dev/null
printf '<?xml version="1.0"?>\n<snapshot>\n  <type>single</type>\n  <num>1</num>\n  <date>2026-02-01 08:00:00</date>\n</snapshot>\n' \
  > "$M/vol/.snapshots/1/info.xml"
as_owner bash -c "echo snapper-2 > '$M/vol/file.txt'"
SN=@GMT-2026.02.01-08.00.00

write_config
add_share snap "$M/data" "writeable = yes" "vfs objects = shadow_copy2"
add_share snapper "$M/vol" "writeable = yes" "vfs objects = snapper"
add_user alice 'secret-A1'
start_server
C=alice%secret-A1

# smbclient: the old versions by @GMT path, the list by allinfo.
get_to() { rm -f "$T/got"; smb "$C" snap "get \"$1\" $T/got" > /dev/null 2>&1 && cat "$T/got"; }
check "live file is version 3" test "$(get_to file.txt)" = version-3
check "$S2/file.txt is version 2" test "$(get_to "$S2/file.txt")" = version-2
check "$S1/file.txt is version 1" test "$(get_to "$S1/file.txt")" = version-1
check "$S1/subdir/hardlink is version 1" test "$(get_to "$S1/subdir/hardlink")" = version-1
check "$S1/old.txt, deleted since, is there" test "$(get_to "$S1/old.txt")" = old
check "subdir/$S1/hardlink (token further down) is version 1" test "$(get_to "subdir/$S1/hardlink")" = version-1
expect_status "a snapshot that does not exist" NT_STATUS_OBJECT_NAME_NOT_FOUND \
  smb "$C" snap "get @GMT-2020.01.01-00.00.00/file.txt $T/x"
expect_status "new.txt is in no snapshot" NT_STATUS_OBJECT_NAME_NOT_FOUND smb "$C" snap "get $S2/new.txt $T/x"
smb "$C" snap "allinfo file.txt" > "$T/allinfo" 2>&1 || true
check "allinfo lists both snapshots" grep -q "$S1" "$T/allinfo"
check "allinfo lists $S2" grep -q "$S2" "$T/allinfo"
smb "$C" snap "ls $S1/*" > "$T/ls1" 2>&1 || true
check "ls of $S1 shows old.txt" grep -q " old.txt " "$T/ls1"
check "ls of $S1 does not show new.txt" bash -c "! grep -q ' new.txt ' '$T/ls1'"

# Nothing changes a snapshot; the share itself stays writable.
echo changed > "$T/changed"
expect_status "put into a snapshot" NT_STATUS_MEDIA_WRITE_PROTECTED smb "$C" snap "put $T/changed $S1/file.txt"
expect_status "put of a new file into a snapshot" NT_STATUS_MEDIA_WRITE_PROTECTED \
  smb "$C" snap "put $T/changed $S1/brand-new.txt"
expect_status "rm in a snapshot" NT_STATUS_MEDIA_WRITE_PROTECTED smb "$C" snap "rm $S1/file.txt"
expect_status "mkdir in a snapshot" NT_STATUS_MEDIA_WRITE_PROTECTED smb "$C" snap "mkdir $S1/newdir"
check "snapshot file unchanged on disk" test "$(cat "$M/data/.snapshots/$S1/file.txt")" = version-1
check "the live share is still writable" smb "$C" snap "put $T/changed live-put.txt"

# A symlink in a snapshot resolves beneath the snapshot's copy of the share.
# (Left to the client with STOPPED_ON_SYMLINK, as in the live share.)
expect_status "absolute symlink in a snapshot" NT_STATUS_STOPPED_ON_SYMLINK smb "$C" snap "get $S1/abs-link $T/x"
expect_status "'..' symlink in a snapshot" NT_STATUS_STOPPED_ON_SYMLINK smb "$C" snap "get $S1/up-link $T/x"
check "... nothing was read" test ! -e "$T/x"

# snapper's snapshot, found by itself.
smb "$C" snapper "allinfo file.txt" > "$T/allinfo-snapper" 2>&1 || true
check "allinfo on [snapper] lists snapper's snapshot 1 as $SN" grep -q "$SN" "$T/allinfo-snapper"
rm -f "$T/got"
smb "$C" snapper "get $SN/file.txt $T/got" > /dev/null 2>&1 || true
check "$SN/file.txt on [snapper] is snapper-1" test "$(cat "$T/got" 2>/dev/null)" = snapper-1
expect_status "put into snapper's snapshot" NT_STATUS_MEDIA_WRITE_PROTECTED smb "$C" snapper "put $T/changed $SN/file.txt"

# smbtorture as the same ordinary user.
torture() {
  timeout 120 smbtorture //127.0.0.1/snap -U "$C" -p "$PORT" "$@" > "$T/torture.out" 2>&1
  grep -q "^success: " "$T/torture.out" && ! grep -q "^failure: \|^error: \|^skip: " "$T/torture.out"
}
for t in write openroot listdir; do
  if torture --option=torture:twrp_snapshot="$S1" --option=torture:twrp_file=file.txt smb2.twrp.$t; then
    pass "smbtorture smb2.twrp.$t"
  else
    fail "smbtorture smb2.twrp.$t"; tail -15 "$T/torture.out"
  fi
done
# A named stream kept in a snapshot (trusted.* xattrs travel with it).
S3=@GMT-2026.01.03-08.00.00
printf 'stream-data' > "$T/strm"
check "put a named stream" smb "$C" snap "put $T/strm file.txt:strm"
snapshot "$S3"
check "the stream in $S3" test "$(get_to "$S3/file.txt:strm")" = stream-data
if torture --option=torture:twrp_snapshot="$S3" --option=torture:twrp_file=file.txt \
    --option=torture:twrp_stream=strm --option=torture:twrp_stream_size=11 smb2.twrp.stream; then
  pass "smbtorture smb2.twrp.stream"
else
  fail "smbtorture smb2.twrp.stream"; tail -15 "$T/torture.out"
fi
if torture smb2.ioctl.shadow_copy; then pass "smbtorture smb2.ioctl.shadow_copy"; else
  fail "smbtorture smb2.ioctl.shadow_copy"; tail -15 "$T/torture.out"; fi
finish
