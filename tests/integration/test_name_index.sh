#!/usr/bin/env bash
# Case-insensitive opens of files made behind the server's back, in a
# directory the server is busy creating files in (smbench, 4 connections:
# both workers), and right after. The name index must not take the outside
# file for one of the server's own creates (docs/internals-files.md, "Case-
# insensitive names").
source "$(dirname "$0")/lib.sh"

SMBENCH="$RINGSMB_BUILD_DIR/tools/smbench"
write_config
add_user alice 'secret-A1'
start_server
C=alice%secret-A1

# get_ci NAME: a case-insensitive open (all lower case) of NAME through smbclient.
get_ci() {
  local lower
  lower=$(echo "$1" | tr 'A-Z' 'a-z')
  rm -f "$T/got"
  smb "$C" share "get $lower $T/got" >/dev/null 2>&1 && cmp -s "$T/got" "$T/share/$1"
}

# found_within SECONDS NAME: the open succeeds within SECONDS. An outside
# create in the very moment of one of the server's (between the same two
# looks at the directory) can be taken for the server's; the index is then
# verified within NameIndexCache::kRacyRescanNs (1 s).
found_within() {
  local deadline=$(( $(date +%s%N) + $1 * 1000000000 )) tries=0
  while :; do
    tries=$((tries + 1))
    if get_ci "$2"; then echo "$tries" >> "$T/tries"; return 0; fi
    [ "$(date +%s%N)" -lt "$deadline" ] || return 1
    sleep 0.2
  done
}

timeout 300 "$SMBENCH" --host 127.0.0.1 --port "$PORT" --user alice --password secret-A1 --share share \
  --connections 4 --depth 4 --files 20000 --prefix load > "$T/load.out" 2>&1 &
LOAD_PID=$!
for _ in $(seq 1 100); do [ "$(ls "$T/share" | head -200 | wc -l)" -ge 100 ] && break; sleep 0.05; done

during=0
for k in 1 2 3 4 5; do
  kill -0 "$LOAD_PID" 2>/dev/null || break
  echo "local $k" > "$T/share/Local_During_$k.TXT"
  during=$((during + 1))
  check "local create $k while SMB creates in the same directory, then a case-insensitive open" \
    found_within 3 "Local_During_$k.TXT"
done
[ "$during" -ge 1 ] || fail "the SMB load ended before any local create"
echo "opens needed per local create during the load: $(tr '\n' ' ' < "$T/tries" 2>/dev/null)"
check "the SMB load completed" wait "$LOAD_PID"
check "the SMB load wrote every file" test "$(ls "$T/share" | grep -c '^load_')" -eq 20000

# Nothing of the server's is in flight now: the very first open must find it.
echo after > "$T/share/Local_After.TXT"
check "local create right after the SMB creates, then a case-insensitive open at once" get_ci Local_After.TXT
mv "$T/share/Local_After.TXT" "$T/share/Renamed_Locally.Txt"
check "local rename, then a case-insensitive open at once" get_ci Renamed_Locally.Txt
rm "$T/share/Renamed_Locally.Txt"
expect_status "local delete, then the old name is gone" NT_STATUS_OBJECT_NAME_NOT_FOUND \
  smb "$C" share "get renamed_locally.txt $T/gone"
finish
