#!/usr/bin/env bash
# What Windows clients keep besides file data, and the FSCTLs around it,
# with real clients (issue 10): server-side copy (smbclient scopy: resume
# key + FSCTL_SRV_COPYCHUNK_WRITE), allinfo without errors (no 8.3 names),
# DOS attributes under "store dos attributes", creation times, and the
# sizes dialect 2.0.2 advertises and enforces.
source "$(dirname "$0")/lib.sh"

# The user is the shares' owner, an unprivileged Unix user: ringsmbd
# switches its fsuid to it, and the server-private metadata
# (trusted.ringsmb.meta) must still be written.
write_config
owned_dir "$T/dos"
add_share dos "$T/dos" "writeable = yes" "store dos attributes = yes"
add_user u 'pw-u'
start_server
U=u%pw-u
export TZ=UTC

# --- server-side copy -------------------------------------------------------
head -c $((5 * 1024 * 1024 + 12345)) /dev/urandom > "$T/big"
smb "$U" share "put $T/big big" > /dev/null 2>&1
smb "$U" share "scopy big big.copy" > "$T/scopy.out" 2>&1 || true
check "scopy (copychunk) succeeds" bash -c "! grep -q 'NT_STATUS\|failed\|ndr_pull' $T/scopy.out"
check "the copy is identical (md5)" bash -c \
  "[ \"\$(md5sum < $T/big)\" = \"\$(md5sum < $T/share/big.copy)\" ]"
smb "$U" share "get big.copy $T/big.back" > /dev/null 2>&1 || true
check "and reads back identical over SMB" cmp "$T/big" "$T/big.back"

# --- allinfo: no short names, no error ----------------------------------------
smb "$U" share "allinfo big" > "$T/allinfo" 2>&1 || true
check "allinfo prints no error (FileAlternateNameInformation)" bash -c "! grep -q NT_STATUS $T/allinfo && grep -q '^altname:' $T/allinfo"

# --- DOS attributes stored in an xattr read as without it ----------------------
echo x > "$T/small"
smb "$U" dos "put $T/small new.txt; allinfo new.txt" > "$T/allinfo_dos" 2>&1 || true
check "store dos attributes: a new file is ARCHIVE, as on Windows" grep -q '^attributes: A (20)' "$T/allinfo_dos"
check "store dos attributes: a plain new file gets no xattr write" \
  python3 -c "import os,sys; sys.exit('user.DOSATTRIB' in os.listxattr('$T/dos/new.txt'))"
smb "$U" share "put $T/small plain.txt; allinfo plain.txt" > "$T/allinfo_plain" 2>&1 || true
check "without store dos attributes: the same attributes" grep -q '^attributes: A (20)' "$T/allinfo_plain"
smb "$U" dos "setmode new.txt +h; allinfo new.txt" > "$T/allinfo_dos_h" 2>&1 || true
check "store dos attributes: HIDDEN set keeps ARCHIVE" grep -q '^attributes: HA (22)' "$T/allinfo_dos_h"

# --- CreationTime set over SMB reads back, also after a restart ----------------
echo x > "$T/small"
smb "$U" share "put $T/small ct.txt; utimes ct.txt 2001:02:03-04:05:06 -1 -1 -1" > /dev/null 2>&1 || true
check "the file belongs to the unprivileged user" test "$(stat -c %U "$T/share/ct.txt")" = "$TEST_UNIX_USER"
smb "$U" share "allinfo ct.txt" > "$T/allinfo_ct" 2>&1 || true
check "CreationTime set by an unprivileged user reads back" grep -q '^create_time: *Sat Feb  3 04:05:06 2001' "$T/allinfo_ct"
check "it is kept in trusted.ringsmb.meta" python3 -c "import os; os.getxattr('$T/share/ct.txt', 'trusted.ringsmb.meta')"
smb "$U" share "ls ct.txt" > /dev/null 2>&1 || true
stop_server
start_server
smb "$U" share "allinfo ct.txt" > "$T/allinfo_ct2" 2>&1 || true
check "CreationTime survives a server restart" grep -q '^create_time: *Sat Feb  3 04:05:06 2001' "$T/allinfo_ct2"
check "and LastWriteTime is still the file's own" bash -c "! grep -q '^write_time: *Sat Feb  3' $T/allinfo_ct2"
check "a new file has no server-private metadata" \
  python3 -c "import os,sys; sys.exit('trusted.ringsmb.meta' in os.listxattr('$T/share/big'))"

# --- DOS attributes without "store dos attributes" (the default) --------------
smb "$U" share "put $T/small attr.txt; setmode attr.txt -a; allinfo attr.txt" > "$T/allinfo_noarch" 2>&1 || true
check "default share: ARCHIVE cleared reads back cleared" grep -q '^attributes: .*(80)' "$T/allinfo_noarch"
smb "$U" share "setmode attr.txt +h; allinfo attr.txt" > "$T/allinfo_hidden" 2>&1 || true
check "default share: HIDDEN set reads back" grep -q '^attributes: .*(2)$' "$T/allinfo_hidden"
check "... kept in trusted.ringsmb.meta, not user.DOSATTRIB" \
  python3 -c "import os,sys; a=os.listxattr('$T/share/attr.txt'); sys.exit(not ('trusted.ringsmb.meta' in a and 'user.DOSATTRIB' not in a))"
smb "$U" share "setmode attr.txt +a-h; allinfo attr.txt" > "$T/allinfo_back" 2>&1 || true
check "default share: back to ARCHIVE" grep -q '^attributes: A (20)' "$T/allinfo_back"
check "... and the attributes need no xattr any more" \
  python3 -c "import os,sys; sys.exit('trusted.ringsmb.meta' in os.listxattr('$T/share/attr.txt'))"

# --- dialect 2.0.2: 64 KiB sizes, advertised and enforced ------------------------
check "2.0.2: a 5 MiB file reads back identical (smbclient -m SMB2_02)" bash -c \
  "smbclient //127.0.0.1/share -p $PORT -U $U -m SMB2_02 -c 'get big $T/big.202' >/dev/null 2>&1 && cmp $T/big $T/big.202"
check "2.0.2: MaxTransact/Read/WriteSize 65536, READ and WRITE over 64 KiB refused" python3 - "$PORT" <<'EOF'
import struct, sys
sys.argv = [sys.argv[0], sys.argv[1], "share"]
sys.path.insert(0, __import__("os").environ["RINGSMB_SOURCE_DIR"] + "/tests/integration")
import smb2user
c = smb2user.UserConn()
body = struct.pack("<HHHHI16sIHH", 36, 1, 1, 0, 0, b"\1" * 16, 0, 0, 0) + struct.pack("<H", 0x0202)
st, r = c.request(0, body)
sizes = struct.unpack_from("<III", r, 64 + 28)
assert st == 0 and sizes == (65536, 65536, 65536), sizes
assert c.login("u", "pw-u") == 0
assert c.tree_connect("share") == 0
st, fid = c.create("big", 0x3)  # READ_DATA | WRITE_DATA
assert st == 0, hex(st)
def read(length):
    b = struct.pack("<HBBIQ", 49, 0x50, 0, length, 0) + fid + struct.pack("<IIIHH", 0, 0, 0, 0, 0) + b"\0"
    return c.request(8, b)[0]
assert read(65536) == 0
assert read(65537) == 0xC000000D, "READ of 64 KiB + 1"
assert c.write(fid, b"x" * 65537) == 0xC000000D, "WRITE of 64 KiB + 1"
EOF

finish
