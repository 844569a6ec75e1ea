#!/usr/bin/env bash
# NT security descriptors with real clients (docs/security.md, "NT security
# descriptors"): smbcacls shows a file's owner and DACL with names (LSA
# lookups), a DENY ACE added with smbcacls is enforced for the other user
# and survives a restart, a directory's inheritable ACE reaches a new file,
# the SACL is refused, the descriptor lives in trusted.ringsmb.ntacl and a
# file whose descriptor the mode expresses gets no xattr. A DACL replaced
# and then changed with smbcacls (-S, -M) is enforced for the other user
# each time. A share with "nt acl support = no" (same directory) neither
# stores nor enforces descriptors: the mode alone. rpcclient's
# lookupnames / lookupsids agree with the SIDs the descriptors carry.
# READONLY set and cleared on a file with a stored descriptor leaves the
# descriptor, and the DACL still refuses the other user.
# smbcacls (Samba 4.17) has no port option: the test runs in a network
# namespace of its own, where the server can listen on 445.
if [ -z "${NTACL_NETNS:-}" ]; then
  exec unshare --net env NTACL_NETNS=1 bash -c 'ip link set lo up && exec bash "$0"' "$0"
fi
source "$(dirname "$0")/lib.sh"

write_config
add_share modeonly "$T/share" "writeable = yes" "nt acl support = no"
sed -i "s/^  tcp port = .*/  tcp port = 445/" "$T/ringsmb.conf"
PORT=445
# alice and bob are two Unix accounts that are not root (the server runs as
# root; file operations run as them): alice owns the share, bob is another
# ordinary user of it.
add_user alice 'secret-A1' "$TEST_UNIX_USER"
add_user bob 'secret-B1' "$TEST_UNIX_USER2"
start_server

cacls_on() {  # cacls_on SHARE USER%PASS PATH [smbcacls args...]
  local share=$1 cred=$2 path=$3
  shift 3
  timeout 60 smbcacls "//127.0.0.1/$share" "$path" -U "$cred" "$@"
}
cacls() { cacls_on share "$@"; }  # cacls USER%PASS PATH [smbcacls args...]
alice_uid=$(id -u "$TEST_UNIX_USER")
has_ntacl() {  # has_ntacl PATH: the file carries trusted.ringsmb.ntacl
  python3 -c 'import os,sys; os.getxattr(sys.argv[1], "trusted.ringsmb.ntacl")' "$1" 2>/dev/null
}
no_ntacl() { ! has_ntacl "$1"; }
bob_uid=$(id -u "$TEST_UNIX_USER2")

# --- a file alice makes, as Unix knows it --------------------------------------
echo hello > "$T/hello.txt"
smb alice%secret-A1 share "put $T/hello.txt f.txt" > /dev/null
check "alice's file is owned by her Unix account" test "$(stat -c %U "$T/share/f.txt")" = "$TEST_UNIX_USER"
check "a new file whose descriptor the mode expresses has no xattr" no_ntacl "$T/share/f.txt"
mode_before=$(stat -c %a "$T/share/f.txt")
check "bob can read it before any ACL (mode 0644)" smb bob%secret-B1 share "get f.txt $T/got1"

cacls alice%secret-A1 f.txt > "$T/show1" 2>&1 || true
check "smbcacls shows the owner by name" grep -q "^OWNER:Unix User\\\\alice" "$T/show1"
check "smbcacls shows the group by name" grep -q "^GROUP:Unix Group\\\\" "$T/show1"
check "smbcacls shows the owner's ACE by name" grep -q "^ACL:Unix User\\\\alice:ALLOWED" "$T/show1"
check "smbcacls shows Everyone" grep -q "^ACL:Everyone:ALLOWED" "$T/show1"

