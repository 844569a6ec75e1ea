#!/usr/bin/env bash
# Access checks (docs/security.md "Access checks"): a read-only share or a
# `read list` user changes nothing, whatever DesiredAccess says
# (MAXIMUM_ALLOWED with delete-on-close included); a delete the file system
# refuses (another user's file in a sticky directory) is refused to the
# client when it asks, never answered with a success that did not happen.
# A READONLY file refuses write opens (root's identity included) and can be
# made writable again with FILE_WRITE_ATTRIBUTES, as the kernel client does.
source "$(dirname "$0")/lib.sh"

PROBE="$(dirname "$0")/access_probe.py"
probe() {  # probe SHARE USER PASSWORD SCENARIO PATH
  timeout 60 python3 "$PROBE" "$PORT" "$@" 2>&1
}
# expect_probe "description" "wanted output" probe-args...
expect_probe() {
  local what=$1 want=$2 got
  shift 2
  got=$(probe "$@")
  if [ "$got" = "$want" ]; then pass "$what"; else fail "$what: got '$got', wanted '$want'"; fi
}

write_config
add_share ro "$T/ro" "read only = yes"
sed -i '/^\[share\]/a\  read list = reader' "$T/ringsmb.conf"
owned_dir "$T/ro"
# alice is the share's owner (TEST_UNIX_USER). Two other unprivileged Unix
# accounts for the sticky directory: bob is nobody, carol is daemon. admin is
# root, mapped explicitly: READONLY must hold for root's file-system identity
# too, which the mode bits alone would not stop.
add_user alice 'secret-A1'
add_user admin 'secret-R0' root
add_user reader 'secret-R1'
add_user bob 'secret-B1' nobody
add_user carol 'secret-C1' daemon
start_server

# --- defect 1: delete-on-close on a read-only share -------------------------
echo data > "$T/ro/keep.txt"
mkdir "$T/ro/emptydir"
expect_probe "read-only share: MAXIMUM_ALLOWED + delete-on-close on a file is refused" \
  "create=ACCESS_DENIED" ro alice secret-A1 doc-max-file keep.txt
check "read-only share: the file is still there" test -f "$T/ro/keep.txt"
expect_probe "read-only share: MAXIMUM_ALLOWED + delete-on-close on an empty directory is refused" \
  "create=ACCESS_DENIED" ro alice secret-A1 doc-max-dir emptydir
check "read-only share: the empty directory is still there" test -d "$T/ro/emptydir"
expect_probe "read-only share: an open granted MAXIMUM_ALLOWED cannot write, truncate or delete" \
  "create=SUCCESS write=ACCESS_DENIED truncate=ACCESS_DENIED delete=ACCESS_DENIED close=SUCCESS" \
  ro alice secret-A1 max-write keep.txt
check "read-only share: the data is intact" grep -qx data "$T/ro/keep.txt"

echo data > "$T/share/listed.txt"
mkdir "$T/share/listeddir"
chown "$TEST_UNIX_USER": "$T/share/listed.txt" "$T/share/listeddir"  # the share owner's, as on a NAS
expect_probe "read list user: MAXIMUM_ALLOWED + delete-on-close is refused" \
  "create=ACCESS_DENIED" share reader secret-R1 doc-max-file listed.txt
expect_probe "read list user: the same on a directory is refused" \
  "create=ACCESS_DENIED" share reader secret-R1 doc-max-dir listeddir
expect_probe "read list user: an open granted MAXIMUM_ALLOWED cannot write, truncate or delete" \
  "create=SUCCESS write=ACCESS_DENIED truncate=ACCESS_DENIED delete=ACCESS_DENIED close=SUCCESS" \
  share reader secret-R1 max-write listed.txt
check "read list user: file and directory are still there" test -f "$T/share/listed.txt" -a -d "$T/share/listeddir"
expect_status "read list user: smbclient rm is refused" NT_STATUS_ACCESS_DENIED \
  smb reader%secret-R1 share "rm listed.txt"
check "read list user: still there after rm" test -f "$T/share/listed.txt"
# The same requests from a user who may write do delete: the probe can tell.
expect_probe "writable share: MAXIMUM_ALLOWED + delete-on-close deletes" \
  "create=SUCCESS close=SUCCESS" share alice secret-A1 doc-max-file listed.txt
