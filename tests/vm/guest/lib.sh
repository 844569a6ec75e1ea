# Sourced by the guest scripts (busybox sh; copied to /job/lib.sh by the
# host's --file): the PASS/FAIL lines the host greps, and the cifs mount of
# //$SERVER/$SHARE on $mnt as $SMBUSER.
set -u
failures=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
mnt=/mnt/share
mkdir -p $mnt

mount_share() {  # mount_share OPTIONS
  mount -t cifs "//$SERVER/$SHARE" $mnt -o "username=$SMBUSER,password=$SMBPASS,$1"
}

mount_or_exit() {  # mount_or_exit OPTIONS: the script cannot go on without its mount
  if ! mount_share "$1"; then
    fail "mount -o $1"; dmesg | tail -5; exit 1
  fi
}
