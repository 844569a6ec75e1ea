#!/usr/bin/env bash
# One ordinary user against another's files (docs/security.md, "One user's
# files and another"): rsmb_other may not read the EAs of rsmb_owner's 0600
# file, nor replace the EAs, set a DACL, the DOS attributes or the times of
# its 0600 and 0644 files, whatever the open asked for (named rights,
# MAXIMUM_ALLOWED, an attributes-only open); the owner keeps its access and
# finds its metadata unchanged.
source "$(dirname "$0")/lib.sh"

write_config
add_user owner 'Owner-1'
add_user other 'Other-1' "$TEST_UNIX_USER2"
install -o "$TEST_UNIX_USER" -g "$TEST_UNIX_USER" -m 0600 /dev/null "$T/share/private.txt"
install -o "$TEST_UNIX_USER" -g "$TEST_UNIX_USER" -m 0644 /dev/null "$T/share/public.txt"
echo "secret" > "$T/share/private.txt"
start_server

if timeout 60 python3 "$(dirname "$0")/multiuser_probe.py" "$PORT" share owner 'Owner-1' other 'Other-1' \
    > "$T/probe.out" 2>&1; then
  pass "another user's metadata is refused, the owner keeps its own ($(tail -1 "$T/probe.out"))"
else
  fail "multiuser probe"
  sed 's/^/    /' "$T/probe.out" | tail -40
fi
check "the 0600 file keeps its mode and owner" test "$(stat -c '%a %U' "$T/share/private.txt")" = "600 $TEST_UNIX_USER"
check "the 0644 file keeps its mode and owner" test "$(stat -c '%a %U' "$T/share/public.txt")" = "644 $TEST_UNIX_USER"
finish