# --- the SID mapping, as LSA answers it -----------------------------------------
rpcclient -p "$PORT" -U alice%secret-A1 127.0.0.1 -c "lookupsids S-1-22-1-$alice_uid" > "$T/rpc1" 2>&1 || true
check "lookupsids names the file's owner SID" grep -q "Unix User\\\\alice" "$T/rpc1"
rpcclient -p "$PORT" -U alice%secret-A1 127.0.0.1 -c "lookupnames bob" > "$T/rpc2" 2>&1 || true
bob_sid=$(awk '/^bob /{print $2}' "$T/rpc2")
check "lookupnames gives bob the machine account SID 1000 + uid" test "${bob_sid##*-}" = "$((1000 + bob_uid))"

# --- a DENY for bob, added with smbcacls, is enforced ----------------------------
check "smbcacls adds a DENY ACE for bob" cacls alice%secret-A1 f.txt -a "ACL:bob:DENIED/0x0/READ"
cacls alice%secret-A1 f.txt > "$T/show2" 2>&1 || true
check "smbcacls shows the DENY ACE with bob's name" grep -qi "^ACL:.*bob:DENIED/0x0/READ" "$T/show2"
check "the descriptor is stored in trusted.ringsmb.ntacl" has_ntacl "$T/share/f.txt"
expect_status "bob is now refused the file" NT_STATUS_ACCESS_DENIED smb bob%secret-B1 share "get f.txt $T/got2"
check "alice still reads it" smb alice%secret-A1 share "get f.txt $T/got3"
check "the Unix mode did not change (the DENY is not a mode)" test "$(stat -c %a "$T/share/f.txt")" = "$mode_before"

stop_server
start_server
expect_status "after a restart bob is still refused" NT_STATUS_ACCESS_DENIED smb bob%secret-B1 share "get f.txt $T/got4"
cacls alice%secret-A1 f.txt > "$T/show3" 2>&1 || true
check "after a restart the DENY ACE is still shown" grep -qi "bob:DENIED" "$T/show3"

# --- removing the DENY gives the access back --------------------------------------
check "smbcacls removes the DENY ACE" cacls alice%secret-A1 f.txt -D "ACL:bob:DENIED/0x0/READ"
check "bob reads the file again" smb bob%secret-B1 share "get f.txt $T/got5"

# --- inheritance from a directory's inheritable ACE --------------------------------
smb alice%secret-A1 share "mkdir d" > /dev/null
chmod 777 "$T/share/d"  # Unix lets everyone in: only the ACL will say no
check "smbcacls adds an inheritable DENY for bob and ALLOW for Everyone on the directory" \
  cacls alice%secret-A1 d -a "ACL:bob:DENIED/OI|CI/FULL,ACL:Everyone:ALLOWED/OI|CI/FULL"
smb alice%secret-A1 share "put $T/hello.txt d\\new.txt" > /dev/null
cacls alice%secret-A1 'd\new.txt' > "$T/show4" 2>&1 || true
# (flag I only under an auto-inherited parent DACL, which smbcacls does not set)
check "the new file inherited the DENY ACE" grep -qiE "bob:DENIED/(I|0x0)/FULL" "$T/show4"
expect_status "bob is refused the new file" NT_STATUS_ACCESS_DENIED smb bob%secret-B1 share "get d\\new.txt $T/got6"
expect_status "bob cannot create a file in the directory" NT_STATUS_ACCESS_DENIED \
  smb bob%secret-B1 share "put $T/hello.txt d\\bob.txt"
check "alice still reads the new file" smb alice%secret-A1 share "get d\\new.txt $T/got7"

# --- a DACL replaced, then changed, with smbcacls: enforced for bob each time -------
smb alice%secret-A1 share "put $T/hello.txt g.txt" > /dev/null
chmod 666 "$T/share/g.txt"  # Unix lets bob read and write: only the DACL decides
check "smbcacls replaces the DACL: alice full, bob read" \
  cacls alice%secret-A1 g.txt -S "ACL:alice:ALLOWED/0x0/FULL,ACL:bob:ALLOWED/0x0/READ"
