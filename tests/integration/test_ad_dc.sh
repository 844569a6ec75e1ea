#!/usr/bin/env bash
# A real Active Directory domain: Samba's AD domain controller (Debian's
# samba-ad-dc), provisioned by the test in a network and mount namespace of
# its own where only the loopback interface exists (127.0.0.1: the DC's
# LDAP, Kerberos and RPC, and ringsmbd on 445; nothing of the host's
# network is touched). /etc/hosts, /etc/krb5.conf and /etc/group are the
# test's own inside the namespace (bind mounts that vanish with it).
#
# ringsmbctl domain join (the real adcli) creates the computer account NAS
# with cifs/nas.ad.ringsmb.test and its keytab. The domain user rsmb_other,
# a member of the domain group nasstaff, kinits against the DC and
# smbclient --use-kerberos=required reaches ringsmbd with a ticket whose PAC
# the DC made. Its Unix account comes from NSS: no sssd or winbind runs
# here, so the local files answer as they would: the account rsmb_other,
# and a group named "RINGAD\nasstaff" (winbind's name for the domain group)
# in the test's /etc/group. Checked: a share with valid users =
# @"RINGAD\nasstaff" lets the user in, one restricted to another group's
# SID does not, files belong to the mapped uid, smbcacls sets an ACE of the
# domain group's SID, which then grants the access, and shows it as
# RINGAD\nasstaff (ringsmb-ctld asked the DC over LDAP, bound as NAS$),
# rpcclient lookupsids and smbcacls get the domain user's SID named
# RINGAD\rsmb_other by ringsmb's LSA, a Kerberos login from a clock 10
# minutes off is refused with KRB_AP_ERR_SKEW in the log, and ringsmbctl
# domain status / leave work against the DC.
#
# Runs only with RINGSMB_AD_TEST=1 (and as root, with samba-ad-dc,
# samba-ad-provision and adcli installed); otherwise it exits 77 (skipped)
# at once. It takes about 15 s on an idle 2-core machine, most of it
# samba-tool domain provision (36 s on one busy with other builds).
if [ "${RINGSMB_AD_TEST:-}" != 1 ]; then
  echo "SKIP: set RINGSMB_AD_TEST=1 to provision a Samba AD DC"; exit 77
fi
for tool in samba samba-tool adcli kinit smbclient smbcacls unshare; do
  command -v "$tool" > /dev/null || [ -x "/usr/sbin/$tool" ] || { echo "SKIP: $tool not installed"; exit 77; }
done
if [ ! -d /usr/share/samba/setup/ad-schema ]; then
  echo "SKIP: samba-ad-provision not installed"; exit 77
fi
if [ "$(id -u)" != 0 ]; then echo "SKIP: needs root (network namespace)"; exit 77; fi
if [ -z "${AD_NETNS:-}" ]; then
  exec unshare --net --mount --uts --propagation private env AD_NETNS=1 PATH="$PATH:/usr/sbin" \
    bash -c 'ip link set lo up && hostname nas && exec bash "$0"' "$0"
fi
TEST_START=$(date +%s)
source "$(dirname "$0")/lib.sh"

REALM=AD.RINGSMB.TEST
DNSDOMAIN=ad.ringsmb.test
DOMAIN=RINGAD
NAS=nas.$DNSDOMAIN
DC=dc1.$DNSDOMAIN
ADMIN_PW="Adm1n-$RANDOM-Pw!"
USER_PW="Us3r-$RANDOM-Pw!"
DC_PID=""
stop_dc() {
  if [ -n "$DC_PID" ]; then
    kill "$DC_PID" 2> /dev/null || true
    wait "$DC_PID" 2> /dev/null || true
    DC_PID=""
  fi
}
trap 'stop_dc; cleanup' EXIT

# The namespace's own names: the DC and the NAS are both 127.0.0.1, the
# DC first so that the address's reverse lookup (SASL's GSSAPI
# canonicalises the LDAP server's name) gives the DC's name.
printf '127.0.0.1 %s dc1 localhost\n127.0.0.1 %s nas\n' "$DC" "$NAS" > "$T/hosts"
cat > "$T/krb5.conf" <<CONF
[libdefaults]
  default_realm = $REALM
  dns_lookup_kdc = false
  dns_lookup_realm = false
  dns_canonicalize_hostname = false
  rdns = false
[realms]
  $REALM = {
    kdc = $DC
    admin_server = $DC
  }
[domain_realm]
  .$DNSDOMAIN = $REALM
CONF
{ cat /etc/group; echo "$DOMAIN\\nasstaff:x:64990:$TEST_UNIX_USER2"; } > "$T/group"
mount --bind "$T/hosts" /etc/hosts && mount --bind "$T/krb5.conf" /etc/krb5.conf \
  && mount --bind "$T/group" /etc/group || { echo "FAIL: bind mounts"; exit 1; }

