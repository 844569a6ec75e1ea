#!/usr/bin/env bash
# ringsmbctl config check reports every problem of a file in one run, with
# FILE:LINE and the key; checks that the users, groups and directories the
# file names exist (errors where a share could not work, --strict makes
# warnings fail); refuses a directory. config show prints every setting in
# effect and its output is itself a valid file; share show prints every
# setting that decides access. The configuration examples of the docs work
# as pasted. Exit codes as documented (5 for an unreadable users db).
source "$(dirname "$0")/lib.sh"

write_config
add_user alice 'secret-A1'

# Three bad values: three errors, each with its line and key.
cat > "$T/bad.conf" <<CONF
[global]
  max open files = lots
  deadtime = -1
  users db = $T/users.db
  state directory = $T
[a]
  path = $T/share
  read only = perhaps
CONF
expect_exit "three bad values: exit 1" 1 "3 errors" "$RINGSMBCTL" config check "$T/bad.conf"
check "... the first, with line and key" grep -qF "error: $T/bad.conf:2: max open files: 'lots' is not a number" "$T/last.out"
check "... the second" grep -qF "error: $T/bad.conf:3: deadtime: '-1' is not a number" "$T/last.out"
check "... the third, in a share" grep -qF "error: $T/bad.conf:8: read only: 'perhaps' is not a boolean" "$T/last.out"

# A trailing comment is part of the value (as in Samba): the message says so.
printf '[global]\n  metrics listen = 9922   # http://127.0.0.1:9922/metrics\n' > "$T/comment.conf"
expect_exit "a trailing comment: an error that explains" 1 \
  "comments are whole lines" "$RINGSMBCTL" config check "$T/comment.conf"

# Names and paths that do not exist.
cat > "$T/names.conf" <<CONF
[global]
  users db = $T/users.db
  state directory = $T
  guest account = rsmb_no_such_guest
[missing]
  path = $T/no-such-dir
[forced]
  path = $T/share
  force user = rsmb_no_such_user
  force group = rsmb_no_such_group
[nobody]
  path = $T/share
  valid users = ghost, @rsmb_no_such_group
[guests]
  path = $T/share
  guest ok = yes
CONF
expect_exit "names and paths: exit 1" 1 "5 errors" "$RINGSMBCTL" config check "$T/names.conf"
for text in "names.conf:6: share [missing]: path $T/no-such-dir: No such file or directory" \
  "names.conf:9: share [forced]: force user: no Unix user 'rsmb_no_such_user'" \
  "names.conf:10: share [forced]: force group: no Unix group 'rsmb_no_such_group'" \
  "names.conf:13: share [nobody]: valid users: none of the users and groups exists" \
  "names.conf:4: guest account: no Unix user 'rsmb_no_such_guest'; guest access fails"; do
  check "... error: $text" grep -qF "error: $T/$text" "$T/last.out"
done
check "... a warning for each missing name of the list" \
  grep -qF "warning: $T/names.conf:13: share [nobody]: valid users: 'ghost': no such user in the users db" "$T/last.out"

# Warnings only: exit 0; --strict: exit 1.
cat > "$T/warn.conf" <<CONF
[global]
  users db = $T/users.db
  state directory = $T
[a]
  path = $T/share
  valid users = alice, ghost
  veto oplock files = /x/
CONF
expect_exit "warnings only: exit 0" 0 "0 errors, 2 warnings" "$RINGSMBCTL" config check "$T/warn.conf"
expect_exit "... --strict: exit 1" 1 "FAILED" "$RINGSMBCTL" config check --strict "$T/warn.conf"
expect_exit "a clean file: OK" 0 "OK (1 share, 0 errors, 0 warnings)" "$RINGSMBCTL" config check --strict "$T/ringsmb.conf"
expect_exit "a directory is not a configuration file" 1 "is a directory" "$RINGSMBCTL" config check /etc
expect_exit "a missing file" 1 "cannot open" "$RINGSMBCTL" config check "$T/none.conf"
chmod 600 "$T/bad.conf"
expect_exit "a file the user cannot read: exit 5" 5 "run as root" \
  setpriv --reuid=nobody --regid=nogroup --clear-groups "$RINGSMBCTL" config check "$T/bad.conf"
