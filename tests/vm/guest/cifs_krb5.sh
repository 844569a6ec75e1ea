# Runs in the guest (busybox sh): mounts //$SERVER/$SHARE with sec=krb5.
# The kernel's upcall (request-key -> cifs.upcall) finds the credential
# cache of uid 0 at krb5's default place, /tmp/krb5cc_0.
. /job/lib.sh
cp /job/krb5cc_0 /tmp/krb5cc_0 && chmod 600 /tmp/krb5cc_0
# The UNC names the server (the ticket is for cifs/$SERVER); ip= is its
# address: busybox's mount does not resolve it for the kernel, nor name
# the user as mount.cifs does (the kernel wants one, even for krb5).
opts=sec=krb5,vers=3.1.1,ip=$SERVER_IP,username=$KUSER
if ! mount -t cifs "//$SERVER/$SHARE" $mnt -o $opts; then
  fail "mount -o $opts"; dmesg | tail -15; exit 1
fi
pass "mount -o $opts"
grep -iE "Kerberos|krb5|sec" /proc/fs/cifs/DebugData | head -5 | sed 's/^/    /'
grep -qi "krb5\|Kerberos" /proc/fs/cifs/DebugData && pass "the session is a Kerberos one" \
  || fail "DebugData names no Kerberos session"
echo "written with sec=krb5" > $mnt/krb5.txt && sync || fail "write"
umount $mnt && mount -t cifs "//$SERVER/$SHARE" $mnt -o $opts || { fail "remount"; exit 1; }
[ "$(cat $mnt/krb5.txt)" = "written with sec=krb5" ] && pass "read back after a remount" || fail "read back"
umount $mnt || fail "umount"
exit $failures