echo "== provisioning $REALM"
start=$(date +%s)
# Only the services a member server talks to: LDAP, CLDAP (adcli's
# NetLogon ping), the KDC with kpasswd, and RPC. No SMB server (ringsmbd
# has 445), no DNS (the namespace's /etc/hosts), no replication.
samba-tool domain provision --targetdir="$T/dc" --realm="$REALM" --domain="$DOMAIN" --server-role=dc \
  --dns-backend=NONE --host-name=dc1 --host-ip=127.0.0.1 --adminpass="$ADMIN_PW" \
  --option="interfaces = lo" --option="bind interfaces only = yes" \
  --option="server services = -s3fs -nbt -wrepl -drepl -dns -kcc -dnsupdate -ntp_signd -winbindd" \
  > "$T/provision.log" 2>&1 || { echo "FAIL: provision"; tail -20 "$T/provision.log"; exit 1; }
SMBCONF="$T/dc/etc/smb.conf"
# The domain's accounts, in one Python run of Samba's own library (each
# samba-tool call costs seconds of start-up): the user in nasstaff, the
# group nasadmins, and the DC's ldap/ name that samba_spnupdate (the
# dnsupdate service, off here) would add. Prints the groups' and the
# user's SIDs.
/usr/bin/python3 - "$SMBCONF" "$TEST_UNIX_USER2" "$USER_PW" "$DC" > "$T/sids" 2> "$T/accounts.log" <<'PY' \
  || { echo "FAIL: domain accounts"; cat "$T/accounts.log"; exit 1; }
import sys
import ldb
from samba.auth import system_session
from samba.param import LoadParm
from samba.samdb import SamDB
smbconf, user, password, dc = sys.argv[1:]
lp = LoadParm()
lp.load(smbconf)
db = SamDB(url=lp.samdb_url(), session_info=system_session(), lp=lp)
db.newuser(user, password)
for group in ("nasstaff", "nasadmins"):
    db.newgroup(group)
db.add_remove_group_members("nasstaff", [user], add_members_operation=True)
dc_account = db.search(expression="(sAMAccountName=DC1$)", attrs=[])[0].dn
m = ldb.Message(dc_account)
m["spn"] = ldb.MessageElement("ldap/" + dc, ldb.FLAG_MOD_ADD, "servicePrincipalName")
db.modify(m)
for account in ("nasstaff", "nasadmins", user):
    res = db.search(expression="(sAMAccountName=%s)" % account, attrs=["objectSid"])
    print(db.schema_format_value("objectSid", res[0]["objectSid"][0]).decode())
PY
echo "   provisioned in $(( $(date +%s) - start )) s"
STAFF_SID=$(sed -n 1p "$T/sids")
ADMINS_SID=$(sed -n 2p "$T/sids")
USER_SID=$(sed -n 3p "$T/sids")
DOMAIN_SID=${USER_SID%-*}
[[ "$STAFF_SID" == S-1-5-21-* ]] && pass "the domain group has a SID ($STAFF_SID)" || fail "no SID for nasstaff"

samba -s "$SMBCONF" -i -M single > "$T/dc.log" 2>&1 &
DC_PID=$!
for _ in $(seq 1 150); do
  python3 -c "import socket,sys; s=socket.socket(); s.settimeout(0.2); sys.exit(s.connect_ex(('127.0.0.1',389)))" 2>/dev/null && break
  kill -0 "$DC_PID" 2> /dev/null || { echo "FAIL: samba exited"; tail -20 "$T/dc.log"; exit 1; }
  sleep 0.2
done

write_config "log level = 2"
sed -i "s/^  tcp port = .*/  tcp port = 445/" "$T/ringsmb.conf"
PORT=445
owned_dir "$T/staff" "$TEST_UNIX_USER2"
owned_dir "$T/admins" "$TEST_UNIX_USER2"
add_share staff "$T/staff" "writeable = yes" "valid users = @\"$DOMAIN\\nasstaff\""
add_share admins "$T/admins" "writeable = yes" "valid users = @$ADMINS_SID"
add_user other 'secret-O1' "$TEST_UNIX_USER2"  # the same Unix account by NTLM

DOMAIN_CMD() { CTL --no-reload domain "$@" --domain-controller "$DC" --keytab "$T/nas.keytab"; }
echo "wrong-$ADMIN_PW" | DOMAIN_CMD join "$DNSDOMAIN" -U Administrator --password-stdin \
  --computer-name NAS --host-fqdn "$NAS" > "$T/last.out" 2>&1 && rc=0 || rc=$?
