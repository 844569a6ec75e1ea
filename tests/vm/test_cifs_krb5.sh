#!/usr/bin/env bash
# The Linux kernel's cifs client with sec=krb5 (Debian 12's kernel in a
# QEMU guest, tests/vm/run) against ringsmbd on the host, which accepts
# Kerberos with a keytab from the test's MIT KDC (tests/integration/kdc.sh,
# on the host too). The kernel asks user space for the AP-REQ: request-key
# (keyutils) runs cifs.upcall (cifs-utils) by the guest's
# /etc/request-key.conf, which reads the user's credential cache and
# krb5.conf. The cache is made on the host (kinit, then kvno for the
# cifs/ ticket), so the guest asks no KDC; its krb5.conf still names the
# host's KDC through a forwarded port, for a cifs.upcall that would.
# Checked: the mount, a file written and read back after a remount, the
# session being a Kerberos one, and on the host the file owned by the
# Unix account the principal maps to.
source "$(dirname "$0")/../integration/lib.sh"
source "$(dirname "$0")/../integration/kdc.sh"
VM="$RINGSMB_SOURCE_DIR/tests/vm"
started=$(date +%s)
UPCALL=/usr/sbin/cifs.upcall REQUEST_KEY=/sbin/request-key
for tool in krb5kdc kdb5_util kadmin.local kinit kvno "$UPCALL" "$REQUEST_KEY"; do
  command -v "$tool" > /dev/null || { echo "SKIP: needs $tool (krb5-kdc, krb5-admin-server, krb5-user, cifs-utils, keyutils)"; exit 0; }
done
trap 'stop_kdc; cleanup' EXIT

start_kdc
# The guest's clock (QEMU's RTC, whole seconds, then a slow TCG guest) is
# not the host's to the second: krb5's default 300 s skew, not kdc.sh's 2 s.
sed -i 's/^  clockskew = .*/  clockskew = 300/' "$KDC_DIR/krb5.conf"
OWNER_PW="owner-$RANDOM"
kdc_user "$TEST_UNIX_USER" "$OWNER_PW"
KEYTAB="$T/ringsmb.keytab"
kdc_service "cifs/$KDC_HOST" "$KEYTAB"
kdc_admin "modprinc +no_auth_data_required cifs/$KDC_HOST"
write_config "realm = $KDC_REALM" "kerberos method = dedicated keytab" "dedicated keytab file = FILE:$KEYTAB"
start_server

kdc_kinit "$TEST_UNIX_USER" "$OWNER_PW" "FILE:$T/krb5cc_0"
KRB5CCNAME="FILE:$T/krb5cc_0" kvno "cifs/$KDC_HOST" > "$T/kvno.log" 2>&1 || { fail "kvno cifs/$KDC_HOST"; cat "$T/kvno.log"; }
chmod 600 "$T/krb5cc_0"
# The guest's view of the realm: the KDC at the forwarded port (TCP only:
# QEMU forwards no UDP), the server's name at the host's forwarded address.
sed -e "s/kdc = 127.0.0.1:$KDC_PORT/kdc = 10.0.2.100:88/" \
  "$KDC_DIR/krb5.conf" > "$T/guest-krb5.conf"
printf '127.0.0.1 localhost\n10.0.2.100 %s\n' "$KDC_HOST" > "$T/guest-hosts"
echo "create cifs.spnego * * $UPCALL %k" > "$T/request-key.conf"
if "$VM/run" --timeout "${RINGSMB_VM_TIMEOUT:-600}" --guestfwd "445=$PORT" --guestfwd "88=$KDC_PORT" \
     --bin "$UPCALL" --bin "$REQUEST_KEY" \
     --file "$T/request-key.conf=/etc/request-key.conf" --file "$T/guest-krb5.conf=/etc/krb5.conf" \
     --file "$T/guest-hosts=/etc/hosts" --file /etc/passwd=/etc/passwd --file /etc/group=/etc/group \
     --file "$T/krb5cc_0" --file "$VM/guest/lib.sh" --file "$VM/guest/cifs_krb5.sh" \
     --env "SERVER=$KDC_HOST" --env SERVER_IP=10.0.2.100 --env "KUSER=$TEST_UNIX_USER" --env SHARE=share \
     -- 'sh /job/cifs_krb5.sh' > "$T/guest.log" 2>&1; then
  pass "the guest's sec=krb5 checks"
else
  fail "the guest's sec=krb5 checks (exit $?)"
  grep -vE '^(PASS|FAIL)' "$T/guest.log" | tail -60
fi
grep -E "^(PASS|FAIL|    )" "$T/guest.log" || tail -40 "$T/guest.log"
check "the server logged a Kerberos login of the user" \
  grep -q "Kerberos login of $TEST_UNIX_USER@$KDC_REALM (service cifs/$KDC_HOST@$KDC_REALM)" "$T/server.log"
check "the guest's file is on the host" test "$(cat "$T/share/krb5.txt" 2> /dev/null)" = "written with sec=krb5"
check "it belongs to the Unix account the principal maps to" test "$(stat -c %U "$T/share/krb5.txt")" = "$TEST_UNIX_USER"
echo "vm test took $(( $(date +%s) - started ))s"
finish