expect_exit "user list by a user who cannot read the users db: exit 5" 5 "run as root" \
  setpriv --reuid=nobody --regid=nogroup --clear-groups "$RINGSMBCTL" --config "$T/ringsmb.conf" user list

# config show: every key with its value, defaults included; the output is
# a valid configuration with the same settings.
CTL share set share --option "hosts allow = 127.0.0.1" --option "force group = +$TEST_UNIX_USER" \
  --valid-users "alice, @$TEST_UNIX_USER" --option "write list = alice" --option "smb3 encryption = desired" >/dev/null
check "config show" bash -c "'$RINGSMBCTL' --config '$T/ringsmb.conf' config show > '$T/show.conf'"
for line in "server max protocol = SMB3_11" "log level = 1" "max open files = 16384" "guest account = nobody" \
  "hosts allow = 127.0.0.1" "create mask = 0744" "force group = +$TEST_UNIX_USER" "oplocks = yes"; do
  check "... shows '$line'" grep -qF "	$line" "$T/show.conf"
done
check "... and its output passes config check --strict" "$RINGSMBCTL" config check --strict "$T/show.conf"
check "... and shows the same settings again" bash -c \
  "'$RINGSMBCTL' --config '$T/show.conf' config show | diff <(tail -n +2 '$T/show.conf') <(tail -n +2 -)"
check "config show SHARE: that share only" bash -c \
  "'$RINGSMBCTL' --config '$T/ringsmb.conf' config show share | head -1 | grep -qx '\[share\]'"
expect_exit "config show of a missing share: exit 3" 3 "share 'nope' not found" CTL config show nope

# share show: everything that decides access.
check "share show" bash -c "'$RINGSMBCTL' --config '$T/ringsmb.conf' share show share > '$T/share.out'"
for text in "hosts allow:    127.0.0.1" "hosts deny:     (none)" "smb3 encryption: desired" \
  "valid users:    alice, @$TEST_UNIX_USER" "invalid users:  (none)" "read list:      (none)" \
  "write list:     alice" "force user:     (none" "force group:    +$TEST_UNIX_USER"; do
  check "... shows '$text'" grep -qF "$text" "$T/share.out"
done

# The docs' examples, pasted: every ringsmb.conf block of monitoring.md and
# configuration.md parses (paths aside, which need not exist here), and
# systemd.md creates /etc/ringsmb before copying the example into it.
n=0
for doc in monitoring configuration; do
  awk '/^ *```ini/{on=1; n++; next} on && /^ *```/{on=0} on{print > (FILE "." n)}' FILE="$T/$doc" \
    "$RINGSMB_SOURCE_DIR/docs/$doc.md"
  for block in "$T/$doc".*; do
    grep -q '^ *\[Definition\]' "$block" && continue  # a fail2ban filter, not ringsmb.conf
    n=$((n + 1))
    "$RINGSMBCTL" config check "$block" > "$T/block.out" 2>&1 || true
    check "docs/$doc.md example $(basename "$block"): no error but missing paths" \
      bash -c "! grep '^error:' '$T/block.out' | grep -v ': path '"
  done
done
check "... the docs have ini examples" test "$n" -ge 2
check "docs/systemd.md creates /etc/ringsmb before copying the example into it" bash -c \
  "awk '/install -d -m 0755 \/etc\/ringsmb\$/{d=NR} /examples\/ringsmb.conf \/etc\/ringsmb\/ringsmb.conf/{c=NR} END{exit !(d && c && d < c)}' \
  '$RINGSMB_SOURCE_DIR/docs/systemd.md'"
finish