[ "$rc" = 5 ] && grep -q "credentials" "$T/last.out" && pass "a wrong password: credentials, exit 5" \
  || { fail "a wrong password (exit $rc)"; cat "$T/last.out"; }
echo "$ADMIN_PW" | CTL --no-reload domain join "$DNSDOMAIN" -U Administrator --password-stdin \
  --computer-name NAS --host-fqdn "$NAS" --domain-controller no-dc.$DNSDOMAIN --keytab "$T/nas.keytab" \
  > "$T/last.out" 2>&1 && rc=0 || rc=$?
[ "$rc" = 3 ] && grep -q "DNS" "$T/last.out" && pass "a DC that does not resolve: DNS, exit 3" \
  || { fail "a DC that does not resolve (exit $rc)"; cat "$T/last.out"; }
start=$(date +%s)
echo "$ADMIN_PW" | DOMAIN_CMD join "$DNSDOMAIN" -U Administrator --password-stdin \
  --computer-name NAS --host-fqdn "$NAS" > "$T/join.out" 2>&1 \
  && pass "ringsmbctl domain join (adcli) in $(( $(date +%s) - start )) s" || { fail "join"; cat "$T/join.out"; }
check "the keytab holds the cifs/ key" bash -c "klist -k '$T/nas.keytab' | grep -q 'cifs/$NAS@$REALM'"
check "ringsmb.conf: security = ads" grep -qx "  security = ads" "$T/ringsmb.conf"
check "ringsmb.conf: the domain's NetBIOS name" grep -qx "  workgroup = $DOMAIN" "$T/ringsmb.conf"
DOMAIN_CMD status > "$T/status.out" 2>&1 && pass "domain status: valid membership" || { fail "status"; cat "$T/status.out"; }
start_server

CC="FILE:$T/user.cc"
echo "$USER_PW" | KRB5CCNAME="$CC" kinit "$TEST_UNIX_USER2@$REALM" > "$T/kinit.log" 2>&1 \
  && pass "kinit as the domain user against the DC" || { fail "kinit"; cat "$T/kinit.log"; }
ksmb() {  # ksmb SHARE COMMANDS
  KRB5CCNAME="$CC" timeout 60 smbclient "//$NAS/$1" --use-kerberos=required -c "$2"
}
echo hello > "$T/hello.txt"
check "the domain user reaches the share of valid users = @\"$DOMAIN\\nasstaff\"" \
  ksmb staff "put $T/hello.txt f.txt; ls"
grep "Kerberos login" "$T/server.log" | tail -1 || true
check "the login came with the PAC's SIDs" \
  grep -qE "Kerberos login of $TEST_UNIX_USER2@$REALM \(service [^,]*, S-1-5-21-[0-9-]*-[0-9]+, 3 group SIDs\)" "$T/server.log"
check "its files belong to the mapped Unix account" test "$(stat -c %U "$T/staff/f.txt")" = "$TEST_UNIX_USER2"
expect_status "a share for another domain group's SID stays shut" NT_STATUS_ACCESS_DENIED ksmb admins ls
# ringsmb-ctld binds to the DC's LDAP when it starts (to name the
# domain's SIDs): with NAS$'s keys, from the keytab the join wrote.
for _ in $(seq 1 100); do grep -q "domain directory: bound to" "$T/server.log" && break; sleep 0.2; done
check "ringsmb-ctld bound to the DC's LDAP as the computer account" \
  grep -q "domain directory: bound to .* as NAS\$@$REALM (SASL GSSAPI); domain SID $DOMAIN_SID" "$T/server.log"
check "smbcacls (Kerberos) sets a DACL of the domain group alone" \
  env KRB5CCNAME="$CC" timeout 60 smbcacls "//$NAS/staff" f.txt --use-kerberos=required \
  --set "ACL:$STAFF_SID:ALLOWED/0x0/FULL"
KRB5CCNAME="$CC" timeout 60 smbcacls "//$NAS/staff" f.txt --use-kerberos=required > "$T/cacls.out" 2>&1 || true
cat "$T/cacls.out"
check "smbcacls shows the domain group by name (LSA asked the DC)" grep -qF "ACL:$DOMAIN\\nasstaff:ALLOWED/0x0/FULL" "$T/cacls.out"
check "the group's member reads the file through that ACE" ksmb staff "get f.txt $T/got"
# LSA names the SIDs the logon's PAC named (the user, its domain and the
# domain's well-known groups) and asks the DC's directory for the others
# (the group nasstaff, which the PAC gives by SID only); a SID the domain
# does not have stays unmapped.
lsa() {  # lsa COMMAND: rpcclient against ringsmbd, as the domain user
  KRB5CCNAME="$CC" timeout 60 rpcclient "$NAS" --use-kerberos=required -c "$1" 2>&1 || true
}
lsa "lookupsids $USER_SID $DOMAIN_SID $DOMAIN_SID-513 $STAFF_SID" > "$T/lookupsids.out"
cat "$T/lookupsids.out"
check "rpcclient lookupsids: the domain group is $DOMAIN\\nasstaff (from the DC)" \
  grep -qF "$STAFF_SID $DOMAIN\\nasstaff (2)" "$T/lookupsids.out"
