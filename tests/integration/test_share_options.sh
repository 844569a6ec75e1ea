#!/usr/bin/env bash
# Share and global keys from docs/configuration.md, end to end: ringsmbd
# started with --config spawns ringsmb-ctld, which decides tree connects
# (read list, write list, invalid users, valid users, hosts allow / deny,
# force user / group) and hands the per-share options (masks, veto files,
# hide dot files) to ringsmbd. Real smbclient throughout.
source "$(dirname "$0")/lib.sh"

# Unix users and groups (as test_confinement.sh does): rsmb_u1 is in the
# group rsmb_grp; rsmb_force owns what [force] creates.
getent group rsmb_grp >/dev/null || groupadd rsmb_grp
getent group rsmb_fgrp >/dev/null || groupadd rsmb_fgrp
for u in rsmb_u1 rsmb_u2 rsmb_force; do id "$u" >/dev/null 2>&1 || useradd -M -s /usr/sbin/nologin "$u"; done
usermod -aG rsmb_grp rsmb_u1

write_config "smb2 max read = 1M" "smb2 max write = 2M" "smb2 max trans = 512k" "max open files = 100"
# Each share belongs to the user who writes to it, as on a NAS: u2 to the
# write list share, rsmb_force to [force], u1 to the rest; [rl], which both
# write to, to their team group (rsmb_team, setgid).
owned_dir "$T/share" rsmb_u1
for d in inv valid deny allow allow2 mask dot nodot veto mac dosattr; do owned_dir "$T/$d" rsmb_u1; done
owned_dir "$T/wl" rsmb_u2
owned_dir "$T/force" rsmb_force
getent group rsmb_team >/dev/null || groupadd rsmb_team
for u in rsmb_u1 rsmb_u2; do usermod -aG rsmb_team "$u"; done
owned_dir "$T/rl" rsmb_u2 && chgrp rsmb_team "$T/rl" && chmod 2775 "$T/rl"
add_share rl "$T/rl" "writeable = yes" "read list = @rsmb_grp"
add_share wl "$T/wl" "read only = yes" "write list = u2"
add_share inv "$T/inv" "writeable = yes" "invalid users = u2"
add_share valid "$T/valid" "writeable = yes" "valid users = @rsmb_grp"
add_share deny "$T/deny" "hosts deny = 127.0.0.1"
add_share allow "$T/allow" "hosts allow = 127.0.0.1" "hosts deny = ALL"
add_share allow2 "$T/allow2" "hosts allow = 10.0.0.0/8" "hosts deny = ALL"
add_share mask "$T/mask" "writeable = yes" "create mask = 0600" "directory mask = 0700"
add_share force "$T/force" "writeable = yes" "force user = rsmb_force" "force group = rsmb_fgrp"
add_share dot "$T/dot"
add_share nodot "$T/nodot" "hide dot files = no"
add_share veto "$T/veto" "writeable = yes" "veto files = /*.tmp/Secret/"
add_share mac "$T/mac" "writeable = yes" "vfs objects = catia fruit streams_xattr" "veto files = /*.tmp/"
add_share dosattr "$T/dosattr" "writeable = yes" "store dos attributes = yes"
add_user u1 'pw-one' rsmb_u1
add_user u2 'pw-two' rsmb_u2
echo data > "$T/data"
for d in dot nodot; do echo x > "$T/$d/.hidden"; echo x > "$T/$d/shown"; done
echo x > "$T/veto/a.tmp"; mkdir "$T/veto/secret"; echo x > "$T/veto/secret/f"; echo x > "$T/veto/ok.txt"
echo x > "$T/mac/._old.txt"; echo x > "$T/mac/b.tmp"; echo x > "$T/mac/doc.txt"
chown -R rsmb_u1: "$T/veto" "$T/dot" "$T/nodot" "$T/mac"
start_server
U1=u1%pw-one
U2=u2%pw-two

# read list / write list
expect_status "read list: u1 (in @rsmb_grp) cannot write a writable share" NT_STATUS_ACCESS_DENIED \
  smb "$U1" rl "put $T/data f1"
