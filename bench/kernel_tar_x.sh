# Runs in the VM guest of tests/vm/run (busybox sh): the Linux kernel's cifs
# client mounts //$SERVER/bench with the kernel's default options (it
# negotiates SMB 3.1.1), GNU tar extracts /job/tree.tar onto the mount,
# and the requests the client sent are read from /proc/fs/cifs/Stats. Prints
#   RESULT requests=N guest_wall=S
# (guest_wall is the guest's own clock under TCG: it says nothing of the
# server).
set -eu
mkdir -p /mnt/share
mount -t cifs "//$SERVER/bench" /mnt/share -o "username=$SMBUSER,password=$SMBPASS"
grep -E "Dialect|Signing|Encrypt" /proc/fs/cifs/DebugData | head -4 | sed 's/^/    /'
requests() { sed -n 's/^SMBs: *\([0-9]*\).*/\1/p' /proc/fs/cifs/Stats | head -1; }
before=$(requests)
mkdir "/mnt/share/$RUN"
t0=$(cut -d' ' -f1 /proc/uptime)
(cd "/mnt/share/$RUN" && tar xf /job/tree.tar)
sync
t1=$(cut -d' ' -f1 /proc/uptime)
# Closes the client defers (closetimeo, 1 s by default) go out before the count.
sleep 3
after=$(requests)
[ -n "${SHOW_STATS:-}" ] && cat /proc/fs/cifs/Stats
umount /mnt/share
echo "RESULT requests=$((after - before)) guest_wall=$(echo "$t1 $t0" | awk '{print $1 - $2}')"
