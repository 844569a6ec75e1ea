#!/usr/bin/env bash
# Quotas (docs/configuration.md, "Quotas"), in a QEMU guest running
# Debian's 6.12 kernel (tests/vm/run): the host's kernel may lack quota
# support, the guest's has it. The host makes an ext4 image with the quota
# feature; the guest (guest/quota.sh) mounts it with usrquota, gives
# rsmb_owner a quota with setquota, runs ringsmbd and drives Samba's
# smbcquotas and smbclient against it over its loopback: an ordinary
# user's free space and own entry, what they may not read or set, an
# "admin users" account setting a limit (repquota shows it) and listing.
source "$(dirname "$0")/../integration/lib.sh"
VM="$RINGSMB_SOURCE_DIR/tests/vm"
started=$(date +%s)
for tool in mkfs.ext4 setquota repquota smbcquotas smbclient; do
  command -v "$tool" > /dev/null || { echo "SKIP: needs $tool (quota, e2fsprogs, smbclient)"; exit 0; }
done
PASS_A='secret-A1' PASS_B='secret-B2'
truncate -s 32M "$T/quota.img"
mkfs.ext4 -q -O quota -E quotatype=usrquota:grpquota "$T/quota.img"
printf '[global]\n  users db = %s/users.db\n  state directory = %s\n' "$T" "$T" > "$T/host.conf"
echo "$PASS_A" | "$RINGSMBCTL" --config "$T/host.conf" user add alice --password-stdin --unix-user "$TEST_UNIX_USER" > /dev/null
echo "$PASS_B" | "$RINGSMBCTL" --config "$T/host.conf" user add bob --password-stdin --unix-user "$TEST_UNIX_USER2" > /dev/null
cat > "$T/ringsmb.conf" <<CONF
[global]
  users db = /var/lib/ringsmb/users.db
  state directory = /var/lib/ringsmb
  interfaces = 127.0.0.1
  bind interfaces only = yes
  admin users = bob

[q]
  path = /srv/q/share
  writeable = yes

[plain]
  path = /srv/plain
  writeable = yes
CONF
: > "$T/smb.conf"
if "$VM/run" --kernel 6.12 --mem 1024 --timeout "${RINGSMB_VM_TIMEOUT:-600}" \
     --bin "$RINGSMB_BUILD_DIR/daemon/ringsmbd" --bin "$RINGSMB_BUILD_DIR/daemon/ringsmb-ctld" \
     --bin "$(command -v setquota)" --bin "$(command -v repquota)" \
     --bin "$(command -v smbcquotas)" --bin "$(command -v smbclient)" \
     --file "$VM/guest/lib.sh" --file "$VM/guest/quota.sh" --file "$T/quota.img" --file "$T/ringsmb.conf" \
     --file "$T/users.db=/var/lib/ringsmb/users.db" --file "$T/smb.conf=/etc/samba/smb.conf" \
     --file /etc/passwd=/etc/passwd --file /etc/group=/etc/group \
     --env "BIN=$RINGSMB_BUILD_DIR" --env "PASS_A=$PASS_A" --env "PASS_B=$PASS_B" \
     -- 'sh /job/quota.sh' > "$T/guest.log" 2>&1; then
  pass "the guest's quota checks"
else
  fail "the guest's quota checks (exit $?)"
  grep -vE '^(PASS|FAIL)' "$T/guest.log" | tail -80
fi
grep -E "^(PASS|FAIL)" "$T/guest.log" || tail -40 "$T/guest.log"
echo "vm test took $(( $(date +%s) - started ))s"
finish
