#!/usr/bin/env bash
# ringsmbctl import samba / import ksmbd: a Samba configuration and passdb
# made with Samba's own tools (smbpasswd -a into a tdbsam under the test's
# directory, read back through pdbedit -L -w) and a ksmbd configuration
# with a ksmbdpwd.db made by ksmbd.adduser are imported; every imported
# user logs in to ringsmbd through smbclient with the password they had;
# what cannot be imported is reported with file:line; a dry run changes
# nothing.
source "$(dirname "$0")/lib.sh"

# Unix accounts the imported users map to (as test_confinement does).
for u in rsmb_imp1 rsmb_imp2 rsmb_imp3; do id "$u" >/dev/null 2>&1 || useradd -M -s /usr/sbin/nologin "$u"; done

# --- Samba ----------------------------------------------------------------
S=$T/samba
mkdir -p "$S"/{private,lock,state,cache,pid} "$T/photos" "$T/docs"
owned_dir "$T/photos" rsmb_imp1  # the one user who may write there
owned_dir "$T/docs" rsmb_imp2
cat > "$S/smb.conf" <<CONF
[global]
   workgroup = OLDGRP
   netbios name = OLDNAS
   server string = the old Samba box
   passdb backend = tdbsam
   private dir = $S/private
   lock directory = $S/lock
   state directory = $S/state
   cache directory = $S/cache
   pid directory = $S/pid
   log level = 1
   read only = no

[homes]
   browseable = no

[photos]
   path = $T/photos
   comment = Holiday photos
   valid users = rsmb_imp1
   vfs objects = catia fruit streams_xattr
   shadow:format = daily-%Y%m%d-%H%M
   fruit:time machine = yes
   inherit acls = yes
   wide links = no

[docs]
   path = $T/docs
   read only = yes
   guest ok = no
   follow symlinks = no

[scratch]
   path = /srv/scratch/%m

[printers]
   path = /var/spool/samba
   printable = yes
CONF
line_of() { grep -n -- "$1" "$S/smb.conf" | head -1 | cut -d: -f1; }
samba_user() {  # samba_user NAME PASSWORD: smbpasswd -a, as an admin would
  printf '%s\n%s\n' "$2" "$2" | smbpasswd -c "$S/smb.conf" -a -s "$1" > /dev/null
}
samba_user rsmb_imp1 'Old-Pass-1'
samba_user rsmb_imp2 'Old-Pass-2'
samba_user rsmb_imp3 'Old-Pass-3'
smbpasswd -c "$S/smb.conf" -d rsmb_imp3 > /dev/null
check "Samba's pdbedit lists the three users" bash -c "[ \$(pdbedit -s '$S/smb.conf' -L -w | wc -l) -eq 3 ]"

write_config
cp "$T/ringsmb.conf" "$T/ringsmb.conf.before"
ctl() { "$RINGSMBCTL" --config "$T/ringsmb.conf" --no-reload "$@"; }
ctl import samba "$S/smb.conf" > "$T/dry.txt" 2>&1 || { cat "$T/dry.txt"; fail "dry run"; }
report() { check "$1" grep -qF -- "$2" "$T/${3:-dry.txt}"; }
report "dry run: share [photos] is imported" "  [photos]  ($S/smb.conf:$(line_of '^\[photos\]'))"
report "dry run: shadow:format (a strftime format, not a substitution) is carried" "      shadow:format = daily-%Y%m%d-%H%M"
report "dry run: unknown key reported with file:line" \
  "$S/smb.conf:$(line_of 'inherit acls'): [photos] 'inherit acls = yes': ringsmb has no such key"
report "dry run: vfs objects naming fruit is carried (Apple's extensions)" "      vfs objects = catia fruit streams_xattr"
report "dry run: ... with its fruit: keys" "      fruit:time machine = yes"
report "dry run: wide links = no (what ringsmb does) is carried" "      wide links = no"
report "dry run: follow symlinks = no is refused with its line" \
  "$S/smb.conf:$(line_of 'follow symlinks'): [docs] 'follow symlinks = no': follow symlinks = no is not supported"