check "writable share: the file is gone" test ! -e "$T/share/listed.txt"

# A read-only file: delete-on-close says what a disposition would, not a
# success that the close then honours or not.
echo data > "$T/share/readonly.txt" && chmod 444 "$T/share/readonly.txt" && chown "$TEST_UNIX_USER": "$T/share/readonly.txt"
expect_probe "writable share: delete-on-close of a read-only file is CANNOT_DELETE" \
  "create=CANNOT_DELETE" share alice secret-A1 doc-delete readonly.txt
expect_probe "writable share: so is its disposition" \
  "create=SUCCESS setinfo=CANNOT_DELETE close=SUCCESS" share alice secret-A1 disposition readonly.txt
check "writable share: the read-only file is still there" test -f "$T/share/readonly.txt"

# --- defect 2: a delete the sticky bit forbids ------------------------------
mkdir "$T/share/tmp" && chmod 1777 "$T/share/tmp"
echo carol > "$T/share/tmp/carols.txt"
chown daemon:daemon "$T/share/tmp/carols.txt" && chmod 666 "$T/share/tmp/carols.txt"
expect_probe "sticky directory: delete-on-close of another user's file is refused at CREATE" \
  "create=ACCESS_DENIED" share bob secret-B1 doc-delete 'tmp\carols.txt'
expect_probe "sticky directory: FileDispositionInformation on another user's file is refused at SET_INFO" \
  "create=SUCCESS setinfo=ACCESS_DENIED close=SUCCESS" share bob secret-B1 disposition 'tmp\carols.txt'
expect_status "sticky directory: smbclient rm of another user's file says ACCESS_DENIED" NT_STATUS_ACCESS_DENIED \
  smb bob%secret-B1 share "rm tmp\\carols.txt"
check "sticky directory: the file is still there" test -f "$T/share/tmp/carols.txt"
expect_probe "sticky directory: the owner's disposition succeeds" \
  "create=SUCCESS setinfo=SUCCESS close=SUCCESS" share carol secret-C1 disposition 'tmp\carols.txt'
check "sticky directory: the owner's delete happened" test ! -e "$T/share/tmp/carols.txt"

# --- FILE_ATTRIBUTE_READONLY: set, enforced, cleared again ---------------------
# MS-FSA 2.1.5.1.2.1: a READONLY file refuses opens for FILE_WRITE_DATA or
# FILE_APPEND_DATA (MAXIMUM_ALLOWED loses them), for root's file-system
# identity too; FILE_WRITE_ATTRIBUTES is granted, so a client can clear the
# attribute, and the owner's write bit comes back with it. The requests are
# the Linux kernel client's for chmod 444 and chmod 644 (vm.test_cifs_ringsmbd).
for who in "alice secret-A1" "admin secret-R0"; do
  set -- $who
  f="ro-$1.txt"
  expect_probe "READONLY ($1): set through a writing handle" \
    "create=SUCCESS write=SUCCESS readonly=SUCCESS close=SUCCESS" share "$1" "$2" set-readonly "$f"
  check "READONLY ($1): the file has no write bits on disk" test "$(stat -c %a "$T/share/$f")" = 444
  expect_probe "READONLY ($1): write and append opens refused, MAXIMUM_ALLOWED cannot write, FILE_WRITE_ATTRIBUTES granted" \
    "write=ACCESS_DENIED append=ACCESS_DENIED max=SUCCESS max-write=ACCESS_DENIED close=SUCCESS attributes=SUCCESS close=SUCCESS" \
    share "$1" "$2" readonly-opens "$f"
  expect_probe "READONLY ($1): cleared through a FILE_WRITE_ATTRIBUTES open, then writable" \
    "create=SUCCESS clear=SUCCESS close=SUCCESS reopen=SUCCESS write=SUCCESS close=SUCCESS" share "$1" "$2" clear-readonly "$f"
  check "READONLY ($1): the owner's write bit is back" test "$(stat -c %a "$T/share/$f")" = 644
  check "READONLY ($1): the data written after clearing it is there" grep -qx datamore "$T/share/$f"
done
finish
