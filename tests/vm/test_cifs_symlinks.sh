#!/usr/bin/env bash
# Symbolic and hard links from the Linux kernel's cifs client (6.12, in a
# QEMU guest: tests/vm/run) on a share with "client symlinks = yes",
# mounted with reparse=nfs: ln -s makes real Linux symlinks on the host
# (relative, '..' and absolute targets as given), ls -l and readlink in the guest show them;
# a tar with symlinks and hard links extracted onto the mount lists the
# same on the host (find -printf '%y %n %l %p') as a local extraction.
source "$(dirname "$0")/../integration/lib.sh"
VM="$RINGSMB_SOURCE_DIR/tests/vm"
write_config
add_share links "$T/share" "read only = no" "client symlinks = yes"
add_user alice 'secret-A1'
start_server
mkdir -p "$T/src/t/sub" && cd "$T/src/t" && echo a > a.txt && echo b > sub/b.txt && ln a.txt a-hard.txt &&
  ln sub/b.txt sub/b-hard.txt && ln -s a.txt a-link && ln -s sub dir-link && ln -s ../t/sub/b.txt sub/up-link &&
  ln -s missing dangling && cd - > /dev/null
tar cf "$T/links.tar" -C "$T/src" t
mkdir -p "$T/local" && tar xf "$T/links.tar" -C "$T/local"
if "$VM/run" --kernel 6.12 --timeout "${RINGSMB_VM_TIMEOUT:-600}" --guestfwd "445=$PORT" \
     --file "$VM/guest/lib.sh" --file "$VM/guest/cifs_symlinks.sh" --file "$T/links.tar" \
     --env SERVER=10.0.2.100 --env SHARE=links --env SMBUSER=alice --env SMBPASS='secret-A1' \
     -- 'sh /job/cifs_symlinks.sh' > "$T/guest.log" 2>&1; then
  pass "the guest's link checks"
else
  fail "the guest's link checks (exit $?)"
fi
grep -E "^(PASS|FAIL)" "$T/guest.log" || tail -40 "$T/guest.log"
grep -iE "^tar:|CIFS:|VFS:" "$T/guest.log" | head -20 || true
S="$T/share"
check "ln -s up kept its '..' target" test "$(readlink "$S/up")" = ../../../../etc/passwd
check "dlink is a symlink to d" test "$(readlink "$S/dlink")" = d
check "ln -s of an absolute path kept it absolute" test "$(readlink "$S/abs")" = /etc/hostname
check "hard is d/f.txt's inode" test "$(stat -c %i "$S/hard")" = "$(stat -c %i "$S/d/f.txt")"
listing() { (cd "$1" && find t -printf '%y %n %l %p\n' | sort); }
listing "$T/local" > "$T/local.list"
listing "$S/x" > "$T/mount.list" 2>&1
check "the extracted tar lists as a local extraction" diff "$T/local.list" "$T/mount.list"
finish
