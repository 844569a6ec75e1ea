# Runs in the guest (busybox sh): the 6.12 kernel's cifs client on a share
# with "client symlinks = yes", mounted with reparse=nfs: `ln -s` makes a
# symlink on the server (FSCTL_SET_REPARSE_POINT), `ls -l` and readlink show
# it, `ln` a hard link; then /job/links.tar (symlinks and hard links) is
# extracted onto the mount for the host to compare with a local extraction.
. /job/lib.sh
mount_or_exit vers=3.1.1,reparse=nfs,actimeo=0
mkdir $mnt/d && echo inside > $mnt/d/f.txt
ln -s d/f.txt $mnt/rel && pass "ln -s d/f.txt rel" || fail "ln -s d/f.txt rel"
ln -s ../../../../etc/passwd $mnt/up && pass "ln -s ../../../../etc/passwd up" || fail "ln -s ../.. up"
ln -s d $mnt/dlink && pass "ln -s d dlink" || fail "ln -s d dlink"
ln -s /etc/hostname $mnt/abs && pass "ln -s /etc/hostname abs" || fail "ln -s /etc/hostname abs"
[ "$(readlink $mnt/rel)" = d/f.txt ] && pass "readlink rel" || fail "readlink rel: $(readlink $mnt/rel)"
[ "$(readlink $mnt/up)" = ../../../../etc/passwd ] && pass "readlink up" || fail "readlink up: $(readlink $mnt/up)"
ls -l $mnt | grep -q ' rel -> d/f.txt$' && pass "ls -l shows rel -> d/f.txt" || { fail "ls -l"; ls -l $mnt; }
[ "$(cat $mnt/rel)" = inside ] && pass "cat through rel (the client resolves it)" || fail "cat rel"
[ "$(cat $mnt/dlink/f.txt)" = inside ] && pass "cat dlink/f.txt" || fail "cat dlink/f.txt"
ln $mnt/d/f.txt $mnt/hard && pass "ln (a hard link)" || fail "ln"
rm $mnt/rel && [ ! -e $mnt/rel ] && [ -e $mnt/d/f.txt ] && pass "rm of a symlink removes the link only" || fail "rm rel"
umount $mnt && mount -t cifs "//$SERVER/$SHARE" $mnt -o "username=$SMBUSER,password=$SMBPASS,vers=3.1.1,reparse=nfs"
mkdir $mnt/x && tar xf /job/links.tar -C $mnt/x && pass "tar x onto the mount" || fail "tar x"
ls -lR $mnt/x > /job/guest-ls.txt 2>&1
cat /job/guest-ls.txt
umount $mnt
echo "guest failures: $failures"
[ $failures = 0 ]
