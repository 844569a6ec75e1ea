#!/usr/bin/env bash
# Symbolic links as clients make them ("client symlinks = yes"), as an
# ordinary user: FSCTL_SET_REPARSE_POINT in the Windows, NFS and WSL forms
# makes a real Linux symlink; GET reads it back; listings carry the reparse
# tag; an open ending in a link answers STOPPED_ON_SYMLINK with its target;
# absolute and '..' targets never lead out of the share, whether a client or
# a local program made them; a share without the key refuses to make links.
source "$(dirname "$0")/lib.sh"

write_config
add_share links "$T/share" "read only = no" "client symlinks = yes"
add_user alice 'secret-A1'
check "config check accepts client symlinks" CTL config check
start_server
C=alice%secret-A1
S="$T/share"
mkdir -p "$T/outside" && echo secret > "$T/outside/secret.txt"
runuser -u "$TEST_UNIX_USER" -- bash -c "mkdir '$S/dir'; echo inside > '$S/dir/f.txt'
  ln -s ../outside/secret.txt '$S/local-up'; ln -s '$T/outside' '$S/local-abs'"

python3 "$RINGSMB_SOURCE_DIR/tests/integration/symlink_probe.py" "$PORT" alice 'secret-A1' links > "$T/probe.out" 2>&1 || true
probe() { check "$1" grep -qxF "$2" "$T/probe.out"; }
probe "mklink: a Windows relative symlink" "make-win SUCCESS"
probe "mklink /D: a directory symlink" "make-windir SUCCESS"
probe "the NFS form (reparse=nfs) with a '..' target" "make-nfs-up SUCCESS"
probe "the WSL form with an absolute target" "make-wsl-abs SUCCESS"
probe "an absolute POSIX target (the kernel client's ln -s /x)" "make-posix-abs SUCCESS"
probe "a Windows drive path is refused" "make-drive NOT_SUPPORTED"
check "win is a Linux symlink to dir/f.txt" test "$(readlink "$S/win")" = dir/f.txt
check "windir is a Linux symlink to dir" test "$(readlink "$S/windir")" = dir
check "nfs-up keeps its '..' target" test "$(readlink "$S/nfs-up")" = ../../../../etc/passwd
check "posix-abs points at /etc/passwd" test "$(readlink "$S/posix-abs")" = /etc/passwd
check "... owned by the user" test "$(stat -c %U "$S/win")" = "$TEST_UNIX_USER"
check "no temporary names left" bash -c "! ls -A '$S' | grep -q ringsmb-reparse"
check "the refused drive link left its empty file" test -f "$S/drive" -a ! -L "$S/drive"
probe "GET reads a relative link back" "get-win A000000C 1 dir\\f.txt"
probe "GET reads the '..' link back" "get-nfs-up A000000C 1 ..\\..\\..\\..\\etc\\passwd"
probe "GET reads an absolute link without the relative flag" "get-wsl-abs A000000C 0 \\etc"
probe "a listed symlink: REPARSE_POINT, tag in EaSize" "list-win 0x400 A000000C"
probe "a listed directory symlink: DIRECTORY too" "list-windir 0x410 A000000C"
probe "a directory is no reparse point" "list-dir 0x10 00000000"
probe "opening a link: STOPPED_ON_SYMLINK with its target" "open-win STOPPED_ON_SYMLINK 4C4D5953 A000000C 0 dir\\f.txt"
probe "... a '..' target goes back to the client, unresolved" \
  "open-nfs-up STOPPED_ON_SYMLINK 4C4D5953 A000000C 0 ..\\..\\..\\..\\etc\\passwd"
probe "through an absolute link: back to the client with the rest of the name" \
  "open-through-wsl-abs STOPPED_ON_SYMLINK 4C4D5953 A000000C 14 \\etc"
probe "through a directory link inside the share: followed" "open-through-windir SUCCESS"
probe "DELETE_REPARSE_POINT" "delete-reparse SUCCESS"
check "... leaves an empty file" test -f "$S/gone" -a ! -L "$S/gone" -a ! -s "$S/gone"

# smbclient, and the links a local program made.
expect_status "get through a local absolute link is left to the client" NT_STATUS_STOPPED_ON_SYMLINK \
  smb "$C" links "get local-abs\\secret.txt $T/x"
expect_status "get of a local '..' link is left to the client" NT_STATUS_STOPPED_ON_SYMLINK \
  smb "$C" links "get local-up $T/x"
expect_status "get of a client's '..' link too" NT_STATUS_STOPPED_ON_SYMLINK smb "$C" links "get nfs-up $T/x"
check "nothing outside the share was read" test ! -e "$T/x"
check "cd into a directory link inside the share" bash -c "smbclient //127.0.0.1/links -p $PORT -U $C \
  -c 'get windir\\f.txt $T/y' >/dev/null && grep -qx inside $T/y"
check "mfsymlinks-style files are ordinary files" bash -c "printf 'XSym\n0004\nabcd\ndir\n' > $T/m &&
  smbclient //127.0.0.1/links -p $PORT -U $C -c 'put $T/m msym' >/dev/null && test -f $S/msym -a ! -L $S/msym"
python3 "$RINGSMB_SOURCE_DIR/tests/integration/symlink_probe.py" "$PORT" alice 'secret-A1' share make-only \
  > "$T/off.out" 2>&1 || true
check "[share] (client symlinks = no) makes no link" grep -qx "make-off ACCESS_DENIED" "$T/off.out"
check "... and off is no symlink" test ! -L "$S/off"
finish
