#!/usr/bin/env bash
# Named streams (docs/streams.md) with real clients: smbclient writes
# "file:stream", `allinfo` lists what the server stored, the data survives
# a restart, deleting a stream or its file removes it, a directory carries
# streams, a stream too large for one xattr goes to a sidecar file in the
# state directory (1 MiB back byte for byte, also after a restart, a
# rename; gone with its file), the stores are out of reach of local users,
# and a share with "streams = no", or a server without CAP_SYS_ADMIN,
# neither stores nor advertises streams.
# The SMB user maps to the share's owner, an unprivileged Unix user, so
# every stream operation runs with a switched fsuid.
source "$(dirname "$0")/lib.sh"
PROBE="$(dirname "$0")/stream_probe.py"

write_config
owned_dir "$T/nostreams"
add_share nostreams "$T/nostreams" "writeable = yes" "streams = no"
add_user s1 'Stream-1'
U=s1%Stream-1
printf 'zone data\n' > "$T/zone"
printf 'main data\n' > "$T/main"
head -c 100000 /dev/urandom > "$T/big"
head -c 1048576 /dev/urandom > "$T/mib"
head -c 3000 /dev/urandom > "$T/mid"  # fits one xattr value even on ext4 (about 4 KiB)
start_server

check "put the file" smb "$U" share "put $T/main f.txt"
check "put a stream of it" smb "$U" share "put $T/zone f.txt:Zone.Identifier"
smb "$U" share "allinfo f.txt" > "$T/allinfo" 2>&1 || true
check "allinfo lists the unnamed stream" grep -q 'stream: \[::\$DATA\], 10 bytes' "$T/allinfo"
check "allinfo lists the named stream with its size" grep -q 'stream: \[:Zone.Identifier:\$DATA\], 10 bytes' "$T/allinfo"
check "the stream reads back" smb "$U" share "get f.txt:Zone.Identifier $T/got_zone"
check "with the data written" cmp "$T/zone" "$T/got_zone"
check "names of streams ignore case" smb "$U" share "get f.txt:zone.identifier:\$DATA $T/got_zone2"
check "the file's own data is untouched" smb "$U" share "get f.txt $T/got_main"
check "... byte for byte" cmp "$T/main" "$T/got_main"
check "f.txt::\$DATA is the file itself" smb "$U" share "get f.txt::\$DATA $T/got_main2"
check "... byte for byte" cmp "$T/main" "$T/got_main2"

# The store: trusted.* on the file, invisible and unwritable for its owner.
# xattrs through Python's os module (no attr package needed).
xattrs() { python3 -c 'import os,sys; print("\n".join(os.listxattr(sys.argv[1])))' "$1"; }
check "stored in trusted.ringsmb.stream.*" bash -c "$(declare -f xattrs); xattrs '$T/share/f.txt' | grep -qx trusted.ringsmb.stream.zone.identifier"
check "the file belongs to the session user" test "$(stat -c %U "$T/share/f.txt")" = "$TEST_UNIX_USER"
as_owner() { setpriv --reuid "$TEST_UNIX_USER" --regid "$TEST_UNIX_USER" --clear-groups "$@"; }
if as_owner python3 -c 'import os,sys; os.setxattr(sys.argv[1], "trusted.ringsmb.stream.zone.identifier", b"forged")' \
     "$T/share/f.txt" 2>/dev/null; then
  fail "the file's owner forges a stream locally"
else
  pass "the file's owner cannot forge a stream locally"
fi
if as_owner python3 -c 'import os,sys; print(os.listxattr(sys.argv[1]))' "$T/share/f.txt" | grep -q trusted; then
  fail "the file's owner sees the stream store"
else
  pass "the file's owner does not see the stream store"
fi

# A directory carries streams.
check "mkdir" smb "$U" share "mkdir d"
check "put a stream of a directory" smb "$U" share "put $T/zone d:meta"
smb "$U" share "allinfo d" > "$T/allinfo_d" 2>&1 || true
check "allinfo lists the directory's stream" grep -q 'stream: \[:meta:\$DATA\], 10 bytes' "$T/allinfo_d"

# A few KiB fit one xattr value; larger streams go to a sidecar file.
check "a 3000-byte stream is stored" smb "$U" share "put $T/mid f.txt:mid"
check "... and reads back whole" smb "$U" share "get f.txt:mid $T/got_mid"
check "... byte for byte" cmp "$T/mid" "$T/got_mid"
check "... in the xattr: no sidecar" bash -c "[ -z \"\$(ls -A '$T/streams')\" ]"
check "a 100 kB stream is stored" smb "$U" share "put $T/big f.txt:big"
check "... and reads back" smb "$U" share "get f.txt:big $T/got_big"
check "... byte for byte" cmp "$T/big" "$T/got_big"
check "put a 1 MiB stream" smb "$U" share "put $T/mib b.txt:Resource"
check "... and reads back" smb "$U" share "get b.txt:Resource $T/got_mib"
check "... byte for byte" cmp "$T/mib" "$T/got_mib"
smb "$U" share "allinfo b.txt" > "$T/allinfo_b" 2>&1 || true
check "allinfo lists the 1 MiB stream" grep -q 'stream: \[:Resource:\$DATA\], 1048576 bytes' "$T/allinfo_b"
check "two sidecars in the state directory" test "$(ls -A "$T/streams" | wc -l)" = 2
check "the sidecar directory is root's, mode 0700" test "$(stat -c '%U %a' "$T/streams")" = "root 700"
if as_owner cat "$T/streams/$(ls -A "$T/streams" | head -1)" >/dev/null 2>&1; then
  fail "the file's owner reads a sidecar locally"