lsa "lookupsids $DOMAIN_SID-99999" > "$T/unknown.out"
check "rpcclient lookupsids: a SID the domain lacks stays unmapped (type 8)" \
  grep -qF "$DOMAIN_SID-99999 *unknown*\\*unknown* (8)" "$T/unknown.out"
lsa "lookupsids $STAFF_SID $DOMAIN_SID-99999" > "$T/some.out"
cat "$T/some.out"
check "rpcclient lookupsids: with a known one, the unknown is left unmapped (type 8)" \
  bash -c "grep -qF '$STAFF_SID $DOMAIN\\nasstaff (2)' '$T/some.out' && grep -q '^$DOMAIN_SID-99999 .*(8)' '$T/some.out'"
# rpcclient splits its -c line as a shell would: "\\\\" is one backslash.
lsa "lookupnames $DOMAIN\\\\nasadmins nasstaff" > "$T/lookupnames.out"
cat "$T/lookupnames.out"
check "rpcclient lookupnames: $DOMAIN\\nasadmins is its SID (from the DC)" \
  grep -qF "$DOMAIN\\nasadmins $ADMINS_SID (Domain Group: 2)" "$T/lookupnames.out"
check "rpcclient lookupnames: an isolated name of the domain too" grep -qF "nasstaff $STAFF_SID (Domain Group: 2)" "$T/lookupnames.out"
grep "domain directory" "$T/server.log" || true
check "rpcclient lookupsids: the domain user is $DOMAIN\\$TEST_UNIX_USER2" \
  grep -qF "$USER_SID $DOMAIN\\$TEST_UNIX_USER2 (1)" "$T/lookupsids.out"
check "rpcclient lookupsids: the domain SID is $DOMAIN" grep -qxF "$DOMAIN_SID $DOMAIN (3)" "$T/lookupsids.out"
check "rpcclient lookupsids: RID 513 is $DOMAIN\\Domain Users" \
  grep -qF "$DOMAIN_SID-513 $DOMAIN\\Domain Users (2)" "$T/lookupsids.out"
check "smbcacls shows an ACE of the user's SID by name" bash -c "KRB5CCNAME='$CC' timeout 60 smbcacls '//$NAS/staff' f.txt \
  --use-kerberos=required --add 'ACL:$USER_SID:ALLOWED/0x0/READ' && KRB5CCNAME='$CC' timeout 60 smbcacls \
  '//$NAS/staff' f.txt --use-kerberos=required | grep -qF 'ACL:$DOMAIN\\$TEST_UNIX_USER2:ALLOWED/0x0/READ'"
if command -v faketime > /dev/null; then
  # The client's clock 10 minutes ahead of the server's: its authenticator
  # is outside the acceptor's clockskew, which compares it with the clock
  # of ringsmb-ctld (the cifs/ ticket is in the cache already, so no
  # skewed request reaches the KDC).
  expect_status "a Kerberos login 10 min off the server's clock: LOGON_FAILURE" NT_STATUS_LOGON_FAILURE \
    env KRB5CCNAME="$CC" faketime -f +10m timeout 60 smbclient "//$NAS/staff" --use-kerberos=required -c ls
  check "the log names KRB_AP_ERR_SKEW" grep -q "Kerberos login refused: AP-REQ: .*KRB_AP_ERR_SKEW.*NTP" "$T/server.log"
fi
server_alive && pass "the server still serves" || fail "the server died"

echo "$ADMIN_PW" | CTL --no-reload domain leave -U Administrator --password-stdin --computer-name NAS \
  --domain-controller "$DC" > "$T/leave.out" 2>&1 \
  && pass "ringsmbctl domain leave" || { fail "leave"; cat "$T/leave.out"; }
KRB5CCNAME="FILE:$T/nas.cc" kinit -k -t "$T/nas.keytab" "NAS\$@$REALM" > "$T/kinit-nas.log" 2>&1 && rc=0 || rc=$?
[ "$rc" != 0 ] && grep -q "not found in Kerberos database" "$T/kinit-nas.log" \
  && pass "the DC no longer has the computer account" || { fail "NAS\$ still logs on"; cat "$T/kinit-nas.log"; }
echo "== took $(( $(date +%s) - TEST_START )) s"
finish