check "bob reads under the new DACL" smb bob%secret-B1 share "get g.txt $T/got8"
expect_status "bob may not write under the new DACL" NT_STATUS_ACCESS_DENIED \
  smb bob%secret-B1 share "put $T/hello.txt g.txt"
check "smbcacls changes bob's ACE to full control" cacls alice%secret-A1 g.txt -M "ACL:bob:ALLOWED/0x0/FULL"
check "bob now writes the file" smb bob%secret-B1 share "put $T/hello.txt g.txt"
check "smbcacls replaces the DACL again: alice only" cacls alice%secret-A1 g.txt -S "ACL:alice:ALLOWED/0x0/FULL"
expect_status "bob is refused the file" NT_STATUS_ACCESS_DENIED smb bob%secret-B1 share "get g.txt $T/got9"
check "alice still reads it" smb alice%secret-A1 share "get g.txt $T/got10"

# --- READONLY on a file with a stored descriptor: set and cleared, the DACL stays ----
probe() {  # probe USER PASSWORD SCENARIO PATH (tests/integration/access_probe.py)
  timeout 60 python3 "$(dirname "$0")/access_probe.py" "$PORT" share "$@" 2>&1
}
check "alice makes g.txt READONLY through a writing handle" \
  test "$(probe alice secret-A1 set-readonly g.txt)" = "create=SUCCESS write=SUCCESS readonly=SUCCESS close=SUCCESS"
check "READONLY leaves no write bit" bash -c "[ -z \"\$(find '$T/share/g.txt' -perm /222)\" ]"
check "alice's write open of the READONLY file is refused, FILE_WRITE_ATTRIBUTES granted" \
  test "$(probe alice secret-A1 readonly-opens g.txt)" = \
  "write=ACCESS_DENIED append=ACCESS_DENIED max=SUCCESS max-write=ACCESS_DENIED close=SUCCESS attributes=SUCCESS close=SUCCESS"
check "alice clears READONLY (the kernel client's chmod 644) and writes" \
  test "$(probe alice secret-A1 clear-readonly g.txt)" = \
  "create=SUCCESS clear=SUCCESS close=SUCCESS reopen=SUCCESS write=SUCCESS close=SUCCESS"
check "the owner's write bit is back" bash -c "[ -n \"\$(find '$T/share/g.txt' -perm -u+w)\" ]"
check "the descriptor is still stored" has_ntacl "$T/share/g.txt"
expect_status "and bob is still refused the file" NT_STATUS_ACCESS_DENIED smb bob%secret-B1 share "get g.txt $T/got13"

# --- nt acl support = no: the same files, the mode alone ------------------------------
check "through the mode-only share bob reads the file whose DACL refuses him" \
  smb bob%secret-B1 modeonly "get d\\new.txt $T/got11"
cacls_on modeonly alice%secret-A1 'd\new.txt' > "$T/show5" 2>&1 || true
check "the mode-only share shows the mode's DACL (no DENY for bob)" grep -q "^ACL:Everyone:ALLOWED" "$T/show5"
check "... and not the stored DENY" bash -c "! grep -qi 'bob:DENIED' '$T/show5'"
smb alice%secret-A1 modeonly "put $T/hello.txt m.txt" > /dev/null
expect_status "a DENY ACE cannot be set on the mode-only share" NT_STATUS_NOT_SUPPORTED \
  cacls_on modeonly alice%secret-A1 m.txt -a "ACL:bob:DENIED/0x0/READ"
check "nothing was stored" no_ntacl "$T/share/m.txt"
check "bob still reads it" smb bob%secret-B1 modeonly "get m.txt $T/got12"

# --- the SACL is refused -------------------------------------------------------------
cacls alice%secret-A1 f.txt --query-security-info=8 > "$T/sacl" 2>&1 || true
check "a SACL query is refused (no privilege)" grep -qE "NT_STATUS_(PRIVILEGE_NOT_HELD|ACCESS_DENIED)" "$T/sacl"

[ -n "${NTACL_DEBUG:-}" ] && cat "$T"/show* "$T"/rpc*
finish
