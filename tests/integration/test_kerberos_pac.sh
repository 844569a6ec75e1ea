#!/usr/bin/env bash
# Domain logins with a PAC (MS-PAC), without a domain controller: impacket's
# ticketer makes service tickets for cifs/ringsmb-pac.test sealed with the
# key of ringsmb's keytab and carrying a KERB_VALIDATION_INFO (domain SID
# S-1-5-21-1-2-3, user RID 1104, group RIDs), as a Windows DC would for a
# domain user (tests/integration/pac_ticket.py). smbclient uses the ticket
# from its ccache. The domain user "rsmb_other" of RINGSMB.TEST maps to the
# local account of that name (NSS's third choice, docs/active-directory.md);
# its group SIDs from the PAC open a share whose valid users name a group
# SID and a file whose DACL grants only that group (set with smbcacls, which
# shows the SID), and keep a ticket without that group out. A PAC whose
# server signature fails, one whose GroupCount lies, and a domain user
# without a Unix account or named root are refused with a log line each.
# smbcacls has no port option: the test runs in a network namespace of its
# own, where the server listens on 445 and the KDC (for krb5.conf and the
# keytab) on a free port.
if [ -z "${PAC_NETNS:-}" ]; then
  exec unshare --net env PAC_NETNS=1 bash -c 'ip link set lo up && exec bash "$0"' "$0"
fi
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/kdc.sh"

PY=/usr/bin/python3
TICKETER=/usr/share/doc/python3-impacket/examples/ticketer.py
for tool in krb5kdc kdb5_util kadmin.local smbcacls; do
  command -v "$tool" > /dev/null || { echo "SKIP: $tool not installed"; exit 0; }
done
[ -r "$TICKETER" ] && $PY -c 'import impacket' 2> /dev/null || { echo "SKIP: python3-impacket not installed"; exit 0; }
trap 'stop_kdc; cleanup' EXIT

start_kdc
HOST=ringsmb-pac.test
KEYTAB="$T/ringsmb.keytab"
kdc_service "cifs/$HOST" "$KEYTAB"
DOMAIN_SID=S-1-5-21-1-2-3
STAFF_SID=$DOMAIN_SID-1105
ADMINS_SID=$DOMAIN_SID-512

write_config "realm = $KDC_REALM" "kerberos method = dedicated keytab" "dedicated keytab file = FILE:$KEYTAB"
sed -i "s/^  tcp port = .*/  tcp port = 445/" "$T/ringsmb.conf"
PORT=445
owned_dir "$T/staff" "$TEST_UNIX_USER2"
owned_dir "$T/admins" "$TEST_UNIX_USER2"
add_share staff "$T/staff" "writeable = yes" "valid users = @$STAFF_SID"
add_share admins "$T/admins" "writeable = yes" "valid users = @$ADMINS_SID"
owned_dir "$T/acl" "$TEST_UNIX_USER2"
add_share acl "$T/acl" "writeable = yes"
add_user other 'secret-O1' "$TEST_UNIX_USER2"  # the same Unix account by NTLM, for smbcacls
start_server

# ticket MODE NAME USER GROUPS: a ccache in $T/tickets/NAME/USER.ccache
ticket() {
  mkdir -p "$T/tickets/$2"
  $PY "$RINGSMB_SOURCE_DIR/tests/integration/pac_ticket.py" "$1" "$T/tickets/$2" -keytab "$KEYTAB" \
    -spn "cifs/$HOST" -domain "$KDC_REALM" -domain-sid "$DOMAIN_SID" -user-id 1104 -groups "$4" "$3" \
    > "$T/tickets/$2.log" 2>&1 || { cat "$T/tickets/$2.log"; return 1; }
}
# ksmb TICKET USER SHARE ls | put LOCAL REMOTE | get REMOTE LOCAL: impacket
# logs on with the ticket as is (pac_client.py; smbclient wants a TGT).
ksmb() {
  local cc="$T/tickets/$1/$2.ccache" user=$2
  shift 2
  KRB5CCNAME="$cc" timeout 60 $PY "$RINGSMB_SOURCE_DIR/tests/integration/pac_client.py" "$HOST" "$PORT" "$user" \
    "$KDC_REALM" "$@"
}
logged() { grep -q "$1" "$T/server.log"; }

