#!/usr/bin/env bash
# ringsmbctl domain join / leave / status without a domain controller: a
# stand-in adcli (--adcli) records its arguments and answers as adcli does
# (--show-details on success, adcli's own error messages on failure). What
# is checked is ringsmbctl's side: the adcli command line, the keys it
# writes to ringsmb.conf, and the cause and exit code it names for each kind
# of failure. test_ad_dc.sh joins a real Samba AD DC with the real adcli.
source "$(dirname "$0")/lib.sh"

FAKE="$T/adcli"
cat > "$FAKE" <<'SH'
#!/usr/bin/env bash
# ADCLI_MODE picks the answer; the arguments and stdin are kept for the test.
printf '%s\n' "$@" > "$ADCLI_LOG"
[ -t 0 ] || cat > "$ADCLI_LOG.stdin"
case "${ADCLI_MODE:-ok}" in
  ok)
    if [ "$1" = join ]; then
      printf '[domain]\ndomain-name = ad.example.test\ndomain-short = EXAMPLE\n'
      printf '[computer]\nhost-fqdn = nas.ad.example.test\ncomputer-name = NAS\n[keytab]\nkvno = 2\n'
    fi
    exit 0 ;;
  skew) echo "adcli: couldn't connect to ad.example.test domain: Couldn't authenticate as: Administrator@AD.EXAMPLE.TEST: Clock skew too great" >&2; exit 6 ;;
  password) echo "adcli: couldn't connect to ad.example.test domain: Couldn't authenticate as: Administrator@AD.EXAMPLE.TEST: Preauthentication failed" >&2; exit 6 ;;
  dns) echo "adcli: couldn't connect to ad.example.test domain: No LDAP SRV records for domain: _ldap._tcp.ad.example.test: Name or service not known" >&2; exit 6 ;;
  rights) echo "adcli: joining domain ad.example.test failed: Insufficient permissions to modify computer account: CN=NAS" >&2; exit 5 ;;
esac
SH
chmod +x "$FAKE"
export ADCLI_LOG="$T/adcli.args"

write_config
add_share data "$T/share"
DOMAIN() { CTL --no-reload domain "$@" --adcli "$FAKE"; }

echo 'S3cret pw' | DOMAIN join ad.example.test -U joiner --password-stdin --computer-name NAS \
  --host-fqdn nas.ad.example.test --keytab "$T/nas.keytab" > "$T/join.out" 2>&1 \
  && pass "join succeeds" || { fail "join"; cat "$T/join.out"; }
check "join says what it did" grep -q "Joined AD.EXAMPLE.TEST as NAS (keytab $T/nas.keytab)" "$T/join.out"
for arg in join --service-name=cifs --service-name=host --show-details --domain=AD.EXAMPLE.TEST \
  --login-user=joiner --stdin-password --computer-name=NAS --host-fqdn=nas.ad.example.test \
  "--host-keytab=$T/nas.keytab"; do
  grep -qxF -- "$arg" "$ADCLI_LOG" || missing="${missing:-} $arg"
done
[ -z "${missing:-}" ] && pass "adcli join gets the realm, account, names and keytab" || fail "adcli lacks:$missing"
check "the password reaches adcli on stdin" grep -qx 'S3cret pw' "$ADCLI_LOG.stdin"
lacking=""
for kv in "security = ads" "realm = AD.EXAMPLE.TEST" "workgroup = EXAMPLE" \
  "kerberos method = dedicated keytab" "dedicated keytab file = FILE:$T/nas.keytab"; do
  grep -qxF "  $kv" "$T/ringsmb.conf" || lacking="$lacking '$kv'"
done
[ -z "$lacking" ] && pass "ringsmb.conf: security, realm, workgroup, keytab" || fail "ringsmb.conf lacks$lacking"
check "the written configuration passes config check" CTL config check

DOMAIN status > "$T/status.out" 2>&1 && pass "status exits 0 when testjoin succeeds" || fail "status"
check "status shows the realm and keytab" grep -q "keytab: FILE:$T/nas.keytab" "$T/status.out"
check "status runs adcli testjoin with the configured keytab" grep -qxF -- "--host-keytab=$T/nas.keytab" "$ADCLI_LOG"

export ADCLI_MODE
ADCLI_MODE=skew expect_exit "clock skew: named, exit 1" 1 "clock skew" DOMAIN join ad.example.test --password-stdin
check "adcli's own message is shown" grep -q "Clock skew too great" "$T/last.out"
ADCLI_MODE=password expect_exit "a wrong password: credentials, exit 5" 5 "credentials" \
  DOMAIN join ad.example.test --password-stdin
ADCLI_MODE=rights expect_exit "no right to join: credentials, exit 5" 5 "may not create or change" \
  DOMAIN join ad.example.test --password-stdin
ADCLI_MODE=dns expect_exit "no DC in DNS: DNS, exit 3" 3 "DNS: no domain controller" \
  DOMAIN join ad.example.test --password-stdin
ADCLI_MODE=dns expect_exit "status of a broken membership: exit 3" 3 "DNS" DOMAIN status
check "a failed join left the configuration alone" grep -qxF "  realm = AD.EXAMPLE.TEST" "$T/ringsmb.conf"
expect_exit "no adcli: says how to install it" 1 "apt-get install adcli" \
  CTL --no-reload domain join ad.example.test --adcli "$T/no-such-adcli"

rm -f "$ADCLI_LOG"
chmod 644 "$T/ringsmb.conf"
expect_exit "a configuration it cannot write: refused before adcli runs, exit 5" 5 "cannot write: Permission denied (run as root)" \
  runuser -u "$TEST_UNIX_USER2" -- "$RINGSMBCTL" --config "$T/ringsmb.conf" --no-reload domain join \
  ad.example.test --adcli "$FAKE"
check "adcli did not run" test ! -e "$ADCLI_LOG"

ADCLI_MODE=ok
CTL --no-reload domain leave -U joiner --password-stdin --computer-name NAS --adcli "$FAKE" < /dev/null > "$T/leave.out" 2>&1 && pass "leave" || { fail "leave"; cat "$T/leave.out"; }
check "leave deletes the computer account of the configured realm" grep -qxF -- "--domain=AD.EXAMPLE.TEST" "$ADCLI_LOG"
check "leave names the computer account" grep -qxF -- "NAS" "$ADCLI_LOG"
check "leave runs delete-computer" grep -qx "delete-computer" "$ADCLI_LOG"
check "leave sets security = user" grep -qxF "  security = user" "$T/ringsmb.conf"
if grep -qE "^  (realm|kerberos method|dedicated keytab file) =" "$T/ringsmb.conf"; then
  fail "leave kept the realm or keytab"; cat "$T/ringsmb.conf"
else
  pass "leave removes realm and keytab"
fi
finish
