# Runs in the guest (busybox sh, with setfattr and getfattr copied in): the
# kernel's cifs client maps user.* xattrs of a mounted share to SMB EAs
# (SET_INFO / QUERY_INFO FileFullEaInformation); set, read, list and
# remove them, then leave user.kept = "stays" on ea.txt for the host.
. /job/lib.sh
mount_or_exit vers=3.1.1
echo data > $mnt/ea.txt
setfattr -n user.Colour -v blue $mnt/ea.txt && pass "setfattr user.Colour" || fail "setfattr user.Colour"
[ "$(getfattr -n user.Colour --only-values $mnt/ea.txt)" = blue ] && pass "getfattr reads it back" ||
  fail "getfattr user.Colour"
setfattr -n user.kept -v stays $mnt/ea.txt || fail "setfattr user.kept"
getfattr -d $mnt/ea.txt > /tmp/list 2>&1
grep -q '^user.Colour="blue"' /tmp/list && grep -q '^user.kept="stays"' /tmp/list && pass "getfattr -d lists both" ||
  { fail "getfattr -d"; cat /tmp/list; }
setfattr -x user.Colour $mnt/ea.txt && pass "setfattr -x removes one" || fail "setfattr -x"
getfattr -n user.Colour $mnt/ea.txt > /dev/null 2>&1 && fail "the removed one still reads" || pass "the removed one is gone"
umount $mnt && mount -t cifs "//$SERVER/$SHARE" $mnt -o "username=$SMBUSER,password=$SMBPASS,vers=3.1.1"
[ "$(getfattr -n user.kept --only-values $mnt/ea.txt)" = stays ] && pass "after a remount it is there" ||
  fail "user.kept after a remount"
umount $mnt
echo "guest failures: $failures"
[ $failures = 0 ]
