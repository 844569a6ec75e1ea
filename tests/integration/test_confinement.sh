#!/usr/bin/env bash
# Nothing escapes a share: '..', absolute names and symlinks pointing out
# are refused; a symlink inside the share works. Two users see each
# other's files only as their Unix permissions allow.
source "$(dirname "$0")/lib.sh"

write_config
add_user alice 'secret-A1'
mkdir -p "$T/outside" && echo "top secret" > "$T/outside/secret.txt"
ln -s "$T/outside" "$T/share/escape"
ln -s ../outside/secret.txt "$T/share/escape_file"
mkdir -p "$T/share/inside" && echo ok > "$T/share/inside/f" && ln -s inside "$T/share/inside_link"
chmod -R a+rwX "$T/share"

# Two unix users for the permission checks.
for u in rsmb_u1 rsmb_u2; do id "$u" >/dev/null 2>&1 || useradd -M -s /usr/sbin/nologin "$u"; done
add_user u1 'pw-one' rsmb_u1
add_user u2 'pw-two' rsmb_u2
start_server
C=alice%secret-A1

# smbclient folds '..' away itself; tests/integration/test_malformed.sh sends a raw '..' name.
expect_status "'..' stays inside the share" NT_STATUS_OBJECT_PATH_NOT_FOUND smb "$C" share 'get ..\outside\secret.txt /dev/null'
# A symlink leading out is never followed: it goes back to the client
# (STOPPED_ON_SYMLINK with its target, docs/security.md), which smbclient
# does not resolve.
expect_status "symlinked directory out of the share" NT_STATUS_STOPPED_ON_SYMLINK smb "$C" share 'get escape\secret.txt /dev/null'
expect_status "symlinked file out of the share" NT_STATUS_STOPPED_ON_SYMLINK smb "$C" share 'get escape_file /dev/null'
check "symlink inside the share works" bash -c "smbclient //127.0.0.1/share -p $PORT -U $C -c 'get inside_link\\f $T/f' >/dev/null && grep -q ok $T/f"

# u1 makes a private file (mode 0600 by chmod through the server's view: do it on disk).
echo private > "$T/u1data"
check "u1 writes a file" smb u1%pw-one share "put $T/u1data u1file"
check "the file belongs to rsmb_u1" test "$(stat -c %U "$T/share/u1file")" = rsmb_u1
chmod 600 "$T/share/u1file"
expect_status "u2 cannot read u1's private file" NT_STATUS_ACCESS_DENIED smb u2%pw-two share "get u1file $T/x"
chmod 644 "$T/share/u1file"
check "u2 can read it once it is world-readable" smb u2%pw-two share "get u1file $T/y"
expect_status "u2 cannot overwrite it" NT_STATUS_ACCESS_DENIED smb u2%pw-two share "put $T/u1data u1file"
finish