else
  pass "the file's owner cannot read a sidecar locally"
fi

# Restart: the streams are on disk.
stop_server
start_server
check "after a restart the stream reads back" smb "$U" share "get f.txt:Zone.Identifier $T/got_zone3"
check "... unchanged" cmp "$T/zone" "$T/got_zone3"
check "after a restart the 1 MiB stream reads back" smb "$U" share "get b.txt:Resource $T/got_mib2"
check "... byte for byte" cmp "$T/mib" "$T/got_mib2"
check "rename the file" smb "$U" share "rename b.txt c.txt"
check "the renamed file keeps its 1 MiB stream" smb "$U" share "get c.txt:Resource $T/got_mib3"
check "... byte for byte" cmp "$T/mib" "$T/got_mib3"
check "delete the file with the 1 MiB stream" smb "$U" share "del c.txt"
check "its sidecar is gone with it" test "$(ls -A "$T/streams" | wc -l)" = 1

# Deleting a stream keeps the file; deleting the file takes its streams.
check "put a second stream" smb "$U" share "put $T/zone f.txt:second"
check "delete one stream (delete on close)" bash -c "python3 '$PROBE' $PORT share s1 Stream-1 delete f.txt:second | grep -q delete=SUCCESS"
smb "$U" share "allinfo f.txt" > "$T/allinfo3" 2>&1 || true
check "the deleted stream is gone" bash -c "! grep -q ':second:' '$T/allinfo3'"
check "the other stream stays" grep -q ':Zone.Identifier:' "$T/allinfo3"
check "the file stays" test -f "$T/share/f.txt"
ln "$T/share/f.txt" "$T/f.link"  # a second name keeps the inode for inspection
check "delete the file" smb "$U" share "del f.txt"
check "the file is gone" test ! -e "$T/share/f.txt"
rm -f "$T/f.link"
check "put a new file under the old name" smb "$U" share "put $T/main f.txt"
smb "$U" share "allinfo f.txt" > "$T/allinfo4" 2>&1 || true
check "the new file has no streams of the old one" bash -c "! grep -q ':Zone.Identifier:' '$T/allinfo4'"
check "overwrite: put a stream" smb "$U" share "put $T/zone f.txt:Zone.Identifier"
check "overwrite the file (smbclient put: OVERWRITE_IF)" smb "$U" share "put $T/main f.txt"
smb "$U" share "allinfo f.txt" > "$T/allinfo5" 2>&1 || true
check "overwriting the file removed its streams" bash -c "! grep -q ':Zone.Identifier:' '$T/allinfo5'"
sidecars_before=$(ls -A "$T/streams" | wc -l)
check "put a 100 kB stream again" smb "$U" share "put $T/big f.txt:big"
check "... in one more sidecar" test "$(ls -A "$T/streams" | wc -l)" = $((sidecars_before + 1))
check "overwrite the file again" smb "$U" share "put $T/main f.txt"
check "overwriting the file removed the sidecar" test "$(ls -A "$T/streams" | wc -l)" = "$sidecars_before"

# A file is not renamed while one of its streams is open (as Windows).
check "rename of a file with an open stream: ACCESS_DENIED" \
  bash -c "python3 '$PROBE' $PORT share s1 Stream-1 rename-base r.txt s r2.txt | grep -q rename=ACCESS_DENIED"
check "... and the file keeps its name" test -f "$T/share/r.txt"

# Outside the share or another file: never.
expect_status "a stream name with a path separator is refused" NT_STATUS_OBJECT_NAME_INVALID \
  smb "$U" share "put $T/zone f.txt:..\\\\x"
check "advertised: FILE_NAMED_STREAMS" bash -c "python3 '$PROBE' $PORT share s1 Stream-1 fsattr | grep -q named_streams=1"

# streams = no
check "nostreams: plain files work" smb "$U" nostreams "put $T/main g.txt"
expect_status "nostreams: a stream name is refused" NT_STATUS_OBJECT_NAME_INVALID \
  smb "$U" nostreams "put $T/zone g.txt:Zone.Identifier"
check "nostreams: FILE_NAMED_STREAMS not advertised" \
  bash -c "python3 '$PROBE' $PORT nostreams s1 Stream-1 fsattr | grep -q named_streams=0"
check "nostreams: nothing stored" bash -c "$(declare -f xattrs); ! xattrs '$T/nostreams/g.txt' | grep -q trusted.ringsmb"

# Without CAP_SYS_ADMIN (the systemd unit without it, or an unprivileged
# ringsmbd) nothing can be stored: streams are off, not advertised.
stop_server
printf '#!/bin/sh\nexec setpriv --bounding-set -sys_admin "%s" "$@"\n' "$RINGSMBD" > "$T/ringsmbd-nocap"
chmod +x "$T/ringsmbd-nocap"
RINGSMBD="$T/ringsmbd-nocap"
start_server
check "no CAP_SYS_ADMIN: plain files work" smb "$U" share "put $T/main h.txt"
expect_status "no CAP_SYS_ADMIN: a stream name is refused" NT_STATUS_OBJECT_NAME_INVALID \
  smb "$U" share "put $T/zone h.txt:Zone.Identifier"
check "no CAP_SYS_ADMIN: FILE_NAMED_STREAMS not advertised" \
  bash -c "python3 '$PROBE' $PORT share s1 Stream-1 fsattr | grep -q named_streams=0"
finish
