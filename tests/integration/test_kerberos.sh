#!/usr/bin/env bash
# Kerberos logins with real parts: an MIT KDC of the test's own
# (tests/integration/kdc.sh), a keytab given to ringsmb with Samba's keys
# (realm, kerberos method = dedicated keytab, dedicated keytab file), and
# smbclient --use-kerberos=required, which asks the KDC for a ticket to
# cifs/ringsmb-krb.test and connects to 127.0.0.1 (-I): the name is never
# resolved. Bad tokens (replayed, truncated, for another service, stale)
# come from krb5_probe.py, a raw SMB2 client that makes its tokens with
# GSSAPI.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/kdc.sh"

for tool in krb5kdc kdb5_util kadmin.local kinit; do
  command -v "$tool" > /dev/null || { echo "SKIP: $tool not installed (krb5-kdc, krb5-admin-server, krb5-user)"; exit 0; }
done
trap 'stop_kdc; cleanup' EXIT

start_kdc
OWNER_PW="owner-$RANDOM"
kdc_user "$TEST_UNIX_USER" "$OWNER_PW"  # the principal of the Unix account's name
NOBODY_PW="x-$RANDOM"
kdc_user nosuchunixuser "$NOBODY_PW"  # a principal without a Unix account
KEYTAB="$T/ringsmb.keytab"
# Tickets for cifs/ringsmb-krb.test carry no PAC (as Samba's standalone
# server needs); cifs/ringsmb-pac.test's keep the PAC MIT's KDC adds.
kdc_service "cifs/$KDC_HOST" "$KEYTAB"
kdc_admin "modprinc +no_auth_data_required cifs/$KDC_HOST"
kdc_service cifs/ringsmb-pac.test "$KEYTAB"
# A key in our keytab for a service that is not SMB, and a host whose key we lack.
kdc_service "HTTP/$KDC_HOST" "$KEYTAB"
kdc_service cifs/other-host.test "$T/other.keytab"

write_config "realm = $KDC_REALM" "kerberos method = dedicated keytab" "dedicated keytab file = FILE:$KEYTAB"
owned_dir "$T/mine"
owned_dir "$T/theirs" "$TEST_UNIX_USER2"
add_share mine "$T/mine" "writeable = yes" "valid users = $TEST_UNIX_USER"
add_share theirs "$T/theirs" "writeable = yes" "valid users = $TEST_UNIX_USER2"
start_server

CC="FILE:$T/owner.cc"
kdc_kinit "$TEST_UNIX_USER" "$OWNER_PW" "$CC"
# ksmb HOST SHARE COMMANDS [smbclient options...]
ksmb() {
  local host=$1 share=$2 cmds=$3
  shift 3
  KRB5CCNAME="$CC" timeout 60 smbclient "//$host/$share" -I 127.0.0.1 -p "$PORT" --use-kerberos=required "$@" -c "$cmds"
}
head -c 300000 /dev/urandom > "$T/payload"

check "list a share with a Kerberos ticket" ksmb "$KDC_HOST" share ls
grep -q "Kerberos login of $TEST_UNIX_USER@$KDC_REALM (service cifs/$KDC_HOST@$KDC_REALM) as Unix user '$TEST_UNIX_USER'" \
  "$T/server.log" && pass "the log names principal, service and Unix user" || fail "no Kerberos login line in the log"
for protection in sign encrypt; do
  rm -f "$T/back"
  check "put and get, --client-protection=$protection" \
    ksmb "$KDC_HOST" share "put $T/payload p-$protection; get p-$protection $T/back" --client-protection=$protection
  check "the file came back whole ($protection)" cmp "$T/payload" "$T/back"
done
[ "$(stat -c %U "$T/share/p-sign")" = "$TEST_UNIX_USER" ] && pass "files belong to the mapped Unix user" \
  || fail "p-sign belongs to $(stat -c %U "$T/share/p-sign")"
check "a ticket with a PAC is accepted too" ksmb ringsmb-pac.test share ls
check "valid users takes the mapped name" ksmb "$KDC_HOST" mine ls
expect_status "valid users keeps others out" NT_STATUS_ACCESS_DENIED ksmb "$KDC_HOST" theirs ls

expect_status "a ticket for a host whose key we lack fails" NT_STATUS_LOGON_FAILURE ksmb other-host.test share ls
grep -q "Kerberos login refused: AP-REQ:.*other-host" "$T/server.log" && pass "the log says which key was missing" \
  || { fail "no log line for the unknown host"; grep -i kerberos "$T/server.log" | tail -3; }