check "read list: u2 (not listed) writes" smb "$U2" rl "put $T/data f2"
check "read list: u1 still reads" smb "$U1" rl "get f2 $T/got_rl"
expect_status "read-only share: u1 cannot write" NT_STATUS_ACCESS_DENIED smb "$U1" wl "put $T/data f1"
check "write list: u2 writes a read-only share" smb "$U2" wl "put $T/data f2"
check "the file is there" test -f "$T/wl/f2"

# invalid users / valid users (Samba answers both with ACCESS_DENIED at tree connect)
expect_status "invalid users: u2 refused at tree connect" NT_STATUS_ACCESS_DENIED smb "$U2" inv "ls"
check "invalid users: u1 connects" smb "$U1" inv "ls"
check "valid users = @rsmb_grp: u1 connects" smb "$U1" valid "ls"
expect_status "valid users = @rsmb_grp: u2 refused" NT_STATUS_ACCESS_DENIED smb "$U2" valid "ls"

# hosts allow / hosts deny, decided from 127.0.0.1
expect_status "hosts deny = 127.0.0.1: refused" NT_STATUS_ACCESS_DENIED smb "$U1" deny "ls"
check "hosts allow = 127.0.0.1 wins over hosts deny = ALL" smb "$U1" allow "ls"
expect_status "hosts allow = 10.0.0.0/8, hosts deny = ALL: 127.0.0.1 refused" NT_STATUS_ACCESS_DENIED \
  smb "$U1" allow2 "ls"

# create mask / directory mask
check "put and mkdir on [mask]" smb "$U1" mask "put $T/data m.txt; mkdir mdir"
check "create mask 0600 gives mode 600" test "$(stat -c %a "$T/mask/m.txt")" = 600
check "directory mask 0700 gives mode 700" test "$(stat -c %a "$T/mask/mdir")" = 700
check "default create mask 0744 gives 644 on [share]" bash -c \
  "smbclient //127.0.0.1/share -p $PORT -U $U1 -c 'put $T/data d.txt' >/dev/null && test \$(stat -c %a $T/share/d.txt) = 644"

# force user / force group
check "put on [force]" smb "$U1" force "put $T/data forced.txt; mkdir fdir"
check "force user: the file belongs to rsmb_force" test "$(stat -c %U "$T/force/forced.txt")" = rsmb_force
check "force group: its group is rsmb_fgrp" test "$(stat -c %G "$T/force/forced.txt")" = rsmb_fgrp
check "force user: so does the directory" test "$(stat -c %U:%G "$T/force/fdir")" = rsmb_force:rsmb_fgrp
check "without force user the file belongs to rsmb_u1" bash -c \
  "smbclient //127.0.0.1/share -p $PORT -U $U1 -c 'put $T/data u1.txt' >/dev/null && test \$(stat -c %U $T/share/u1.txt) = rsmb_u1"

# hide dot files
smb "$U1" dot "allinfo .hidden" > "$T/allinfo_dot" 2>&1 || true
check "hide dot files (default yes): .hidden has the HIDDEN attribute" grep -Eq "^attributes: [A-Z]*H" "$T/allinfo_dot"
smb "$U1" dot "allinfo shown" > "$T/allinfo_shown" 2>&1 || true
check "hide dot files: other names are not hidden" bash -c "grep -q '^attributes:' $T/allinfo_shown && ! grep -Eq '^attributes: [A-Z]*H' $T/allinfo_shown"
smb "$U1" nodot "allinfo .hidden" > "$T/allinfo_nodot" 2>&1 || true
check "hide dot files = no: .hidden is not hidden" bash -c "grep -q '^attributes:' $T/allinfo_nodot && ! grep -Eq '^attributes: [A-Z]*H' $T/allinfo_nodot"
smb "$U1" dot "ls" > "$T/ls_dot" 2>&1 || true
check "ls shows .hidden with H" grep -Eq '^ +\.hidden +[A-Z]*H' "$T/ls_dot"

