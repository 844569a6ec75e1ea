#!/usr/bin/env bash
# [homes] and the recycle bin with real clients, as ordinary users: each
# test account gets a home directory under the test's directory (usermod,
# restored at exit); smbclient reaches one's own home by one's name and by
# "homes", never another user's; the share list shows one's own home
# only (tests/unit/rpc/srvsvc_test.cpp lists one's own). Deletes (delete-on-close from smbclient, FileDispositionInformation
# and ...Ex from impacket) land in the bin with keeptree paths and
# versions; excluded names and files over maxsize are deleted; ringsmbctl
# lists and empties the bin; bad settings are refused with their line.
source "$(dirname "$0")/lib.sh"

HOME1=rsmb_home1 HOME2=rsmb_home2 PW=Home-pass-1
declare -A OLD_HOME
for u in $HOME1 $HOME2; do
  id "$u" >/dev/null 2>&1 || useradd -M -d /nonexistent -s /usr/sbin/nologin "$u" 2>/dev/null || id "$u" >/dev/null
  OLD_HOME[$u]=$(getent passwd "$u" | cut -d: -f6)
  owned_dir "$T/homes/$u" "$u"
  chmod 700 "$T/homes/$u"
  usermod -d "$T/homes/$u" "$u"
done
restore_homes() { for u in $HOME1 $HOME2; do usermod -d "${OLD_HOME[$u]}" "$u" 2>/dev/null || true; done; }
trap 'restore_homes; cleanup' EXIT

write_config
cat >> "$T/ringsmb.conf" <<CONF

[homes]
  comment = Home of %S
  browseable = no
  read only = no
  valid users = %S
  vfs objects = recycle
  recycle:repository = .recycle/%U
  recycle:keeptree = yes
  recycle:versions = yes
  recycle:exclude = *.tmp
  recycle:maxsize = 1K
CONF
add_user $HOME1 $PW $HOME1
add_user $HOME2 $PW $HOME2
check "config check accepts [homes] with %S and recycle" CTL config check
start_server

U1="$HOME1%$PW"
echo "in home" > "$T/small.txt"
check "smbclient //127.0.0.1/$HOME1 reaches the user's home" smb "$U1" $HOME1 "put $T/small.txt small.txt; ls"
check "... the file is in the home directory, owned by the user" \
  bash -c "[ \"\$(stat -c %U '$T/homes/$HOME1/small.txt')\" = $HOME1 ]"
check "//127.0.0.1/homes is one's own home" bash -c "smbclient //127.0.0.1/homes -p $PORT -U '$U1' -c ls | grep -q small.txt"
expect_status "another user's name is BAD_NETWORK_NAME" NT_STATUS_BAD_NETWORK_NAME smb "$U1" $HOME2 "ls"
expect_status "a name that is nobody's is BAD_NETWORK_NAME" NT_STATUS_BAD_NETWORK_NAME smb "$U1" rsmb_nobody_here "ls"
timeout 60 smbclient -L 127.0.0.1 -p "$PORT" -U "$U1" -g > "$T/list.out" 2>&1 || true
check "smbclient -L shows the user's own home" grep -q "^Disk|$HOME1|" "$T/list.out"
check "smbclient -L does not show another user's home" bash -c "! grep -q '|$HOME2|' '$T/list.out'"
check "... nor [homes] itself (browseable = no)" bash -c "! grep -qi '^Disk|homes|' '$T/list.out'"