kdc_kinit nosuchunixuser "$NOBODY_PW" "FILE:$T/nobody.cc"
CC="FILE:$T/nobody.cc" expect_status "a principal without a Unix account fails" NT_STATUS_LOGON_FAILURE \
  ksmb "$KDC_HOST" share ls
grep -q "Kerberos login of nosuchunixuser@$KDC_REALM refused: no Unix account 'nosuchunixuser'" "$T/server.log" \
  && pass "the log names the missing account" || fail "no log line for the missing account"

# Bad tokens from a raw client (python3-gssapi; the system Python has it).
PY=/usr/bin/python3
if $PY -c 'import gssapi' 2> /dev/null; then
  check "raw Kerberos tokens: mutual auth, replay, truncation, wrong service" \
    env KRB5CCNAME="$CC" $PY "$RINGSMB_SOURCE_DIR/tests/integration/krb5_probe.py" "$PORT" "$KDC_HOST"
  grep -q "Kerberos login refused: AP-REQ:.*[Rr]eplay" "$T/server.log" && pass "the log names the replay" \
    || fail "no log line for the replay"
  grep -q "is for HTTP/$KDC_HOST@$KDC_REALM, not a cifs/ or host/ service" "$T/server.log" \
    && pass "the log names the wrong service" || fail "no log line for the wrong service"
  # A ticket that lives 3 s; its token is sent 6 s later (clockskew = 2, kdc.sh).
  echo "$OWNER_PW" | KRB5CCNAME="FILE:$T/short.cc" kinit -l 3s "$TEST_UNIX_USER" > /dev/null
  check "a stale token (expired ticket) is refused" \
    env KRB5CCNAME="FILE:$T/short.cc" $PY "$RINGSMB_SOURCE_DIR/tests/integration/krb5_probe.py" "$PORT" "$KDC_HOST" --stale 6
  grep -q "Kerberos login refused: AP-REQ:.*\(expired\|skew\)" "$T/server.log" && pass "the log says the token was stale" \
    || { fail "no log line for the stale token"; grep "Kerberos login refused" "$T/server.log" | tail -2; }
else
  echo "SKIP: raw token checks (python3-gssapi not installed)"
fi

# smbtorture has no -I: it resolves the name itself. A mount namespace of
# its own gets a hosts file that maps the name to 127.0.0.1 (the machine's
# /etc/hosts is left alone). smb2.session.reauth5 fails as with NTLM, and
# smbtorture skips reauth6 under Kerberos. Samba 4.17 (standalone, the same
# keytab) passes connect and reauth1-3 this way; its reauth4 fails
# (ACCESS_DENIED on a SET_INFO after re-authentication).
{ cat /etc/hosts; echo "127.0.0.1 $KDC_HOST"; } > "$T/hosts"
torture_krb5() {  # torture_krb5 TEST
  unshare --mount --propagation private bash -c "mount --bind '$T/hosts' /etc/hosts && exec timeout 60 \
    smbtorture //$KDC_HOST/share -p $PORT --use-kerberos=required -U '$TEST_UNIX_USER%$OWNER_PW' \
    --realm=$KDC_REALM $1" > "$T/torture.log" 2>&1 && grep -q "^success: " "$T/torture.log"
}
if unshare --mount --propagation private true 2> /dev/null; then
  for t in smb2.connect smb2.session.reauth1 smb2.session.reauth2 smb2.session.reauth3 smb2.session.reauth4; do
    if torture_krb5 "$t"; then pass "smbtorture $t with Kerberos"; else fail "smbtorture $t with Kerberos"; tail -5 "$T/torture.log"; fi
  done
else
  echo "SKIP: smbtorture with Kerberos (no mount namespace for its hosts file)"
fi

# The wrong keytab: a server whose keytab lacks our service's key.
stop_server
sed -i "s|dedicated keytab file = .*|dedicated keytab file = FILE:$T/other.keytab|" "$T/ringsmb.conf"
start_server
expect_status "a server with the wrong keytab refuses the ticket" NT_STATUS_LOGON_FAILURE ksmb "$KDC_HOST" share ls
grep -q "Kerberos login refused: AP-REQ:" "$T/server.log" && pass "the log says why" || fail "no refusal line"
server_alive && pass "the server still serves" || fail "the server died"
finish