report "dry run: a global key ringsmb lacks is reported" "$S/smb.conf:$(line_of 'passdb backend'): 'passdb backend = tdbsam': ringsmb has no such key"
report "dry run: Samba's state directory is not taken" "$S/smb.conf:$(line_of 'state directory'): 'state directory = $S/state': about the old server itself"
report "dry run: [homes] is imported" "  [homes]  ($S/smb.conf:$(line_of '^\[homes\]'))"
report "dry run: a printer share is reported" "$S/smb.conf:$(line_of '^\[printers\]'): [printers]: printing is not supported"
report "dry run: a %-substitution ringsmb does not expand is reported" \
  "$S/smb.conf:$(line_of 'scratch/%m'): [scratch] 'path = /srv/scratch/%m': path: '%m' is not expanded"
report "dry run: the disabled user is reported" "user rsmb_imp3: disabled in the old server"
report "dry run: the [global] share default 'read only = no' reaches [photos]" "      read only = no"
report "dry run: says nothing was changed" "Dry run: nothing was changed. Run again with --apply to import 3 shares, 3 global settings and 2 users."
check "dry run: ringsmb.conf unchanged" cmp -s "$T/ringsmb.conf" "$T/ringsmb.conf.before"
check "dry run: no users db written" test ! -e "$T/users.db"

check "import samba --apply" bash -c "'$RINGSMBCTL' --config '$T/ringsmb.conf' --no-reload import samba '$S/smb.conf' --apply > '$T/apply.txt' 2>&1"
report "--apply: says what it imported" "Imported 3 shares, 3 global settings into $T/ringsmb.conf and 2 users into $T/users.db." apply.txt
check "the result is a valid configuration" ctl config check
check "workgroup came along" grep -qE '^\s*workgroup = OLDGRP' "$T/ringsmb.conf"
check "[docs] stays read-only ([docs] overrides the [global] default)" bash -c \
  "sed -n '/^\[docs\]/,/^\[/p' '$T/ringsmb.conf' | grep -qE 'read only = yes'"
check "ringsmbctl user list shows the imported users" bash -c "ctl_out=\$('$RINGSMBCTL' --config '$T/ringsmb.conf' user list) && grep -q rsmb_imp1 <<<\"\$ctl_out\" && grep -q rsmb_imp2 <<<\"\$ctl_out\" && ! grep -q rsmb_imp3 <<<\"\$ctl_out\""

start_server
check "rsmb_imp1 logs in to [photos] with the old Samba password" smb "rsmb_imp1%Old-Pass-1" photos "ls"
echo hi > "$T/hi.txt"
check "... and writes there (read only = no came from [global])" smb "rsmb_imp1%Old-Pass-1" photos "put $T/hi.txt hi.txt"
check "rsmb_imp2 logs in to [docs] with the old Samba password" smb "rsmb_imp2%Old-Pass-2" docs "ls"
expect_status "valid users came along: rsmb_imp2 may not use [photos]" NT_STATUS_ACCESS_DENIED smb "rsmb_imp2%Old-Pass-2" photos "ls"
expect_status "a wrong password still fails" NT_STATUS_LOGON_FAILURE smb "rsmb_imp1%not-it" photos "ls"
expect_status "the disabled Samba user was not imported" NT_STATUS_LOGON_FAILURE smb "rsmb_imp3%Old-Pass-3" docs "ls"
stop_server

ctl import samba "$S/smb.conf" > "$T/again.txt" 2>&1
report "a second import keeps what exists: users" "user rsmb_imp1: already a ringsmb user; kept" again.txt
report "... and shares" "share [photos]: ringsmb already has a share of that name; kept" again.txt

# A saved pdbedit output works too, and a user without a Unix account is reported.
{
  printf 'nosuchunixuser:1234:%s:%s:[U          ]:LCT-00000000:\n' XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX \
    00112233445566778899AABBCCDDEEFF
  echo 'not a pdbedit line'
  printf 'rsmb_imp3:1:%s:%s:[U          ]:LCT-00000000:\n' XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX 0011223344556677ZZ
} > "$T/pdbedit.txt"
ctl import samba "$S/smb.conf" --no-reload --pdbedit-output "$T/pdbedit.txt" > "$T/saved.txt" 2>&1 || true
report "--pdbedit-output: a user without a Unix account is reported" \
  "$T/pdbedit.txt:1: user nosuchunixuser: no Unix user 'nosuchunixuser' on this machine" saved.txt
