#!/usr/bin/env bash
# ringsmbctl acting on a running server, with real clients: file close,
# share close, user disable/enable and status --locks --leases
# (admin_ops.py with raw SMB2 clients; smbclient for the login and the
# share close a user sees), and every exit status ringsmbctl(8) documents.
source "$(dirname "$0")/lib.sh"

write_config
owned_dir "$T/other"
add_share other "$T/other" "writeable = yes"
add_user alice 'Alice-Pass-1'
start_server

probe() { python3 "$RINGSMB_SOURCE_DIR/tests/integration/admin_ops.py" "$PORT" share other "$RINGSMBCTL" "$T/ringsmb.conf" "alice%Alice-Pass-1" "$@"; }
check "status --locks --leases lists an open's lease and byte-range locks (raw client)" probe locks_leases
check "file close ends one open: FILE_CLOSED, its lock and lease go (raw client)" probe file_close
check "status shows a disconnected durable open; file close ends it (raw clients)" probe disconnected
check "share close disconnects the share's tree connects: NETWORK_NAME_DELETED (raw clients)" probe share_close
check "user disable keeps the sessions already open, refuses new logins (raw client)" probe disabled_session

# --- user disable / enable with smbclient ----------------------------------
expect_exit "user disable alice" 0 "disabled user 'alice'" CTL user disable alice
check "the users db marks alice disabled" grep -q '^alice:.*:disabled$' "$T/users.db"
check "user list marks her (disabled)" bash -c "'$RINGSMBCTL' --config '$T/ringsmb.conf' user list | grep -q '^alice .*(disabled)$'"
check "user list --json: disabled true" bash -c "'$RINGSMBCTL' --config '$T/ringsmb.conf' user list --json | grep -q '\"disabled\": *true'"
expect_status "smbclient as the disabled alice: ACCOUNT_DISABLED" NT_STATUS_ACCOUNT_DISABLED \
  smb "alice%Alice-Pass-1" share "ls"
expect_status "a wrong password for the disabled alice: LOGON_FAILURE (nothing told)" NT_STATUS_LOGON_FAILURE \
  smb "alice%wrong-password" share "ls"
expect_exit "user disable again: exit 0, already disabled" 0 "already disabled" CTL user disable alice
check "user add over the disabled alice keeps her disabled" bash -c \
  "echo 'Alice-Pass-1' | '$RINGSMBCTL' --config '$T/ringsmb.conf' user add alice --password-stdin --unix-user $TEST_UNIX_USER &&
   grep -q '^alice:.*:disabled$' '$T/users.db'"
expect_exit "user enable alice" 0 "enabled user 'alice'" CTL user enable alice
check "the users db has no flag for alice again" grep -q '^alice:[^:]*:[0-9a-f]*$' "$T/users.db"
check "smbclient as alice works again" smb "alice%Alice-Pass-1" share "ls"
expect_exit "user disable of an unknown user: exit 3" 3 "user 'nobody-here' not found" CTL user disable nobody-here
expect_exit "user enable of an unknown user: exit 3" 3 "user 'nobody-here' not found" CTL user enable nobody-here

# --- share close as smbclient sees it -----------------------------------------
rm -f "$T/cmds"
mkfifo "$T/cmds"
timeout 60 smbclient //127.0.0.1/share -p "$PORT" -U "alice%Alice-Pass-1" < "$T/cmds" > "$T/long.out" 2>&1 &
LONG_PID=$!
exec 3> "$T/cmds"
echo "ls" >&3
for _ in $(seq 1 50); do CTL status | grep -q "share  *alice" && break; sleep 0.1; done
expect_exit "share close while smbclient is connected: exit 0" 0 "disconnected 1 tree connect" CTL share close share
echo "ls" >&3
exec 3>&-
wait "$LONG_PID" || true
check "smbclient's next ls gets NETWORK_NAME_DELETED" grep -q NT_STATUS_NETWORK_NAME_DELETED "$T/long.out"

# --- exit status, as ringsmbctl(8) documents it ------------------------------
expect_exit "exit 0: success" 0 "share" CTL share list
expect_exit "exit 2: unknown command" 2 "" CTL frobnicate
expect_exit "exit 2: file close without ID" 2 "ID is required" CTL file close
expect_exit "exit 2: share add of a reserved name" 2 "reserved" CTL share add homes --path "$T/share"
expect_exit "exit 3: user del of an unknown user" 3 "not found" CTL user del nobody-here
expect_exit "exit 3: share add of a missing path" 3 "does not exist" CTL share add newshare --path "$T/no-such-dir"
expect_exit "exit 4: share add of an existing share" 4 "already exists" CTL share add share --path "$T/share"
# Ordinary users: the users db lives in a private directory, as
# /var/lib/ringsmb (0700) on an installed system; the admin socket answers
# only root.
as_other() { setpriv --reuid="$TEST_UNIX_USER2" --regid="$TEST_UNIX_USER2" --clear-groups "$@"; }
mkdir -m 700 "$T/private"
cp "$T/users.db" "$T/private/users.db"
sed "s|users db = .*|users db = $T/private/users.db|" "$T/ringsmb.conf" > "$T/private.conf"
expect_exit "exit 5: user list as an ordinary user (users db in a 0700 directory)" 5 "run as root" \
  as_other "$RINGSMBCTL" --config "$T/private.conf" user list
expect_exit "exit 5: user list as an ordinary user (users db 0600)" 5 "run as root" \
  as_other "$RINGSMBCTL" --config "$T/ringsmb.conf" user list
expect_exit "exit 5: status as an ordinary user" 5 "run as root" as_other "$RINGSMBCTL" --config "$T/ringsmb.conf" status
expect_exit "exit 5: file close as an ordinary user" 5 "run as root" \
  as_other "$RINGSMBCTL" --config "$T/ringsmb.conf" file close 0x1
stop_server
expect_exit "exit 6: status with the server stopped" 6 "not running" CTL status
expect_exit "exit 6: file close with the server stopped" 6 "not running" CTL file close 0x1
expect_exit "exit 6: share close with the server stopped" 6 "not running" CTL share close share
for cmd in "session close 0x1" reload shutdown debug "debug 2"; do
  # shellcheck disable=SC2086  # the words of the command
  expect_exit "exit 6: $cmd with the server stopped" 6 "not running" CTL $cmd
done
echo "[global]" > "$T/bad.conf"
echo "  no such key here" >> "$T/bad.conf"
expect_exit "exit 1: a configuration with errors" 1 "bad.conf:2" "$RINGSMBCTL" --config "$T/bad.conf" share list

finish
