#!/usr/bin/env bash
# Previous Versions through the Linux kernel's cifs client (Debian's 6.12
# kernel in a QEMU guest, tests/vm/run): a loop-mounted btrfs on the host
# with a read-only snapshot in .snapshots/@GMT-..., shared with
# "vfs objects = shadow_copy2"; the guest mounts it with -o snapshot=<FILETIME>
# and reads the file as it was (guest/cifs_snapshot.sh).
source "$(dirname "$0")/../integration/lib.sh"
VM="$RINGSMB_SOURCE_DIR/tests/vm"
mount_btrfs_image 120M
runuser -u "$TEST_UNIX_USER" -- bash -c "echo version-1 > '$M/data/file.txt'; echo old > '$M/data/old.txt'"
# snapshot= takes a FILETIME (100 ns since 1601), as the TWrp context
# carries it: 2026-01-02 11:30:00 UTC.
SNAP_TIME=$((1767353400 * 10000000 + 116444736000000000))
btrfs -q subvolume snapshot -r "$M/data" "$M/data/.snapshots/@GMT-2026.01.02-11.30.00" > /dev/null
runuser -u "$TEST_UNIX_USER" -- bash -c "echo version-2 > '$M/data/file.txt'; rm '$M/data/old.txt'; echo new > '$M/data/new.txt'"

write_config
add_share snap "$M/data" "writeable = yes" "vfs objects = shadow_copy2"
add_user alice 'secret-A1'
start_server
if "$VM/run" --kernel 6.12 --timeout "${RINGSMB_VM_TIMEOUT:-600}" --guestfwd "445=$PORT" \
     --file "$VM/guest/lib.sh" --file "$VM/guest/cifs_snapshot.sh" \
     --env SERVER=10.0.2.100 --env SHARE=snap --env SMBUSER=alice --env SMBPASS='secret-A1' \
     --env SNAP_TIME=$SNAP_TIME -- 'sh /job/cifs_snapshot.sh' > "$T/guest.log" 2>&1; then
  pass "the guest's snapshot= checks"
else
  fail "the guest's snapshot= checks (exit $?)"
  grep -iE "CIFS|VFS" "$T/guest.log" | head -20
fi
grep -E "^(PASS|FAIL)" "$T/guest.log" || tail -40 "$T/guest.log"
check "the snapshot's file is unchanged on disk" test "$(cat "$M/data/.snapshots/@GMT-2026.01.02-11.30.00/file.txt")" = version-1
finish
