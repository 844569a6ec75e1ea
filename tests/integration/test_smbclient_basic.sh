#!/usr/bin/env bash
# smbclient against a real ringsmbd: listing, directories, put/get of files
# of many sizes compared byte for byte, rename, delete, allinfo, deltree,
# in every dialect.
source "$(dirname "$0")/lib.sh"

write_config
add_user alice 'secret-A1'
start_server

C=alice%secret-A1
head -c 0 /dev/zero > "$T/f0"
head -c 1 /dev/urandom > "$T/f1"
head -c 65536 /dev/urandom > "$T/f64k"
head -c $((10 * 1024 * 1024)) /dev/urandom > "$T/f10m"
sizes="f0 f1 f64k f10m"
if [ -z "${RINGSMB_QUICK:-}" ]; then
  head -c $((100 * 1024 * 1024)) /dev/urandom > "$T/f100m"
  sizes="$sizes f100m"
fi

roundtrip() {  # roundtrip DIALECT
  local m=$1 d="dir_$1"
  smb "$C" share "mkdir $d" -m "$m" >/dev/null
  for f in $sizes; do
    smb "$C" share "cd $d; put $T/$f $f" -m "$m" >/dev/null || return 1
    rm -f "$T/back"
    smb "$C" share "cd $d; get $f $T/back" -m "$m" >/dev/null || return 1
    cmp "$T/$f" "$T/back" || return 1
    cmp "$T/$f" "$T/share/$d/$f" || return 1
  done
}

for m in SMB2_02 SMB2_10 SMB3_00 SMB3_02 SMB3_11; do
  check "put/get byte for byte ($m)" roundtrip "$m"
  check "ls ($m)" bash -c "smbclient //127.0.0.1/share -p $PORT -U $C -m $m -c 'ls dir_$m/*' | grep -q f64k"
done
check "negotiate through SMB1 upgrade (no -m)" smb "$C" share "ls"

check "mkdir + rename + ls" bash -c "
  smbclient //127.0.0.1/share -p $PORT -U $C -c 'mkdir a; put $T/f1 a/one; rename a\\one a\\two' >/dev/null &&
  test -f $T/share/a/two && ! test -e $T/share/a/one"
check "rm and rmdir" bash -c "
  smbclient //127.0.0.1/share -p $PORT -U $C -c 'rm a\\two; rmdir a' >/dev/null && ! test -e $T/share/a"
check "allinfo" bash -c "smbclient //127.0.0.1/share -p $PORT -U $C -c 'allinfo dir_SMB3_11\\f64k' | grep -q 'stream:.*65536'"
mkdir -p "$T/share/tree/x/y/z" && echo hi > "$T/share/tree/x/y/z/file" && chown -R "$TEST_UNIX_USER": "$T/share/tree"
check "deltree" bash -c "smbclient //127.0.0.1/share -p $PORT -U $C -c 'deltree tree' >/dev/null && ! test -e $T/share/tree"
check "case-insensitive open" bash -c "
  echo data > $T/share/MixedCase.TXT && smbclient //127.0.0.1/share -p $PORT -U $C -c 'get mixedcase.txt $T/mc' >/dev/null && cmp $T/mc $T/share/MixedCase.TXT"

expect_status "wrong password" NT_STATUS_LOGON_FAILURE smb alice%wrong share "ls"
expect_status "unknown user" NT_STATUS_LOGON_FAILURE smb mallory%x share "ls"
expect_status "unknown share" NT_STATUS_BAD_NETWORK_NAME smb "$C" nosuchshare "ls"
finish
