# Runs in the guest (busybox sh): the kernel's cifs client mounts the
# share as it was at $SNAP_TIME (mount -o snapshot=<FILETIME>, which sends
# the TWrp create context with every CREATE) and reads the old version;
# nothing in it can be changed; a plain mount shows today's file.
. /job/lib.sh
mount_or_exit "vers=3.1.1,actimeo=0,snapshot=$SNAP_TIME"
mkdir -p /mnt/now
mount -t cifs "//$SERVER/$SHARE" /mnt/now -o "username=$SMBUSER,password=$SMBPASS,vers=3.1.1,actimeo=0" ||
  fail "plain mount"
[ "$(cat $mnt/file.txt)" = version-1 ] && pass "snapshot=: file.txt is version 1" ||
  fail "snapshot=: file.txt is '$(cat $mnt/file.txt 2>&1)'"
[ -e $mnt/old.txt ] && pass "snapshot=: old.txt, deleted since, is there" || fail "snapshot=: no old.txt"
[ ! -e $mnt/new.txt ] && pass "snapshot=: new.txt is not" || fail "snapshot=: new.txt is there"
[ "$(cat /mnt/now/file.txt)" = version-2 ] && pass "plain mount: file.txt is version 2" || fail "plain mount: file.txt"
if echo changed 2>/dev/null > $mnt/file.txt; then fail "a write into the snapshot succeeded"; else
  pass "a write into the snapshot fails"; fi
if touch $mnt/brand-new 2>/dev/null; then fail "a new file in the snapshot"; else pass "no new file in the snapshot"; fi
[ "$(cat $mnt/file.txt)" = version-1 ] && pass "snapshot=: still version 1" || fail "snapshot=: changed"
umount $mnt; umount /mnt/now
exit $failures