# The recycle bin.
mkdir -p "$T/src"
echo "version one" > "$T/src/doc.txt"
echo "scratch" > "$T/src/x.tmp"
head -c 4096 /dev/urandom > "$T/src/big.bin"
smb "$U1" $HOME1 "mkdir a; mkdir a/b; put $T/src/doc.txt a/b/doc.txt; del a/b/doc.txt; put $T/src/doc.txt a/b/doc.txt; del a/b/doc.txt; put $T/src/x.tmp a/x.tmp; del a/x.tmp; put $T/src/big.bin big.bin; del big.bin" > "$T/del.out" 2>&1 || true
BIN="$T/homes/$HOME1/.recycle/$HOME1"
check "del moves the file into the bin, keeping its tree" test -f "$BIN/a/b/doc.txt"
check "... a second delete of the name is kept as 'Copy #1 of'" test -f "$BIN/a/b/Copy #1 of doc.txt"
check "... the file is gone from its place" test ! -e "$T/homes/$HOME1/a/b/doc.txt"
check "... the bin is the user's, mode 0700" bash -c "[ \"\$(stat -c '%U %a' '$T/homes/$HOME1/.recycle')\" = '$HOME1 700' ]"
check "recycle:exclude: *.tmp is deleted, not kept" bash -c "[ ! -e '$T/homes/$HOME1/a/x.tmp' ] && [ ! -e '$BIN/a/x.tmp' ]"
check "recycle:maxsize: a file over 1K is deleted, not kept" bash -c "[ ! -e '$T/homes/$HOME1/big.bin' ] && [ ! -e '$BIN/big.bin' ]"
smb "$U1" $HOME1 "put $T/src/doc.txt d1.txt; put $T/src/doc.txt d2.txt" > /dev/null 2>&1 || true
check "FileDispositionInformation moves into the bin too" /usr/bin/python3 "$(dirname "$0")/dispose.py" "$PORT" $HOME1 $HOME1 $PW d1.txt
check "... d1.txt is in the bin" test -f "$BIN/d1.txt"
check "FileDispositionInformationEx moves into the bin too" /usr/bin/python3 "$(dirname "$0")/dispose.py" "$PORT" $HOME1 $HOME1 $PW d2.txt --ex
check "... d2.txt is in the bin" test -f "$BIN/d2.txt"
smb "$U1" $HOME1 "del .recycle/$HOME1/d2.txt" > /dev/null 2>&1 || true
check "a delete inside the bin is final" test ! -e "$BIN/d2.txt"

CTL recycle list $HOME1 > "$T/bin.out" 2>&1 || true
check "ringsmbctl recycle list shows the bin" grep -q "a/b/Copy #1 of doc.txt" "$T/bin.out"
expect_exit "recycle empty --older-than 1 keeps today's files" 0 "removed 0 files" CTL recycle empty $HOME1 --older-than 1
expect_exit "recycle empty removes them" 0 "removed 3 files" CTL recycle empty $HOME1
check "... and the bin is empty" bash -c "[ -z \"\$(find '$BIN' -type f)\" ]"
expect_exit "recycle list of a share without a bin" 1 "has no recycle bin" CTL recycle list share

# Bad settings are refused with the line that says them.
bad() {  # bad NAME 'lines' 'message'
  { cat "$T/ringsmb.conf"; echo; echo "[$1]"; echo "$2"; } > "$T/bad.conf"
  expect_exit "config check refuses: $3" 1 "$3" "$RINGSMBCTL" --config "$T/bad.conf" config check
}
N=$(wc -l < "$T/ringsmb.conf")  # bad() adds a blank line, the header, then the lines
bad esc "  path = $T/share
  vfs objects = recycle
  recycle:repository = ../outside" "bad.conf:$((N + 5)): share [esc]: recycle:repository ../outside leaves the share"
bad pct "  path = $T/share/%m" "bad.conf:$((N + 3)): path: '%m' is not expanded"
sed 's/^\[homes\]$/[homes]\n  path = \/srv\/homes/' "$T/ringsmb.conf" > "$T/bad.conf"
expect_exit "config check refuses a [homes] path the same for everyone" 1 "is the same for every user" \
  "$RINGSMBCTL" --config "$T/bad.conf" config check
cp "$T/ringsmb.conf" "$T/good.conf"
cp "$T/bad.conf" "$T/ringsmb.conf"
expect_exit "reload refuses it too, naming the line" 1 "ringsmb.conf:" CTL reload
cp "$T/good.conf" "$T/ringsmb.conf"
check "the server still serves the home after the refused reload" smb "$U1" $HOME1 "ls"

finish
