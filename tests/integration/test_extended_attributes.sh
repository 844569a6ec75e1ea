#!/usr/bin/env bash
# Extended attributes (docs/configuration.md, "Extended attributes") and the
# delayed LastWriteTime with a raw SMB2 client (ea_probe.py: smbclient
# sends no EA requests): EAs set, listed, queried by name, replaced,
# removed, given at CREATE, refused when malformed or without FILE_READ_EA /
# FILE_WRITE_EA; kept in trusted.ringsmb.ea.* where the file's owner can
# neither see nor forge them, across a restart; not advertised by a server
# without CAP_SYS_ADMIN. Then a write's LastWriteTime shows about 2 s late
# through its handle, and '/' separates path components.
# The SMB user maps to the share's owner, an unprivileged Unix user (a
# switched fsuid).
source "$(dirname "$0")/lib.sh"
PROBE="$(dirname "$0")/ea_probe.py"

write_config
add_user e 'Ea-pw-1'
start_server

check "EAs: set, list, query, replace, remove, CREATE context, errors, access" \
  python3 "$PROBE" "$PORT" share e 'Ea-pw-1' ea
xattrs() { python3 -c 'import os,sys; print("\n".join(os.listxattr(sys.argv[1])))' "$1"; }
check "stored in trusted.ringsmb.ea.<NAME>" bash -c "$(declare -f xattrs); xattrs '$T/share/ea.txt' | grep -qx trusted.ringsmb.ea.KEPT"
check "no user.* attribute" bash -c "$(declare -f xattrs); ! xattrs '$T/share/ea.txt' | grep -q '^user\.'"
as_owner() { setpriv --reuid "$TEST_UNIX_USER" --regid "$TEST_UNIX_USER" --clear-groups "$@"; }
if as_owner python3 -c 'import os,sys; os.setxattr(sys.argv[1], "trusted.ringsmb.ea.KEPT", b"\0\4Keptforged")' \
     "$T/share/ea.txt" 2>/dev/null; then
  fail "the file's owner forges an EA locally"
else
  pass "the file's owner cannot forge an EA locally"
fi

stop_server
start_server
cat > "$T/kept.py" <<'PY'
import struct, sys
sys.path.insert(0, sys.argv[5])
import ea_probe, smb2user
c = smb2user.logged_in(sys.argv[3], sys.argv[4], sys.argv[2])
st, fid = c.create("ea.txt", 0x89)
st, data = ea_probe.query(c, fid, 15, flags=1)
sys.exit(0 if st == 0 and (b"Kept", b"value", 0) in ea_probe.parse_full_ea(data) else 1)
PY
check "an EA survives a restart" python3 "$T/kept.py" "$PORT" share e 'Ea-pw-1' "$(dirname "$PROBE")"

check "delayed LastWriteTime; '/' separators" python3 "$PROBE" "$PORT" share e 'Ea-pw-1' times

# Without CAP_SYS_ADMIN nothing can be stored: EAs are not advertised.
stop_server
printf '#!/bin/sh\nexec setpriv --bounding-set -sys_admin "%s" "$@"\n' "$RINGSMBD" > "$T/ringsmbd-nocap"
chmod +x "$T/ringsmbd-nocap"
RINGSMBD="$T/ringsmbd-nocap"
start_server
check "no CAP_SYS_ADMIN: no EAs" python3 "$PROBE" "$PORT" share e 'Ea-pw-1' noea
finish