ticket good staff "$TEST_UNIX_USER2" 513,1105
ticket good plain "$TEST_UNIX_USER2" 513
echo hello > "$T/hello.txt"

check "a domain user in the group reaches the share valid users restrict to it" \
  ksmb staff "$TEST_UNIX_USER2" staff put "$T/hello.txt" f.txt
check "its login line names the user's SID and its groups" \
  logged "Kerberos login of $TEST_UNIX_USER2@$KDC_REALM (service cifs/$HOST@$KDC_REALM, $DOMAIN_SID-1104, 2 group SIDs) as Unix user '$TEST_UNIX_USER2'"
check "its files belong to the mapped Unix account" test "$(stat -c %U "$T/staff/f.txt")" = "$TEST_UNIX_USER2"
expect_status "the group's SID does not open a share for another group" NT_STATUS_ACCESS_DENIED \
  ksmb staff "$TEST_UNIX_USER2" admins ls
expect_status "a ticket without the group is kept out" NT_STATUS_ACCESS_DENIED ksmb plain "$TEST_UNIX_USER2" staff ls

# An NT ACL that grants the domain group alone: group SIDs count in access checks.
check "the ticket with the group writes into an open share" ksmb staff "$TEST_UNIX_USER2" acl put "$T/hello.txt" g.txt
check "smbcacls sets a DACL naming the domain group's SID" \
  timeout 60 smbcacls //127.0.0.1/acl g.txt -U other%secret-O1 --set "ACL:$STAFF_SID:ALLOWED/0x0/FULL"
timeout 60 smbcacls //127.0.0.1/acl g.txt -U other%secret-O1 > "$T/cacls.out" 2>&1 || true
check "smbcacls shows the group's SID in the ACL" grep -q "^ACL:$STAFF_SID:ALLOWED/0x0/FULL" "$T/cacls.out"
check "the group's member reads the file" ksmb staff "$TEST_UNIX_USER2" acl get g.txt "$T/got"
expect_status "the same user without the group is denied by the DACL" NT_STATUS_ACCESS_DENIED \
  ksmb plain "$TEST_UNIX_USER2" acl get g.txt "$T/got2"

# Bad PACs and accounts: LOGON_FAILURE, a line that says which.
ticket bad-signature badsig "$TEST_UNIX_USER2" 513,1105
expect_status "a PAC whose server signature fails is refused" NT_STATUS_LOGON_FAILURE \
  ksmb badsig "$TEST_UNIX_USER2" staff ls
check "the log names the failed signature" logged "the PAC in the ticket of $TEST_UNIX_USER2@$KDC_REALM fails its server signature check"
ticket bad-group-count badcount "$TEST_UNIX_USER2" 513,1105
expect_status "a PAC whose group count lies is refused" NT_STATUS_LOGON_FAILURE \
  ksmb badcount "$TEST_UNIX_USER2" staff ls
check "the log names the lie" logged "is malformed: LOGON_INFO: GroupIds: count 65536 but the array holds 2"
ticket good nobody nosuchdomainuser 513
expect_status "a domain user without a Unix account is refused" NT_STATUS_LOGON_FAILURE \
  ksmb nobody nosuchdomainuser staff ls
check "the log lists the names tried" \
  logged "has no Unix account: NSS knows none of '$KDC_REALM\\\\nosuchdomainuser', 'nosuchdomainuser@ringsmb.test', 'nosuchdomainuser'"
ticket good root root 513,1105
expect_status "a domain user named root is refused" NT_STATUS_LOGON_FAILURE ksmb root root staff ls
check "the log says root is never a domain user's" logged "domain account 'root' maps to uid 0"
server_alive && pass "the server still serves" || fail "the server died"
finish