report "... a line that is not pdbedit's is reported" "$T/pdbedit.txt:2: not a pdbedit -w line" saved.txt
report "... and a malformed hash" "$T/pdbedit.txt:3: user rsmb_imp3: no NT hash" saved.txt
# Settings docs/windows-clients.md says keep Windows clients out are
# imported with a warning naming their line.
cat > "$S/guest.conf" <<CONF
[global]
   workgroup = OLDGRP
   map to guest = bad user

[public]
   path = $T/docs
   guest ok = yes
CONF
ctl import samba "$S/guest.conf" --no-users > "$T/guest.txt" 2>&1 || true
report "import warns on 'map to guest = bad user', with its line" \
  "warning: $S/guest.conf:3: 'map to guest = bad user': imported, but Windows 11 24H2" guest.txt
report "... and on a guest share" "warning: $S/guest.conf:7: [public] 'guest ok = yes': imported, but a guest share" guest.txt
check "... and not on the first smb.conf, which has neither" bash -c "! grep -q 'warning:' '$T/dry.txt'"
check "a missing smb.conf is a clear error" bash -c \
  "! '$RINGSMBCTL' --config '$T/ringsmb.conf' import samba '$T/nonexistent.conf' 2>&1 | grep -q 'nonexistent.conf: cannot open: No such file'; [ \${PIPESTATUS[0]} -ne 0 ]"

# --- ksmbd ------------------------------------------------------------------
# ksmbd.adduser from Debian's ksmbd-tools, unpacked (not installed: the
# package conflicts with samba) and cached.
CACHE=${RINGSMB_CACHE_DIR:-/var/cache/ringsmb-tests}
KT=$CACHE/ksmbd-tools
if [ ! -x "$KT/usr/libexec/ksmbd.tools" ]; then
  mkdir -p "$T/kt" "$CACHE"
  (cd "$T/kt" && apt-get download -o APT::Sandbox::User=root ksmbd-tools > /dev/null 2>&1) && rm -rf "$KT" && dpkg-deb -x "$T"/kt/ksmbd-tools_*.deb "$KT"
fi
K=$T/ksmbd
mkdir -p "$K" "$T/kdata"
owned_dir "$T/kdata" rsmb_imp2
cat > "$K/ksmbd.conf" <<CONF
[global]
	netbios name = KSMBDBOX
	workgroup = KGROUP
[kdata]
	path = $T/kdata
	read only = no
	crossmnt = yes
CONF
if [ -x "$KT/usr/libexec/ksmbd.tools" ]; then
  kadduser() { "$KT/usr/sbin/ksmbd.adduser" -a "$1" -p "$2" -i "$K/ksmbdpwd.db" -c "$K/ksmbd.conf" > /dev/null 2>&1; }
  check "ksmbd.adduser makes a ksmbdpwd.db" kadduser rsmb_imp2 'Ksmbd-Pass-2'
  rm -f "$T/users.db"
  write_config
  check "import ksmbd --apply" bash -c "'$RINGSMBCTL' --config '$T/ringsmb.conf' --no-reload import ksmbd '$K/ksmbd.conf' \
    --pwddb '$K/ksmbdpwd.db' --apply > '$T/kapply.txt' 2>&1"
  report "ksmbd: unknown key reported with file:line" "$K/ksmbd.conf:$(grep -n crossmnt "$K/ksmbd.conf" | cut -d: -f1): [kdata] 'crossmnt = yes': ringsmb has no such key" kapply.txt
  printf 'rsmb_imp1:notbase64\nrsmb_imp3\n' > "$T/bad.db"
  "$RINGSMBCTL" --config "$T/ringsmb.conf" import ksmbd "$K/ksmbd.conf" --pwddb "$T/bad.db" > "$T/kbad.txt" 2>&1 || true
  report "ksmbd: a hash that is not base64 is reported" "$T/bad.db:1: user rsmb_imp1: the hash is not a base64 NT hash" kbad.txt
  report "ksmbd: a line without a hash is reported" "$T/bad.db:2: not a NAME:HASH line" kbad.txt
  report "ksmbd: one share and one user imported" "Imported 1 share, 2 global settings into $T/ringsmb.conf and 1 user" kapply.txt
  start_server
  check "rsmb_imp2 logs in to [kdata] with the old ksmbd password" smb "rsmb_imp2%Ksmbd-Pass-2" kdata "put $T/hi.txt hi.txt"
  stop_server
else
  fail "could not get ksmbd.adduser (apt-get download ksmbd-tools)"
fi
finish