# veto files
smb "$U1" veto "ls" > "$T/ls_veto" 2>&1 || true
check "veto: ok.txt is listed" grep -q "ok.txt" "$T/ls_veto"
check "veto: a.tmp and secret are not listed" bash -c "! grep -Eiq 'a\\.tmp|secret' $T/ls_veto"
expect_status "veto: get a.tmp fails" NT_STATUS_OBJECT_NAME_NOT_FOUND smb "$U1" veto "get a.tmp $T/x"
expect_status "veto: case-insensitive (allinfo SECRET)" NT_STATUS_OBJECT_NAME_NOT_FOUND smb "$U1" veto "allinfo SECRET"
expect_status "veto: a listing asking for it finds nothing" NT_STATUS_NO_SUCH_FILE smb "$U1" veto "ls SECRET"
# fruit:veto_appledouble (default yes on a fruit share): ._* joins the share's veto files
smb "$U1" mac "ls" > "$T/ls_mac" 2>&1 || true
check "fruit: doc.txt is listed" grep -q "doc.txt" "$T/ls_mac"
check "fruit: ._old.txt (AppleDouble) and b.tmp (veto files) are not listed" bash -c "! grep -Eq '\._old|b\.tmp' $T/ls_mac"
expect_status "fruit: an AppleDouble file cannot be made" NT_STATUS_OBJECT_NAME_NOT_FOUND smb "$U1" mac "put $T/mac/doc.txt ._new.txt"
check "fruit: ... and none was" test ! -e "$T/mac/._new.txt"
expect_status "veto: nothing inside a vetoed directory" NT_STATUS_OBJECT_PATH_NOT_FOUND smb "$U1" veto "get secret\\f $T/x"
expect_status "veto: a vetoed name cannot be created" NT_STATUS_OBJECT_NAME_NOT_FOUND smb "$U1" veto "put $T/data new.tmp"
check "veto: new.tmp was not created" test ! -e "$T/veto/new.tmp"
expect_status "veto: no renaming to a vetoed name" NT_STATUS_OBJECT_NAME_NOT_FOUND smb "$U1" veto "rename ok.txt ok.tmp"
check "veto: ok.txt is still there" test -e "$T/veto/ok.txt"

# store dos attributes: HIDDEN / SYSTEM kept in user.DOSATTRIB
check "put on [dosattr] and [share]" bash -c "smbclient //127.0.0.1/dosattr -p $PORT -U $U1 -c 'put $T/data d.txt' >/dev/null && smbclient //127.0.0.1/share -p $PORT -U $U1 -c 'put $T/data h.txt' >/dev/null"
check "setmode +hs on [dosattr]" smb "$U1" dosattr "setmode d.txt +hs"
smb "$U1" dosattr "allinfo d.txt" > "$T/allinfo_dosattr" 2>&1 || true
check "store dos attributes: HIDDEN and SYSTEM come back" grep -Eq "^attributes: [A-Z]*H[A-Z]*S|^attributes: [A-Z]*S[A-Z]*H" "$T/allinfo_dosattr"
check "store dos attributes: kept in user.DOSATTRIB" \
  python3 -c "import os,sys; v=os.getxattr('$T/dosattr/d.txt','user.DOSATTRIB'); sys.exit(0 if int(v.split(b'\\0')[0],16) & 6 == 6 else 1)"
smb "$U1" dosattr "ls" > "$T/ls_dosattr" 2>&1 || true
check "store dos attributes: the listing shows them too" grep -Eq '^ +d\.txt +[A-Z]*H' "$T/ls_dosattr"
smb "$U1" share "setmode h.txt +h; allinfo h.txt" > "$T/allinfo_nostore" 2>&1 || true
check "without store dos attributes HIDDEN is kept too" grep -Eq '^attributes: [A-Z]*H' "$T/allinfo_nostore"
check "... not in user.DOSATTRIB" python3 -c "import os,sys; sys.exit('user.DOSATTRIB' in os.listxattr('$T/share/h.txt'))"

