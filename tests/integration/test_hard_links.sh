#!/usr/bin/env bash
# Hard links through SET_INFO FileLinkInformation (smbclient's hardlink
# over SMB2), as an ordinary user: a real Linux hard link beneath the share
# root, the link count in FileStandardInformation, collisions, directories
# and names outside the share refused.
source "$(dirname "$0")/lib.sh"

write_config
add_user alice 'secret-A1'
start_server
C=alice%secret-A1
S="$T/share"
runuser -u "$TEST_UNIX_USER" -- bash -c "echo one > '$S/a.txt'; echo other > '$S/taken.txt'; mkdir '$S/dir'"

check "hardlink a.txt dir/b.txt" smb "$C" share "hardlink a.txt dir/b.txt"
check "the same inode on disk" test "$(stat -c %i "$S/a.txt")" = "$(stat -c %i "$S/dir/b.txt")"
check "link count 2 on disk" test "$(stat -c %h "$S/a.txt")" = 2
expect_status "an existing name without ReplaceIfExists" NT_STATUS_OBJECT_NAME_COLLISION \
  smb "$C" share "hardlink a.txt taken.txt"
check "taken.txt unchanged" test "$(cat "$S/taken.txt")" = other
expect_status "a directory cannot be linked" NT_STATUS_FILE_IS_A_DIRECTORY smb "$C" share "hardlink dir dir2"
# Raw requests: names as sent, and FileStandardInformation's NumberOfLinks.
runuser -u "$TEST_UNIX_USER" -- mkdir "$S/sub"
python3 "$RINGSMB_SOURCE_DIR/tests/integration/link_probe.py" "$PORT" alice 'secret-A1' share > "$T/probe.out" 2>&1 || true
probe() { check "$1" grep -qx "$2" "$T/probe.out"; }
probe "a name above the share root" "above-root OBJECT_PATH_SYNTAX_BAD"
probe "a stream name" "stream INVALID_PARAMETER"
probe "an existing name without ReplaceIfExists (raw)" "collision OBJECT_NAME_COLLISION"
probe "ReplaceIfExists replaces taken.txt" "replace SUCCESS"
probe "a second link in another directory" "second SUCCESS"
probe "FileStandardInformation NumberOfLinks is 4" "links 4"
check "taken.txt is now a.txt's inode" test "$(stat -c %i "$S/taken.txt")" = "$(stat -c %i "$S/a.txt")"
check "nothing made outside the share" test ! -e "$T/escape"
check "deleting one name keeps the other" smb "$C" share "rm a.txt"
check "dir/b.txt still holds the data" test "$(cat "$S/dir/b.txt")" = one
finish
