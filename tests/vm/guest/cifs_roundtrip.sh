# Runs in the guest (busybox sh): the kernel's cifs client mounts
# //$SERVER/$SHARE once per option set in $MODES (";"-separated, each
# "NAME:mount options"), and in a directory NAME on the share: writes a large
# file and reads it back after a remount (so the read comes from the server,
# not the page cache), extracts tree.tar and checks every file's md5 after
# another remount. The host then checks the same files on its disk.
set -u
failures=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
mnt=/mnt/share
mkdir -p $mnt

mount_share() {  # mount_share OPTIONS
  mount -t cifs "//$SERVER/$SHARE" $mnt -o "username=$SMBUSER,password=$SMBPASS,$1"
}

run_mode() {  # run_mode NAME OPTIONS
  local name=$1 opts=$2
  if ! mount_share "$opts"; then fail "$name: mount -o $opts"; dmesg | tail -5; return; fi
  pass "$name: mount -o $opts"
  grep -E "Signing|Encrypt|Dialect|SMB3\.1\.1" /proc/fs/cifs/DebugData | sed "s/^/    $name: /" | head -8
  mkdir -p $mnt/$name
  cp /job/big.bin $mnt/$name/big.bin && sync
  (cd $mnt/$name && tar xf /job/tree.tar) || fail "$name: tar x"
  umount $mnt && mount_share "$opts" || { fail "$name: remount"; return; }
  if [ "$(md5sum < $mnt/$name/big.bin)" = "$(md5sum < /job/big.bin)" ]; then
    pass "$name: large file read back after a remount"
  else
    fail "$name: large file differs"
  fi
  if (cd $mnt/$name && md5sum -c -s /job/tree.md5); then
    pass "$name: $(wc -l < /job/tree.md5) extracted files match their md5"
  else
    fail "$name: extracted files differ"; (cd $mnt/$name && md5sum -c /job/tree.md5 | grep -v ': OK' | head)
  fi
  umount $mnt || fail "$name: umount"
}

IFS=';'
for m in $MODES; do
  unset IFS
  run_mode "${m%%:*}" "${m#*:}"
done
echo "guest: $failures failed"
[ $failures -eq 0 ]