# smb2 max read / write / trans: advertised in NEGOTIATE
negotiate_sizes() {
  python3 - "$PORT" <<'EOF'
import os, socket, struct, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
hdr = struct.pack("<4sHHIHHIIQIIQ16s", b"\xfeSMB", 64, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, b"\0" * 16)
body = struct.pack("<HHHHI16sIHH", 36, 2, 1, 0, 0, os.urandom(16), 0, 0, 0) + struct.pack("<HH", 0x0202, 0x0210)
msg = hdr + body
s.sendall(struct.pack(">I", len(msg)) + msg)
def exact(n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c: sys.exit("closed")
        b += c
    return b
n = struct.unpack(">I", exact(4))[0] & 0xFFFFFF
r = exact(n)
trans, read, write = struct.unpack_from("<III", r, 64 + 28)
print(trans, read, write)
EOF
}
check "NEGOTIATE advertises max trans 512k, max read 1M, max write 2M" \
  test "$(negotiate_sizes)" = "524288 1048576 2097152"
check "smbclient still reads and writes large files" bash -c \
  "head -c 5000000 /dev/urandom > $T/big && smbclient //127.0.0.1/share -p $PORT -U $U1 -c 'put $T/big big; get big $T/big2' >/dev/null && cmp $T/big $T/big2"

# max open files = 100 (per connection): the 101st open fails as in Samba
opens=$(for i in $(seq 1 101); do echo "open f$i"; done | tr '\n' ';')
for i in $(seq 1 101); do : > "$T/share/f$i"; done
chown rsmb_u1: "$T"/share/f*
expect_status "max open files: open number 101 gets TOO_MANY_OPENED_FILES" NT_STATUS_TOO_MANY_OPENED_FILES \
  smb "$U1" share "$opens"

# reload: ringsmb-ctld re-reads the file; new tree connects follow it
sed -i 's/^  read list = @rsmb_grp$/  read list = nobody/' "$T/ringsmb.conf"
kill -HUP "$SERVER_PID"
for _ in $(seq 1 50); do grep -q "reloaded" "$T/server.log" && break; sleep 0.1; done
check "after reload u1 may write [rl]" smb "$U1" rl "put $T/data f3"

# config check: bad values name FILE:LINE, unknown keys warn with FILE:LINE
printf '[global]\n[x]\n  path = /tmp\n  veto oplock files = /a/\n  hosts allow = 10.0.0.0/33\n' > "$T/bad.conf"
expect_status "config check: a bad host entry is FILE:LINE and key" "$T/bad.conf:5: hosts allow: '10.0.0.0/33' is not a valid network" \
  "$RINGSMBCTL" config check "$T/bad.conf"
printf '[x]\n  path = /tmp\n  veto oplock files = /a/\n  create mask = 0640\n' > "$T/warn.conf"
expect_status "config check: an unknown key warns with FILE:LINE" "$T/warn.conf:3: unknown key 'veto oplock files' in \[x\]" \
  "$RINGSMBCTL" config check "$T/warn.conf"

# max connections: restart with a limit of 2
stop_server
sed -i "s/^\[global\]/[global]\n  max connections = 2/" "$T/ringsmb.conf"
start_server
max_conn_probe() {
  python3 - "$PORT" <<'EOF'
import socket, sys, time
port = int(sys.argv[1])
def negotiated(s):
    import os, struct
    hdr = struct.pack("<4sHHIHHIIQIIQ16s", b"\xfeSMB", 64, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, b"\0" * 16)
    body = struct.pack("<HHHHI16sIHH", 36, 1, 1, 0, 0, os.urandom(16), 0, 0, 0) + struct.pack("<H", 0x0210)
    try:
        s.sendall(struct.pack(">I", len(hdr + body)) + hdr + body)
        return len(s.recv(4)) == 4
    except OSError:
        return False
held = [socket.create_connection(("127.0.0.1", port), timeout=3) for _ in range(2)]
ok = [negotiated(s) for s in held]
extra = socket.create_connection(("127.0.0.1", port), timeout=3)
refused = not negotiated(extra)
for s in held: s.close()
time.sleep(0.5)
again = socket.create_connection(("127.0.0.1", port), timeout=3)
after = negotiated(again)
print(ok, refused, after)
sys.exit(0 if all(ok) and refused and after else 1)
EOF
}
check "max connections = 2: two connections serve, a third is closed, a later one serves" max_conn_probe
check "server still serves after refusing" smb "$U1" share "ls"
finish
